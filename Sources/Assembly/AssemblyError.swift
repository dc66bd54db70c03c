/// The error every adaptive-testing and assembly entry point throws for a caller's input: one type for the
/// module, with a machine-readable `code` a server maps to an HTTP status (all are client errors: 422 in
/// `iqscore serve`), the offending `field` of the request when there is one, and a message that names the value
/// and what is allowed.
public struct AssemblyError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// An item id the bank does not have, or a bank position out of range.
        case unknownItem = "unknown_item"
        /// An item administered twice in one test.
        case repeatedItem = "repeated_item"
        /// A response that is not 0 or 1.
        case invalidResponse = "invalid_response"
        /// Exposure parameters that do not fit the bank (unknown id, K outside [0, 1], wrong count).
        case invalidExposure = "invalid_exposure"
    }

    public var code: Code
    /// Where in the caller's input, e.g. `administered[3].item_id`; nil when the error is not about one field.
    public var field: String?
    public var message: String

    public init(_ code: Code, field: String? = nil, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String { message }
}
