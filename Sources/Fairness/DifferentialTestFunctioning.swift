import Foundation
import Psychometrics

/// Differential test functioning of one focal group against the reference (Chalmers, Counsell & Flora 2016):
/// with T_R(θ) and T_F(θ) the expected number correct over the analysed items under each group's item
/// parameters in a multiple-group fit (items not freed have one set, so only freed items contribute),
/// ```
/// sDTF = ∫ (T_R(θ) − T_F(θ)) g_F(θ) dθ        uDTF = ∫ |T_R(θ) − T_F(θ)| g_F(θ) dθ
/// ```
/// over the focal group's estimated N(μ_F, σ_F²) (61 Gauss–Hermite-like nodes on μ_F ± 6σ_F). sDTF > 0: at equal θ
/// the focal group's expected score is lower. Both also as a percentage of the items. With the fit's
/// covariance, 95% intervals from `draws` parameter vectors drawn from N(x̂, Σ̂) (the imputation of Chalmers et
/// al.; percentiles 2.5 and 97.5).
///
/// **The IQ at equal θ.** A focal person at θ expects T_F(θ) correct; the reference TCC gives that score at
/// θ* = T_R⁻¹(T_F(θ)) — the ability a scoring that treats every group alike would report. The IQ gap is 15(θ − θ*)
/// points per reference-group SD (positive: the focal person is reported lower), tabulated from θ = −3 to 3.
///
/// Chalmers, R. P., Counsell, A. & Flora, D. B. (2016). It might not make a big DIF: Improved differential test
/// functioning statistics that account for sampling variability. *Educational and Psychological Measurement*
/// 76(1), 114–140.
package struct DifferentialTestFunctioning: Sendable, Hashable, Codable {
    package var focal: String
    /// Items whose parameters differ between the two groups in the fit.
    package var freedItems: [String]
    package var itemCount: Int
    package var signed: Double
    package var unsigned: Double
    package var signedPercent: Double
    package var unsignedPercent: Double
    /// 95% intervals by imputation (nil without the fit's covariance).
    package var signedInterval: ClosedRange<Double>?
    package var unsignedInterval: ClosedRange<Double>?
    package var draws: Int
    package var table: [Point]

    /// One θ of the table.
    package struct Point: Sendable, Hashable, Codable {
        package var theta: Double
        package var referenceExpectedScore: Double
        package var focalExpectedScore: Double
        /// 15(θ − T_R⁻¹(T_F(θ))).
        package var iqGap: Double
    }

    /// DTF of `focal` in `fit`; `draws` parameter draws for the intervals (0: none), seeded by `seed`.
    package init(fit: MultipleGroupResult, focal: String, draws: Int = 1_000, seed: UInt64 = 29) {
        self.focal = focal
        let reference = fit.groups[0].group
        let ids = fit.items.map(\.item.itemID).reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
        itemCount = ids.count
        freedItems = fit.freedItemIDs.filter { id in fit.parameters(item: id, group: reference) != fit.parameters(item: id, group: focal) }
        let distribution = fit.distribution(of: focal) ?? fit.groups[0]
        let nodes = (0..<61).map { -6 + Double($0) * 0.2 }
        let weights = nodes.map { exp(-0.5 * $0 * $0) }
        let total = weights.reduce(0, +)
        let w = weights.map { $0 / total }

        func statistics(_ parameter: (String, String) -> ItemParameters?, mean: Double, sd: Double) -> (Double, Double) {
            var s = 0.0, u = 0.0
            for (t, z) in nodes.enumerated() {
                let theta = mean + sd * z
                let gap =
                    Self.expectedScore(ids, group: reference, theta: theta, parameter)
                    - Self.expectedScore(ids, group: focal, theta: theta, parameter)
                s += w[t] * gap
                u += w[t] * abs(gap)
            }
            return (s, u)
        }
        let point = statistics({ fit.parameters(item: $0, group: $1) }, mean: distribution.mean, sd: distribution.sd)
        signed = point.0
        unsigned = point.1
        signedPercent = 100 * signed / Double(max(1, itemCount))
        unsignedPercent = 100 * unsigned / Double(max(1, itemCount))
        self.draws = 0
        if draws > 0, let imputed = Self.imputations(fit: fit, draws: draws, seed: seed) {
            var signedDraws: [Double] = [], unsignedDraws: [Double] = []
            for sample in imputed {
                let value = statistics({ sample.parameters[$0 + "\u{1F}" + $1] }, mean: sample.means[focal] ?? 0, sd: sample.sds[focal] ?? 1)
                signedDraws.append(value.0); unsignedDraws.append(value.1)
            }
            signedDraws.sort(); unsignedDraws.sort()
            let lo = Int((0.025 * Double(draws)).rounded(.down)), hi = min(draws - 1, Int((0.975 * Double(draws)).rounded(.down)))
            signedInterval = signedDraws[lo]...signedDraws[hi]
            unsignedInterval = unsignedDraws[lo]...unsignedDraws[hi]
            self.draws = draws
        }
        table = stride(from: -3.0, through: 3.0, by: 0.5).map { theta in
            let parameter: (String, String) -> ItemParameters? = { fit.parameters(item: $0, group: $1) }
            let tr = Self.expectedScore(ids, group: reference, theta: theta, parameter)
            let tf = Self.expectedScore(ids, group: focal, theta: theta, parameter)
            let star = Self.inverseScore(tf, ids: ids, group: reference, parameter)
            return Point(theta: theta, referenceExpectedScore: tr, focalExpectedScore: tf, iqGap: 15 * (theta - star))
        }
    }

    static func expectedScore(_ ids: [String], group: String, theta: Double, _ parameter: (String, String) -> ItemParameters?) -> Double {
        ids.reduce(0) { sum, id in
            guard let item = parameter(id, group) else { return sum }
            return sum
                + ItemResponseFunction.probability(
                    logit: ItemResponseFunction.logit(slope: item.discrimination, difficulty: item.difficulty, at: theta), guessing: item.guessing)
        }
    }

    /// θ with T_group(θ) = score, by bisection on [−10, 10] (the end when the score is out of the TCC's range).
    static func inverseScore(_ score: Double, ids: [String], group: String, _ parameter: (String, String) -> ItemParameters?) -> Double {
        var lo = -10.0, hi = 10.0
        for _ in 0..<80 {
            let mid = 0.5 * (lo + hi)
            if expectedScore(ids, group: group, theta: mid, parameter) < score { lo = mid } else { hi = mid }
        }
        return 0.5 * (lo + hi)
    }

    struct Imputation {
        var parameters: [String: ItemParameters]
        var means: [String: Double]
        var sds: [String: Double]
    }

    /// Parameter vectors drawn from N(x̂, Σ̂) of the fit's working parameters (Cholesky of Σ̂), as item parameters
    /// per (item, group) and each group's mean and SD; nil without a usable covariance.
    static func imputations(fit: MultipleGroupResult, draws: Int, seed: UInt64) -> [Imputation]? {
        guard var factor = fit.workingCovariance else { return nil }
        let P = fit.workingParameters.count
        guard choleskyInPlace(&factor, n: P, minimumPivot: 1e-14) else { return nil }
        var random = SeededGenerator(seed: seed)
        let p = fit.model == .threePL ? 3 : 2, logSlope = fit.options.slopePrior != nil
        var out: [Imputation] = []
        for _ in 0..<draws {
            let z = (0..<P).map { _ in RandomVariate.normal(using: &random) }
            var x = fit.workingParameters
            for a in 0..<P { for b in 0...a { x[a] += factor[a * P + b] * z[b] } }
            var sample = Imputation(parameters: [:], means: [:], sds: [:])
            for (index, entry) in fit.items.enumerated() {
                let o = fit.workingOffsets[index]
                let a = logSlope ? exp(x[o]) : x[o], d = x[o + 1], c = p == 3 ? Logistic.sigmoid(x[o + 2]) : 0
                for group in entry.groups {
                    sample.parameters[entry.item.itemID + "\u{1F}" + group] = ItemParameters(discrimination: a, difficulty: -d / a, guessing: c)
                }
            }
            let latentStart = p * fit.items.count
            for (k, group) in fit.groups.enumerated() {
                if k == 0 { sample.means[group.group] = 0; sample.sds[group.group] = 1; continue }
                sample.means[group.group] = x[latentStart + 2 * (k - 1)]
                sample.sds[group.group] = exp(x[latentStart + 2 * (k - 1) + 1])
            }
            out.append(sample)
        }
        return out
    }
}
