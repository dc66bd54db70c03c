import Foundation
import Psychometrics

/// What a test must look like. Decoded from JSON (snake_case keys), e.g.
/// ```json
/// {"length": 25, "domain_counts": {"pattern": 9, "logic": 8, "spatial": 8},
///  "difficulty_counts": {"easy": 8, "medium": 9, "hard": 8},
///  "difficulty_bands": {"easy": [-6, -0.5], "medium": [-0.5, 0.5], "hard": [0.5, 6]},
///  "anchors_per_domain": 1, "enemies": [["i1", "i7"]], "forms": 3, "max_overlap": 0.2}
/// ```
public struct Blueprint: Sendable, Hashable, Codable {
    /// Number of items in each form.
    public var length: Int
    /// Exact item counts per domain (must sum to `length`).
    public var domainCounts: [String: Int]?
    /// Relative domain weights, turned into counts by the largest-remainder rule (see `resolvedDomainCounts`).
    public var domainWeights: [String: Double]?
    /// Exact counts per difficulty class: labels from the bank's `difficulty_label` column, or band names of
    /// `difficultyBands`.
    public var difficultyCounts: [String: Int]?
    /// Difficulty classes by b: name → [low, high) (the highest band includes its upper end).
    public var difficultyBands: [String: [Double]]?
    /// Anchor items required in every domain of the form.
    public var anchorsPerDomain: Int?
    /// Item ids never to select (e.g. items the person has seen).
    public var exclude: [String]?
    /// Sets of item ids of which at most one may appear in a form (in addition to the bank's enemy groups).
    public var enemies: [[String]]?
    /// Optional targets for the test information function.
    public var targetInformation: [InformationTarget]?
    /// Items whose past exposure rate exceeds this are not selected (needs exposure rates from the caller).
    public var maxExposure: Double?
    /// Number of parallel forms to assemble (default 1).
    public var forms: Int?
    /// Largest share of a form's items that may also appear in another form of the same run (default 1 = no limit).
    public var maxOverlap: Double?
    /// Item statuses eligible for selection (default: active only).
    public var statuses: [ItemStatus]?

    public struct InformationTarget: Sendable, Hashable, Codable {
        public var theta: Double
        public var information: Double
        public init(theta: Double, information: Double) { self.theta = theta; self.information = information }
        enum CodingKeys: String, CodingKey, CaseIterable { case theta, information }
    }

    public init(length: Int, domainCounts: [String: Int]? = nil, domainWeights: [String: Double]? = nil) {
        self.length = length
        self.domainCounts = domainCounts
        self.domainWeights = domainWeights
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case length, domainCounts = "domain_counts", domainWeights = "domain_weights", difficultyCounts = "difficulty_counts"
        case difficultyBands = "difficulty_bands", anchorsPerDomain = "anchors_per_domain", exclude, enemies
        case targetInformation = "target_information", maxExposure = "max_exposure", forms, maxOverlap = "max_overlap", statuses
    }

    /// Decodes and validates blueprint JSON; errors name `file`.
    package static func decode(_ data: Data, file: String) throws -> Blueprint {
        try validated(JSONInput.decode(Blueprint.self, from: data, file: file), file: file)
    }

    package static func validated(_ blueprint: Blueprint, file: String) throws -> Blueprint {
        let problems = blueprint.validationProblems()
        guard problems.isEmpty else { throw InputError(file: file, message: problems.joined(separator: "; ")) }
        return blueprint
    }

    /// `length` allowed: 1…`TestLength.maximum` (10,000). Forms, flows and swap searches are sized by the
    /// length, and a count above it could not be met by any bank this reads in reasonable time.
    package static let allowedLengths = 1...TestLength.maximum

    /// `forms` allowed: 1…1,000. Each form is assembled in turn and compared with every earlier one for the
    /// overlap rule, so time grows with forms²: 1,000 six-item forms take ~2 s, 10,000 took 41 s (release).
    package static let allowedFormCounts = 1...1_000

    /// `target_information` θs allowed: [−10, 10] (SDs of the population; IQ 100 ± 150).
    package static let allowedTargetThetas = NumberRange.closed(-10, 10)

    /// `target_information` values allowed: (0, 1,000,000]. An item's information is at most a²/4, so with
    /// slopes ≤ 50 and 10,000 items no form exceeds 6.25·10⁶; targets are typically 5–20.
    package static let allowedTargetInformation = NumberRange.aboveUpTo(0, 1_000_000)

    /// Information targets allowed: at most 100. Each is evaluated for every item of the bank at every swap.
    package static let maximumTargets = 100

