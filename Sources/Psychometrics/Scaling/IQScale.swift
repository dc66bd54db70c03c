import Foundation

/// The reference population an IQ is expressed against: θ ~ N(mean, sd²) in that population maps to IQ 100 ± 15.
/// Named and versioned so every report says which norms were used.
public struct Norms: Sendable, Hashable, Codable {
    public var name: String
    public var version: String
    /// Mean and SD of θ in the norm population.
    public var mean: Double
    public var sd: Double

    public init(name: String, version: String, mean: Double, sd: Double) {
        self.name = name
        self.version = version
        self.mean = mean
        self.sd = sd
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case name, version, mean, sd }

    /// The calibration population itself: θ ~ N(0, 1).
    public static let calibrationPopulation = Norms(name: "calibration-population", version: "1", mean: 0, sd: 1)

    /// Norm means (θ of the norm population's mean) allowed: [−10, 10]. θ is in SDs of the calibration
    /// population; a norm group 10 SDs away from it (IQ 250) cannot be the population the bank was calibrated
    /// for, and a mean of 100 is an IQ-scale number entered as θ.
    package static let allowedMeans = NumberRange.closed(-10, 10)

    /// Norm SDs (θ units) allowed: [0.01, 10]. A norm group 100 times narrower or 10 times wider than the
    /// calibration population is a unit error — 15 is the IQ-scale SD entered as θ — and an SD near 0 turns
    /// every IQ into ±∞ (clamped to 40 or 160).
    package static let allowedSDs = NumberRange.closed(0.01, 10)

    /// Problems with the norms, naming each field as `naming` says ("norms sd" in words, `sd` as the JSON key).
    package func validationProblems(naming: SettingNaming = .words) -> [String] {
        var problems: [String] = []
        if name.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("norms need a name") }
        if version.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("norms need a version") }
        if let p = Self.allowedMeans.problem(mean, naming.name("mean", words: "norms mean")) { problems.append(p) }
        if let p = Self.allowedSDs.problem(sd, naming.name("sd", words: "norms sd")) { problems.append(p) }
        return problems
    }
}

extension Norms: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static let jsonDescription = "norms JSON"
    package static let jsonExample = #"{"name": "adults", "version": "2024", "mean": 0, "sd": 1}"#
    package static let missingKeyHint = #"; expected {"name", "version", "mean", "sd"}"#
}

/// Conditions attached to a reported score.
public enum ScoreFlag: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// The IQ fell below the reported minimum and was raised to it.
    case clampedLow = "clamped_low"
    /// The IQ rose above the reported maximum and was lowered to it.
    case clampedHigh = "clamped_high"
    /// The SE of θ exceeds the low-precision threshold.
    case lowPrecision = "low_precision"
    /// Every answered item correct.
    case perfectScore = "perfect_score"
    /// Every answered item wrong.
    case zeroScore = "zero_score"
    /// Fewer answered items than the minimum.
    case fewItems = "few_items"
    /// θ sits at the estimation bound (e.g. ML for a perfect score).
    case thetaAtBound = "theta_at_bound"
    /// The age lies more than the norms' extrapolation margin outside the ages they cover; the score uses the
    /// nearest covered age (age-specific norms only).
    case ageOutsideNorms = "age_outside_norms"

    /// Position in `allCases` (report order).
    public var order: Int {
        switch self {
        case .clampedLow: 0
        case .clampedHigh: 1
        case .lowPrecision: 2
        case .perfectScore: 3
        case .zeroScore: 4
        case .fewItems: 5
        case .thetaAtBound: 6
        case .ageOutsideNorms: 7
        }
    }

    public static func < (l: Self, r: Self) -> Bool { l.order < r.order }
}

/// A score as shown to a person.
public struct IQScore: Sendable, Hashable, Codable {
    public var iq: Int
    /// Confidence interval on the IQ scale (clamped like the IQ).
    public var low: Int
    public var high: Int
    /// Percentile in the norm population, 0.0–100.0, one decimal.
    public var percentile: Double
    public var flags: [ScoreFlag]

