import Foundation
import Psychometrics

/// A session scored with its response times: θ with the times' collateral information, and what the times say.
public struct TimedSessionScore: Sendable, Hashable {
    /// The score (θ, IQ, domain counts) — with the times' information about θ under EAP and MAP, and without the
    /// rapid guesses when scoring is effort-moderated.
    public var score: SessionScore
    public var times: SessionTimeSummary
}

/// What one session's response times say: its speed, rapid guesses and effort, the fit of its times, its flags.
public struct SessionTimeSummary: Sendable, Hashable {
    /// Responses with a time.
    public var timedResponses = 0
    /// Timed responses under their item's rapid-guess threshold (`RapidGuessThresholds`).
    public var rapidGuesses = 0
    /// Rapid guesses left out of θ (effort-moderated scoring), 0 otherwise.
    public var excludedRapidGuesses = 0
    /// Response-time effort (`ResponseTimeEffort`): 1 − rapid / timed; 1 without timed responses.
    public var effort: Double { timedResponses > 0 ? 1 - Double(rapidGuesses) / Double(timedResponses) : 1 }
    /// The posterior mean and SD of speed τ given responses and times (nil without a timed response of an item
    /// with a time model).
    public var speed: Double?
    public var speedSD: Double?
    /// l_t (`LognormalPersonFit`) over the timed responses kept, and P(χ²(n − 1) ≥ l_t); nil with fewer than two.
    public var timeFit: Double?
    public var timeFitPValue: Double?
    /// The session's flags, in `TimeFlag` order.
    public var flags: [TimeFlag] = []
    /// With suspected items (`TimedSessionScorer.compromised`): the preknowledge test on them.
    public var preknowledge: PreknowledgeTest?

    package init() {}
}

/// What a session's times say about it.
public enum TimeFlag: String, Sendable, Hashable, Codable, CaseIterable {
    /// Response-time effort below 0.90 (Wise & Kong 2005): at least one answer in ten a rapid guess.
    case rapidGuessing = "rapid_guessing"
    /// The lognormal person fit l_t at p < `TimedSessionScorer.aberrantTimesLevel` (0.01).
    case aberrantTimes = "aberrant_times"
    /// With suspected items: the preknowledge test's combined p below `TimedSessionScorer.preknowledgeLevel` (0.01).
    case preknowledge = "preknowledge"

    /// Position in `allCases` (report order).
    public var order: Int {
        switch self {
        case .rapidGuessing: 0
        case .aberrantTimes: 1
        case .preknowledge: 2
        }
    }
}

/// Scores sessions with response times on a bank calibrated with them (`ItemBank.speedPopulation`, each item's
/// `timeModel`):
///
/// - **Collateral information** (van der Linden, Klein Entink & Fox 2010): the times' likelihood given θ, with
///   speed integrated out, is a Gaussian factor exp(ℓθ + qθ²) (`SessionTimeEvidence.thetaTerms`), so EAP and MAP
///   use the prior N(μ, σ²) times it — the normal prior with precision 1/σ² − 2q and mean (μ/σ² + ℓ)/(1/σ² − 2q).
///   ML and WLE use the responses alone.
/// - **Speed**: E[τ] = A + B E[θ], Var τ = V + B² Var θ from the closed forms of `SessionTimeEvidence`.
/// - **Rapid guesses** by `RapidGuessThresholds` (NT10 from the bank's time model, or the lognormal rule), the
///   session's `ResponseTimeEffort`, and with `effortModerated` the guesses left out of θ (Wise & DeMars 2006).
/// - **l_t** (`LognormalPersonFit`) over the responses kept.
///
/// Immutable and `Sendable`, as `SessionScorer`; the per-session work added is O(items answered) plus a prior of
/// grid-size values.
public struct TimedSessionScorer: Sendable {
    public let scorer: SessionScorer
    public let timeItems: [LognormalTimeItem?]
    public let population: SpeedAccuracyPopulation
    public let thresholds: RapidGuessThresholds
    public let effortModerated: Bool
    /// Per bank item, whether it is suspected of being compromised (leaked); nil: no preknowledge test. With it,
    /// every session gets `PreknowledgeTest` on the suspected items it answered against the rest.
    public let compromised: [Bool]?
    /// The bank's 0/1 item parameters, for the preknowledge test (empty without `compromised`).
    private let parameters: [ItemParameters]
    /// Per bank item: β and α² of its time model (β NaN: none), and its rapid-guess threshold in seconds: 20
    /// bytes an item (the tables stay in cache), one logarithm per timed response.
    private let timeTerms: [SIMD2<Double>]
    private let thresholdSeconds: [Float]

    /// l_t's flag level: 0.01.
    public static let aberrantTimesLevel = 0.01
    /// The preknowledge test's flag level: 0.01.
    public static let preknowledgeLevel = 0.01