    /// Internal consistency (independent of any bank). Every count is checked against its range before any
    /// sum, so no sum can overflow.
    package func validationProblems() -> [String] {
        var problems: [String] = []
        if let p = Self.allowedLengths.problem(length, "length") { problems.append(p) }
        let perCell = 0...max(length, 0)
        if domainCounts != nil && domainWeights != nil { problems.append("give domain_counts or domain_weights, not both") }
        for (key, counts) in [("domain_counts", domainCounts), ("difficulty_counts", difficultyCounts)] {
            guard let counts else { continue }
            var fits = true
            for (name, n) in counts.sorted(by: { $0.key < $1.key }) {
                if let p = perCell.problem(n, "\(key) for \"\(name)\"") { problems.append(p); fits = false }
            }
            if fits {
                let total = counts.values.reduce(0, +)
                if total != length { problems.append("\(key) sum to \(total), but length is \(length)") }
            }
        }
        if let weights = domainWeights { problems += domainWeightProblems(weights) }
        if let bands = difficultyBands {
            for (name, band) in bands.sorted(by: { $0.key < $1.key }) where band.count != 2 || !(band[0] < band[1]) {
                problems.append("difficulty band \"\(name)\" must be [low, high] with low < high")
            }
            if let counts = difficultyCounts {
                for name in counts.keys.sorted() where bands[name] == nil {
                    problems.append("difficulty_counts names \"\(name)\", which difficulty_bands does not define")
                }
            }
        }
        if let a = anchorsPerDomain, let p = perCell.problem(a, "anchors_per_domain") { problems.append(p) }
        if let f = forms, let p = Self.allowedFormCounts.problem(f, "forms") { problems.append(p) }
        if let o = maxOverlap, !(o >= 0 && o <= 1) { problems.append("max_overlap must be in [0, 1], got \(o)") }
        if let e = maxExposure, !(e > 0 && e <= 1) { problems.append("max_exposure must be in (0, 1], got \(e)") }
        if let enemies {
            if enemies.contains(where: { $0.count < 2 }) { problems.append("each enemies set needs at least 2 item ids") }
            for (k, set) in enemies.enumerated() {
                var seen = Set<String>()
                if let repeated = set.first(where: { !seen.insert($0).inserted }) {
                    problems.append("enemies set \(k + 1) names '\(repeated)' twice (a set lists distinct items, at most one of which may appear)")
                }
            }
        }
        if let targets = targetInformation {
            if targets.count > Self.maximumTargets {
                problems.append("target_information has \(targets.count) entries; at most \(Self.maximumTargets) are allowed")
            }
            for (k, t) in targets.enumerated().prefix(Self.maximumTargets) {
                if let p = Self.allowedTargetThetas.problem(t.theta, "target_information[\(k)].theta") { problems.append(p) }
                if let p = Self.allowedTargetInformation.problem(t.information, "target_information[\(k)].information") { problems.append(p) }
            }
        }
        return problems
    }

    /// Per-domain counts: `domainCounts` as given, or `domainWeights` turned into counts by the largest-remainder
    /// (Hamilton) rule: each domain gets ⌊length·wᵢ/Σw⌋, and the items left over go one each to the domains with
    /// the largest fractional parts (ties: larger weight first, then domain name). Nil when neither is given.
    package func resolvedDomainCounts() -> [String: Int]? {
        if let domainCounts { return domainCounts }
        guard let weights = domainWeights else { return nil }
        let total = weights.values.reduce(0, +)
        var counts: [String: Int] = [:]
        var remainders: [(name: String, fraction: Double, weight: Double)] = []
        for (name, w) in weights {
            // w / total is in [0, 1] once `domainWeightProblems` holds (finite weights, finite positive sum), so
            // exact is in [0, length] and converts to Int; length · w could overflow to ∞ first.
            let exact = Double(length) * (w / total)
            let floor = exact.rounded(.down)
            counts[name] = Int(floor)
            remainders.append((name, exact - floor, w))
        }
        var left = length - counts.values.reduce(0, +)
        remainders.sort { ($0.fraction, $0.weight, $1.name) > ($1.fraction, $1.weight, $0.name) }
        for r in remainders where left > 0 {
            counts[r.name, default: 0] += 1
            left -= 1
        }
        return counts
    }
}

extension Blueprint: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var nestedJSONObjects: [String: any JSONObjectInput.Type] { ["target_information": InformationTarget.self] }
    package static var jsonDescription: String { "the blueprint" }
    package static var integerKeys: Set<String> { ["length", "domain_counts", "difficulty_counts", "anchors_per_domain", "forms"] }
    package static var jsonExample: String { #"{"length": 25, "domain_counts": {"logic": 13, "spatial": 12}}"# }
}

extension Blueprint.InformationTarget: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var jsonDescription: String { "an information target" }
    package static var jsonExample: String { #"{"theta": 0, "information": 10}"# }
}

/// Problems with relative domain weights (a blueprint's or a CAT's `domain_weights`): each finite and ≥ 0, the
/// sum finite and positive. Weights are turned into shares wᵢ/Σw, so a sum that overflows to ∞ (two weights of
/// 1e308) would make every share 0 or NaN.
func domainWeightProblems(_ weights: [String: Double]) -> [String] {
    let total = weights.values.reduce(0, +)
    if weights.isEmpty || weights.values.contains(where: { !($0 >= 0 && $0.isFinite) }) || !(total > 0 && total.isFinite) {
        return ["domain_weights must be non-negative numbers with a positive, finite sum"]
    }
    return []
}
