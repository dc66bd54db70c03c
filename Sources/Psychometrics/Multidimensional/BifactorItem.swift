import Foundation

/// A 0/1 item of a bifactor model (Gibbons & Hedeker 1992) in slope–intercept form: it loads on the general
/// factor θ_g and on at most one specific factor θ_s (its domain), the factors independent N(0, 1):
/// ```
/// P(u = 1 | θ_g, θ_s) = c + (1 − c) / (1 + exp(−(a_g θ_g + a_s θ_s + d)))
/// ```
/// c = 0 for the 2PL. This is mirt's `bfactor()` parameterisation (`coef(simplify = TRUE)`: a1 the general
/// slope, a2… the specific ones, d, g), on the logistic metric (D = 1). An item without a specific factor
/// (`specific == nil`) is a unidimensional item on the general factor.
///
/// Working parameters, the coordinates of the EM's M-step and of the standard errors: (a_g, a_s, d) with a
/// specific factor, (a_g, d) without, then γ = logit c for a 3PL item.
public struct BifactorItem: Sendable, Hashable, Codable {
    public var generalSlope: Double
    /// The specific slope a_s (0 when `specific` is nil). Its sign is identified per factor only up to a flip of
    /// the whole factor; the calibrator reports each specific factor with its slopes summing positive.
    public var specificSlope: Double
    /// Index of the item's specific factor in its `FactorStructure.specificFactors`, or nil.
    public var specific: Int?
    public var intercept: Double
    /// The lower asymptote c (0: a 2PL item).
    public var guessing: Double
    /// Whether c is a parameter of the item (a 3PL item), estimated and counted.
    public var estimatesGuessing: Bool

    public init(generalSlope: Double, specificSlope: Double = 0, specific: Int? = nil, intercept: Double, guessing: Double = 0,
                estimatesGuessing: Bool = false) {
        self.generalSlope = generalSlope
        self.specificSlope = specific == nil ? 0 : specificSlope
        self.specific = specific
        self.intercept = intercept
        self.guessing = guessing
        self.estimatesGuessing = estimatesGuessing
    }

    /// The logit z = a_g θ_g + a_s θ_s + d.
    @inline(__always) public func logit(general: Double, specific s: Double) -> Double {
        generalSlope * general + specificSlope * s + intercept
    }

    /// P(u = 1 | θ_g, θ_s).
    public func probability(general: Double, specific s: Double) -> Double {
        guessing + (1 - guessing) * Logistic.sigmoid(logit(general: general, specific: s))
    }

    /// (log P(u = 0), log P(u = 1)) at logit z: log(1 − c) + log σ(−z) and log(c + (1 − c) σ(z)) (log σ(z) when
    /// c = 0), without cancellation in either tail.
    @inline(__always) func logProbabilities(logit z: Double) -> (wrong: Double, right: Double) {
        if guessing == 0 { return (Logistic.logSigmoid(-z), Logistic.logSigmoid(z)) }
        return (log1p(-guessing) + Logistic.logSigmoid(-z), log(guessing + (1 - guessing) * Logistic.sigmoid(z)))
    }

    /// The number of working parameters: a_g, a_s (with a specific factor), d, γ (3PL).
    public var workingParameterCount: Int { 2 + (specific == nil ? 0 : 1) + (estimatesGuessing ? 1 : 0) }

    /// (a_g, [a_s,] d, [γ = logit c]).
    public var workingParameters: [Double] {
        var x = [generalSlope]
        if specific != nil { x.append(specificSlope) }
        x.append(intercept)
        if estimatesGuessing { x.append(Logistic.logit(guessing)) }
        return x
    }

    /// The item with working parameters `x` (in `workingParameters`' order); nil for a value that is not finite.
    func withWorkingParameters(_ x: [Double]) -> BifactorItem? {
        guard x.allSatisfy(\.isFinite) else { return nil }
        var item = self, k = 0
        item.generalSlope = x[k]; k += 1
        if specific != nil { item.specificSlope = x[k]; k += 1 }
        item.intercept = x[k]; k += 1
        if estimatesGuessing { item.guessing = Logistic.sigmoid(x[k]) }
        return item
    }

    /// The natural parameters whose change the EM's stopping rule watches: a_g, [a_s,] d, [c].
    var naturalParameters: [Double] {
        var x = [generalSlope]
        if specific != nil { x.append(specificSlope) }
        x.append(intercept)
        if estimatesGuessing { x.append(guessing) }
        return x
    }
}
