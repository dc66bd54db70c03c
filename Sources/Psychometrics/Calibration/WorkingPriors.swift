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

    /// Log prior density of (s, γ) in the working parameters, with s = log a when a slope prior is on: the
    /// log-normal density of a and the Beta density of c = σ(γ) (`PriorDensities.swift`).
    func logDensity(s: Double, g: Double, item j: Int) -> Double {
        let guessing = guessing(j)
        var value = 0.0
        if let slope { value += slope.logDensity(logSlope: s) }
        if let guessing { value += guessing.logDensity(logitGuessing: g) }
        return value
    }

    /// (∂/∂s, ∂²/∂s², ∂/∂γ, ∂²/∂γ²) of `logDensity`.
    func derivatives(s: Double, g: Double, item j: Int) -> (ds: Double, dss: Double, dg: Double, dgg: Double) {
        let guessing = guessing(j)
        var r = (ds: 0.0, dss: 0.0, dg: 0.0, dgg: 0.0)
        if let slope { (r.ds, r.dss) = slope.logDensityDerivatives(logSlope: s) }
        if let guessing { (r.dg, r.dgg) = guessing.logDensityDerivatives(logitGuessing: g) }
        return r
    }
}
