import Foundation
import Numerics
import Psychometrics
import Testing

/// `LatentScale`: a bank's calibration population on its own metric, honoured by `SessionScorer` (issue 26,
/// item 1).
@Suite("Latent scale of a bank")
struct LatentScaleTests {
    static let difficulties = [-1.5, -0.8, -0.2, 0.3, 0.9, 1.6, 2.2, -2.4]

    static func bank(slope: Double, scale: LatentScale, divideBy: Double = 1) -> ItemBank {
        ItemBank(
            items: difficulties.enumerated().map { j, b in
                BankItem(
                    itemID: "q\(j)", model: slope == 1 ? .rasch : .onePL, parameters: ItemParameters(discrimination: slope, difficulty: b / divideBy))
            }, latentScale: scale)
    }

    @Test("a Rasch bank with latent SD σ scores θ = σ·θ₁ of its 1PL equivalent (a = σ, b/σ), the same IQ and flags, on matching grids")
    func equivalence() throws {
        let sd = 1.4
        let rasch = Self.bank(slope: 1, scale: try LatentScale(mean: 0, sd: sd))
        let onePL = Self.bank(slope: sd, scale: .standard, divideBy: sd)
        var matching = AbilityOptions()
        matching.thetaBound = 6 / sd
        let a = try SessionScorer(bank: rasch, scale: try IQScale(lowPrecisionSE: 0.6))
        let b = try SessionScorer(bank: onePL, ability: matching, scale: try IQScale(lowPrecisionSE: 0.6))
        #expect(a.estimator.priorSD == sd && a.scale.norms.sd == sd && a.scale.lowPrecisionSE.isApproximatelyEqual(to: 0.6 * sd))
        #expect(b.estimator.priorSD == 1 && b.scale.norms == .calibrationPopulation)
        let ids = rasch.items.map(\.itemID)
        for pattern in [[1, 0, 1, 1, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 1]] {
            let x = try a.score(itemIDs: ids, responses: pattern), y = try b.score(itemIDs: ids, responses: pattern)
            #expect(x.estimate.theta.isApproximatelyEqual(to: sd * y.estimate.theta, absoluteTolerance: 1e-9))
            #expect(x.estimate.standardError.isApproximatelyEqual(to: sd * y.estimate.standardError, absoluteTolerance: 1e-9))
            #expect(x.score == y.score, "\(pattern)")
        }
    }

    @Test("a prior or norms given explicitly win over the bank's latent scale")
    func explicitSettings() throws {
        let bank = Self.bank(slope: 1, scale: try LatentScale(mean: 0.5, sd: 2))
        var ability = AbilityOptions()
        ability.priorMean = 0
        ability.priorSD = 1
        let norms = Norms(name: "adults", version: "1", mean: 0.2, sd: 1.1)
        let scorer = try SessionScorer(bank: bank, ability: ability, scale: try IQScale(norms: norms))
        #expect(scorer.estimator.priorMean == 0 && scorer.estimator.priorSD == 1)
        #expect(scorer.scale.norms == norms)
        let defaults = try SessionScorer(bank: bank, scale: try IQScale())
        #expect(defaults.estimator.priorMean == 0.5 && defaults.estimator.priorSD == 2)
        #expect(defaults.scale.norms.mean == 0.5 && defaults.scale.norms.sd == 2)
    }

    @Test("latent scales outside the allowed ranges throw, from the initialiser and from JSON")
    func validation() throws {
        #expect(throws: PsychometricsError.self) { try LatentScale(mean: 0, sd: 0) }
        #expect(throws: PsychometricsError.self) { try LatentScale(mean: .nan, sd: 1) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(LatentScale.self, from: Data(#"{"mean": 0, "sd": -1}"#.utf8)) }
        let scale = try JSONDecoder().decode(LatentScale.self, from: Data(#"{"mean": 0, "sd": 1.3}"#.utf8))
        #expect(scale.sd == 1.3 && !scale.isStandard && LatentScale.standard.isStandard)
    }
}
