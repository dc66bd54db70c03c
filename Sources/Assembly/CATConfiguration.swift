import Foundation
import Psychometrics

/// Rules of an adaptive test (CAT). Decoded from JSON with snake_case keys; every key is optional except
/// `max_items`, e.g. the app's rules:
/// ```json
/// {"min_items": 8, "max_items": 25, "se_target": 0.30, "min_per_domain": 1, "randomesque": 5,
///  "exposure_target": 0.25}
/// ```
/// Keys and defaults:
///
/// | key | meaning | default |
/// |---|---|---|
/// | `min_items` | shortest test | 1 |
/// | `max_items` | longest test (required) | — |
/// | `se_target` | stop when SE(θ̂) ≤ this (with the length and content rules); `null` = fixed length | `null` |
/// | `min_per_domain` | items per domain: one integer for every domain, or `{"logic": 2, …}` | 0 |
/// | `domain_weights` | target shares per domain (Kingsbury–Zara), e.g. `{"logic": 2, "math": 1}` | none |
/// | `randomesque` | choose at random among the best k items (Kingsbury & Zara 1989) | 1 |
/// | `a_stratification` | number of a-strata (Chang & Ying 1999); `null` = maximum information | `null` |
/// | `selection` | `maximum_information`, or `progressive`: information plus a random part that fades as the test's information grows (`Selection`) | `maximum_information` |
/// | `progressive_acceleration` | t of the progressive rule: the random part's weight is 1 − (I/I*)^t | 1 |
/// | `exposure_target` | r_max of Sympson–Hetter exposure control; `null` = none | 0.25, raised on a bank too small for it (`adaptingDefaultExposureTarget(to:)`) |
/// | `exposure_calibration_simulees` | simulees per Sympson–Hetter calibration round | 5000 |
/// | `exposure_calibration_iterations` | largest number of calibration rounds | 40 |
/// | `exposure_margin` | the calibration aims at r_max − margin (room for simulation noise) | 0.02 |
/// | `estimator` | θ estimator: eap, map, ml, wle | eap |
/// | `prior_mean`, `prior_sd` | N(μ, σ²) prior of θ (EAP, MAP) and of the calibration simulees | the bank's latent mean and SD (`ItemBank.latentScale`: 0, 1 on most banks) |
/// | `quadrature_points` | EAP grid points on [−6, 6] | 61 |
///
/// Unknown keys are errors (a misspelt rule must not be ignored silently).
public struct CATConfiguration: Sendable, Hashable {
    public var minItems: Int = 1
    public var maxItems: Int
    public var seTarget: Double?
    public var minPerDomain: DomainMinimum = .all(0)
    public var domainWeights: [String: Double]?
    public var randomesque: Int = 1
    public var aStratification: Int?
    /// How an item is chosen among the eligible ones (with `a_stratification` unset).
    public var selection: Selection = .maximumInformation
    /// t of the progressive rule (`Selection.progressive`), in `allowedProgressiveAccelerations`.
    public var progressiveAcceleration: Double = 1
    /// r_max of Sympson–Hetter exposure control; nil: none. Setting it makes it an explicit choice.
    public var exposureTarget: Double? = Self.defaultExposureTarget {
        didSet { exposureTargetIsDefault = false }
    }
    /// Whether `exposureTarget` is the default (no `exposure_target` key, or an initialiser without the
    /// argument): on a bank that cannot meet it, a `CATItemPool` raises it to what the bank allows instead of
    /// refusing (`adaptingDefaultExposureTarget(to:)`). An explicit target that cannot be met is an error.
    package private(set) var exposureTargetIsDefault = true
    package var exposureCalibrationSimulees: Int = 5000
    package var exposureCalibrationIterations: Int = 40
    package var exposureMargin: Double = 0.02
    public var estimator: AbilityMethod = .eap
    /// nil: the bank's latent mean and SD (`AssemblyBank.latentScale`).
    public var priorMean: Double?
    public var priorSD: Double?
    public var quadraturePoints: Int = 61

    /// Per-domain minimum counts: the same number for every domain of the bank, or a map (unlisted domains: 0).
    public enum DomainMinimum: Sendable, Hashable, Codable {
        case all(Int)
        case perDomain([String: Int])

