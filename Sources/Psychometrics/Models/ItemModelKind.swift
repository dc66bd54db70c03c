import Foundation

/// The item models a calibration can fit to an item, by the name the bank's `model` column writes.
///
/// - `graded`: Samejima's graded response model (`GradedResponseItem`); with two categories, the 2PL.
/// - `gpcm`: Muraki's generalized partial credit model (`GeneralizedPartialCreditItem`); two categories: the 2PL.
/// - `pcm`: Masters' partial credit model, the Rasch case of the GPCM: a = 1 for every item and the latent SD
///   estimated (mirt's `Rasch` item type on polytomous items); two categories: the Rasch model.
/// - `rsm`: Andrich's rating scale model (`RatingScaleItem`), the partial-credit model whose thresholds are shared
///   by every rating-scale item of the calibration (mirt's `rsm`); the bank writes its items as partial-credit
///   rows (a = 1 and the item's steps).
/// - `nominal`: Bock's nominal response model (`NominalResponseItem`), for unordered options.
/// - `3pl`: Birnbaum's three-parameter logistic model for a 0/1 item with a lower asymptote
///   (`ThreeParameterLogisticItem`), so that multiple-choice items are fitted with guessing beside the others; the
///   bank writes it as the 0/1 row it is (model 3pl, a, b, c), not as a category row.
public enum ItemModelKind: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case graded
    case generalizedPartialCredit = "gpcm"
    case partialCredit = "pcm"
    case ratingScale = "rsm"
    case nominal
    case threePL = "3pl"

    /// The kinds a bank row's model column names as a category row (every kind but the 3PL, a 0/1 row).
    package static var categoryRowKinds: [ItemModelKind] { allCases.filter { $0 != .threePL } }

    public var description: String { rawValue }

    /// The starting item for `proportions` (the observed share of each category, all positive):
    /// - graded: a = 1, d_k = logit P(u ≥ k) (decreasing in k as the cumulative shares fall);
    /// - partial credit: a = 1, d_k = log(p_k / p_0) (the category odds at θ = 0);
    /// - rating scale: a = 1, thresholds 0 (they are shared: the first M-step moves them for all the items) and
    ///   λ = log(p_0 / p_{K−1}) / (K − 1), the mean step of the partial-credit start;
    /// - nominal: slopes 0, 1/(K−1), …, 1 (mirt's default scoring start) and c_k = log(p_k / p_0); with the item's
    ///   `key` (the category of its correct option) slope 1 on the key and 0 on the other options, so that the
    ///   option chosen by the able starts as the one that rises with θ whatever its place among the options;
    /// - 3PL: a = 1, c = 0.2 (the default guessing prior's mode), d = logit of the proportion right corrected for c.
    func startingItem(proportions p: [Double], key: Int? = nil) -> any CalibratableItemModel {
        let k = p.count
        switch self {
        case .graded:
            var above = 1.0, d: [Double] = []
            for c in 1..<k {
                above -= p[c - 1]
                d.append(Logistic.logit(min(max(above, 1e-4), 1 - 1e-4)))
            }
            // Strictly decreasing even where rounding made two equal.
            for c in 1..<d.count where d[c] >= d[c - 1] { d[c] = d[c - 1] - 1e-3 }
            return GradedResponseItem(discrimination: 1, thresholds: d.map { -$0 })
        case .generalizedPartialCredit, .partialCredit:
            let d = (0..<k).map { log(p[$0] / p[0]) }
            return GeneralizedPartialCreditItem(discrimination: 1, steps: (1..<k).map { -(d[$0] - d[$0 - 1]) })
        case .ratingScale:
            return RatingScaleItem(
                discrimination: 1, location: log(p[0] / p[k - 1]) / Double(k - 1), thresholds: [Double](repeating: 0, count: k - 1))
        case .nominal:
            var slopes: [Double] = (0..<k).map { Double($0) / Double(k - 1) }
            if let key { slopes = (0..<k).map { c -> Double in c == key ? 1 : 0 } }
            return NominalResponseItem(slopes: slopes, intercepts: (0..<k).map { log(p[$0] / p[0]) }, key: key)
        case .threePL:
            let c = 0.2, right = min(max((p[k - 1] - c) / (1 - c), 0.02), 0.98)
            return ThreeParameterLogisticItem(ItemParameters(discrimination: 1, difficulty: -Logistic.logit(right), guessing: c))
        }
    }
}

extension ItemModelKind {
    /// The bank's names of an item's parameters with `categories` (K) categories, in the IRT form the bank writes
    /// (`ItemResponseModel.parameterNames`): `a, b1 … b_{K−1}` for graded, gpcm and pcm items (thresholds or
    /// steps), `a_0 … a_{K−1}, c_0 … c_{K−1}` for nominal items (Bock's category slopes and intercepts; the
    /// underscore keeps `a1` for mirt's slope–intercept slope).
    package func parameterNames(categories k: Int) -> [String] {
        switch self {
        case .graded, .generalizedPartialCredit, .partialCredit, .ratingScale: ["a"] + (1..<k).map { "b\($0)" }
        case .nominal: (0..<k).map { "a_\($0)" } + (0..<k).map { "c_\($0)" }
        case .threePL: ["a", "b", "c"]
        }
    }

