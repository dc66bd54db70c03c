import Foundation

extension ItemParameters {
    /// P(θ) and its first two derivatives in θ, slope–difficulty form, σ = 1/(1 + exp(−a(θ − b))):
    /// ```
    /// P = c + (1 − c) σ      P′ = (1 − c) a σ (1 − σ)      P″ = (1 − c) a² σ (1 − σ)(1 − 2σ)
    /// ```
    /// (Used by person fit: Snijders' l_z* needs P′ and, for the WLE, P″.)
    @inlinable public func thetaDerivatives(at theta: Double) -> (p: Double, first: Double, second: Double) {
        let s = Logistic.sigmoid(discrimination * (theta - difficulty))
        let v = (1 - guessing) * discrimination * s * (1 - s)
        return (guessing + (1 - guessing) * s, v, v * discrimination * (1 - 2 * s))
    }
}
