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
public enum PersonFitLz {
    public static func statistics(parameters: [ItemParameters], items: UnsafeBufferPointer<Int>, responses: UnsafeBufferPointer<UInt8>,
                                  theta: Double) -> (lz: Double?, lzStar: Double?) {
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
}
