/// The one error type of the Psychometrics module: what calibration, scoring, the IQ scale and linking throw
/// for a caller's input, with a machine-readable `code` a server maps to an HTTP status and a message that names
/// the bad value and what is allowed.
///
/// | code | meaning | HTTP (`iqscore serve`) |
/// |---|---|---|
/// | `invalidOptions` | a setting outside its documented range | 400 |
/// | `unknownItem`, `invalidResponse`, `repeatedItem`, `lengthMismatch`, `noResponses` | a session the bank cannot score as given | 422 |
/// | `unscorable` | a session with only unscored (pretest/retired) items, or an estimate that cannot be reported | 422 |
/// | `insufficientData` | data that cannot support the model (too few items, persons, common items) | 422 |
/// | `invalidParameters` | item parameters no model can use (a bank error) | 500 for the server's own bank |
/// | `resourceLimit` | more memory than the budget allows | 413 |
/// | `numericalFailure` | an estimation that diverged | 500 |
///
/// Statistical outcomes (non-convergence, a boundary estimate) are not errors: they are part of the result,
/// with warnings and flags. Errors located in a file are `InputError` (file, line, column).
public struct PsychometricsError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        case invalidOptions = "invalid_options"
        case unknownItem = "unknown_item"
        case invalidResponse = "invalid_response"
        case repeatedItem = "repeated_item"
        case lengthMismatch = "length_mismatch"
        case noResponses = "no_responses"
        case unscorable
        case insufficientData = "insufficient_data"
        case invalidParameters = "invalid_parameters"
        case resourceLimit = "resource_limit"
        case numericalFailure = "numerical_failure"
    }

    public var code: Code
    public var message: String
    /// For a problem with one item of a session (`unknownItem`, `invalidResponse`, `repeatedItem` from
    /// `SessionScorer`): the item's 0-based position in the session's item ids and responses, so a front end can
    /// point at it (the server's `/item_ids/3` or `/responses/3`).
    public var position: Int?

    package init(_ code: Code, _ message: String, position: Int? = nil) {
        self.code = code
        self.message = message
        self.position = position
    }

    public var description: String { message }

    /// A checked value built while decoding: `make` is the type's throwing initialiser, and what it throws becomes
    /// a `DecodingError.dataCorrupted` at `codingPath`, so that `JSONDecoder` checks what the initialiser checks.
    package static func decoding<T>(at codingPath: [any CodingKey], _ make: () throws(PsychometricsError) -> T) throws -> T {
        do { return try make() } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: error.message))
        }
    }

    /// Whether the caller's input caused it (a client error), as opposed to the bank or the computation.
    public var isClientError: Bool {
        switch code {
        case .invalidParameters, .numericalFailure: false
        default: true
        }
    }
}
