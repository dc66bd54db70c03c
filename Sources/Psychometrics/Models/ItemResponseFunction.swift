import Foundation

/// The item response function of the dichotomous logistic models (Rasch, 1PL, 2PL, 3PL; logistic metric, D = 1)
/// and every derivative an estimator needs, written once. All functions take the logit z and the lower asymptote c:
/// ```
/// P = c + (1 − c) ψ,   Q = 1 − P = (1 − c) ψ̄,   ψ = σ(z) = 1/(1 + e^(−z)),   ψ̄ = σ(−z) = 1 − ψ
/// z = a(θ − b)   slope–difficulty (`ItemParameters`)
/// z = aθ + d     slope–intercept, d = −ab (the EM calibrator's working form)
/// ```
/// Q is taken as (1 − c) σ(−z), not 1 − P, so it keeps its precision where P → 1. Sources: Birnbaum (1968) in
/// Lord & Novick, ch. 17–20; Baker & Kim (2004), *Item Response Theory: Parameter Estimation Techniques*,
/// ch. 2–7; the same role as mirt's `traceLinePts.cpp` (`P_dich`) and `dpars.cpp`.
///
/// Callers: the EM engine (E-step tables, item and common-slope M-steps), the Louis standard errors, every
/// ability estimator (EAP tables, ML/MAP/WLE), the fit statistics (S-X², infit/outfit, l_z, Q3, RMSD, empirical
/// curves via `ItemParameters`), and the linking criteria.
@usableFromInline package enum ItemResponseFunction {
    /// The logit of the slope–difficulty form, valid for any finite a, b, θ:
    /// ```
    /// z = a(θ − b)
    /// ```
    @inlinable @inline(__always)
    @usableFromInline package static func logit(slope a: Double, difficulty b: Double, at theta: Double) -> Double { a * (theta - b) }

    /// The logit of the slope–intercept form, valid for any finite a, d, θ:
    /// ```
    /// z = aθ + d
    /// ```
    @inlinable @inline(__always)
    @usableFromInline package static func logit(slope a: Double, intercept d: Double, at theta: Double) -> Double { a * theta + d }

    /// P without a lower asymptote (Rasch, 1PL, 2PL), any finite z:
    /// ```
    /// P = ψ = σ(z)
    /// ```
    @inlinable @inline(__always)
    @usableFromInline package static func probability(logit z: Double) -> Double { Logistic.sigmoid(z) }

    /// P of the 3PL (2PL when c = 0), any finite z and 0 ≤ c < 1 (Birnbaum 1968):
    /// ```
    /// P = c + (1 − c) σ(z)
    /// ```
    @inlinable @inline(__always)
    @usableFromInline package static func probability(logit z: Double, guessing c: Double) -> Double { c + (1 - c) * Logistic.sigmoid(z) }

    /// log P and log Q, stable in both tails: for c = 0 both through log σ (no cancellation for large |z|); for
    /// c > 0, log P ≥ log c and log Q = log(1 − c) + log σ(−z):
    /// ```
    /// c = 0:  log P = log σ(z),           log Q = log σ(−z)
    /// c > 0:  log P = log(c + (1 − c)ψ),  log Q = log1p(−c) + log σ(−z)
    /// ```
    @inlinable @inline(__always)
    @usableFromInline package static func logProbabilities(logit z: Double, guessing c: Double) -> (logP: Double, logQ: Double) {
        if c == 0 { return (Logistic.logSigmoid(z), Logistic.logSigmoid(-z)) }
        return (log(c + (1 - c) * Logistic.sigmoid(z)), log1p(-c) + Logistic.logSigmoid(-z))
    }

    /// The trace line at one logit: ψ, ψ̄, P and Q (see the type's formulas), for callers that need more than P.
    @usableFromInline package struct Trace: Sendable {
        /// ψ = σ(z).
        @usableFromInline package var psi: Double
        /// ψ̄ = σ(−z) = 1 − ψ, computed directly.
        @usableFromInline package var psiBar: Double
        /// P = c + (1 − c) ψ.
        @usableFromInline package var p: Double
        /// Q = 1 − P = (1 − c) ψ̄.
        @usableFromInline package var q: Double

        @inlinable @inline(__always)
        @usableFromInline package init(psi: Double, psiBar: Double, p: Double, q: Double) {
            self.psi = psi
            self.psiBar = psiBar
            self.p = p
            self.q = q
        }
    }

    /// ψ, ψ̄, P and Q at logit z, any finite z and 0 ≤ c < 1.
    @inlinable @inline(__always)
    @usableFromInline package static func trace(logit z: Double, guessing c: Double) -> Trace {
        let psi = Logistic.sigmoid(z), psiBar = Logistic.sigmoid(-z)
        return Trace(psi: psi, psiBar: psiBar, p: c + (1 - c) * psi, q: (1 - c) * psiBar)
    }

    /// P, Q and the θ-derivatives the ability estimators and person fit need (Baker & Kim 2004, ch. 5; Warm 1989),
    /// with ψ′ = ψψ̄ and ψ″ = ψ′(ψ̄ − ψ):
    /// ```
    /// P′ = (1 − c) a ψ ψ̄        P″ = P′ a (ψ̄ − ψ)        r = P′/(PQ) = a ψ / P
    /// ```
    /// r is the weight of (u − P) in the score; `r` stays finite for c = 0 and c > 0.
    @inlinable @inline(__always)
    @usableFromInline package static func thetaDerivatives(slope a: Double, logit z: Double, guessing c: Double)
        -> (p: Double, q: Double, first: Double, second: Double, scoreWeight: Double)
    {
        let t = trace(logit: z, guessing: c)
        let first = (1 - c) * a * t.psi * t.psiBar
        return (t.p, t.q, first, first * a * (t.psiBar - t.psi), a * t.psi / t.p)
    }

    /// Fisher information of one item at θ (Birnbaum 1968; Lord 1980, eq. 4-43), from P there, any 0 ≤ c < 1:
    /// ```
    /// I(θ) = a² (P − c)² (1 − P) / ((1 − c)² P)
    /// ```
    /// which reduces to a² P (1 − P) when c = 0; 0 where P = 0.
    @inlinable @inline(__always)
    @usableFromInline package static func information(probability p: Double, slope a: Double, guessing c: Double) -> Double {
        guard p > 0, c < 1 else { return 0 }
        let num = (p - c) * (p - c) * (1 - p)
        return a * a * num / ((1 - c) * (1 - c) * p)
    }

    /// The gradient of P in the calibrator's working parameters x = (s, d, γ), divided by PQ, at node θ:
    /// a = s or a = e^s (aₛ = ∂a/∂s = 1 or a), z = aθ + d, c = σ(γ) (c′ = c(1 − c)), so that
    /// ```
    /// P_s = (1 − c) ψψ̄ θ aₛ      P_d = (1 − c) ψψ̄      P_γ = ψ̄ c′
    /// h = ∇P / (PQ) = (ψ θ aₛ, ψ, c) / P,   so h_s = θ aₛ h_d  (∂z/∂s = θ aₛ, ∂z/∂d = 1)
    /// ```
    /// (Baker & Kim 2004, ch. 7; mirt's `dpars.cpp` for the 3PL in the logit-c form.) For 2PL only (h₀, h₁) is used.
    @inlinable @inline(__always)
    @usableFromInline package static func workingGradientRatio(theta: Double, slopeDerivative aS: Double, trace t: Trace, guessing c: Double)
        -> (slope: Double, intercept: Double, guessing: Double)
    {
        (t.psi * theta * aS / t.p, t.psi / t.p, c / t.p)
    }

    /// The Hessian of P in the working parameters (s, d, γ), divided by PQ, at node θ (aₛₛ = ∂²a/∂s² = 0 or a),
    /// with ρ = ψ/P:
    /// ```
    /// K_ss = ρ ((ψ̄ − ψ) θ² aₛ² + θ aₛₛ)     K_sd = ρ (ψ̄ − ψ) θ aₛ     K_dd = ρ (ψ̄ − ψ)
    /// K_sγ = −c ρ θ aₛ                       K_dγ = −c ρ               K_γγ = c (1 − 2c) / P
    /// ```
    /// (from P_ss = (1 − c)(ψ″θ²aₛ² + ψ′θaₛₛ), P_sγ = −c′ψ′θaₛ, P_γγ = ψ̄ c′(1 − 2c), ψ″ = ψ′(ψ̄ − ψ)).
    @inlinable @inline(__always)
    @usableFromInline package static func workingCurvatureRatio(
        theta: Double, slopeDerivative aS: Double, slopeSecondDerivative aSS: Double,
        trace t: Trace, guessing c: Double
    )
        -> (ss: Double, sd: Double, sg: Double, dd: Double, dg: Double, gg: Double)
    {
        let rho = t.psi / t.p
        return (
            rho * ((t.psiBar - t.psi) * theta * theta * aS * aS + theta * aSS), rho * (t.psiBar - t.psi) * theta * aS,
            -c * rho * theta * aS, rho * (t.psiBar - t.psi), -c * rho, c * (1 - 2 * c) / t.p
        )
    }
}
