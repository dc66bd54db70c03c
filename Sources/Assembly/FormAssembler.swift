import Foundation
import Psychometrics

/// Why a blueprint cannot be met by a bank: each problem names the constraint and supply versus demand, e.g.
/// "spatial needs 5 eligible items with b in [1, 2]; the bank has 3".
extension AssemblyError {
    /// `.infeasibleBlueprint` with the constraints the eligible items cannot meet.
    static func infeasibleBlueprint(_ problems: [String]) -> AssemblyError {
        AssemblyError(.infeasibleBlueprint, problems: problems, prefix: "the blueprint cannot be met: ")
    }
}

/// One assembled form with its diagnostics.
public struct AssembledForm: Sendable, Hashable {
    /// Bank positions of the items, in presentation order (easiest first).
    public var items: [Int]
    public var domainCounts: [String: Int]
    /// Items per difficulty class, when the blueprint counts difficulty.
    public var difficultyCounts: [String: Int]
    public var anchorCounts: [String: Int]
    /// Test information and SE(θ) = 1/√I at the report points.
    public var information: [InformationPoint]
    /// Constraints the form does not meet (empty when every rule holds).
    public var relaxed: [String]
    /// Items shared with each earlier form of the same run.
    public var overlapWithEarlier: [Int]
    /// "exact" (counts only: max-flow allocation, random items within cells) or "heuristic" (swap search).
    public var method: String
    /// Heuristic with information targets: Σ_t min(I(θ_t)/target_t, 1) / T achieved, and its upper bound
    /// (the best `length` eligible items at each θ_t, ignoring every other rule).
    public var targetScore: Double?
    public var targetUpperBound: Double?

    public struct InformationPoint: Sendable, Hashable, Codable {
        public var theta: Double
        public var information: Double
        public var standardError: Double
    }
}

/// Per-call options of the assembler.
public struct AssemblyOptions: Sendable, Hashable {
    public var seed: UInt64 = 1
    /// Extra item ids to exclude (e.g. from `--exclude SEEN.csv`), on top of the blueprint's `exclude`.
    public var excluded: Set<String> = []
    /// Observed exposure rates by item id, for the blueprint's `max_exposure` rule.
    public var exposureRates: [String: Double] = [:]
    /// θ points for the information diagnostics (the blueprint's target θs are added).
    public var reportThetas: [Double] = [-2, -1, 0, 1, 2]
    public init(seed: UInt64 = 1) { self.seed = seed }
}

/// Assembles fixed forms from a bank to a blueprint.
///
/// - Counts only (domain and/or difficulty): exact. The domain × difficulty allocation is a flow problem
///   (source → domain, capacity its count; domain → class, capacity the eligible items in that cell;
///   class → sink, capacity its count); a maximum flow equal to the length is a feasible allocation, found with
///   seeded random edge order, and items are then drawn at random within each cell — so different seeds give
///   different, equally valid forms and exposure spreads. If the maximum flow falls short, its minimum cut names
///   the domains and classes that cannot be served.
/// - Enemies, anchors, information targets or an overlap limit: the exact allocation is the starting point,
///   then a first-improvement swap search lowers a penalty (count violations + missing anchors + enemy pairs +
///   overlap excess, then the information-target shortfall). Remaining violations are reported as relaxed.
///
/// Immutable and `Sendable`: build once per bank and blueprint, call `assemble` per request.
public struct FormAssembler: Sendable {
    public let bank: AssemblyBank
    public let blueprint: Blueprint
    /// Difficulty class of each item (index into `classes`), or −1 when it falls in none.
    let itemClass: [Int]
    /// Difficulty classes in a fixed order (sorted names), empty when the blueprint has no difficulty counts.
    package let classes: [String]
    let domainCounts: [String: Int]?
    /// Enemy sets (the bank's groups, then the blueprint's sets) as bank positions, and per item the sets it is in.
    let enemySets: [[Int]]
    let enemySetsOfItem: [[Int]]
    /// Item information at the blueprint's target θs (items × targets).
    let targetInformation: [[Double]]

