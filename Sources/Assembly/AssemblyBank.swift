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
///
/// An item scored in more than two categories (`categoryModel`: graded, gpcm, pcm, rsm, nominal) is selected by its
/// information `information(at:)` = Σ_k P_k′²/P_k, matched to θ by `location` (the θ of its largest information)
/// and stratified by `slope` (2·√max I, which is a for a 2PL item); a 0/1 item by its a, b, c as before.
public struct AssemblyItem: Sendable, Hashable {
    public var id: String
    public var domain: String
    /// A 0/1 item's parameters (unused for an item in more than two categories).
    public var parameters: ItemParameters
    /// For an item scored in more than two categories, its model; nil for a 0/1 item.
    public let categoryModel: CategoryBankItem?
    /// Where the item measures best: b for a 0/1 item, else the θ in [−5, 5] (step 0.05) of its largest
    /// information.
    package let location: Double
    /// The slope a-stratification ranks by: a for a 0/1 item, 2·√(max I) for one in more categories.
    package let slope: Double
    public var status: ItemStatus
    /// Anchor (linking) item: blueprints can require a number per domain.
    public var isAnchor: Bool
    /// Items sharing an enemy group must not appear in the same test.
    public var enemyGroup: String?
    /// Optional difficulty label (e.g. easy/medium/hard) for blueprints that count by label.
    public var difficultyLabel: String?

    public init(
        id: String, domain: String, parameters: ItemParameters, categoryModel: CategoryBankItem? = nil, status: ItemStatus = .active,
        isAnchor: Bool = false, enemyGroup: String? = nil, difficultyLabel: String? = nil
    ) {
        self.id = id
        self.domain = domain
        self.parameters = parameters
        self.categoryModel = categoryModel
        if let model = categoryModel?.model {
            var best = (theta: 0.0, information: -1.0)
            for g in 0...200 {
                let theta = -5 + 0.05 * Double(g), information = model.information(at: theta)
                if information > best.information { best = (theta, information) }
            }
            location = best.theta
            slope = 2 * max(0, best.information).squareRoot()
        } else {
            location = parameters.difficulty
            slope = parameters.discrimination
        }
        self.status = status
        self.isAnchor = isAnchor
        self.enemyGroup = enemyGroup
        self.difficultyLabel = difficultyLabel
    }

    /// The item's model (`ItemResponseModel`): the category model, or the 0/1 parameters.
    package var responseModel: any ItemResponseModel { categoryModel?.model ?? parameters }

    /// Fisher information at θ (Birnbaum's formula for a 0/1 item; Σ_k P_k′²/P_k for the others).
    @inline(__always)
    package func information(at theta: Double) -> Double { categoryModel?.model.information(at: theta) ?? parameters.information(at: theta) }

    /// Responses are 0 ..< `categoryCount`.
    package var categoryCount: Int { categoryModel?.categoryCount ?? 2 }

    /// A response drawn at θ from the item's category probabilities, with one uniform draw `u` in [0, 1).
    package func response(at theta: Double, uniform u: Double) -> UInt8 {
        guard let model = categoryModel?.model else { return u < parameters.probability(at: theta) ? 1 : 0 }
        return CategoryResponseSimulator.response(to: model, at: theta, uniform: u)
    }
}

/// A calibrated bank prepared for assembly: items with their domains, status, anchor flags, enemy groups and
/// difficulty labels, indexed by id. An immutable `Sendable` value built once and shared.
public struct AssemblyBank: Sendable {
    public let items: [AssemblyItem]
    /// Domains in order of first appearance.
    public let domains: [String]
    /// Per item: index into `domains`.
    package let domainIndex: [Int]
    /// θ in the bank's calibration population (`ItemBank.latentScale`): the CAT's default prior and the
    /// simulees' default θ distribution.
    public let latentScale: LatentScale
    /// Per domain: its items whose status is active (the items a test may give).
    package let activeCountByDomain: [Int]
    /// Whether any item is scored in more than two categories (`AssemblyItem.categoryModel`).
    package let hasCategoryItems: Bool
    private let index: [String: Int]

    /// The one domain of a bank without a `domain` column.
    package static let singleDomain = "all"

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
        hasCategoryItems = items.contains { $0.categoryModel != nil }
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
    /// - Throws: `InputErrors` listing every bad metadata cell (an unknown status, anchor flag or empty domain),
    ///   each naming the bank file and line.
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
            items.append(
                AssemblyItem(
                    id: item.itemID, domain: domain, parameters: item.parameters, categoryModel: item.categoryModel, status: status, isAnchor: anchor,
                    enemyGroup: optional("enemy_group"), difficultyLabel: optional("difficulty_label")))
        }
        if !errors.isEmpty { throw InputErrors(errors) }
        self.init(items: items, latentScale: bank.latentScale)
    }

    package func index(of id: String) -> Int? { index[id] }

    /// Test information Σ Iⱼ(θ) of the items at `positions`.
    package func information(of positions: some Sequence<Int>, at theta: Double) -> Double {
        positions.reduce(0) { $0 + items[$1].information(at: theta) }
    }
}
