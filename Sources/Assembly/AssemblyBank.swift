import Foundation
import Psychometrics

/// Operational status of a bank item.
public enum ItemStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Scored and eligible for selection.
    case active
    /// Being pretested: may be embedded in forms when a blueprint allows, not scored.
    case pretest
    /// Never selected.
    case retired
}

/// One selectable item: IRT parameters plus the metadata assembly rules use.
public struct AssemblyItem: Sendable, Hashable {
    public var id: String
    public var domain: String
    public var parameters: ItemParameters
    public var status: ItemStatus
    /// Anchor (linking) item: blueprints can require a number per domain.
    public var isAnchor: Bool
    /// Items sharing an enemy group must not appear in the same test.
    public var enemyGroup: String?
    /// Optional difficulty label (e.g. easy/medium/hard) for blueprints that count by label.
    public var difficultyLabel: String?

    public init(id: String, domain: String, parameters: ItemParameters, status: ItemStatus = .active,
                isAnchor: Bool = false, enemyGroup: String? = nil, difficultyLabel: String? = nil) {
        self.id = id
        self.domain = domain
        self.parameters = parameters
        self.status = status
        self.isAnchor = isAnchor
        self.enemyGroup = enemyGroup
        self.difficultyLabel = difficultyLabel
    }
}

/// A calibrated bank prepared for assembly: items with their domains, status, anchor flags, enemy groups and
/// difficulty labels, indexed by id. An immutable `Sendable` value built once and shared.
public struct AssemblyBank: Sendable {
    public let items: [AssemblyItem]
    /// Domains in order of first appearance.
    public let domains: [String]
    /// Per item: index into `domains`.
    public let domainIndex: [Int]
    /// θ in the bank's calibration population (`ItemBank.latentScale`): the CAT's default prior and the
    /// simulees' default θ distribution.
    public let latentScale: LatentScale
    /// Per domain: its items whose status is active (the items a test may give).
    public let activeCountByDomain: [Int]
    private let index: [String: Int]

    /// The one domain of a bank without a `domain` column.
    public static let singleDomain = "all"

    public init(items: [AssemblyItem], latentScale: LatentScale = .standard) {
        self.items = items
        self.latentScale = latentScale
        var domains: [String] = [], position: [String: Int] = [:], domainIndex: [Int] = []
        for item in items {
            if position[item.domain] == nil { position[item.domain] = domains.count; domains.append(item.domain) }
            domainIndex.append(position[item.domain]!)
        }
        self.domains = domains
        self.domainIndex = domainIndex
        var active = [Int](repeating: 0, count: domains.count)
        for (j, item) in items.enumerated() where item.status == .active { active[domainIndex[j]] += 1 }
        activeCountByDomain = active
        var index: [String: Int] = [:]
        for (k, item) in items.enumerated() { index[item.id] = k }
        self.index = index
    }

    /// Builds an assembly bank from a calibrated bank whose metadata has a `domain` column and optionally
    /// `status` (active/pretest/retired; default active), `anchor` (1/0, true/false, yes/no; default no),
    /// `enemy_group` and `difficulty_label`. Every problem names the bank file and line.
    ///
    /// A bank without a `domain` column (girth's, catR's, mirt's) is one domain, `singleDomain`: a CAT runs on
    /// it without content balancing, and a blueprint may name that domain.
    public init(bank: ItemBank) throws {
        let file = bank.sourcePath ?? "bank"
        let hasDomains = bank.metadataColumns.contains("domain")
        var errors: [InputError] = []
        var items: [AssemblyItem] = []
        for item in bank.items {
            let line = item.sourceLine
            func fail(_ message: String) { errors.append(InputError(file: file, line: line, message: "item '\(item.itemID)': \(message)")) }
            let domain = hasDomains ? (item.metadata["domain"] ?? "").trimmingCharacters(in: .whitespaces) : Self.singleDomain
            if domain.isEmpty { fail("empty domain"); continue }
            var status = ItemStatus.active
            if let text = item.metadata["status"]?.trimmingCharacters(in: .whitespaces).lowercased(), !text.isEmpty {
                guard let s = ItemStatus(rawValue: text) else { fail("status '\(text)' is not one of active, pretest, retired"); continue }
                status = s
            }
            var anchor = false
            if let text = item.metadata["anchor"]?.trimmingCharacters(in: .whitespaces).lowercased(), !text.isEmpty {
                switch text {
                case "1", "true", "yes": anchor = true
                case "0", "false", "no": anchor = false
                default: fail("anchor '\(text)' is not one of 1/0, true/false, yes/no"); continue
                }
            }
            func optional(_ key: String) -> String? {
                guard let v = item.metadata[key]?.trimmingCharacters(in: .whitespaces), !v.isEmpty else { return nil }
                return v
            }
            items.append(AssemblyItem(id: item.itemID, domain: domain, parameters: item.parameters, status: status, isAnchor: anchor,
                                      enemyGroup: optional("enemy_group"), difficultyLabel: optional("difficulty_label")))
        }
        if !errors.isEmpty { throw InputErrors(errors) }
        self.init(items: items, latentScale: bank.latentScale)
    }

    public func index(of id: String) -> Int? { index[id] }

    /// Test information Σ Iⱼ(θ) of the items at `positions`.
    public func information(of positions: some Sequence<Int>, at theta: Double) -> Double {
        positions.reduce(0) { $0 + items[$1].parameters.information(at: theta) }
    }
}