    /// Prepares the assembly of `blueprint`'s forms from `bank` (each item's information at the target θs, its
    /// difficulty class, the enemy sets).
    /// - Throws: `AssemblyError` `.infeasibleBlueprint` listing every problem of the blueprint, alone or on this
    ///   bank (a domain the bank does not have, more items than a domain holds).
    public init(bank: AssemblyBank, blueprint: Blueprint) throws {
        let problems = blueprint.validationProblems()
        guard problems.isEmpty else { throw AssemblyError.infeasibleBlueprint(problems) }
        self.bank = bank
        self.blueprint = blueprint
        self.domainCounts = blueprint.resolvedDomainCounts()
        var groups: [String: [Int]] = [:]
        for (k, item) in bank.items.enumerated() { if let g = item.enemyGroup { groups[g, default: []].append(k) } }
        var sets = groups.keys.sorted().map { groups[$0]! }.filter { $0.count > 1 }
        for set in blueprint.enemies ?? [] {
            let members = set.compactMap { bank.index(of: $0) }
            if members.count > 1 { sets.append(members) }
        }
        enemySets = sets
        var ofItem = [[Int]](repeating: [], count: bank.items.count)
        for (g, set) in sets.enumerated() { for k in set { ofItem[k].append(g) } }
        enemySetsOfItem = ofItem
        let targets = blueprint.targetInformation ?? []
        targetInformation = bank.items.map { item in targets.map { item.information(at: $0.theta) } }
        if let counts = domainCounts {
            let unknown = counts.keys.filter { !bank.domains.contains($0) && counts[$0]! > 0 }.sorted()
            if !unknown.isEmpty {
                throw AssemblyError.infeasibleBlueprint(
                    unknown.map {
                        "domain \"\($0)\" needs \(counts[$0]!) items; the bank has no items in that domain (domains: \(bank.domains.joined(separator: ", ")))"
                    })
            }
        }
        if let counts = blueprint.difficultyCounts {
            let names = counts.keys.sorted()
            classes = names
            if let bands = blueprint.difficultyBands {
                let ordered = names.map { ($0, bands[$0]!) }
                let top = ordered.map { $0.1[1] }.max() ?? .infinity
                itemClass = bank.items.map { item in
                    let b = item.location
                    return ordered.firstIndex { b >= $0.1[0] && (b < $0.1[1] || (b == top && $0.1[1] == top)) } ?? -1
                }
            } else {
                itemClass = bank.items.map { item in item.difficultyLabel.flatMap { names.firstIndex(of: $0) } ?? -1 }
            }
        } else {
            classes = []
            itemClass = [Int](repeating: -1, count: bank.items.count)
        }
    }

    /// The difficulty class name of the item at bank position `k`, if the blueprint counts difficulty.
    package func difficultyClass(of k: Int) -> String? {
        itemClass[k] >= 0 && !classes.isEmpty ? classes[itemClass[k]] : nil
    }

    /// Describes a difficulty class for messages: "b in [0.5, 6]" or "label hard".
    func describe(class c: Int) -> String {
        if let band = blueprint.difficultyBands?[classes[c]] {
            return "\(classes[c]) (b in [\(band[0].formatted6), \(band[1].formatted6)])"
        }
        return "labelled \(classes[c])"
    }

    /// Assembles `blueprint.forms` forms (default 1).
    /// - Throws: `AssemblyError` `.infeasibleBlueprint` naming each constraint the eligible items cannot meet.
    public func assemble(options: AssemblyOptions = AssemblyOptions()) throws -> [AssembledForm] {
        var rng = SeededGenerator(seed: options.seed)
        let excluded = options.excluded.union(blueprint.exclude ?? [])
        let statuses = Set(blueprint.statuses ?? [.active])
        var eligible = [Bool](repeating: false, count: bank.items.count)
        var reasons: [String: Int] = [:]
        for (k, item) in bank.items.enumerated() {
            if !statuses.contains(item.status) { reasons["status \(item.status.rawValue)", default: 0] += 1; continue }
            if excluded.contains(item.id) { reasons["excluded", default: 0] += 1; continue }
            if let limit = blueprint.maxExposure, let rate = options.exposureRates[item.id], rate > limit {
                reasons["exposure above \(limit.formatted6)", default: 0] += 1; continue
            }
            eligible[k] = true
        }
        let formCount = blueprint.forms ?? 1
        let maxShared = Int((Double(blueprint.length) * (blueprint.maxOverlap ?? 1)).rounded(.down))
        var forms: [AssembledForm] = []
        var usedBy: [[Int]] = [] // items of each earlier form
        for _ in 0..<formCount {
            var form = try assembleOne(
                eligible: eligible, exclusionSummary: reasons, earlier: usedBy, maxShared: maxShared, rng: &rng, options: options)
            form.overlapWithEarlier = usedBy.map { Set($0).intersection(form.items).count }
            usedBy.append(form.items)
            forms.append(form)
        }
        return forms
    }
}
