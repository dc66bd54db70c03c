/// The one error type of the Assembly module: what every adaptive-testing and assembly entry point throws for a
/// caller's input: one type for the
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
        /// CAT rules that are invalid alone or on this bank (`problems` lists each).
        case invalidConfiguration = "invalid_configuration"
        /// A blueprint the eligible items cannot meet (`problems` names each constraint).
        case infeasibleBlueprint = "infeasible_blueprint"
    }

    public var code: Code
    /// Where in the caller's input, e.g. `administered[3].item_id`; nil when the error is not about one field.
    public var field: String?
    public var message: String
    /// Each problem, when the error lists several (configuration, blueprint); else the message alone.
    public var problems: [String]

    package init(_ code: Code, field: String? = nil, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
        problems = [message]
    }

    /// An error listing several problems: the message is "`prefix`" followed by the problems joined with "; ".
    package init(_ code: Code, problems: [String], prefix: String = "") {
        self.code = code
        field = nil
        message = prefix + problems.joined(separator: "; ")
        self.problems = problems
    }

    public var description: String { message }
}