        /// Decodes a whole number (every domain) or an object of domain → minimum.
        /// - Throws: `DecodingError` when the value is neither.
        public init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let n = try? container.decode(Int.self) { self = .all(n); return }
            self = .perDomain(try container.decode([String: Int].self))
        }

        /// Encodes as `init(from:)` reads.
        /// - Throws: what the encoder throws.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .all(let n): try container.encode(n)
            case .perDomain(let map): try container.encode(map)
            }
        }

        /// The minimum for `domain`.
        public func minimum(for domain: String) -> Int {
            switch self {
            case .all(let n): return n
            case .perDomain(let map): return map[domain] ?? 0
            }
        }
    }

    /// The item-selection rule.
    ///
    /// - `maximumInformation`: the item most informative at θ̂ (randomesque: one of the best k).
    /// - `progressive`: the progressive method (Revuelta & Ponsoda 1998; with the acceleration of Barrada, Olea,
    ///   Ponsoda & Abad 2008), made for tests that stop at an SE target: each eligible item scores
    ///   ```
    ///   (1 − W) · U_j · H + W · I_j(θ̂),   U_j ~ U(0, 1) afresh at each step,   H = max_j I_j(θ̂)
    ///   W = min(1, I_test / I*)^t
    ///   ```
    ///   where I_test = 1/SE² − 1/σ²_prior is the information the test has gathered and I* = 1/se_target² −
    ///   1/σ²_prior the information it needs (without an SE target W = Σ_{f≤s} f^t / Σ_{f≤max_items} f^t after s
    ///   items, Barrada et al.'s weight). The first items are drawn almost at random — when θ̂ is still the prior
    ///   mean and the most informative items would be the same for everybody — and the rule turns into maximum
    ///   information as the test nears its target. It spreads exposure over the bank where it costs little
    ///   precision; with Sympson–Hetter (`exposure_target`) it is the progressive-restricted method.
    public enum Selection: String, Sendable, Hashable, Codable, CaseIterable {
        case maximumInformation = "maximum_information"
        case progressive
    }

    /// `progressive_acceleration` allowed: [0, 20] (0: W = 1, maximum information; large t keeps the random part
    /// until the test is nearly done).
    package static let allowedProgressiveAccelerations = NumberRange.closed(0, 20)

    /// The default `exposure_target`: 0.25 (no item in more than a quarter of the tests), on a bank that allows
    /// it.
    package static let defaultExposureTarget = 0.25

    /// A configuration with the default exposure target (`defaultExposureTarget`, adapted to a small bank).
    public init(
        minItems: Int = 1, maxItems: Int, seTarget: Double? = nil, minPerDomain: DomainMinimum = .all(0),
        randomesque: Int = 1, aStratification: Int? = nil
    ) {
        self.minItems = minItems
        self.maxItems = maxItems
        self.seTarget = seTarget
        self.minPerDomain = minPerDomain
        self.randomesque = randomesque
        self.aStratification = aStratification
    }

    /// A configuration with an explicit exposure target (nil: no exposure control), checked as given.
    public init(
        minItems: Int = 1, maxItems: Int, seTarget: Double? = nil, minPerDomain: DomainMinimum = .all(0),
        randomesque: Int = 1, aStratification: Int? = nil, exposureTarget: Double?
    ) {
        self.init(
            minItems: minItems, maxItems: maxItems, seTarget: seTarget, minPerDomain: minPerDomain,
            randomesque: randomesque, aStratification: aStratification)
        self.exposureTarget = exposureTarget
        exposureTargetIsDefault = false
    }

    /// This configuration on `bank`, with a default exposure target the bank cannot meet raised to one it can,
    /// and a sentence saying so (nil: unchanged).
    ///
    /// Every test gives L items (`max_items`, or `min_items` with an `se_target`, at most the N active items),
    /// so some item is exposed to at least L/N of the tests, and to kₔ/nₔ in a domain with a minimum
    /// (`exposureProblems`). The default 0.25 needs N ≥ 4L: a 16-item bank with 25-item tests gives every item
    /// to everybody. The target becomes max(L/N, kₔ/nₔ) + `exposure_margin`, rounded up to 0.01 — the lowest
    /// the bank allows with the calibration's room — and exposure control is off when that reaches 1 (every
    /// item is in every test). An explicit `exposure_target` is never changed.
    package func adaptingDefaultExposureTarget(to bank: AssemblyBank) -> (configuration: CATConfiguration, note: String?) {
        guard exposureTargetIsDefault, let r = exposureTarget else { return (self, nil) }
        let active = bank.activeCountByDomain
        let n = active.reduce(0, +)
        guard n > 0, maxItems >= 1, minItems >= 0 else { return (self, nil) }
        let length = shortestTest(activeItems: n)
        var lowest = Double(length) / Double(n)
        for (d, domain) in bank.domains.enumerated() where active[d] > 0 {
            let k = minPerDomain.minimum(for: domain)
            if k > 0 && k <= active[d] { lowest = max(lowest, Double(k) / Double(active[d])) }
        }
        guard lowest > r + 1e-9 else { return (self, nil) }
        var adapted = self
        let raised = ((lowest + exposureMargin) * 100 - 1e-9).rounded(.up) / 100
        let why = "every test gives \(length) of the bank's \(n) active items (mean exposure \(lowest.formatted6))"
        if raised >= 1 {
            adapted.exposureTarget = nil
            return (adapted, "exposure control off: the default exposure_target \(r.formatted6) cannot be met, \(why); set exposure_target to choose")
        }
        adapted.exposureTarget = raised
        return (adapted, "exposure_target raised from the default \(r.formatted6) to \(raised.formatted6): \(why); set exposure_target to choose")
    }

    /// The ability options the session's estimator uses.
    package var abilityOptions: AbilityOptions {
        var options = AbilityOptions(method: estimator)
        options.priorMean = priorMean
        options.priorSD = priorSD
        options.quadraturePoints = quadraturePoints
        return options
    }

    // MARK: validation

    /// `max_items` allowed: 1…`TestLength.maximum` (10,000). A session reserves room for `max_items` items
    /// and the study counts lengths 0…`max_items`, so the bound is also a bound on memory.
    package static let allowedMaxItems = 1...TestLength.maximum

    /// `se_target` allowed: (0, 10]. SE(θ̂) is in SDs of the population; 10 is 150 IQ points, met before the
    /// first item by any prior.
    package static let allowedSETargets = NumberRange.aboveUpTo(0, 10)

    /// `exposure_calibration_simulees` allowed: 100…1,000,000. Fewer than 100 simulees estimate an exposure
    /// rate of 0.25 with an SE above 0.04, larger than any useful margin; the upper end is the study limit
    /// (`SimulationStudy.allowedSimulees`): every round keeps each simulee's outcome.
    package static let allowedCalibrationSimulees = 100...SimulationStudy.allowedSimulees.upperBound

    /// `exposure_calibration_iterations` allowed: 1…1,000. Sympson–Hetter calibration converges in tens of
    /// rounds; each round is a full simulation.
    package static let allowedCalibrationIterations = 1...1_000

    /// Internal consistency (independent of any bank). Empty when the configuration is usable. Each problem
    /// names the JSON key and the allowed range.
    package func validationProblems() -> [String] {
        var problems: [String] = []
        if let p = Self.allowedMaxItems.problem(maxItems, "max_items") { problems.append(p) }
        if minItems < 0 { problems.append("min_items must not be negative, got \(minItems)") }
        if minItems > maxItems { problems.append("min_items (\(minItems)) exceeds max_items (\(maxItems))") }
        if let se = seTarget, let p = Self.allowedSETargets.problem(se, "se_target") { problems.append(p) }
        let perDomain = 0...max(maxItems, 0)
        switch minPerDomain {
        case .all(let n):
            if let p = perDomain.problem(n, "min_per_domain") { problems.append(p) }
        case .perDomain(let map):
            for (domain, n) in map.sorted(by: { $0.key < $1.key }) where n < 0 {
                problems.append("min_per_domain for \"\(domain)\" must not be negative, got \(n)")
            }
            // A value above max_items makes the sum exceed it too; the sum saturates instead of overflowing.
            let total = map.values.reduce(0) { $0.saturatingAdd(max($1, 0)) }
            if total > maxItems {
                problems.append(
                    "min_per_domain sums to \(total == Int.max ? "more than \(Int.max)" : String(total)), more than max_items (\(maxItems))")
            }
        }
        if let weights = domainWeights { problems += domainWeightProblems(weights) }
        if let p = (1...100).problem(randomesque, "randomesque") { problems.append(p) }
        if let k = aStratification, k < 1 || k > maxItems { problems.append("a_stratification must be 1…max_items (\(maxItems)) strata, got \(k)") }
        if let p = Self.allowedProgressiveAccelerations.problem(progressiveAcceleration, "progressive_acceleration") { problems.append(p) }
        if selection == .progressive && aStratification != nil {
            problems.append("selection progressive and a_stratification are two selection rules; give one")
        }
        if let r = exposureTarget, !(r > 0 && r <= 1) { problems.append("exposure_target must be in (0, 1], got \(r)") }
        if let p = Self.allowedCalibrationSimulees.problem(exposureCalibrationSimulees, "exposure_calibration_simulees") { problems.append(p) }
        if let p = Self.allowedCalibrationIterations.problem(exposureCalibrationIterations, "exposure_calibration_iterations") { problems.append(p) }
        if let r = exposureTarget, !(exposureMargin >= 0 && exposureMargin < r) {
            problems.append("exposure_margin must be in [0, exposure_target), got \(exposureMargin)")
        }
        problems += abilityOptions.validationProblems(naming: .jsonKey)
        return problems
    }

    /// Problems of this configuration on `bank`: domains named in `min_per_domain` or `domain_weights` that the
    /// bank lacks, a domain with fewer active items than its minimum, minima that cannot fit in `max_items`.
    package func validationProblems(for bank: AssemblyBank) -> [String] {
        var problems: [String] = []
        let known = Set(bank.domains)
        let list = bank.domains.joined(separator: ", ")
        if case .perDomain(let map) = minPerDomain {
            for domain in map.keys.sorted() where !known.contains(domain) {
                problems.append("min_per_domain names domain \"\(domain)\", which the bank does not have (domains: \(list))")
            }
        }
        for domain in (domainWeights ?? [:]).keys.sorted() where !known.contains(domain) {
            problems.append("domain_weights names domain \"\(domain)\", which the bank does not have (domains: \(list))")
        }
        let active = bank.activeCountByDomain
        var total = 0
        for (d, domain) in bank.domains.enumerated() {
            let need = minPerDomain.minimum(for: domain)
            // Saturating: this runs beside `validationProblems()`, so a value may still be out of range.
            total = total.saturatingAdd(max(need, 0))
            if need > active[d] { problems.append("min_per_domain asks for \(need) \(domain) items, but the bank has \(active[d]) active ones") }
        }
        if total > maxItems {
            problems.append("min_per_domain needs \(total) items over \(bank.domains.count) domains, more than max_items (\(maxItems))")
        }
        if !active.contains(where: { $0 > 0 }) { problems.append("the bank has no active items") }
        // Exposure bounds only once the lengths and minima themselves fit the bank (one cause, one message).
        if problems.isEmpty {
            problems += exposureProblems(
                activeItems: active.reduce(0, +), activeByDomain: Dictionary(uniqueKeysWithValues: zip(bank.domains, active)))
        }
        return problems
    }

    /// L, the fewest items every test gives on a bank of `n` active items: `max_items` without an `se_target`,
    /// else `min_items`, and at most n.
    func shortestTest(activeItems n: Int) -> Int { min(seTarget == nil ? maxItems : minItems, n) }

    /// An `exposure_target` that no selection rule could meet on this bank, found before any simulation.
    ///
    /// Every test administers at least L items — `max_items` without an `se_target` (fewer only when the bank
    /// runs out), else `min_items` — so the exposure rates of the N active items sum to at least L
    /// (Σⱼ rⱼ = mean test length) and some item is exposed to at least L/N: a target r_max < L/N is infeasible.
    /// The same holds for each domain's minimum kₔ against its nₔ active items (r_max ≥ kₔ/nₔ). Necessary
    /// conditions only: a feasible target can still be missed by the Sympson–Hetter calibration, which then
    /// reports it. The mean exposure rate is L/N (Chen, Ankenmann & Spray 2003, J. Educ. Meas. 40, 129–145).
    package func exposureProblems(activeItems n: Int, activeByDomain: [String: Int]) -> [String] {
        guard let r = exposureTarget, r > 0, r <= 1, n > 0 else { return [] }
        var problems: [String] = []
        /// ⌈count / r⌉ items, written without converting an astronomically large count to Int.
        func itemsNeeded(_ count: Int) -> String {
            let needed = (Double(count) / r - 1e-9).rounded(.up)
            return needed < 1e15 ? String(Int(needed)) : needed.formatted6
        }
        let length = shortestTest(activeItems: n)
        if Double(length) > r * Double(n) + 1e-9 {
            let needed = itemsNeeded(length)
            let what = seTarget == nil ? "every test gives max_items = \(length) items" : "every test gives at least min_items = \(length) items"
            problems.append(
                "exposure_target \(r.formatted6) cannot be met: \(what), so the exposure rates of the \(n) active items sum to \(length) per test and average \((Double(length) / Double(n)).formatted6); meeting \(r.formatted6) needs at least \(needed) active items (or exposure_target ≥ \((Double(length) / Double(n)).formatted6), or fewer items per test)"
            )
        }
        for domain in activeByDomain.keys.sorted() {
            let k = minPerDomain.minimum(for: domain), nd = activeByDomain[domain] ?? 0
            guard k > 0, nd >= k, Double(k) > r * Double(nd) + 1e-9 else { continue }
            problems.append(
                "exposure_target \(r.formatted6) cannot be met in domain \(domain): min_per_domain gives every test \(k) of its \(nd) active items, an average exposure of \((Double(k) / Double(nd)).formatted6); it needs at least \(itemsNeeded(k)) active \(domain) items"
            )
        }
        return problems
    }

    // MARK: JSON

    enum CodingKeys: String, CodingKey, CaseIterable {
        case minItems = "min_items", maxItems = "max_items", seTarget = "se_target", minPerDomain = "min_per_domain"
        case domainWeights = "domain_weights", randomesque, aStratification = "a_stratification"
        case selection, progressiveAcceleration = "progressive_acceleration"
        case exposureTarget = "exposure_target", exposureCalibrationSimulees = "exposure_calibration_simulees"
        case exposureCalibrationIterations = "exposure_calibration_iterations", exposureMargin = "exposure_margin"
        case estimator, priorMean = "prior_mean", priorSD = "prior_sd", quadraturePoints = "quadrature_points"
    }

    /// Decodes and validates configuration JSON; errors name `file`. Unknown or repeated keys are errors (see
    /// `JSONInput`): a misspelt rule must not be ignored silently.
    package static func decode(_ data: Data, file: String) throws -> CATConfiguration {
        try validated(JSONInput.decode(CATConfiguration.self, from: data, file: file), file: file)
    }

    package static func validated(_ configuration: CATConfiguration, file: String) throws -> CATConfiguration {
        let problems = configuration.validationProblems()
        guard problems.isEmpty else { throw InputError(file: file, message: problems.joined(separator: "; ")) }
        return configuration
    }
}