    package init(iq: Int, low: Int, high: Int, percentile: Double, flags: [ScoreFlag]) {
        self.iq = iq
        self.low = low
        self.high = high
        self.percentile = percentile
        self.flags = flags
    }
}

/// Maps ability estimates to IQ scores.
///
/// ```
/// IQ = 100 + 15 · (θ − μ) / σ
/// ```
/// with μ, σ from the norms. The reported IQ is rounded half away from zero (100.5 → 101, 99.5 → 100) and
/// clamped to [minimumIQ, maximumIQ] (default 40–160) with a flag. The confidence interval is
/// θ ± z·SE with z = Φ⁻¹((1 + level)/2), mapped and rounded the same way and clamped too. The percentile is
/// 100·Φ((θ − μ)/σ), rounded to one decimal.
public struct IQScale: Sendable, Hashable, Codable {
    public var norms: Norms
    public var confidenceLevel: Double
    public var minimumIQ: Int
    public var maximumIQ: Int
    /// SE of θ above which a score is flagged `low_precision` (0.5 θ units = 7.5 IQ points), in SDs of the
    /// calibration population: θ units on a bank on the N(0, 1) metric; `expressed(on:)` multiplies it by the
    /// latent SD of a bank that has one (a Rasch bank).
    public var lowPrecisionSE: Double
    /// Fewer answered items than this are flagged `few_items`.
    public var minimumItems: Int
    /// z = Φ⁻¹((1 + confidenceLevel)/2), computed once.
    package let criticalValue: Double

    /// - Throws: `PsychometricsError` `.invalidOptions` listing every setting out of range (confidence level, IQ
    ///   bounds, low-precision SE, minimum items).
    public init(
        norms: Norms = .calibrationPopulation, confidenceLevel: Double = 0.95, minimumIQ: Int = 40,
        maximumIQ: Int = 160, lowPrecisionSE: Double = 0.5, minimumItems: Int = 10
    ) throws {
        var problems = norms.validationProblems()
        problems += Self.validationProblems(confidenceLevel: confidenceLevel, lowPrecisionSE: lowPrecisionSE, minimumItems: minimumItems)
        if minimumIQ >= maximumIQ { problems.append("the IQ range must have minimum < maximum, got \(minimumIQ)–\(maximumIQ)") }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid IQ scale: " + problems.joined(separator: "; ")) }
        self.norms = norms
        self.confidenceLevel = confidenceLevel
        self.minimumIQ = minimumIQ
        self.maximumIQ = maximumIQ
        self.lowPrecisionSE = lowPrecisionSE
        self.minimumItems = minimumItems
        self.criticalValue = StandardNormal.quantile(0.5 + confidenceLevel / 2)
    }

    /// Confidence levels allowed: (0, 0.9999999999].
    ///
    /// z = Φ⁻¹((1 + level)/2) needs (1 + level)/2 < 1 in floating point; for levels within about 1.1e-16 of 1
    /// (e.g. 0.9999999999999999) it rounds to exactly 1 and z would be +∞. Capping at 1 − 10⁻¹⁰ keeps z finite
    /// (z ≈ 6.5 at the cap) with room to spare, and no report needs more nines: the interval is clamped to
    /// 40–160 anyway.
    package static let allowedConfidenceLevels = NumberRange.aboveUpTo(0, 0.9999999999)

    /// Low-precision SE thresholds allowed: (0, 100]. The SE of θ is in SDs of the population; 100 is 1,500
    /// IQ points, so larger thresholds are no threshold.
    package static let allowedLowPrecisionSEs = NumberRange.aboveUpTo(0, 100)

    /// Minimum item counts allowed: 1…`TestLength.maximum` (10,000), the longest test any setting may ask for.
    package static let allowedMinimumItems = 1...TestLength.maximum

