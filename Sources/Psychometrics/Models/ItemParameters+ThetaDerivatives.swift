import Foundation

extension ItemParameters {
    /// P(θ) and its first two derivatives in θ, slope–difficulty form, ψ = σ(a(θ − b)):
    /// ```
    /// P = c + (1 − c) ψ      P′ = (1 − c) a ψ (1 − ψ)      P″ = P′ a (1 − 2ψ)
    /// ```
    /// (`ItemResponseFunction.thetaDerivativesComplement(slope:logit:guessing:)`; used by person fit: Snijders'
    /// l_z* needs P′ and, for the WLE, P″.)
    @inlinable public func thetaDerivatives(at theta: Double) -> (p: Double, first: Double, second: Double) {
        ItemResponseFunction.thetaDerivativesComplement(slope: discrimination, logit: logit(at: theta), guessing: guessing)
    }
}
