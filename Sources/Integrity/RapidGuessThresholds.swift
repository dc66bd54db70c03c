import Foundation
import Psychometrics

/// Per item, the time in seconds below which a response is a rapid guess: answered too fast to have been read and
/// solved (Schnipke & Scrams 1997; Wise & Kong 2005). Two rules:
///
/// - **NT10**, the normative threshold (Wise & Ma 2012): 10% of the item's mean response time, at most 10 s;
///   the mean from the timed responses of a sample (`normative(matrix:times:)`), or from a bank's lognormal model,
///   E[T] = exp(β + (σ_τ² + 1/α²)/2) (`normative(items:population:)`).
/// - **The lognormal rule**: the q-quantile (default q = 0.001) of the item's time over the population under the
///   speed–accuracy model (`LognormalTimeItem`, `SpeedAccuracyPopulation`): log T ~ N(β, σ_τ² + 1/α²), so
///   ```
///   threshold = exp(β − z₁₋q √(σ_τ² + 1/α²))
///   ```
///   which flags a share q of an engaged population's responses by construction, and a guess of a few seconds on
///   an item whose median time is half a minute (z ≈ −3.7 at α = 1.5, σ_τ = 0.3).
///
/// Items without a time (no timed responses, no time model) get no threshold (0: nothing is faster).
public struct RapidGuessThresholds: Sendable, Hashable {
    public enum Rule: String, Sendable, Hashable, Codable, CaseIterable {
        case nt10
        case lognormal
    }

    public let rule: Rule
    /// Per item, in bank order: seconds; 0 where the item has no threshold.
    public let seconds: [Double]

    public init(rule: Rule, seconds: [Double]) {
        self.rule = rule
        self.seconds = seconds
    }

    /// NT-x percentages: (0, 100]; caps: (0, 600] s.
    package static let allowedPercents = NumberRange.aboveUpTo(0, 100)
    package static let allowedCaps = NumberRange.aboveUpTo(0, 600)
    /// Lognormal-rule quantiles: (0, 0.2].
    package static let allowedQuantiles = NumberRange.aboveUpTo(0, 0.2)

    /// NT10 (`percent` of each item's mean time, at most `cap` seconds) from the timed responses of `matrix`.
    package static func normative(matrix: ResponseMatrix, times: ResponseTimes, percent: Double = 10, cap: Double = 10) -> RapidGuessThresholds {
        var sum = [Double](repeating: 0, count: matrix.itemCount), n = [Int](repeating: 0, count: matrix.itemCount)
        for k in 0..<matrix.cellCount where !times.seconds[k].isNaN {
            sum[Int(matrix.itemIndices[k])] += Double(times.seconds[k])
            n[Int(matrix.itemIndices[k])] += 1
        }
        return RapidGuessThresholds(
            rule: .nt10, seconds: (0..<matrix.itemCount).map { n[$0] > 0 ? min(cap, percent / 100 * sum[$0] / Double(n[$0])) : 0 })
    }

    /// NT10 from a bank's time model: `percent` of E[T] = exp(β + (σ_τ² + 1/α²)/2), at most `cap` seconds.
    public static func normative(items: [LognormalTimeItem?], population: SpeedAccuracyPopulation, percent: Double = 10, cap: Double = 10)
        -> RapidGuessThresholds
    {
        let s2 = population.speedSD * population.speedSD
        return RapidGuessThresholds(
            rule: .nt10,
            seconds: items.map { item in
                guard let item else { return 0 }
                return min(cap, percent / 100 * exp(item.timeIntensity + 0.5 * (s2 + 1 / (item.timeDiscrimination * item.timeDiscrimination))))
            })
    }

