import Integrity
import Psychometrics

// What a session's response times say (`SessionTimeSummary`), in the score files and the server's responses.
extension ScoreText {
    /// The CSV columns of `SessionTimeSummary`, after a score row's other columns: timed responses, rapid guesses,
    /// those left out of θ (effort-moderated scoring), response-time effort, speed τ and its SD, l_t and its
    /// p-value, and the time flags joined by `;`. A value that does not exist (no timed response, fewer than two
    /// for l_t, no SD at a bound) is an empty cell.
    static let timeColumns = ["n_timed", "rapid_guesses", "rapid_excluded", "rte", "speed", "speed_sd", "lt", "lt_p", "time_flags"]

    /// With suspected items (`TimedSessionScorer.compromised`), after `timeColumns`: the suspected items the session
    /// answered, the preknowledge test's signed likelihood ratio, its speed difference z and the combined p-value
    /// (`PreknowledgeTest`; empty where a part cannot be computed).
    static let preknowledgeColumns = ["pk_answered", "pk_lr", "pk_speed_z", "pk_p"]

    /// `timeColumns`' cells, each preceded by a comma.
    static func appendTimeColumns(_ t: SessionTimeSummary, to out: inout ByteBuffer) {
        out.append(44); appendInt(t.timedResponses, to: &out)
        out.append(44); appendInt(t.rapidGuesses, to: &out)
        out.append(44); appendInt(t.excludedRapidGuesses, to: &out)
        out.append(44); appendFixed(t.effort, decimals: 4, to: &out)
        func optional(_ value: Double?, _ decimals: Int) {
            out.append(44)
            if let value, value.isFinite { appendFixed(value, decimals: decimals, to: &out) }
        }
        optional(t.speed, 4); optional(t.speedSD, 4); optional(t.timeFit, 3); optional(t.timeFitPValue, 4)
        out.append(44)
        for (k, flag) in t.flags.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ";")) }
            out.append(flag.rawValue)
        }
        if let pk = t.preknowledge {
            out.append(44); appendInt(pk.compromisedAnswered, to: &out)
            optional(pk.responseStatistic, 4); optional(pk.speedStatistic, 4); optional(pk.combinedPValue, 4)
        }
    }

    /// The JSON member `,"times":{…}` with the same values as `timeColumns` (null where a value does not exist) and
    /// the flags as an array.
    static func appendTimeMembers(_ t: SessionTimeSummary, to out: inout ByteBuffer) {
        out.append(",\"times\":{\"n_timed\":"); appendInt(t.timedResponses, to: &out)
        out.append(",\"rapid_guesses\":"); appendInt(t.rapidGuesses, to: &out)
        out.append(",\"rapid_excluded\":"); appendInt(t.excludedRapidGuesses, to: &out)
        out.append(",\"rte\":"); appendFixed(t.effort, decimals: 4, to: &out)
        func member(_ name: String, _ value: Double?, _ decimals: Int) {
            out.append(name)
            if let value, value.isFinite { appendFixed(value, decimals: decimals, to: &out) } else { out.append("null") }
        }
        member(",\"speed\":", t.speed, 4); member(",\"speed_sd\":", t.speedSD, 4)
        member(",\"lt\":", t.timeFit, 3); member(",\"lt_p\":", t.timeFitPValue, 4)
        if let pk = t.preknowledge {
            out.append(",\"preknowledge\":{\"answered\":"); appendInt(pk.compromisedAnswered, to: &out)
            member(",\"lr\":", pk.responseStatistic, 4); member(",\"speed_z\":", pk.speedStatistic, 4); member(",\"p\":", pk.combinedPValue, 4)
            out.append("}")
        }
        out.append(",\"flags\":[")
        for (k, flag) in t.flags.enumerated() {
            if k > 0 { out.append(44) }
            appendJSONString(flag.rawValue, to: &out)
        }
        out.append("]}")
    }
}
