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
/// A **testlet** item (Wainer, Bradlow & Wang 2007: P = σ(a(θ − b − γ_d)) with the testlet effect γ_d ~ N(0, σ_d²)
/// shared by the items of testlet d) is the bifactor item whose specific slope is its general slope times the
/// testlet's ratio λ_d = ±σ_d (`testletRatio`): a_s = λ_d · a_g.
///
/// Working parameters, the coordinates of the EM's M-step and of the standard errors: (a_g, a_s, d) with a
/// specific factor, (a_g, d) without or for a testlet item (its λ is the testlet's, not the item's), then
/// γ = logit c for a 3PL item.
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
    /// A testlet item's λ (its specific slope is λ · a_g); nil for a bifactor item (free specific slope).
    public var testletRatio: Double?

    /// With `testletRatio` the specific slope is `testletRatio · generalSlope` and `specificSlope` is not read.
    public init(
        generalSlope: Double, specificSlope: Double = 0, specific: Int? = nil, intercept: Double, guessing: Double = 0,
        estimatesGuessing: Bool = false, testletRatio: Double? = nil
    ) {
        self.generalSlope = generalSlope
        self.specific = specific
        self.testletRatio = specific == nil ? nil : testletRatio
        self.specificSlope = specific == nil ? 0 : (self.testletRatio.map { $0 * generalSlope } ?? specificSlope)
        self.intercept = intercept
        self.guessing = guessing
        self.estimatesGuessing = estimatesGuessing
    }

    /// Whether the item has a specific slope of its own (a bifactor item with a specific factor, not a testlet item).
    var hasFreeSpecificSlope: Bool { specific != nil && testletRatio == nil }

    /// The testlet item with ratio λ (a_s = λ · a_g).
    func withTestletRatio(_ ratio: Double) -> BifactorItem {
        var item = self
        item.testletRatio = ratio
        item.specificSlope = ratio * generalSlope
        return item
    }

    /// The logit z = a_g θ_g + a_s θ_s + d.
    @inline(__always) package func logit(general: Double, specific s: Double) -> Double {
        generalSlope * general + specificSlope * s + intercept
    }

    /// P(u = 1 | θ_g, θ_s).
    package func probability(general: Double, specific s: Double) -> Double {
        guessing + (1 - guessing) * Logistic.sigmoid(logit(general: general, specific: s))
    }

    /// (log P(u = 0), log P(u = 1)) at logit z: log(1 − c) + log σ(−z) and log(c + (1 − c) σ(z)) (log σ(z) when
    /// c = 0), without cancellation in either tail.
    @inline(__always) func logProbabilities(logit z: Double) -> (wrong: Double, right: Double) {
        if guessing == 0 { return (Logistic.logSigmoid(-z), Logistic.logSigmoid(z)) }
        return (log1p(-guessing) + Logistic.logSigmoid(-z), log(guessing + (1 - guessing) * Logistic.sigmoid(z)))
    }

    /// The item on its general slope alone (a_g x + d, no specific factor) at each of `points`: log P(u = 0) at
    /// every point, then log P(u = 1) — the per-item table of the correlated-factors E-step and scorer, where an
    /// item's slope on its one factor is held as its general slope.
    func generalLogTable(at points: [Double]) -> [Double] {
        let n = points.count
        var table = [Double](repeating: 0, count: 2 * n)
        for a in 0..<n {
            let lp = logProbabilities(logit: logit(general: points[a], specific: 0))
            table[a] = lp.wrong; table[n + a] = lp.right
        }
        return table
    }

    /// ∂ log P(u | z)/∂z and ∂² log P(u | z)/∂z² at logit z for the answer `right` (u = 1) or wrong (u = 0): with
    /// ψ = σ(z), P = c + (1 − c)ψ and D = (1 − c)ψ(1 − ψ), for u = 1 D/P and [D(1 − 2ψ)P − D²]/P², for u = 0
    /// −D/(1 − P) and [−D(1 − 2ψ)(1 − P) − D²]/(1 − P)²; for the 2PL (c = 0) u − ψ and −ψ(1 − ψ). A score's
    /// gradient and Hessian in θ are these times the slopes (the chain rule through z = a_g θ_g + a_s θ_s + d).
    @inline(__always) func logitDerivatives(logit z: Double, right: Bool) -> (first: Double, second: Double) {
        let psi = Logistic.sigmoid(z)
        if guessing == 0 { return (right ? 1 - psi : -psi, -psi * (1 - psi)) }
        let c = guessing, p = c + (1 - c) * psi, d = (1 - c) * psi * (1 - psi)
        if right { return (d / p, (d * (1 - 2 * psi) * p - d * d) / (p * p)) }
        return (-d / (1 - p), (-d * (1 - 2 * psi) * (1 - p) - d * d) / ((1 - p) * (1 - p)))
    }

    /// The number of working parameters: a_g, a_s (with a specific factor, not a testlet item), d, γ (3PL).
    package var workingParameterCount: Int { 2 + (hasFreeSpecificSlope ? 1 : 0) + (estimatesGuessing ? 1 : 0) }

    /// (a_g, [a_s,] d, [γ = logit c]).
    package var workingParameters: [Double] {
        var x = [generalSlope]
        if hasFreeSpecificSlope { x.append(specificSlope) }
        x.append(intercept)
        if estimatesGuessing { x.append(Logistic.logit(guessing)) }
        return x
    }

    /// The item with working parameters `x` (in `workingParameters`' order); nil for a value that is not finite.
    func withWorkingParameters(_ x: [Double]) -> BifactorItem? {
        guard x.allSatisfy(\.isFinite) else { return nil }
        var item = self, k = 0
        item.generalSlope = x[k]; k += 1
        if hasFreeSpecificSlope { item.specificSlope = x[k]; k += 1 }
        if let ratio = testletRatio { item.specificSlope = ratio * item.generalSlope }
        item.intercept = x[k]; k += 1
        if estimatesGuessing { item.guessing = Logistic.sigmoid(x[k]) }
        return item
    }

    /// The natural parameters whose change the EM's stopping rule watches: a_g, [a_s,] d, [c].
    var naturalParameters: [Double] {
        var x = [generalSlope]
        if hasFreeSpecificSlope { x.append(specificSlope) }
        x.append(intercept)
        if estimatesGuessing { x.append(guessing) }
        return x
    }
}
