import Foundation
import Testing
@testable import Psychometrics

/// The bifactor model in several groups (`BifactorCalibrator.calibrate(_:structure:groups:reference:)`): each group
/// its own general-factor N(μ, σ²) and (by default) specific-factor N(μ_s, σ_s²), the items invariant.
@Suite("Multiple-group bifactor calibration")
struct MultipleGroupBifactorTests {
    /// A focal person with θ_g = μ + σz (and θ_s = μ_s + σ_s z_s) answers as a standard person answers the item with
    /// a_g σ, a_s σ_s and d + a_g μ + a_s μ_s.
    static func shifted(_ items: [BifactorItem], mean: Double, sd: Double, specific: [(mean: Double, sd: Double)] = []) -> [BifactorItem] {
        items.map { item in
            var moved = item
            moved.intercept += item.generalSlope * mean
            moved.generalSlope *= sd
            if let f = item.specific, f < specific.count {
                moved.intercept += item.specificSlope * specific[f].mean
                moved.specificSlope *= specific[f].sd
            }
            return moved
        }
    }

    /// Two groups simulated from `truth`: `n` reference persons N(0, 1) and `n` focal N(`mean`, `sd`²) on the
    /// general factor; with `itemsPerSession`, each session a random subset (missing by design).
    static func twoGroups(
        _ truth: [BifactorItem], n: Int, mean: Double, sd: Double, specific: [(mean: Double, sd: Double)] = [], seed: UInt64,
        itemsPerSession: Int? = nil
    ) throws -> (data: ResponseMatrix, groups: [String]) {
        var rng = SeededGenerator(seed: seed)
        let ids = truth.indices.map { "i\($0)" }, specifics = (truth.compactMap(\.specific).max() ?? -1) + 1
        let (reference, _) = BifactorSimulator(items: truth, specificFactorCount: specifics, itemsPerSession: itemsPerSession).matrix(
            count: n, itemIDs: ids, using: &rng)
        let (focal, _) = BifactorSimulator(
            items: shifted(truth, mean: mean, sd: sd, specific: specific), specificFactorCount: specifics, itemsPerSession: itemsPerSession
        )
        .matrix(count: n, itemIDs: ids, using: &rng)
        var persons: [String] = [], offsets = [0], cells: [Int32] = [], values: [UInt8] = []
        for (label, m) in [("ref", reference), ("focal", focal)] {
            for i in 0..<m.personCount {
                persons.append("\(label)\(i)")
                for c in m.cells(ofPerson: i) { cells.append(m.itemIndices[c]); values.append(m.responses[c]) }
                offsets.append(cells.count)
            }
        }
        let data = try ResponseMatrix(personIDs: persons, itemIDs: ids, rowOffsets: offsets, itemIndices: cells, responses: values)
        return (data, [String](repeating: "ref", count: reference.personCount) + [String](repeating: "focal", count: focal.personCount))
    }

