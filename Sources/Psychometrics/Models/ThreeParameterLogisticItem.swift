import Foundation

/// Birnbaum's three-parameter logistic item (0 = wrong, 1 = right) as a calibratable item model, so that
/// multiple-choice items with a lower asymptote are estimated beside graded, partial-credit and nominal items in
/// one `PolytomousCalibrator` fit:
/// ```
/// P₁(θ) = c + (1 − c) σ(aθ + d),   P₀ = 1 − P₁        (b = −d/a)
/// ```
/// Probabilities and θ-derivatives are `ItemParameters`' (one implementation, `ItemResponseFunction`). Working
/// parameters x = (a, d, γ = logit c), the dichotomous engine's form with a = s; their gradient from
/// `ItemResponseFunction.workingGradientRatio` (h = ∇P/(PQ)): ∂ log P₁/∂x = Q h, ∂ log P₀/∂x = −P h.
public struct ThreeParameterLogisticItem: CalibratableItemModel, Hashable {
    /// The item as (a, b, c).
    public let parameters: ItemParameters

    /// - Precondition: a > 0 and 0 ≤ c < 1, finite.
    public init(_ parameters: ItemParameters) {
        precondition(
            parameters.discrimination > 0 && parameters.discrimination.isFinite && parameters.difficulty.isFinite
                && parameters.guessing >= 0 && parameters.guessing < 1, "a 3PL item has a > 0 and 0 ≤ c < 1")
        self.parameters = parameters
    }

    public var categoryCount: Int { 2 }

    public func logCategoryProbabilities(at theta: Double, into out: UnsafeMutableBufferPointer<Double>) {
        parameters.logCategoryProbabilities(at: theta, into: out)
    }

    public func categoryThetaDerivatives(
        at theta: Double, probability: UnsafeMutableBufferPointer<Double>,
        first: UnsafeMutableBufferPointer<Double>, second: UnsafeMutableBufferPointer<Double>
    ) {
        parameters.categoryThetaDerivatives(at: theta, probability: probability, first: first, second: second)
    }

    public var parameterNames: [String] { parameters.parameterNames }
    public var parameterValues: [Double] { parameters.parameterValues }

    /// (a, d, logit c).
    public var workingParameters: [Double] {
        [parameters.discrimination, parameters.intercept, Logistic.logit(parameters.guessing)]
    }

    /// The item with working parameters x = (a, d, γ), nil unless a > 0 and every value is finite.
    public func withWorkingParameters(_ x: [Double]) -> ThreeParameterLogisticItem? {
        guard x.count == 3, x[0] > 0, x.allSatisfy(\.isFinite) else { return nil }
        let c = Logistic.sigmoid(x[2])
        guard c < 1 else { return nil }
        return ThreeParameterLogisticItem(ItemParameters(discrimination: x[0], difficulty: -x[1] / x[0], guessing: c))
    }

    public func workingLogGradient(at theta: Double, into g: UnsafeMutableBufferPointer<Double>) {
        let p = parameters, c = p.guessing
        let t = ItemResponseFunction.trace(logit: ItemResponseFunction.logit(slope: p.discrimination, intercept: p.intercept, at: theta), guessing: c)
        let h = ItemResponseFunction.workingGradientRatio(theta: theta, slopeDerivative: 1, trace: t, guessing: c)
        // Row 0 (wrong): −P h; row 1 (right): Q h.
        g[0] = -t.p * h.slope; g[1] = -t.p * h.intercept; g[2] = -t.p * h.guessing
        g[3] = t.q * h.slope; g[4] = t.q * h.intercept; g[5] = t.q * h.guessing
    }
}
