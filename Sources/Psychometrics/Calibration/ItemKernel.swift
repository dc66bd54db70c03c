import Foundation

/// Per-item derivatives in the calibrator's working parameters x = (s, d, γ):
/// ```
/// a = s  (or a = exp(s) when a slope prior puts the slope on the log scale)
/// z = aθ + d,   ψ = σ(z),   c = σ(γ)  (3PL only; c = 0 otherwise)
/// P = c + (1 − c) ψ
/// ```
/// Derivatives of P (ψ' = ψ(1 − ψ), ψ'' = ψ'(1 − 2ψ), c' = c(1 − c), aₛ = ∂a/∂s):
/// ```
/// P_s = (1 − c) ψ' θ aₛ        P_d = (1 − c) ψ'        P_γ = (1 − ψ) c'
/// P_ss = (1 − c)(ψ'' θ² aₛ² + ψ' θ aₛₛ)   P_sd = (1 − c) ψ'' θ aₛ   P_dd = (1 − c) ψ''
/// P_sγ = −c' ψ' θ aₛ   P_dγ = −c' ψ'   P_γγ = (1 − ψ) c'(1 − 2c)
/// ```
struct ItemKernel {
    /// Number of working parameters of one item (1PL/Rasch items have a shared slope, counted separately).
    let parameterCount: Int
    let logSlope: Bool
    let guessing: Bool

    init(model: IRTModel, logSlope: Bool) {
        self.guessing = model.hasGuessing
        self.logSlope = logSlope
        self.parameterCount = model.hasGuessing ? 3 : 2
    }

    @inline(__always) func slope(_ s: Double) -> Double { logSlope ? exp(s) : s }
    @inline(__always) func asymptote(_ g: Double) -> Double { guessing ? Logistic.sigmoid(g) : 0 }

    /// log P and log(1 − P) at θ, stable for large |z|.
    @inline(__always)
    func logProbabilities(theta: Double, a: Double, d: Double, c: Double) -> (logP: Double, logQ: Double) {
        let z = a * theta + d
        if c == 0 { return (Logistic.logSigmoid(z), Logistic.logSigmoid(-z)) }
        let psi = Logistic.sigmoid(z)
        return (log(c + (1 - c) * psi), log1p(-c) + Logistic.logSigmoid(-z))
    }

    /// P and its gradient with respect to (s, d[, γ]).
    @inline(__always)
    func gradient(theta: Double, s: Double, d: Double, g: Double, into grad: inout (Double, Double, Double)) -> Double {
        let a = slope(s), aS = logSlope ? a : 1
        let c = asymptote(g)
        let psi = Logistic.sigmoid(a * theta + d)
        let dpsi = psi * (1 - psi)
        grad.0 = (1 - c) * dpsi * theta * aS
        grad.1 = (1 - c) * dpsi
        grad.2 = guessing ? (1 - psi) * c * (1 - c) : 0
        return c + (1 - c) * psi
    }

    /// Second derivatives of P: (ss, sd, sγ, dd, dγ, γγ).
    @inline(__always)
    func hessian(theta: Double, s: Double, d: Double, g: Double) -> [Double] {
        let a = slope(s), aS = logSlope ? a : 1, aSS = logSlope ? a : 0
        let c = asymptote(g), cp = c * (1 - c)
        let psi = Logistic.sigmoid(a * theta + d)
        let dpsi = psi * (1 - psi), ddpsi = dpsi * (1 - 2 * psi)
        return [
            (1 - c) * (ddpsi * theta * theta * aS * aS + dpsi * theta * aSS),
            (1 - c) * ddpsi * theta * aS,
            guessing ? -cp * dpsi * theta * aS : 0,
            (1 - c) * ddpsi,
            guessing ? -cp * dpsi : 0,
            guessing ? (1 - psi) * cp * (1 - 2 * c) : 0,
        ]
    }
}

/// Priors on the working parameters: log density, gradient and Hessian (diagonal).
struct WorkingPriors {
    var slope: LogNormalPrior?
    var guessing: BetaPrior?

    /// Log prior density of (s, γ) in the working parameters, with s = log a when a slope prior is on.
    /// The slope prior is the log-normal density of a, log p(a) = −log a − (log a − μ)²/(2σ²); the guessing
    /// prior is the Beta density of c = σ(γ). Both are maximised in the natural parameters (no Jacobian), as
    /// BILOG-MG and mirt do for MAP item estimates.
    func logDensity(s: Double, g: Double) -> Double {
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
    func derivatives(s: Double, g: Double) -> (ds: Double, dss: Double, dg: Double, dgg: Double) {
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