    /// - Parameter compromised: item ids suspected of being compromised (e.g. the items `ItemMonitor` alarmed on);
    ///   empty: no preknowledge test.
    /// - Throws: `PsychometricsError.invalidOptions` when the bank has no speed population or no item with a time
    ///   model (calibrate it with times first); `.unknownItem` for a suspected item not in the bank;
    ///   `.invalidOptions` for suspected items on a bank with items in more than two categories (the test is for
    ///   0/1 items).
    public init(scorer: SessionScorer, rule: RapidGuessThresholds.Rule = .nt10, effortModerated: Bool = false, compromised: Set<String> = []) throws {
        guard let population = scorer.bank.speedPopulation, scorer.bank.hasTimeModels else {
            throw PsychometricsError(
                .invalidOptions,
                "the bank has no response-time model (time_intensity, time_discrimination, speed_sd, speed_correlation): calibrate it with the sessions' times first"
            )
        }
        if compromised.isEmpty {
            self.compromised = nil
            parameters = []
        } else {
            guard !scorer.bank.hasCategoryItems else {
                throw PsychometricsError(.invalidOptions, "the preknowledge test is for 0/1 items; the bank has items in more than two categories")
            }
            let ids = Set(scorer.bank.items.map(\.itemID))
            if let unknown = compromised.sorted().first(where: { !ids.contains($0) }) {
                throw PsychometricsError(.unknownItem, "suspected item \(TextFidelity.quoted(unknown)) is not in the bank")
            }
            self.compromised = scorer.bank.items.map { compromised.contains($0.itemID) }
            parameters = scorer.bank.items.map(\.parameters)
        }
        self.scorer = scorer
        timeItems = scorer.bank.items.map(\.timeModel)
        self.population = population
        thresholds = rule == .nt10 ? .normative(items: timeItems, population: population) : .lognormal(items: timeItems, population: population)
        self.effortModerated = effortModerated
        timeTerms = timeItems.map { item in
            guard let item else { return SIMD2(.nan, 0) }
            return SIMD2(item.timeIntensity, item.timeDiscrimination * item.timeDiscrimination)
        }
        // For a Float time t, t < x (Double) exactly when t < x rounded up to a Float.
        thresholdSeconds = thresholds.seconds.map { x in
            let f = Float(x)
            return Double(f) < x ? f.nextUp : f
        }
    }

    /// Scores one session: item ids, responses (0/1 or categories) and seconds (nil: no time).
    /// - Throws: what `SessionScorer.score(itemIDs:responses:)` throws; `.lengthMismatch` without one time slot per
    ///   response, `.invalidResponse` for a time outside `ResponseTimes.allowedSeconds`.
    public func score(itemIDs: [String], responses: [Int], seconds: [Double?]) throws -> TimedSessionScore {
        guard seconds.count == itemIDs.count else {
            throw PsychometricsError(.lengthMismatch, "\(itemIDs.count) item ids but \(seconds.count) times")
        }
        for (k, t) in seconds.enumerated() {
            if let t, !t.isFinite || !ResponseTimes.allowedSeconds.contains(Float(t)) {
                throw PsychometricsError(
                    .invalidResponse,
                    "item '\(itemIDs[k])': response time \(t) s; allowed \(ResponseTimes.allowedSeconds.lowerBound)…\(ResponseTimes.allowedSeconds.upperBound) s or none"
                )
            }
        }
        let items = try scorer.validatedIndices(itemIDs: itemIDs, responses: responses)
        return try items.withUnsafeBufferPointer { i in
            try responses.map { UInt8($0) }.withUnsafeBufferPointer { r in
                try seconds.map { $0.map(Float.init) ?? .nan }.withUnsafeBufferPointer { try score(i, r, $0) }
            }
        }
    }