    /// The items' gradient is exact for the quadrature rule; the latent distribution's is the complete-data score of
    /// N(μ, σ²) at the moving nodes, exact for the integral the rule approximates (as `MultipleGroupEngine`'s and
    /// the EM's update of μ, σ): against the rule's own log-likelihood it differs by the rule's error, 0.6 at 11
    /// points on ±5 and 10⁻³ at 31, so the test uses 31 points and 5 × 10⁻³ for μ and log σ.
    @Test("the gradient (Fisher's identity, items and each group's μ, log σ) equals the log-likelihood's central differences")
    func gradientMatchesFiniteDifferences() throws {
        let points = 31
        let items = BifactorCalibratorTests.items
        let (data, groups) = try Self.twoGroups(items, n: 150, mean: -0.4, sd: 1.3, seed: 7)
        let single = BifactorCalibratorTests.engine(items, data: data, points: points)
        let engines = ["ref", "focal"].map { label in
            let keep = groups.indices.filter { groups[$0] == label }
            var persons: [String] = [], offsets = [0], cells: [Int32] = [], values: [UInt8] = []
            for i in keep {
                persons.append(single.data.personIDs[i])
                for c in single.data.cells(ofPerson: i) { cells.append(single.data.itemIndices[c]); values.append(single.data.responses[c]) }
                offsets.append(cells.count)
            }
            let part = try! ResponseMatrix(
                personIDs: persons, itemIDs: single.data.itemIDs, rowOffsets: offsets, itemIndices: cells, responses: values)
            return BifactorEngine(
                items: single.items, data: part, grid: single.grid, group: single.group, groupItems: single.groupItems, workers: 2,
                maximumSlope: 20, slopePrior: nil, guessingPrior: nil)
        }
        var engine = MultipleGroupBifactorEngine(groups: engines, latent: [(mean: -0.3, sd: 1.2)], freeFactors: [[], [0, 1]])
        engine.setDistribution(1, 0, mean: 0.2, sd: 0.8)
        engine.setDistribution(1, 1, mean: -0.1, sd: 1.3)
        let g = engine.gradient(engine.eStep()), x = engine.workingParameters()
        #expect(x.count == single.workingParameters().count + 6)
        let differences = BifactorCalibratorTests.logLikelihoodDifferences(engine)
        for k in x.indices {
            let numeric = differences[k], tolerance = k < single.workingParameters().count ? 2e-4 : 5e-3
            #expect(abs(g[k] - numeric) < tolerance * max(1, abs(numeric)), "parameter \(k): gradient \(g[k]), differences \(numeric)")
        }
    }

