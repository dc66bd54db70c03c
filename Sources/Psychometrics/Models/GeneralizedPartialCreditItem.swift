import Foundation

/// Muraki's (1992) generalized partial credit model for an item scored 0 ..< K (logistic metric, D = 1), in the
/// IRT form with slope a and step locations b₁ … b_{K−1} (not necessarily ordered):
/// ```
/// P_k(θ) = exp(Σ_{v=1}^{k} a(θ − b_v)) / Σ_{m=0}^{K−1} exp(Σ_{v=1}^{m} a(θ − b_v))      (empty sum = 0)
/// ```
/// The slope–intercept form is z_k = a k θ + d_k with d_k = −a Σ_{v ≤ k} b_v, d_0 = 0 (mirt's `gpcm` item type;
/// `coef(IRTpars = TRUE)` prints a, b1, b2, …). With a = 1 for every item and the latent variance estimated it
/// is Masters' (1982) partial credit model (the Rasch case, mirt's polytomous `Rasch`); with K = 2 it is the
/// 2PL. Probabilities through `DivideByTotal`.
public struct GeneralizedPartialCreditItem: CalibratableItemModel, DivideByTotalModel, Hashable, Codable {
    /// Slope a > 0.
    public let discrimination: Double
    /// Step locations b_v, v = 1 … K−1: b_v is the θ at which categories v − 1 and v are equally likely.
    public let steps: [Double]
    /// Intercepts d_k = −a Σ_{v ≤ k} b_v, k = 0 … K−1 (d_0 = 0).
    public let intercepts: [Double]
    /// The scoring slopes s_k = a k.
    let categorySlopes: [Double]
    var categoryIntercepts: [Double] { intercepts }

    private enum CodingKeys: String, CodingKey { case discrimination, steps }

    /// - Precondition: at least one step.
    public init(discrimination: Double, steps: [Double]) {
        precondition(!steps.isEmpty, "a partial-credit item has at least two categories")
        self.discrimination = discrimination
        self.steps = steps
        var out = [0.0], sum = 0.0
        for b in steps { sum += b; out.append(-discrimination * sum) }
        intercepts = out
        categorySlopes = (0...steps.count).map { discrimination * Double($0) }
    }

    /// Decodes and checks (`init(validating:steps:)`).
    /// - Throws: `DecodingError`, also for parameters `init(validating:steps:)` refuses.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(validating: container.decode(Double.self, forKey: .discrimination), steps: container.decode([Double].self, forKey: .steps))
    }

    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(discrimination, forKey: .discrimination)
        try container.encode(steps, forKey: .steps)
    }

    /// - Throws: `PsychometricsError.invalidParameters` unless a is positive and finite and there is at least
    ///   one step, each finite.
    public init(validating discrimination: Double, steps: [Double]) throws(PsychometricsError) {
        guard !steps.isEmpty else { throw PsychometricsError(.invalidParameters, "a partial-credit item needs at least one step") }
        guard discrimination > 0, discrimination.isFinite else {
            throw PsychometricsError(.invalidParameters, "a partial-credit item's slope must be positive and finite, got \(discrimination)")
        }
        for (k, b) in steps.enumerated() where !b.isFinite {
            throw PsychometricsError(.invalidParameters, "step b\(k + 1) must be finite, got \(b)")
        }
        self.init(discrimination: discrimination, steps: steps)
    }

    public var categoryCount: Int { steps.count + 1 }

    public var parameterNames: [String] { ["a"] + steps.indices.map { "b\($0 + 1)" } }
    public var parameterValues: [Double] { [discrimination] + steps }

    /// (a, d₁, …, d_{K−1}).
    public var workingParameters: [Double] { [discrimination] + intercepts.dropFirst() }

    /// The item at a, d (b_v = −(d_v − d_{v−1})/a), nil unless a > 0 and every d is finite.
    public func withWorkingParameters(_ x: [Double]) -> GeneralizedPartialCreditItem? {
        let a = x[0]
        guard x.count == categoryCount, a > 0, a.isFinite, x.allSatisfy(\.isFinite) else { return nil }
        return GeneralizedPartialCreditItem(discrimination: a, steps: (1..<x.count).map { -(x[$0] - (($0 == 1) ? 0 : x[$0 - 1])) / a })
    }

    /// ∂z_m/∂a = mθ, ∂z_m/∂d_m = 1, so with E = Σ_m m P_m:
    /// ```
    /// ∂ log P_k/∂a = θ (k − E)      ∂ log P_k/∂d_m = [k = m] − P_m
    /// ```
    public func workingLogGradient(at theta: Double, into g: UnsafeMutableBufferPointer<Double>) {
        let k = categoryCount
        withUnsafeTemporaryAllocation(of: Double.self, capacity: k) { p in
            logCategoryProbabilities(at: theta, into: p)
            var mean = 0.0
            for c in 0..<k { p[c] = exp(p[c]); mean += Double(c) * p[c] }
            for c in 0..<k {
                let row = c * k
                g[row] = theta * (Double(c) - mean)
                for m in 1..<k { g[row + m] = (c == m ? 1 : 0) - p[m] }
            }
        }
    }
}
