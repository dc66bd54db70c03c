import Foundation
import Integrity
@testable import Psychometrics
import Testing

/// Scoring with times (`TimedSessionScorer`): θ with the times' collateral information is the joint model's
/// posterior mean; speed, effort moderation and the flags.
@Suite("Scoring with response times")
struct TimedSessionScorerTests {
    static func calibrated() throws -> (result: SpeedAccuracyResult, data: ResponseMatrix, times: ResponseTimes, bank: ItemBank) {
        var rng = SeededGenerator(seed: 12)
        let spec = BankSpecification(model: .twoPL, itemCount: 20).draw(using: &rng)
        let timeItems = ResponseTimeSimulator.drawItems(count: 20, using: &rng)
        let sim = ResponseSimulator(bank: spec)
        let out = sim.timedMatrix(
            count: 1500, itemIDs: spec.items.map(\.itemID),
            times: ResponseTimeSimulator(items: timeItems, population: try SpeedAccuracyPopulation(speedSD: 0.35, correlation: 0.6)), using: &rng)
        var options = CalibrationOptions(model: .twoPL)
        options.standardErrors = false
        let result = try SpeedAccuracyCalibrator(options: options).calibrate(out.matrix, times: out.times)
        return (result, out.matrix, out.times, ItemBank(speedAccuracy: result))
    }

    /// The EAP with the collateral prior is the joint model's E[θ | u, t] and its speed E[τ | u, t]: the calibrator's
    /// person estimates at the same parameters on the same 61-point grid, to 1e-9; without times θ is the plain EAP.
    @Test func collateralPosteriorIsTheJointPosterior() throws {
        let (result, data, times, bank) = try Self.calibrated()
        let scorer = try TimedSessionScorer(scorer: SessionScorer(bank: bank, scale: IQScale()))
        for i in stride(from: 0, to: data.personCount, by: 97) {
            let cells = data.cells(ofPerson: i)
            let score = try scorer.score(
                itemIDs: cells.map { data.itemIDs[Int(data.itemIndices[$0])] }, responses: cells.map { Int(data.responses[$0]) },
                seconds: cells.map { Double(times.seconds[$0]) })
            let person = result.persons[i]
            #expect(abs(score.score.estimate.theta - person.theta) < 1e-9, "θ of \(data.personIDs[i])")
            #expect(abs(score.score.estimate.standardError - person.thetaSD) < 1e-9)
            #expect(abs(score.times.speed! - person.speed) < 1e-9 && abs(score.times.speedSD! - person.speedSD) < 1e-9)
            let untimed = try scorer.score(
                itemIDs: cells.map { data.itemIDs[Int(data.itemIndices[$0])] }, responses: cells.map { Int(data.responses[$0]) },
                seconds: cells.map { _ in nil })
            let plain = try SessionScorer(bank: bank, scale: IQScale()).score(
                itemIDs: cells.map { data.itemIDs[Int(data.itemIndices[$0])] },
                responses: cells.map { Int(data.responses[$0]) })
            #expect(untimed.score.estimate.theta == plain.estimate.theta && untimed.times.speed == nil)
            // ρ = 0.6: the times narrow θ's posterior.
            #expect(score.score.estimate.standardError < plain.estimate.standardError)
        }
    }

    /// Effort-moderated scoring leaves the rapid guesses out: θ is the score of the other responses (with their
    /// times), and the count is reported; a session guessing half its items is flagged rapid_guessing.
    @Test func effortModeration() throws {
        let (_, _, _, bank) = try Self.calibrated()
        let moderated = try TimedSessionScorer(scorer: SessionScorer(bank: bank, scale: IQScale()), effortModerated: true)
        let ids = bank.items.prefix(10).map(\.itemID)
        let responses = [1, 0, 1, 1, 0, 1, 0, 1, 1, 0]
        var seconds: [Double?] = ids.indices.map { Double(20 + $0) }
        seconds[1] = 1.2; seconds[4] = 0.8; seconds[6] = 2.0
        let s = try moderated.score(itemIDs: ids, responses: responses, seconds: seconds)
        #expect(s.times.rapidGuesses == 3 && s.times.excludedRapidGuesses == 3 && s.times.flags.contains(.rapidGuessing))
        let keep = [0, 2, 3, 5, 7, 8, 9]
        let rest = try moderated.score(itemIDs: keep.map { ids[$0] }, responses: keep.map { responses[$0] }, seconds: keep.map { seconds[$0] })
        #expect(s.score.estimate.theta == rest.score.estimate.theta && s.score.estimate.itemCount == 7)
        let plain = try TimedSessionScorer(scorer: SessionScorer(bank: bank, scale: IQScale()))
        #expect(try plain.score(itemIDs: ids, responses: responses, seconds: seconds).score.estimate.itemCount == 10)
    }

    /// The scorer's bulk accumulation (β, α² per item, one logarithm per response) gives the item-by-item sums; it
    /// leaves Σ log α out, so the likelihood's constant is NaN rather than wrong.
    @Test func bulkEvidence() throws {
        let items = [
            try LognormalTimeItem(timeIntensity: 3.2, timeDiscrimination: 1.5), try LognormalTimeItem(timeIntensity: 2.7, timeDiscrimination: 0.8),
            nil
        ]
        let seconds: [Float] = [21.5, .nan, 4.25]
        var single = SessionTimeEvidence()
        single.add(items[0]!, logSeconds: ResponseTimes.logSeconds(seconds[0]))
        var bulk = SessionTimeEvidence()
        let terms: [SIMD2<Double>] = items.map { $0.map { SIMD2($0.timeIntensity, $0.timeDiscrimination * $0.timeDiscrimination) } ?? SIMD2(.nan, 0) }
        let thresholds: [Float] = [2, 2, 5]
        let counts = [0, 1, 2].withUnsafeBufferPointer { i in
            seconds.withUnsafeBufferPointer { t in
                terms.withUnsafeBufferPointer { w in
                    thresholds.withUnsafeBufferPointer { bulk.add(i, t, terms: w, thresholds: $0) }
                }
            }
        }
        #expect(counts.timed == 2 && counts.belowThreshold == 1)
        #expect(
            bulk.count == 1 && bulk.precision == single.precision && bulk.weightedSum == single.weightedSum
                && bulk.weightedSquares == single.weightedSquares)
        let population = try SpeedAccuracyPopulation(speedSD: 0.3, correlation: 0.4)
        #expect(bulk.thetaTerms(population).linear == single.thetaTerms(population).linear && bulk.thetaTerms(population).constant.isNaN)
        #expect(!single.thetaTerms(population).constant.isNaN)
    }

    @Test func refusals() throws {
        let (_, _, _, bank) = try Self.calibrated()
        let scorer = try TimedSessionScorer(scorer: SessionScorer(bank: bank, scale: IQScale()))
        let id = bank.items[0].itemID
        #expect(throws: PsychometricsError.self) { try scorer.score(itemIDs: [id], responses: [1], seconds: [0]) }
        #expect(throws: PsychometricsError.self) { try scorer.score(itemIDs: [id], responses: [1], seconds: [-2]) }
        #expect(throws: PsychometricsError.self) { try scorer.score(itemIDs: [id], responses: [1], seconds: [1, 2]) }
        #expect(throws: PsychometricsError.self) { try scorer.score(itemIDs: ["nope"], responses: [1], seconds: [3]) }
        var untimed = bank
        untimed.speedPopulation = nil
        for k in untimed.items.indices { untimed.items[k].timeModel = nil }
        #expect(throws: PsychometricsError.self) { try TimedSessionScorer(scorer: SessionScorer(bank: untimed, scale: IQScale())) }
    }
}