    /// Problems with the scale's settings, naming each as `naming` says (`--confidence` on the command line).
    package static func validationProblems(
        confidenceLevel: Double, lowPrecisionSE: Double, minimumItems: Int,
        naming: SettingNaming = .words
    ) -> [String] {
        [
            allowedConfidenceLevels.problem(confidenceLevel, naming.name("confidence", words: "confidence level")),
            allowedLowPrecisionSEs.problem(lowPrecisionSE, naming.name("low_precision_se", words: "the low-precision SE threshold")),
            allowedMinimumItems.problem(minimumItems, naming.name("min_items", words: "the minimum number of items"))
        ].compactMap { $0 }
    }

    /// This scale for a bank whose calibration population is `latent` (`ItemBank.latentScale`; `SessionScorer`
    /// applies it): norms that are `Norms.calibrationPopulation` become that population, N(mean, sd²) on the
    /// bank's metric, and the low-precision threshold, given in population SDs, becomes `lowPrecisionSE`·sd θ
    /// units. On a bank on the N(0, 1) metric it is this scale unchanged.
    public func expressed(on latent: LatentScale) -> IQScale {
        guard !latent.isStandard else { return self }
        var scale = self
        if scale.norms == .calibrationPopulation { scale.norms = latent.calibrationNorms }
        scale.lowPrecisionSE *= latent.sd
        return scale
    }

    /// The unrounded IQ of θ.
    public func rawIQ(theta: Double) -> Double { 100 + 15 * (theta - norms.mean) / norms.sd }

    /// Reports an ability estimate on the IQ scale.
    /// - Throws: `PsychometricsError` when θ or its SE is not finite, or SE ≤ 0 — never a plausible number.
    public func score(_ estimate: AbilityEstimate) throws -> IQScore {
        try report(estimate, rawIQ: rawIQ(theta:), cdf: { StandardNormal.cdf(($0 - norms.mean) / norms.sd) })
    }

    /// The one mapping from an estimate to what a person is shown, for any norm: `rawIQ` is the unrounded IQ of
    /// a θ and `cdf` the norm population's F(θ) (this scale's linear norms, or age-specific ones from the Norming
    /// module at the person's age). The IQ and the interval ends are rounded half away from zero and clamped to
    /// [minimumIQ, maximumIQ]; the percentile is 100·F(θ) to one decimal; flags in report order, `ageOutside`
    /// adding `age_outside_norms`.
    /// - Throws: `PsychometricsError` when θ or its SE is not finite, or SE ≤ 0.
    package func report(
        _ estimate: AbilityEstimate, rawIQ: (Double) -> Double, cdf: (Double) -> Double,
        ageOutside: Bool = false
    ) throws -> IQScore {
        let theta = estimate.theta, se = estimate.standardError
        guard theta.isFinite else { throw PsychometricsError(.unscorable, "θ is \(theta); cannot report an IQ") }
        guard se.isFinite, se > 0 else { throw PsychometricsError(.unscorable, "the standard error of θ is \(se); it must be positive and finite") }
        let z = criticalValue
        var flags: [ScoreFlag] = []
        func rounded(_ x: Double) -> Int {
            let r = x.rounded(.toNearestOrAwayFromZero)
            return Int(min(max(r, -1e6), 1e6))
        }
        var iq = rounded(rawIQ(theta))
        if iq < minimumIQ { iq = minimumIQ; flags.append(.clampedLow) }
        if iq > maximumIQ { iq = maximumIQ; flags.append(.clampedHigh) }
        let low = min(max(rounded(rawIQ(theta - z * se)), minimumIQ), maximumIQ)
        let high = min(max(rounded(rawIQ(theta + z * se)), minimumIQ), maximumIQ)
        if se > lowPrecisionSE { flags.append(.lowPrecision) }
        if estimate.isPerfect { flags.append(.perfectScore) }
        if estimate.isZero { flags.append(.zeroScore) }
        if estimate.itemCount < minimumItems { flags.append(.fewItems) }
        if estimate.atBound { flags.append(.thetaAtBound) }
        if ageOutside { flags.append(.ageOutsideNorms) }
        let percentile = (1000 * cdf(theta)).rounded(.toNearestOrAwayFromZero) / 10
        // Flags were appended in report order.
        return IQScore(iq: iq, low: low, high: high, percentile: percentile, flags: flags)
    }
}
