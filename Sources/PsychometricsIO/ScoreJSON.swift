import Foundation
import Integrity
import Norming
import Psychometrics

extension ScoreText {
    /// One score as the members of a JSON object, without the braces: `"session_id":…,"n_items":…,"n_correct":…,
    /// "theta":…,"se":…,"iq":…,"iq_low":…,"iq_high":…,"percentile":…,"method":…,"flags":[…],"norms":…`, then
    /// `"age"` when one is given (at most 2 decimals, `appendAge`), `"n_unscored"` when the bank marks items unscored and `"domains":{name:{"correct","answered"}}` when it has
    /// domains, then on a battery `"indexes":{name:{"theta","se","iq","iq_low","iq_high","percentile","flags",
    /// "answered","correct"}}` (the reported domain indexes, `Battery`). θ and SE have 4 decimals and the percentile 1, rounded half away from zero (`appendFixed`), the
    /// same text as the CSV columns. `score --format jsonl` writes these members, and so does `iqscore serve`.
    /// A nil session id is written as `null`. `domainCounts` holds answered and correct per domain, interleaved.
    static func appendScoreMembers(
        sessionID: String?, _ e: AbilityEstimate, _ s: IQScore, unscored: Int, indexes: [IndexScore] = [],
        _ domainCounts: UnsafePointer<Int>, scorer: SessionScorer, method: String, norms: String,
        age: Double? = nil, to out: inout ByteBuffer
    ) {
        out.append("\"session_id\":")
        if let sessionID { appendJSONString(sessionID, to: &out) } else { out.append("null") }
        out.append(",\"n_items\":"); appendInt(e.itemCount, to: &out)
        out.append(",\"n_correct\":"); appendInt(e.correctCount, to: &out)
        out.append(",\"theta\":"); appendFixed(e.theta, decimals: 4, to: &out)
        out.append(",\"se\":"); appendFixed(e.standardError, decimals: 4, to: &out)
        out.append(",\"iq\":"); appendInt(s.iq, to: &out)
        out.append(",\"iq_low\":"); appendInt(s.low, to: &out)
        out.append(",\"iq_high\":"); appendInt(s.high, to: &out)
        out.append(",\"percentile\":"); appendFixed(s.percentile, decimals: 1, to: &out)
        out.append(",\"method\":"); appendJSONString(method, to: &out)
        out.append(",\"flags\":[")
        for (k, flag) in s.flags.enumerated() {
            if k > 0 { out.append(44) }
            appendJSONString(flag.rawValue, to: &out)
        }
        out.append("],\"norms\":"); appendJSONString(norms, to: &out)
        if let age { out.append(",\"age\":"); appendAge(age, to: &out) }
        if scorer.hasUnscoredItems { out.append(",\"n_unscored\":"); appendInt(unscored, to: &out) }
        if !scorer.domains.isEmpty {
            out.append(",\"domains\":{")
            for (d, name) in scorer.domains.enumerated() {
                if d > 0 { out.append(44) }
                appendJSONString(name, to: &out)
                out.append(":{\"correct\":"); appendInt(domainCounts[2 * d + 1], to: &out)
                out.append(",\"answered\":"); appendInt(domainCounts[2 * d], to: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "}"))
        }
        if scorer.battery != nil {
            out.append(",\"indexes\":{")
            for (k, index) in indexes.enumerated() {
                if k > 0 { out.append(44) }
                appendJSONString(index.factor, to: &out)
                out.append(":{\"theta\":"); appendFixed(index.theta, decimals: 4, to: &out)
                out.append(",\"se\":"); appendFixed(index.standardError, decimals: 4, to: &out)
                out.append(",\"iq\":"); appendInt(index.score.iq, to: &out)
                out.append(",\"iq_low\":"); appendInt(index.score.low, to: &out)
                out.append(",\"iq_high\":"); appendInt(index.score.high, to: &out)
                out.append(",\"percentile\":"); appendFixed(index.score.percentile, decimals: 1, to: &out)
                out.append(",\"flags\":[")
                for (f, flag) in index.score.flags.enumerated() {
                    if f > 0 { out.append(44) }
                    appendJSONString(flag.rawValue, to: &out)
                }
                out.append("],\"answered\":"); appendInt(index.answered, to: &out)
                out.append(",\"correct\":"); appendInt(index.correct, to: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The CSV columns of one domain index, each after `index_<factor>_` in the header.
    static let indexColumns = ["theta", "se", "iq", "iq_low", "iq_high", "percentile", "flags"]

    /// One index's `indexColumns` cells, each preceded by a comma; flags joined by `;`.
    static func appendIndexColumns(_ index: IndexScore, to out: inout ByteBuffer) {
        out.append(44); appendFixed(index.theta, decimals: 4, to: &out)
        out.append(44); appendFixed(index.standardError, decimals: 4, to: &out)
        out.append(44); appendInt(index.score.iq, to: &out)
        out.append(44); appendInt(index.score.low, to: &out)
        out.append(44); appendInt(index.score.high, to: &out)
        out.append(44); appendFixed(index.score.percentile, decimals: 1, to: &out)
        out.append(44)
        for (k, flag) in index.score.flags.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ";")) }
            out.append(flag.rawValue)
        }
    }
}

