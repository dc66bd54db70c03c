import Foundation

/// The dichotomous logistic models (Rasch, 1PL, 2PL, 3PL) as an item model with two categories: 0 = wrong,
/// 1 = right, P₁ = P(θ) = c + (1 − c) σ(a(θ − b)) and P₀ = Q(θ) (`ItemResponseFunction`).
extension ItemParameters: ItemResponseModel {
    public var categoryCount: Int { 2 }

    /// (log Q, log P), stable in both tails (`ItemResponseFunction.logProbabilities(logit:guessing:)`).
    @inlinable
    public func logCategoryProbabilities(at theta: Double, into out: UnsafeMutableBufferPointer<Double>) {
        let v = logProbabilities(at: theta)
        out[0] = v.logQ
        out[1] = v.logP
    }

    /// (Q, P), (−P′, P′), (−P″, P″) (`ItemResponseFunction.thetaDerivatives(slope:logit:guessing:)`).
    public func categoryThetaDerivatives(
        at theta: Double, probability: UnsafeMutableBufferPointer<Double>,
        first: UnsafeMutableBufferPointer<Double>, second: UnsafeMutableBufferPointer<Double>
    ) {
        let d = ItemResponseFunction.thetaDerivatives(slope: discrimination, logit: logit(at: theta), guessing: guessing)
        probability[0] = d.q; probability[1] = d.p
        first[0] = -d.first; first[1] = d.first
        second[0] = -d.second; second[1] = d.second
    }

    public var parameterNames: [String] { ["a", "b", "c"] }
    public var parameterValues: [Double] { [discrimination, difficulty, guessing] }
}