    @Test(
        "seeded recovery: the focal group's means and SDs within 3 SEs, the items near the truth; dense and missing by design",
        arguments: [false, true])
    func recovery(missingByDesign: Bool) throws {
        let truth = BifactorCalibratorTests.battery(perFactor: 4, seed: 31)
        let specific = [(mean: 0.3, sd: 0.8), (mean: 0.0, sd: 1.0), (mean: -0.4, sd: 1.3)]
        let (data, groups) = try Self.twoGroups(
            truth, n: 2500, mean: -0.5, sd: 1.25, specific: specific, seed: missingByDesign ? 12 : 11,
            itemsPerSession: missingByDesign ? 10 : nil)
        var options = BifactorCalibrator.defaultOptions
        options.quadraturePoints = 15
        options.tolerance = 1e-5
        let result = try BifactorCalibrator(options: options).calibrate(
            data, structure: try BifactorCalibratorTests.structure(truth), groups: groups,
            reference: "ref")
        #expect(result.converged)
        #expect(result.groups.map(\.group) == ["ref", "focal"])
        let focal = result.groups[1]
        let meanSE = try #require(focal.meanStandardError), sdSE = try #require(focal.sdStandardError)
        #expect(abs(focal.mean + 0.5) < 3 * meanSE, "mean \(focal.mean) (SE \(meanSE))")
        #expect(abs(focal.sd - 1.25) < 3 * sdSE, "SD \(focal.sd) (SE \(sdSE))")
        #expect(meanSE > 0.02 && meanSE < 0.08 && sdSE > 0.02 && sdSE < 0.1)
        #expect(abs(result.groups.reduce(0) { $0 + $1.logLikelihood } - result.logLikelihood) < 1e-6)
        #expect(result.groupSpecificFactors[0].isEmpty && result.groupSpecificFactors[1].map(\.factor) == ["pattern", "verbal", "spatial"])
        for (estimate, true_) in zip(result.groupSpecificFactors[1], specific) {
            let meanSE = try #require(estimate.meanStandardError), sdSE = try #require(estimate.sdStandardError)
            #expect(
                abs(estimate.mean - true_.mean) < 3 * meanSE && abs(estimate.sd - true_.sd) < 3 * sdSE,
                "\(estimate.factor): mean \(estimate.mean) (SE \(meanSE)), SD \(estimate.sd) (SE \(sdSE)); truth \(true_)")
        }
        var errors: [Double] = []
        for (fit, true_) in zip(result.items, truth) {
            errors += [fit.item.generalSlope - true_.generalSlope, fit.item.intercept - true_.intercept]
        }
        let rmse = (errors.reduce(0) { $0 + $1 * $1 } / Double(errors.count)).squareRoot()
        #expect(rmse < (missingByDesign ? 0.16 : 0.12), "RMSE of a_g and d: \(rmse)")
        // The nested models (dense only; without standard errors): the specific factors N(0, 1) in both groups (2
        // parameters fewer per factor), then one group.
        guard !missingByDesign else { return }
        options.standardErrors = false
        let generalOnly = try BifactorCalibrator(options: options).calibrate(
            data, structure: try BifactorCalibratorTests.structure(truth), groups: groups,
            reference: "ref", specificFactorsByGroup: false)
        #expect(generalOnly.parameterCount == result.parameterCount - 6 && generalOnly.groupSpecificFactors[1].isEmpty)
        #expect(
            result.logLikelihood - generalOnly.logLikelihood > 10, "free \(result.logLikelihood), standard specifics \(generalOnly.logLikelihood)")
        let single = try BifactorCalibrator(options: options).calibrate(data, structure: try BifactorCalibratorTests.structure(truth))
        #expect(
            generalOnly.logLikelihood - single.logLikelihood > 10, "multiple-group \(generalOnly.logLikelihood), one group \(single.logLikelihood)")
        #expect(generalOnly.parameterCount == single.parameterCount + 2)
    }

    @Test("bad groups are refused by name: the testlet model, one group, a small group, a group sharing no item with the reference")
    func refusals() throws {
        let truth = BifactorCalibratorTests.battery(perFactor: 3, seed: 32)
        let (data, groups) = try Self.twoGroups(truth, n: 200, mean: 0, sd: 1, seed: 13)
        let structure = try BifactorCalibratorTests.structure(truth)
        var options = BifactorCalibrator.defaultOptions
        options.quadraturePoints = 9
        func message(_ body: () throws -> Void) -> String {
            do { try body(); return "" } catch { return "\(error)" }
        }
        #expect(
            message {
                _ = try BifactorCalibrator(options: options, testlet: true).calibrate(data, structure: structure, groups: groups, reference: "ref")
            }
            .contains("not the testlet model"))
        #expect(
            message {
                _ = try BifactorCalibrator(options: options).calibrate(
                    data, structure: structure, groups: groups.map { _ in "ref" }, reference: "ref")
            }
            .contains("only one group"))
        var small = groups
        for i in 0..<390 { small[i] = "ref" }
        small[390...].indices.forEach { small[$0] = $0 < 395 ? "tiny" : small[$0] }
        #expect(
            message { _ = try BifactorCalibrator(options: options).calibrate(data, structure: structure, groups: small, reference: "ref") }
                .contains("'tiny'"))
        #expect(
            message { _ = try BifactorCalibrator(options: options).calibrate(data, structure: structure, groups: groups, reference: "nobody") }
                .contains("reference group 'nobody'"))
        // The reference answered items 0–5 only, the focal group 6–10 only: nothing ties them.
        var persons: [String] = [], offsets = [0], cells: [Int32] = [], values: [UInt8] = []
        for i in 0..<data.personCount {
            persons.append(data.personIDs[i])
            for c in data.cells(ofPerson: i) where (groups[i] == "ref") == (data.itemIndices[c] < 6) {
                cells.append(data.itemIndices[c]); values.append(data.responses[c])
            }
            offsets.append(cells.count)
        }
        let split = try ResponseMatrix(personIDs: persons, itemIDs: data.itemIDs, rowOffsets: offsets, itemIndices: cells, responses: values)
        #expect(
            message { _ = try BifactorCalibrator(options: options).calibrate(split, structure: structure, groups: groups, reference: "ref") }
                .contains("shares no item parameters with the reference"))
    }
}