extension CATConfiguration: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var jsonDescription: String { "the CAT configuration" }
    package static var jsonExample: String { #"{"max_items": 25}"# }
    package static var integerKeys: Set<String> {
        [
            "min_items", "max_items", "min_per_domain", "randomesque", "a_stratification", "exposure_calibration_simulees",
            "exposure_calibration_iterations", "quadrature_points"
        ]
    }
}

extension CATConfiguration: Codable {
    /// Decodes the CAT rules' JSON keys (snake case, as `iqscore cat` reads them): `max_items` is required, any
    /// other missing key takes its default.
    /// - Throws: `DecodingError` for a value of the wrong type; the values' ranges are checked where the
    ///   configuration is used (`CATItemPool`).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        maxItems = try c.decode(Int.self, forKey: .maxItems)
        minItems = try c.decodeIfPresent(Int.self, forKey: .minItems) ?? 1
        seTarget = try c.decodeIfPresent(Double.self, forKey: .seTarget)
        if c.contains(.minPerDomain) {
            do {
                minPerDomain = try c.decode(DomainMinimum.self, forKey: .minPerDomain)
            } catch {
                throw DecodingError.typeMismatch(
                    DomainMinimum.self,
                    .init(
                        codingPath: [CodingKeys.minPerDomain],
                        debugDescription: "an integer or an object of integers"))
            }
        }
        domainWeights = try c.decodeIfPresent([String: Double].self, forKey: .domainWeights)
        randomesque = try c.decodeIfPresent(Int.self, forKey: .randomesque) ?? 1
        aStratification = try c.decodeIfPresent(Int.self, forKey: .aStratification)
        if let text = try c.decodeIfPresent(String.self, forKey: .selection) {
            guard let rule = Selection(rawValue: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .selection, in: c, debugDescription: "selection '\(text)' is not one of maximum_information, progressive")
            }
            selection = rule
        }
        progressiveAcceleration = try c.decodeIfPresent(Double.self, forKey: .progressiveAcceleration) ?? 1
        // Absent: the default 0.25 (adapted to a small bank); explicit null: no exposure control.
        if c.contains(.exposureTarget) {
            exposureTarget = try c.decodeIfPresent(Double.self, forKey: .exposureTarget)
            exposureTargetIsDefault = false
        }
        exposureCalibrationSimulees = try c.decodeIfPresent(Int.self, forKey: .exposureCalibrationSimulees) ?? 5000
        exposureCalibrationIterations = try c.decodeIfPresent(Int.self, forKey: .exposureCalibrationIterations) ?? 40
        exposureMargin = try c.decodeIfPresent(Double.self, forKey: .exposureMargin) ?? 0.02
        if let text = try c.decodeIfPresent(String.self, forKey: .estimator) {
            guard let method = AbilityMethod(rawValue: text.lowercased()) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .estimator, in: c, debugDescription: "estimator '\(text)' is not one of eap, map, ml, wle")
            }
            estimator = method
        }
        priorMean = try c.decodeIfPresent(Double.self, forKey: .priorMean)
        priorSD = try c.decodeIfPresent(Double.self, forKey: .priorSD)
        quadraturePoints = try c.decodeIfPresent(Int.self, forKey: .quadraturePoints) ?? 61
    }

    /// Encodes the keys `init(from:)` reads.
    /// - Throws: what the encoder throws.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(minItems, forKey: .minItems)
        try c.encode(maxItems, forKey: .maxItems)
        try c.encode(seTarget, forKey: .seTarget)
        try c.encode(minPerDomain, forKey: .minPerDomain)
        try c.encodeIfPresent(domainWeights, forKey: .domainWeights)
        try c.encode(randomesque, forKey: .randomesque)
        try c.encode(aStratification, forKey: .aStratification)
        try c.encode(selection.rawValue, forKey: .selection)
        if selection == .progressive { try c.encode(progressiveAcceleration, forKey: .progressiveAcceleration) }
        // The default is left out, so that it reads back as the default (adapted to a small bank).
        if !exposureTargetIsDefault { try c.encode(exposureTarget, forKey: .exposureTarget) }
        if exposureTarget != nil {
            try c.encode(exposureCalibrationSimulees, forKey: .exposureCalibrationSimulees)
            try c.encode(exposureCalibrationIterations, forKey: .exposureCalibrationIterations)
            try c.encode(exposureMargin, forKey: .exposureMargin)
        }
        try c.encode(estimator.rawValue, forKey: .estimator)
        try c.encodeIfPresent(priorMean, forKey: .priorMean)
        try c.encodeIfPresent(priorSD, forKey: .priorSD)
        try c.encode(quadraturePoints, forKey: .quadraturePoints)
    }
}

extension Int {
    /// self + other for non-negative `other`, stopping at `Int.max` instead of trapping.
    func saturatingAdd(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? Int.max : sum
    }
}
