import Foundation
import Psychometrics

/// A session scored with its response times: θ with the times' collateral information, the session's speed, and
/// its response-time flags.
public struct TimedSessionScore: Sendable, Hashable {
    /// The score (θ, IQ, domain counts) — with the times' information about θ under EAP and MAP, and without the
    /// rapid guesses when scoring is effort-moderated.
    public var score: SessionScore
    /// The posterior mean and SD of speed τ given responses and times (nil without a timed response).
    public var speed: Double?
    public var speedSD: Double?
    /// Rapid guesses and effort (`ResponseTimeEffort`).
    public var effort: ResponseTimeEffort
    /// Rapid guesses left out of θ (effort-moderated scoring), 0 otherwise.
    public var excludedRapidGuesses: Int
    /// l_t and its p-value (`LognormalPersonFit`).
    public var timeFit: LognormalPersonFit
    /// The session's flags, in `TimeFlag` order.
    public var flags: [TimeFlag]
}

/// What a session's times say about it.
public enum TimeFlag: String, Sendable, Hashable, Codable, CaseIterable {
    /// Response-time effort below 0.90 (Wise & Kong 2005): at least one answer in ten a rapid guess.
    case rapidGuessing = "rapid_guessing"
    /// The lognormal person fit l_t at p < `TimedSessionScorer.aberrantTimesLevel` (0.01).
    case aberrantTimes = "aberrant_times"
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

    /// l_t's flag level: 0.01.
    public static let aberrantTimesLevel = 0.01

    /// - Throws: `PsychometricsError.invalidOptions` when the bank has no speed population or no item with a time
    ///   model (calibrate it with times first).
    public init(scorer: SessionScorer, rule: RapidGuessThresholds.Rule = .nt10, effortModerated: Bool = false) throws {
        guard let population = scorer.bank.speedPopulation, scorer.bank.hasTimeModels else {
            throw PsychometricsError(.invalidOptions, "the bank has no response-time model (time_intensity, time_discrimination, speed_sd, speed_correlation): calibrate it with the sessions' times first")
        }
        self.scorer = scorer
        timeItems = scorer.bank.items.map(\.timeModel)
        self.population = population
        thresholds = rule == .nt10 ? .normative(items: timeItems, population: population) : .lognormal(items: timeItems, population: population)
        self.effortModerated = effortModerated
    }

    /// Scores one session: item ids, responses (0/1 or categories) and seconds (nil: no time).
    /// - Throws: what `SessionScorer.score(itemIDs:responses:)` throws; `.lengthMismatch` without one time slot per
    ///   response, `.invalidResponse` for a time outside `ResponseTimes.allowedSeconds`.
    public func score(itemIDs: [String], responses: [Int], seconds: [Double?]) throws -> TimedSessionScore {
        guard seconds.count == itemIDs.count else {
            throw PsychometricsError(.lengthMismatch, "\(itemIDs.count) item ids but \(seconds.count) times")
        }
        for (k, t) in seconds.enumerated() {
            if let t, !ResponseTimes.allowedSeconds.contains(Float(t)) || !t.isFinite {
                throw PsychometricsError(.invalidResponse, "item '\(itemIDs[k])': response time \(t) s; allowed \(ResponseTimes.allowedSeconds.lowerBound)…\(ResponseTimes.allowedSeconds.upperBound) s or none")
            }
        }
        let items = try scorer.validatedIndices(itemIDs: itemIDs, responses: responses)
        return try items.withUnsafeBufferPointer { i in
            try responses.map { UInt8($0) }.withUnsafeBufferPointer { r in
                try seconds.map { $0 ?? .nan }.withUnsafeBufferPointer { try score(i, r, $0) }
            }
        }
    }

    /// Scores validated bank indices, responses and seconds (NaN: none): the batch path.
    package func score(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ seconds: UnsafeBufferPointer<Double>) throws -> TimedSessionScore {
        let effort = ResponseTimeEffort(items: items, seconds: seconds, thresholds: thresholds)
        let excluded = effortModerated ? effort.rapidGuesses : 0
        var keptItems = Array(items), keptResponses = Array(responses), keptSeconds = Array(seconds)
        if excluded > 0 && excluded < items.count {
            for k in effort.rapidPositions.reversed() { keptItems.remove(at: k); keptResponses.remove(at: k); keptSeconds.remove(at: k) }
        }
        var evidence = SessionTimeEvidence()
        for (j, t) in zip(keptItems, keptSeconds) where !t.isNaN {
            if let item = timeItems[j] { evidence.add(item, logSeconds: log(t)) }
        }
        var sessionScorer = scorer
        let method = scorer.estimator.options.method
        if evidence.count > 0 && (method == .eap || method == .map) {
            let terms = evidence.thetaTerms(population)
            let mu = scorer.estimator.priorMean, sd = scorer.estimator.priorSD
            let precision = 1 / (sd * sd) - 2 * terms.quadratic
            sessionScorer = scorer.withPrior(mean: (mu / (sd * sd) + terms.linear) / precision, sd: 1 / precision.squareRoot())
        }
        let score = try keptItems.withUnsafeBufferPointer { i in try keptResponses.withUnsafeBufferPointer { try sessionScorer.score(i, $0) } }
        var speed: Double?, speedSD: Double?
        if evidence.count > 0 {
            let se = score.estimate.standardError
            let tau = evidence.speed(population, thetaMean: score.estimate.theta, thetaVariance: se * se)
            speed = tau.mean
            speedSD = tau.variance.squareRoot()
        }
        let fit = LognormalPersonFit(items: keptItems.map { timeItems[$0] }, seconds: keptSeconds)
        var flags: [TimeFlag] = []
        if effort.isDisengaged { flags.append(.rapidGuessing) }
        if let p = fit.pValue, p < Self.aberrantTimesLevel { flags.append(.aberrantTimes) }
        return TimedSessionScore(score: score, speed: speed, speedSD: speedSD, effort: effort, excludedRapidGuesses: excluded, timeFit: fit, flags: flags)
    }
}
