import Foundation

/// Person fit: the standardised log-likelihood l_z and Snijders' l_z*, which corrects it for θ being estimated.
///
/// At the person's WLE θ̂, over the items they answered, with P, P′, P″ from `thetaDerivatives(at:)` and
/// w = log(P/(1 − P)):
/// ```
/// l_z  = W / √(Σ P(1 − P) w²),        W = Σ (u − P) w = l₀ − E[l₀]      (Drasgow, Levine & Williams 1985)
/// l_z* = (W + c r₀) / √(Σ P(1 − P) (w − c r)²)                           (Snijders 2001, Psychometrika 66:331)
///        r = P′/(P(1 − P)),  c = Σ P′ w / Σ P′ r,  r₀ = J/(2I)  (Warm's WLE: I = Σ P′²/(P(1 − P)), J = Σ P′P″/(P(1 − P)))
/// ```
/// l_z is N(0, 1) only at the true θ: at θ̂ its variance is below 1 for short tests, so l_z < −1.96 flags fewer
/// than the nominal 2.5% of fitting persons. l_z* is asymptotically N(0, 1) at θ̂ (Magis, Raîche & Béland 2012,
/// J. Educ. Behav. Stat. 37:57 give the same formulas). Both are nil when their variance is 0 (one item).
///
/// For items in any number of categories (`statistics(models:items:responses:theta:)`, Drasgow, Levine & Williams
/// 1985; the correction by Sinharay 2016, Psychometrika 81:992), with w_jk = log P_jk and r_jk = P′_jk/P_jk:
/// ```
/// W = Σ_j (w_{j u_j} − Σ_k P_jk w_jk)        Var = Σ_j (Σ_k P_jk w_jk² − (Σ_k P_jk w_jk)²)
/// l_z* = (W + c r₀) / √(Σ_j (Σ_k P_jk w̃_jk² − (Σ_k P_jk w̃_jk)²)),   w̃_jk = w_jk − c r_jk,
///        c = Σ P′_jk w_jk / Σ P′_jk r_jk,  r₀ = J/(2I)  (I = Σ P′²/P, J = Σ P′P″/P over items and categories)
/// ```
/// which for two categories is the formula above (w₁ − w₀ = log(P/(1 − P))); `statistics(parameters:…)` is that
/// case written for the 0/1 engine's speed, and the tests hold the two equal.
package enum PersonFitLz {
    package static func statistics(
        parameters: [ItemParameters], items: UnsafeBufferPointer<Int>, responses: UnsafeBufferPointer<UInt8>,
        theta: Double
    ) -> (lz: Double?, lzStar: Double?) {
        var w0 = 0.0, variance = 0.0, pw = 0.0, pr = 0.0, information = 0.0, skew = 0.0
        for (j, u) in zip(items, responses) {
            var (p, d1, d2) = parameters[j].thetaDerivatives(at: theta)
            p = min(max(p, 1e-12), 1 - 1e-12)
            let v = p * (1 - p), w = log(p / (1 - p)), r = d1 / v
            w0 += (Double(u) - p) * w
            variance += v * w * w
            pw += d1 * w
            pr += d1 * r
            information += d1 * d1 / v
            skew += d1 * d2 / v
        }
        let lz = variance > 0 ? w0 / variance.squareRoot() : nil
        guard pr > 0, information > 0 else { return (lz, nil) }
        let c = pw / pr, r0 = skew / (2 * information)
        var corrected = 0.0
        for j in items {
            var (p, d1, _) = parameters[j].thetaDerivatives(at: theta)
            p = min(max(p, 1e-12), 1 - 1e-12)
            let v = p * (1 - p), e = log(p / (1 - p)) - c * d1 / v
            corrected += v * e * e
        }
        let lzStar = corrected > 1e-12 ? (w0 + c * r0) / corrected.squareRoot() : nil
        return (lz.flatMap { $0.isFinite ? $0 : nil }, lzStar.flatMap { $0.isFinite ? $0 : nil })
    }

    /// l_z and l_z* at θ (the person's WLE) for items of any model: `items[n]` indexes `models`, `responses[n]`
    /// is the category answered.
    package static func statistics(
        models: [any ItemResponseModel], items: UnsafeBufferPointer<Int>, responses: UnsafeBufferPointer<UInt8>,
        theta: Double
    ) -> (lz: Double?, lzStar: Double?) {
        var w0 = 0.0, variance = 0.0, pw = 0.0, pr = 0.0, information = 0.0, skew = 0.0
        let largest = items.map { models[$0].categoryCount }.max() ?? 2
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 3 * largest) { buffer -> (lz: Double?, lzStar: Double?) in
            func derivatives(_ j: Int) -> (
                p: UnsafeMutableBufferPointer<Double>, d1: UnsafeMutableBufferPointer<Double>, d2: UnsafeMutableBufferPointer<Double>
            ) {
                let k = models[j].categoryCount
                let p = UnsafeMutableBufferPointer(rebasing: buffer[0..<k]),
                    d1 = UnsafeMutableBufferPointer(rebasing: buffer[largest..<(largest + k)])
                let d2 = UnsafeMutableBufferPointer(rebasing: buffer[(2 * largest)..<(2 * largest + k)])
                models[j].categoryThetaDerivatives(at: theta, probability: p, first: d1, second: d2)
                for c in 0..<k { p[c] = min(max(p[c], 1e-12), 1) }
                return (p, d1, d2)
            }
            for (j, u) in zip(items, responses) {
                let (p, d1, d2) = derivatives(j)
                var mean = 0.0, square = 0.0
                for c in p.indices {
                    let w = log(p[c]), r = d1[c] / p[c]
                    mean += p[c] * w
                    square += p[c] * w * w
                    pw += d1[c] * w
                    pr += d1[c] * r
                    information += d1[c] * r
                    skew += d1[c] * d2[c] / p[c]
                }
                w0 += log(p[Int(u)]) - mean
                variance += square - mean * mean
            }
            let lz = variance > 0 ? w0 / variance.squareRoot() : nil
            guard pr > 0, information > 0 else { return (lz.flatMap { $0.isFinite ? $0 : nil }, nil) }
            let c = pw / pr, r0 = skew / (2 * information)
            var corrected = 0.0
            for j in items {
                let (p, d1, _) = derivatives(j)
                var mean = 0.0, square = 0.0
                for k in p.indices {
                    let e = log(p[k]) - c * d1[k] / p[k]
                    mean += p[k] * e
                    square += p[k] * e * e
                }
                corrected += square - mean * mean
            }
            let lzStar = corrected > 1e-12 ? (w0 + c * r0) / corrected.squareRoot() : nil
            return (lz.flatMap { $0.isFinite ? $0 : nil }, lzStar.flatMap { $0.isFinite ? $0 : nil })
        }
    }
}
