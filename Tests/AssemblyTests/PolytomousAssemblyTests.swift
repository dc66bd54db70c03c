@testable import Assembly
import Foundation
import Psychometrics
import Testing

/// Adaptive tests and forms on banks with items scored in more than two categories (issue 27): selection by the
/// models' information, responses drawn and checked per item's categories.
@Suite("Adaptive tests and forms with graded items", .timeLimit(.minutes(2)))
struct PolytomousAssemblyTests {
    /// `catTestBank`'s items, every other one made graded with 4 categories (thresholds b − 1, b, b + 1).
    static func mixedBank(items: Int) throws -> AssemblyBank {
        let base = catTestBank(items: items)
        return AssemblyBank(
            items: try base.items.enumerated().map { j, item in
                guard j % 2 == 0 else { return item }
                let p = item.parameters
                return AssemblyItem(
                    id: item.id, domain: item.domain, parameters: p,
                    categoryModel: try CategoryBankItem(kind: .graded, values: [p.discrimination, p.difficulty - 1, p.difficulty, p.difficulty + 1]))
            }, latentScale: base.latentScale)
    }

    @Test("a graded item's information, location and slope are its model's: symmetric thresholds peak at the middle one")
    func itemSummaries() throws {
        let bank = try Self.mixedBank(items: 20)
        let item = bank.items[0], p = item.parameters
        let model = try #require(item.categoryModel?.model)
        #expect(item.information(at: 0.3) == model.information(at: 0.3))
        // Thresholds b − 1, b, b + 1: the information is symmetric about b, whose grid point is within 0.025.
        #expect(abs(item.location - p.difficulty) <= 0.0251, "\(item.location) vs \(p.difficulty)")
        let peak = model.information(at: item.location)
        #expect(abs(item.slope - 2 * peak.squareRoot()) < 1e-12)
        // A 0/1 item is unchanged: a, b and Birnbaum's information.
        let binary = bank.items[1]
        #expect(binary.slope == binary.parameters.discrimination && binary.location == binary.parameters.difficulty)
        #expect(binary.information(at: 0.3) == binary.parameters.information(at: 0.3))
    }

    @Test("a 15-item CAT on the mixed bank recovers θ better than on the 0/1 bank (RMSE, mean SE), 400 simulees")
    func recovery() throws {
        let config = CATConfiguration(minItems: 15, maxItems: 15, minPerDomain: .all(3), randomesque: 2, exposureTarget: nil)
        let mixed = try CATSimulation.run(
            pool: CATItemPool(bank: try Self.mixedBank(items: 300), configuration: config), exposure: nil,
            options: CATSimulation.Options(simulees: 400, seed: 5))
        let binary = try CATSimulation.run(
            pool: CATItemPool(bank: catTestBank(items: 300), configuration: config), exposure: nil,
            options: CATSimulation.Options(simulees: 400, seed: 5))
        #expect(
            mixed.figures.rmse < binary.figures.rmse && mixed.figures.meanSE < binary.figures.meanSE,
            "mixed \(mixed.figures.rmse)/\(mixed.figures.meanSE), 0/1 \(binary.figures.rmse)/\(binary.figures.meanSE)")
        #expect(
            mixed.figures.rmse < 0.35 && abs(mixed.figures.bias) < 0.06 && mixed.figures.correlation > 0.93,
            "\(mixed.figures.rmse) \(mixed.figures.bias) \(mixed.figures.correlation)")
        #expect(abs(mixed.figures.meanSE - mixed.figures.rmse) < 0.06, "SE \(mixed.figures.meanSE) vs RMSE \(mixed.figures.rmse)")
    }

    @Test("a response outside a graded item's categories is refused; its highest category is taken")
    func recordChecksCategories() throws {
        let pool = try CATItemPool(
            bank: try Self.mixedBank(items: 30), configuration: CATConfiguration(minItems: 1, maxItems: 5, minPerDomain: .all(0), exposureTarget: nil)
        )
        var session = AdaptiveSession(validatedPool: pool, exposure: nil)
        #expect(throws: AssemblyError.self) { try session.record(item: 0, response: 4) }
        do { try session.record(item: 0, response: 4) } catch {
            #expect(error.message.contains("is 4; allowed 0…3 (its categories)"), "\(error.message)")
        }
        try session.record(item: 0, response: 3)
        try session.record(item: 1, response: 1)
        #expect(throws: AssemblyError.self) { try session.record(item: 3, response: 2) }
        #expect(session.estimate.correctCount == 4 && session.estimate.maximumScore == 4)
    }
}