/// Scores sessions and writes each score as JSON object members, exactly as `score --format jsonl` does (the
/// same scorer call and the same text), for a server: built once per bank, shared by every request.
package struct ScoreJSONWriter: Sendable {
    package let scorer: SessionScorer
    /// Age-specific norms: the IQ, interval, percentile and flags come from them at the person's age (the
    /// scorer's own linear scale gives θ's settings only). Nil: the scorer's linear norms.
    package let ageNorms: AgeNormScale?
    /// On a battery: per reported index, its own norms (`BatchScorer.indexScales`); empty: the calibration
    /// population for every index.
    package let indexScales: [AgeNormScale?]
    /// The `method` and `norms` fields, the same for every score.
    package let method: String
    package let norms: String
    /// Scores sessions sent with their response times: present when the bank has a response-time model
    /// (`ItemBank.speedPopulation` and items' `timeModel`), nil otherwise.
    package let timedScorer: TimedSessionScorer?

    package init(scorer: SessionScorer, ageNorms: AgeNormScale? = nil, indexScales: [AgeNormScale?] = []) {
        self.scorer = scorer
        self.ageNorms = ageNorms
        self.indexScales = indexScales
        timedScorer = scorer.bank.speedPopulation != nil && scorer.bank.hasTimeModels ? try? TimedSessionScorer(scorer: scorer) : nil
        method = scorer.estimator.options.method.rawValue
        norms = ageNorms?.norms.label ?? scorer.scale.norms.name + "@" + scorer.scale.norms.version
    }

    /// Scores validated bank indices (distinct, in range; `SessionScorer.score(_:_:domainCounts:)`, the batch
    /// path) and returns the score's JSON members without braces (`ScoreText.appendScoreMembers`).
    /// `age` (years, already checked against `AgeNormScale.allowedAges`) is written as the `age` member when
    /// given, and is required by age-specific norms.
    ///
    /// With `seconds` (each response's time, NaN: none; checked against `ResponseTimes.allowedSeconds`) the session
    /// is scored with its times (`TimedSessionScorer`) and a `"times"` member follows (`ScoreText.appendTimeMembers`).
    /// - Throws: `PsychometricsError` when there are no responses, only unscored items, the estimate cannot
    ///   be reported, the norms are age-specific and no age is given (`.invalidOptions`), or times are given and
    ///   the bank has no response-time model (`.invalidOptions`).
    package func members(
        sessionID: String?, items: UnsafeBufferPointer<Int>, responses: UnsafeBufferPointer<UInt8>,
        seconds: UnsafeBufferPointer<Float>? = nil, age: Double? = nil
    ) throws -> [UInt8] {
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: max(2 * scorer.domains.count, 1)) { counts in
            let counts = counts.baseAddress!
            let report: ((AbilityEstimate) throws -> IQScore)? = ageNorms.map { scale in { try scale.score($0, age: age) } }
            let indexReport = Self.indexReport(indexScales, scorer: scorer, age: age)
            let (estimate, score, unscored, indexes): (AbilityEstimate, IQScore, Int, [IndexScore])
            var times: SessionTimeSummary?
            if let seconds {
                guard let timedScorer else { throw Self.noTimeModel }
                (estimate, score, unscored, indexes, times) = try timedScorer.score(
                    items, responses, seconds, domainCounts: counts, report: report,
                    indexReport: indexReport)
            } else {
                (estimate, score, unscored, indexes) = try scorer.score(
                    items, responses, domainCounts: counts, report: report, indexReport: indexReport)
            }
            var out = ByteBuffer(capacity: 320 + 48 * scorer.domains.count + (times == nil ? 0 : 200))
            defer { out.deallocate() }
            ScoreText.appendScoreMembers(
                sessionID: sessionID, estimate, score, unscored: unscored, indexes: indexes, UnsafePointer(counts),
                scorer: scorer, method: method, norms: norms, age: age, to: &out)
            if let times { ScoreText.appendTimeMembers(times, to: &out) }
            return out.array
        }
    }

    /// Times sent for a bank without a response-time model.
    package static let noTimeModel = PsychometricsError(
        .invalidOptions,
        "the bank has no response-time model (time_intensity, time_discrimination, speed_sd, speed_correlation), so response times cannot be used: send none, or calibrate the bank with times"
    )

    /// The report of a battery's indexes on their own norms (`SessionScorer.score(…indexReport:)`): index at
    /// `position` of the reported ones on `scales[position]` at `age`, or on the calibration population
    /// (`SessionScorer.indexScale`) where that is nil; nil when no index has norms of its own (`scales` empty).
    package static func indexReport(_ scales: [AgeNormScale?], scorer: SessionScorer, age: Double?) -> ((Int, AbilityEstimate) throws -> IQScore)? {
        guard !scales.isEmpty, let calibrationPopulation = scorer.indexScale else { return nil }
        return { position, estimate in try scales[position]?.score(estimate, age: age) ?? calibrationPopulation.score(estimate) }
    }

    /// `x` with `decimals` digits after the point, rounded half away from zero, as the score columns write θ and
    /// SE (`ScoreText.appendFixed`); nil when x is not finite (NaN and infinity have no JSON number).
    package static func fixed(_ x: Double, decimals: Int) -> String? {
        guard x.isFinite, (0...9).contains(decimals) else { return nil }
        var out = ByteBuffer(capacity: 64)
        defer { out.deallocate() }
        ScoreText.appendFixed(x, decimals: decimals, to: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
