import Foundation

/// Priors on the working parameters: log density, gradient and Hessian (diagonal), per item.
struct WorkingPriors {
    var slope: LogNormalPrior?
    var guessing: BetaPrior?
    /// Per item (the data's order): its own guessing prior (`CalibrationOptions.itemGuessingPriors`), or nil for
    /// `guessing`. Empty: `guessing` for every item.
    var itemGuessing: [BetaPrior?] = []

    /// Whether any prior is on.
    var isEmpty: Bool { slope == nil && guessing == nil && !itemGuessing.contains { $0 != nil } }

    /// Item j's guessing prior.
    @inline(__always) func guessing(_ j: Int) -> BetaPrior? { itemGuessing.isEmpty ? guessing : (itemGuessing[j] ?? guessing) }

    /// Log prior density of (s, γ) in the working parameters, with s = log a when a slope prior is on.
    /// The slope prior is the log-normal density of a, log p(a) = −log a − (log a − μ)²/(2σ²); the guessing
    /// prior is the Beta density of c = σ(γ). Both are maximised in the natural parameters (no Jacobian), as
    /// BILOG-MG and mirt do for MAP item estimates.
    func logDensity(s: Double, g: Double, item j: Int) -> Double {
        let guessing = guessing(j)
        var value = 0.0
        if let slope {
            let z = (s - slope.meanLog) / slope.sdLog
            value += -s - 0.5 * z * z
        }
        if let guessing {
            let c = Logistic.sigmoid(g)
            value += (guessing.alpha - 1) * log(c) + (guessing.beta - 1) * log1p(-c)
        }
        return value
    }

    /// (∂/∂s, ∂²/∂s², ∂/∂γ, ∂²/∂γ²) of `logDensity`.
    func derivatives(s: Double, g: Double, item j: Int) -> (ds: Double, dss: Double, dg: Double, dgg: Double) {
        let guessing = guessing(j)
        var r = (ds: 0.0, dss: 0.0, dg: 0.0, dgg: 0.0)
        if let slope {
            r.ds = -1 - (s - slope.meanLog) / (slope.sdLog * slope.sdLog)
            r.dss = -1 / (slope.sdLog * slope.sdLog)
        }
        if let guessing {
            let c = Logistic.sigmoid(g)
            r.dg = (guessing.alpha - 1) * (1 - c) - (guessing.beta - 1) * c
            r.dgg = -(guessing.alpha + guessing.beta - 2) * c * (1 - c)
        }
        return r
    }
}
