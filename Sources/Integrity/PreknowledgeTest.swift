import Foundation
import Psychometrics

/// Whether a session answered a set of suspected (compromised, leaked) items better and faster than the rest of
/// its test: the signature of item preknowledge.
///
/// - **Responses**: Sinharay's (2017) signed likelihood-ratio statistic for ability on the compromised items C
///   above ability on the others U, with θ̂ the maximum-likelihood estimates on C, on U and on both:
///   ```
///   L_s = sign(θ̂_C − θ̂_U) √(2 [ℓ_C(θ̂_C) + ℓ_U(θ̂_U) − ℓ(θ̂)])   ≈ N(0, 1)
///   ```
///   Sinharay, S. (2017), Detection of item preknowledge using likelihood ratio test and score test, *Journal of
///   Educational and Behavioral Statistics* 42, 46–68.
/// - **Times**: the difference of the lognormal model's speed on C and on U (`LognormalTimeItem`), with
///   τ̂_S = Σ_S α²(β − log t)/Σ_S α² and exact variance 1/P_C + 1/P_U (P_S = Σ_S α²) under one speed:
///   ```
///   z_τ = (τ̂_C − τ̂_U) / √(1/P_C + 1/P_U)   ~ N(0, 1)
///   ```
///   the response-time counterpart (Sinharay, S. 2020, Detection of item preknowledge using response times,
///   *Applied Psychological Measurement* 44, 376–392).
/// - **Combined**: the one-sided p-values (higher ability, faster on C) by Fisher's method,
///   X = −2 (ln p_resp + ln p_time) ~ χ²(4) when both are available; otherwise the one there is.
///
/// ML θ̂ on a set: the maximum of ℓ over [−B, B] (a 0.05 grid, then golden-section search), so an all-correct set
/// sits at B (the statistic is then bounded, never infinite).
public struct PreknowledgeTest: Sendable, Hashable {
    public var compromisedAnswered: Int
    public var otherAnswered: Int
    public var responseStatistic: Double?
    public var responsePValue: Double?
    public var speedStatistic: Double?
    public var speedPValue: Double?
    /// Fisher's combination of the available one-sided p-values; nil when neither is.
    public var combinedPValue: Double?

    /// The θ range of the ML estimates: [−6, 6].
    public static let thetaBound = 6.0

    /// The test for one session: `items` are bank indices with `responses` (0/1) and `seconds` (NaN: no time),
    /// `parameters` and `timeItems` the bank's, `compromised[j]` whether item j is suspected.
    package init(
        items: [Int], responses: [UInt8], seconds: [Double], parameters: [ItemParameters], timeItems: [LognormalTimeItem?],
        compromised: [Bool]
    ) {
        var c: [(ItemParameters, UInt8)] = [], u: [(ItemParameters, UInt8)] = []
        var timeC = SessionTimeEvidence(), timeU = SessionTimeEvidence()
        for (k, j) in items.enumerated() {
            if compromised[j] { c.append((parameters[j], responses[k])) } else { u.append((parameters[j], responses[k])) }
            if k < seconds.count, !seconds[k].isNaN, let item = timeItems[j] {
                if compromised[j] { timeC.add(item, logSeconds: log(seconds[k])) } else { timeU.add(item, logSeconds: log(seconds[k])) }
            }
        }
        compromisedAnswered = c.count
        otherAnswered = u.count
        if !c.isEmpty && !u.isEmpty {
            let (tc, lc) = Self.maximumLikelihood(c), (tu, lu) = Self.maximumLikelihood(u), (_, l) = Self.maximumLikelihood(c + u)
            let lr = max(0, 2 * (lc + lu - l))
            let signed = (tc >= tu ? 1.0 : -1.0) * lr.squareRoot()
            responseStatistic = signed
            responsePValue = 1 - StandardNormal.cdf(signed)
        }
        if timeC.count > 0 && timeU.count > 0 {
            let z = (timeC.mean - timeU.mean) / (1 / timeC.precision + 1 / timeU.precision).squareRoot()
            speedStatistic = z
            speedPValue = 1 - StandardNormal.cdf(z)
        }
        let ps = [responsePValue, speedPValue].compactMap { $0 }
        switch ps.count {
        case 2:
            let x = -2 * ps.reduce(0) { $0 + log(max($1, 1e-300)) }
            combinedPValue = ChiSquare.upperTail(x, degreesOfFreedom: 4)
        case 1: combinedPValue = ps[0]
        default: combinedPValue = nil
        }
    }

    /// The ML θ over [−B, B] and its log-likelihood.
    static func maximumLikelihood(_ answers: [(ItemParameters, UInt8)]) -> (theta: Double, logLikelihood: Double) {
        func l(_ theta: Double) -> Double {
            answers.reduce(0) { total, a in
                let v = a.0.logProbabilities(at: theta)
                return total + (a.1 == 1 ? v.logP : v.logQ)
            }
        }
        let b = thetaBound, step = 0.05
        var best = -b, bestValue = l(-b), x = -b
        while x < b {
            x = min(b, x + step)
            let v = l(x)
            if v > bestValue { best = x; bestValue = v }
        }
        var lo = max(-b, best - step), hi = min(b, best + step)
        let g = (5.0.squareRoot() - 1) / 2
        var x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), f1 = l(x1), f2 = l(x2)
        for _ in 0..<40 {
            if f1 < f2 {
                lo = x1; x1 = x2; f1 = f2; x2 = lo + g * (hi - lo); f2 = l(x2)
            } else {
                hi = x2; x2 = x1; f2 = f1; x1 = hi - g * (hi - lo); f1 = l(x1)
            }
        }
        let mid = (lo + hi) / 2, midValue = l(mid)
        return midValue >= bestValue ? (mid, midValue) : (best, bestValue)
    }
}