    /// Scores validated bank indices, responses and seconds (NaN: none).
    package func score(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ seconds: UnsafeBufferPointer<Float>) throws
        -> TimedSessionScore
    {
        let domains = scorer.domains.count
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: max(2 * domains, 1)) { counts in
            let (estimate, iq, unscored, indexes, times) = try score(items, responses, seconds, domainCounts: counts.baseAddress!, report: nil)
            let score = SessionScore(
                estimate: estimate, score: iq, domainAnswered: (0..<domains).map { counts[2 * $0] },
                domainCorrect: (0..<domains).map { counts[2 * $0 + 1] }, unscoredCount: unscored, indexes: indexes)
            return TimedSessionScore(score: score, times: times)
        }
    }

    /// The batch and server path, without allocating for an unflagged session: `SessionScorer.score(_:_:domainCounts:report:indexReport:prior:)`
    /// with the times' collateral prior, and the session's `SessionTimeSummary`. With `effortModerated` the rapid
    /// guesses are left out of θ and of the times' evidence (unless every timed response is one).
    /// - Throws: what `SessionScorer.score(_:_:domainCounts:report:indexReport:prior:)` throws.
    package func score(
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ seconds: UnsafeBufferPointer<Float>,
        domainCounts: UnsafeMutablePointer<Int>, report: ((AbilityEstimate) throws -> IQScore)?,
        indexReport: ((Int, AbilityEstimate) throws -> IQScore)? = nil
    )
        throws -> (AbilityEstimate, IQScore, unscored: Int, indexes: [IndexScore], times: SessionTimeSummary)
    {
        // One pass: timed responses, rapid guesses and the times' evidence over all of them.
        var summary = SessionTimeSummary()
        var evidence = SessionTimeEvidence()
        timeTerms.withUnsafeBufferPointer { terms in
            accumulate(items, seconds, terms, summary: &summary, evidence: &evidence)
        }
        let n = items.count
        guard effortModerated && summary.rapidGuesses > 0 && summary.rapidGuesses < n else {
            return try scoreKept(
                items, responses, seconds, summary: summary, evidence: evidence, domainCounts: domainCounts, report: report,
                indexReport: indexReport)
        }
        // Effort-moderated: θ and the evidence from the responses that are not rapid guesses.
        summary.excludedRapidGuesses = summary.rapidGuesses
        let kept = n - summary.rapidGuesses
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: kept) { keptItems in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: kept) { keptResponses in
                try withUnsafeTemporaryAllocation(of: Float.self, capacity: kept) { keptSeconds in
                    var m = 0
                    for k in 0..<n where !(seconds[k] < thresholdSeconds[items[k]]) {
                        keptItems[m] = items[k]; keptResponses[m] = responses[k]; keptSeconds[m] = seconds[k]
                        m += 1
                    }
                    var keptSummary = SessionTimeSummary()
                    var keptEvidence = SessionTimeEvidence()
                    timeTerms.withUnsafeBufferPointer { terms in
                        accumulate(
                            UnsafeBufferPointer(keptItems), UnsafeBufferPointer(keptSeconds), terms, summary: &keptSummary, evidence: &keptEvidence)
                    }
                    return try scoreKept(
                        UnsafeBufferPointer(keptItems), UnsafeBufferPointer(keptResponses), UnsafeBufferPointer(keptSeconds),
                        summary: summary, evidence: keptEvidence, domainCounts: domainCounts, report: report, indexReport: indexReport)
                }
            }
        }
    }

    /// Counts timed responses and rapid guesses into `summary` and adds each timed response of an item with a time
    /// model to `evidence`.
    @inline(__always)
    private func accumulate(
        _ items: UnsafeBufferPointer<Int>, _ seconds: UnsafeBufferPointer<Float>, _ terms: UnsafeBufferPointer<SIMD2<Double>>,
        summary: inout SessionTimeSummary, evidence: inout SessionTimeEvidence
    ) {
        thresholdSeconds.withUnsafeBufferPointer { thresholds in
            (summary.timedResponses, summary.rapidGuesses) = evidence.add(items, seconds, terms: terms, thresholds: thresholds)
        }
    }

    private func scoreKept(
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ seconds: UnsafeBufferPointer<Float>,
        summary: SessionTimeSummary, evidence: SessionTimeEvidence, domainCounts: UnsafeMutablePointer<Int>,
        report: ((AbilityEstimate) throws -> IQScore)?, indexReport: ((Int, AbilityEstimate) throws -> IQScore)?
    )
        throws -> (AbilityEstimate, IQScore, unscored: Int, indexes: [IndexScore], times: SessionTimeSummary)
    {
        var summary = summary
        // The times' factor exp(ℓθ + qθ²) times the prior N(μ, σ²): the normal prior with precision 1/σ² − 2q and
        // mean (μ/σ² + ℓ)/(1/σ² − 2q).
        var prior: (mean: Double, sd: Double)?
        let method = scorer.estimator.options.method
        if evidence.count > 0 && (method == .eap || method == .map) {
            let terms = evidence.thetaTerms(population)
            let mu = scorer.estimator.priorMean, sd = scorer.estimator.priorSD
            let precision = 1 / (sd * sd) - 2 * terms.quadratic
            prior = ((mu / (sd * sd) + terms.linear) / precision, 1 / precision.squareRoot())
        }
        let (estimate, iq, unscored, indexes) = try scorer.score(
            items, responses, domainCounts: domainCounts, report: report,
            indexReport: indexReport, prior: prior)
        if evidence.count > 0 {
            // An ML or WLE estimate at the bound has no finite SE: its speed is given at θ̂ without an SD.
            let se = estimate.standardError
            let tau = evidence.speed(population, thetaMean: estimate.theta, thetaVariance: se.isFinite ? se * se : 0)
            summary.speed = tau.mean
            summary.speedSD = se.isFinite ? tau.variance.squareRoot() : nil
        }
        if evidence.count >= 2 {
            let statistic = evidence.residualSquares
            summary.timeFit = statistic
            summary.timeFitPValue = LognormalPersonFit.pValue(statistic, count: evidence.count)
        }
        if summary.timedResponses > 0 && summary.effort < ResponseTimeEffort.minimumEffort { summary.flags.append(.rapidGuessing) }
        if let p = summary.timeFitPValue, p < Self.aberrantTimesLevel { summary.flags.append(.aberrantTimes) }
        if let compromised {
            let test = PreknowledgeTest(
                items: Array(items), responses: Array(responses), seconds: seconds.map { Double($0) }, parameters: parameters,
                timeItems: timeItems, compromised: compromised)
            summary.preknowledge = test
            if let p = test.combinedPValue, p < Self.preknowledgeLevel { summary.flags.append(.preknowledge) }
        }
        return (estimate, iq, unscored, indexes, summary)
    }
}
