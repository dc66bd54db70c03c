import Foundation
import Psychometrics

/// Person fit of a session's response times under the lognormal model (`LognormalTimeItem`): the sum of squared
/// standardised log-time residuals at the session's own speed,
/// ```
/// τ̂ = Σⱼ αⱼ² (βⱼ − log tⱼ) / Σⱼ αⱼ²          (the ML speed)
/// l_t = Σⱼ αⱼ² (log tⱼ − (βⱼ − τ̂))²  ~  χ²(n − 1)
/// ```
/// exactly χ² with n − 1 degrees of freedom under the model when the item parameters are known (the residuals of a
/// weighted mean), so p = P(χ²(n − 1) ≥ l_t) is exact and a large l_t — times that do not follow one speed, as
/// when some items are answered from memory in seconds and the rest worked on — flags aberrance. Marianti, Fox,
/// Avetisyan, Veldkamp & Tijmstra (2014), Testing for aberrant behavior in response time modeling, *Journal of
/// Educational and Behavioral Statistics* 39, 426–451 (their l^t, with τ known: χ²(n)); van der Linden & Guo
/// (2008), Bayesian procedures for identifying aberrant response-time patterns in adaptive testing,
/// *Psychometrika* 73, 365–384 (the residuals).
public struct LognormalPersonFit: Sendable, Hashable {
    /// Timed responses used (items with a time model).
    public var count: Int
    /// τ̂, the session's ML speed.
    public var speed: Double
    /// SE of τ̂: 1/√Σα²; nil without timed responses.
    public var speedStandardError: Double?
    /// l_t; nil with fewer than two timed responses.
    public var statistic: Double?
    /// P(χ²(n − 1) ≥ l_t).
    public var pValue: Double?
    /// Per response (in the order given), its standardised residual αⱼ (log tⱼ − (βⱼ − τ̂)); NaN where untimed.
    public var residuals: [Double]

    /// The fit of times `seconds` (NaN: none) to `items` (each nil: no time model).
    package init(items: [LognormalTimeItem?], seconds: [Double]) {
        var evidence = SessionTimeEvidence()
        for (item, t) in zip(items, seconds) where !t.isNaN {
            if let item { evidence.add(item, logSeconds: log(t)) }
        }
        count = evidence.count
        let tau = evidence.mean
        speed = tau
        speedStandardError = evidence.precision > 0 ? 1 / evidence.precision.squareRoot() : nil
        residuals = zip(items, seconds).map { item, t in
            guard let item, !t.isNaN else { return .nan }
            return item.residual(seconds: t, speed: tau)
        }
        guard count >= 2 else { statistic = nil; pValue = nil; return }
        statistic = evidence.residualSquares
        pValue = Self.pValue(evidence.residualSquares, count: count)
    }

    /// P(χ²(n − 1) ≥ l_t) for l_t over n ≥ 2 timed responses.
    static func pValue(_ statistic: Double, count: Int) -> Double {
        ChiSquare.upperTail(statistic, degreesOfFreedom: Double(count - 1))
    }
}