    /// The parameters a calibration estimates for an item in `k` categories (S-X²'s df, AIC): K for graded and
    /// gpcm (a and K − 1 intercepts), K − 1 for pcm (a = 1), 1 for rsm (its location: the shared thresholds
    /// belong to the scale, and the calibration counts them once), 2(K − 1) for nominal (a_0 = c_0 = 0).
    package func freeParameters(categories k: Int) -> Int {
        switch self {
        case .graded, .generalizedPartialCredit: k
        case .partialCredit: k - 1
        case .ratingScale: 1
        case .nominal: 2 * (k - 1)
        case .threePL: 3
        }
    }

    /// IRT-form `values` (and their standard errors) on the scale θ_old = slope · θ + intercept, and the model
    /// they then belong to: graded, gpcm a/slope, b_k → slope·b_k + intercept (a pcm item becomes gpcm unless the
    /// slope is 1, its a being 1/slope; so does an rsm item); nominal a_k/slope, c_k − a_k·intercept/slope (a_k θ + c_k unchanged). A
    /// nominal intercept's standard error, which would need the slope's covariance, is left out.
    package func transformed(_ values: [Double], standardErrors: [Double?], slope: Double, intercept: Double)
        -> (kind: ItemModelKind, values: [Double], standardErrors: [Double?])
    {
        switch self {
        case .graded, .generalizedPartialCredit, .partialCredit, .ratingScale:
            return (
                (self == .partialCredit || self == .ratingScale) && slope != 1 ? .generalizedPartialCredit : self,
                [values[0] / slope] + values.dropFirst().map { slope * $0 + intercept },
                [standardErrors[0].map { $0 / slope }] + standardErrors.dropFirst().map { $0.map { slope * $0 } }
            )
        case .nominal:
            let k = values.count / 2
            return (
                self, values[0..<k].map { $0 / slope } + (0..<k).map { values[k + $0] - values[$0] * intercept / slope },
                standardErrors[0..<k].map { $0.map { $0 / slope } } + [Double?](repeating: nil, count: k)
            )
        case .threePL:
            return (
                self, [values[0] / slope, slope * values[1] + intercept, values[2]],
                [standardErrors[0].map { $0 / slope }, standardErrors[1].map { slope * $0 }, standardErrors[2]]
            )
        }
    }

    /// The number of categories that `count` parameter values in the IRT form stand for (nil: no K fits).
    package func categories(parameterCount count: Int) -> Int? {
        switch self {
        case .graded, .generalizedPartialCredit, .partialCredit, .ratingScale: count >= 2 ? count : nil
        case .nominal: count >= 4 && count % 2 == 0 ? count / 2 : nil
        case .threePL: count == 3 ? 2 : nil
        }
    }

    /// The item whose IRT-form parameters are `values` (`parameterNames(categories:)` order), checked.
    /// - Throws: `PsychometricsError.invalidParameters` for a count no K fits, a slope that is not positive and
    ///   finite, graded thresholds that do not increase, a partial-credit or rating-scale (Rasch) item whose a is
    ///   not 1, or a value
    ///   that is not finite, or a nominal key outside the categories. A nominal item's `key` (its correct option's
    ///   category) counts 1 in the raw score; other models ignore it.
    package func item(values: [Double], key: Int? = nil) throws(PsychometricsError) -> any ItemResponseModel {
        guard categories(parameterCount: values.count) != nil else {
            throw PsychometricsError(
                .invalidParameters,
                "a \(rawValue) item needs \(self == .nominal ? "a slope and an intercept per category (at least 2 categories)" : self == .threePL ? "a, b and c" : "a slope and at least one threshold"), got \(values.count) values"
            )
        }
        switch self {
        case .graded: return try GradedResponseItem(validating: values[0], thresholds: Array(values.dropFirst()))
        case .generalizedPartialCredit: return try GeneralizedPartialCreditItem(validating: values[0], steps: Array(values.dropFirst()))
        case .partialCredit, .ratingScale:
            guard values[0] == 1 else {
                throw PsychometricsError(
                    .invalidParameters,
                    "a \(rawValue) (\(self == .partialCredit ? "partial-credit" : "rating-scale") Rasch) item has a = 1, got \(values[0]) (use gpcm for other slopes)"
                )
            }
            let steps = try GeneralizedPartialCreditItem(validating: 1, steps: Array(values.dropFirst())).steps
            guard self == .ratingScale else { return GeneralizedPartialCreditItem(discrimination: 1, steps: steps) }
            let location = steps.reduce(0, +) / Double(steps.count)
            return RatingScaleItem(discrimination: 1, location: location, thresholds: steps.map { $0 - location })
        case .nominal:
            let k = values.count / 2
            return try NominalResponseItem(validating: Array(values[0..<k]), intercepts: Array(values[k...]), key: key)
        case .threePL:
            guard values[0] > 0, values[0].isFinite, values[1].isFinite, values[2] >= 0, values[2] < 1 else {
                throw PsychometricsError(
                    .invalidParameters, "a 3pl item has a > 0, a finite b and 0 ≤ c < 1, got \(values.map(\.formatted6).joined(separator: ", "))")
            }
            return ThreeParameterLogisticItem(ItemParameters(discrimination: values[0], difficulty: values[1], guessing: values[2]))
        }
    }
}
