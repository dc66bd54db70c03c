import Assembly
import Psychometrics

// The request bodies of the API, read by `RequestDecoding` from a strictly parsed body (`StrictJSON`). Keys are
// snake_case as the `score` CSV columns are; a key the API does not define is an error (422 `invalid-request`),
// so a misspelt `"methd"` is never silently ignored.

/// `POST /v1/score`, and each entry of `POST /v1/score/batch`.
struct ScoreRequest: Sendable {
    var sessionID: String?
    var itemIDs: [String]
    /// Each 0 or 1, written as the JSON numbers `0` and `1`: `1.0`, `true` and `"1"` are refused (422
    /// `invalid-response` naming `/responses/k`), so a client's type confusion is caught, not guessed at.
    var responses: [Int]
    var method: String?
    /// The person's age in years, 0–130 (needed when the served norms are age-specific; otherwise checked and
    /// echoed).
    var age: Double?
    /// Each response's time in seconds (`ResponseTimes.allowedSeconds`; NaN for a JSON `null`: none), one per item;
    /// nil: the session is scored without times.
    var seconds: [Float]?

    static let keys = ["session_id", "item_ids", "responses", "method", "age", "seconds"]
}

/// `POST /v1/cat/next`.
struct CATNextRequest: Sendable {
    var sessionID: String
    var administered: [AdministeredItem]
    /// Per administered item its response time in seconds (NaN: none); nil when no entry has `seconds`. The
    /// finished test's score uses them; item selection uses the responses.
    var seconds: [Float]?
    var exclude: [String]
    /// The person's age in years, for the finished test's score (required when the served norms are
    /// age-specific).
    var age: Double?

    static let keys = ["session_id", "administered", "exclude", "age"]
    static let administeredKeys = ["item_id", "response", "seconds"]
}

/// `POST /v1/forms`.
struct FormsRequest: Sendable {
    var blueprint: Blueprint?
    var exclude: [String]
    var seed: UInt64?

    static let keys = ["blueprint", "exclude", "seed"]
}
