import Foundation

/// Which factors each item of a battery loads on: the general factor (every item), and at most one specific
/// factor per item (its domain, or any grouping column of the items' metadata). The bifactor and testlet models
/// (`BifactorCalibrator`) read it.
public struct FactorStructure: Sendable, Hashable, Codable {
    /// The general factor's name (the full-scale score's factor), "general" by default.
    public var generalFactor: String
    /// The specific factors' names, in the order they were first met.
    public var specificFactors: [String]
    /// Per item id, the index of its specific factor in `specificFactors`; an item not listed loads on the general
    /// factor only.
    public var specificFactorOfItem: [String: Int]

    /// The longest factor name accepted (names become bank column headers and report labels).
    package static let maximumNameLength = 64

    /// A structure from each item's specific factor, in order (nil or empty: general only). A factor name may not
    /// repeat the general factor's.
    /// - Throws: `PsychometricsError(.invalidOptions)` for an empty or over-long general factor name, a factor name
    ///   longer than `maximumNameLength` or equal to the general factor's, or an item listed twice.
    public init(generalFactor: String = "general", items: [(itemID: String, factor: String?)]) throws(PsychometricsError) {
        guard !generalFactor.isEmpty, generalFactor.count <= Self.maximumNameLength else {
            throw PsychometricsError(
                .invalidOptions, "the general factor's name must have 1…\(Self.maximumNameLength) characters, got \(generalFactor.count)")
        }
        var names: [String] = [], index: [String: Int] = [:], assignment: [String: Int] = [:], seen = Set<String>()
        for (id, factor) in items {
            guard seen.insert(id).inserted else { throw PsychometricsError(.invalidOptions, "item \(id) is listed twice in the factor structure") }
            guard let name = factor?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { continue }
            guard name.count <= Self.maximumNameLength else {
                throw PsychometricsError(
                    .invalidOptions, "item \(id): factor name \"\(name.prefix(40))…\" is longer than \(Self.maximumNameLength) characters")
            }
            guard name != generalFactor else {
                throw PsychometricsError(
                    .invalidOptions, "item \(id): specific factor \"\(name)\" has the general factor's name; name the general factor otherwise")
            }
            if index[name] == nil { index[name] = names.count; names.append(name) }
            assignment[id] = index[name]!
        }
        self.generalFactor = generalFactor
        self.specificFactors = names
        self.specificFactorOfItem = assignment
    }

    /// All factor names: the general factor, then the specific ones.
    public var factorNames: [String] { [generalFactor] + specificFactors }
}