    /// The lognormal rule at quantile `q`.
    public static func lognormal(items: [LognormalTimeItem?], population: SpeedAccuracyPopulation, quantile q: Double = 0.001) -> RapidGuessThresholds
    {
        let z = StandardNormal.quantile(1 - q), s2 = population.speedSD * population.speedSD
        return RapidGuessThresholds(
            rule: .lognormal,
            seconds: items.map { item in
                guard let item else { return 0 }
                return exp(item.timeIntensity - z * (s2 + 1 / (item.timeDiscrimination * item.timeDiscrimination)).squareRoot())
            })
    }

    /// Whether a response to item j in `seconds` is a rapid guess (a NaN time never is).
    @inline(__always) package func isRapid(item j: Int, seconds t: Double) -> Bool { t < seconds[j] }
}

/// A session's response-time effort (Wise & Kong 2005): the share of its timed responses that are not rapid
/// guesses,
/// ```
/// RTE = 1 − (rapid guesses) / (timed responses)
/// ```
/// and the session flagged as disengaged when RTE is below `minimumEffort` (0.90, Wise & Kong's criterion). With
/// effort-moderated scoring (Wise & DeMars 2006) the rapid guesses are left out of θ: the responses they replace
/// say nothing about ability, and a guess among four options scores 25% where an engaged low scorer scores less.
public struct ResponseTimeEffort: Sendable, Hashable {
    public var timedResponses: Int
    public var rapidGuesses: Int
    /// Positions (into the session's responses) of the rapid guesses.
    public var rapidPositions: [Int]
    /// RTE; 1 without timed responses.
    public var effort: Double { timedResponses > 0 ? 1 - Double(rapidGuesses) / Double(timedResponses) : 1 }

    /// Wise & Kong's (2005) criterion for a disengaged session.
    public static let minimumEffort = 0.90

    /// The effort of a session answering `items` (bank indices) in `seconds` (NaN: no time).
    package init(items: some Collection<Int>, seconds: some Collection<Double>, thresholds: RapidGuessThresholds) {
        var timed = 0
        var rapid: [Int] = []
        for (k, (j, t)) in zip(items, seconds).enumerated() where !t.isNaN {
            timed += 1
            if thresholds.isRapid(item: j, seconds: t) { rapid.append(k) }
        }
        timedResponses = timed
        rapidGuesses = rapid.count
        rapidPositions = rapid
    }

    public var isDisengaged: Bool { timedResponses > 0 && effort < Self.minimumEffort }
}

extension RapidGuessThresholds {
    /// `matrix` and `times` without the responses these thresholds call rapid guesses (treated as not
    /// administered: effort-moderated calibration, after Wise & DeMars 2006), persons left with no response
    /// dropped; and how many responses were removed. A rapid guesser is fast and right at chance, so left in it
    /// inflates the speed SD and pulls the ability–speed correlation towards 0.
    package func removingRapidGuesses(from matrix: ResponseMatrix, times: ResponseTimes) -> (
        matrix: ResponseMatrix, times: ResponseTimes, removed: Int
    ) {
        var offsets = [0], items: [Int32] = [], values: [UInt8] = [], seconds: [Float] = [], persons: [String] = []
        items.reserveCapacity(matrix.cellCount); values.reserveCapacity(matrix.cellCount); seconds.reserveCapacity(matrix.cellCount)
        var removed = 0
        for i in 0..<matrix.personCount {
            let before = items.count
            for k in matrix.cells(ofPerson: i) {
                let t = times.seconds[k]
                if !t.isNaN && isRapid(item: Int(matrix.itemIndices[k]), seconds: Double(t)) { removed += 1; continue }
                items.append(matrix.itemIndices[k]); values.append(matrix.responses[k]); seconds.append(t)
            }
            if items.count == before { continue }
            persons.append(matrix.personIDs[i])
            offsets.append(items.count)
        }
        let kept = ResponseMatrix(
            validatedPersonIDs: persons, itemIDs: matrix.itemIDs, rowOffsets: offsets, itemIndices: items, responses: values,
            categoryCounts: matrix.categoryCounts)
        return (kept, ResponseTimes(validatedSeconds: seconds), removed)
    }
}
