import Foundation

/// Samejima's (1969) graded response model for an item scored 0 ..< K in ordered categories (logistic metric,
/// D = 1), in the IRT form with slope a and thresholds b₁ < b₂ < … < b_{K−1}:
/// ```
/// P*_k(θ) = σ(a(θ − b_k))   (k = 1 … K−1),   P*_0 = 1,   P*_K = 0
/// P_k(θ)  = P*_k(θ) − P*_{k+1}(θ)
/// ```
/// The slope–intercept form is z_k = aθ + d_k with d_k = −a b_k, d₁ > d₂ > … (mirt's `graded` item type; its
/// `coef(IRTpars = TRUE)` prints a, b1, b2, …). With K = 2 it is the 2PL.
///
/// Log probabilities stay accurate in both tails through
/// ```
/// σ(z_k) − σ(z_{k+1}) = σ(z_k) σ(−z_{k+1}) (1 − e^{−(z_k − z_{k+1})})
/// log P_k = log σ(z_k) + log σ(−z_{k+1}) + log1p(−e^{−a(b_{k+1} − b_k)})
/// ```
/// whose last term does not depend on θ.
public struct GradedResponseItem: CalibratableItemModel, Hashable, Codable {
    /// Slope a > 0.
    public let discrimination: Double
    /// Thresholds b₁ < … < b_{K−1}: b_k is the θ at which P(u ≥ k) = ½.
    public let thresholds: [Double]

    /// - Precondition: at least one threshold; the caller (the bank reader, `init(validating:)`) has checked
    ///   the values.
    public init(discrimination: Double, thresholds: [Double]) {
        precondition(!thresholds.isEmpty, "a graded item has at least two categories")
        self.discrimination = discrimination
        self.thresholds = thresholds
    }

    /// - Throws: `PsychometricsError.invalidParameters` unless a is positive and finite and the thresholds are
    ///   finite and strictly increasing (at least one).
    public init(validating discrimination: Double, thresholds: [Double]) throws(PsychometricsError) {
        guard !thresholds.isEmpty else { throw PsychometricsError(.invalidParameters, "a graded item needs at least one threshold") }
        guard discrimination > 0, discrimination.isFinite else {
            throw PsychometricsError(.invalidParameters, "a graded item's slope must be positive and finite, got \(discrimination)")
        }
        for (k, b) in thresholds.enumerated() {
            guard b.isFinite else { throw PsychometricsError(.invalidParameters, "threshold b\(k + 1) must be finite, got \(b)") }
            if k > 0, b <= thresholds[k - 1] {
                throw PsychometricsError(.invalidParameters, "graded thresholds must increase: b\(k + 1) = \(b) after b\(k) = \(thresholds[k - 1])")
            }
        }
        self.init(discrimination: discrimination, thresholds: thresholds)
    }

    private enum CodingKeys: String, CodingKey { case discrimination, thresholds }

    /// Decodes and checks (`init(validating:thresholds:)`).
    /// - Throws: `DecodingError`, also for parameters `init(validating:thresholds:)` refuses.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            validating: container.decode(Double.self, forKey: .discrimination),
            thresholds: container.decode([Double].self, forKey: .thresholds))
    }

    public var categoryCount: Int { thresholds.count + 1 }

    /// Intercepts d_k = −a b_k of the slope–intercept form.
    public var intercepts: [Double] { thresholds.map { -discrimination * $0 } }

    public func logCategoryProbabilities(at theta: Double, into out: UnsafeMutableBufferPointer<Double>) {
        let a = discrimination, m = thresholds.count
        // k = 0: log(1 − σ(z₁)); k = K − 1: log σ(z_{K−1}).
        out[0] = Logistic.logSigmoid(-a * (theta - thresholds[0]))
        for k in 1..<m {
            let gap = a * (thresholds[k] - thresholds[k - 1])
            out[k] =
                Logistic.logSigmoid(a * (theta - thresholds[k - 1])) + Logistic.logSigmoid(-a * (theta - thresholds[k]))
                + log1p(-exp(-gap))
        }
        out[m] = Logistic.logSigmoid(a * (theta - thresholds[m - 1]))
    }

    /// With ψ_k = σ(z_k), ψ′_k = a ψ_k ψ̄_k and ψ″_k = a² ψ_k ψ̄_k (ψ̄_k − ψ_k) (ψ_0 = 1, ψ_K = 0):
    /// ```
    /// P_k = ψ_k − ψ_{k+1}    P′_k = ψ′_k − ψ′_{k+1}    P″_k = ψ″_k − ψ″_{k+1}
    /// ```
    public func categoryThetaDerivatives(
        at theta: Double, probability: UnsafeMutableBufferPointer<Double>,
        first: UnsafeMutableBufferPointer<Double>, second: UnsafeMutableBufferPointer<Double>
    ) {
        let a = discrimination, m = thresholds.count
        // The stable log probabilities, exponentiated in place below (no allocation on this per-step path).
        logCategoryProbabilities(at: theta, into: probability)
        var upper = (psi: 1.0, d1: 0.0, d2: 0.0)
        for k in 0...m {
            var lower = (psi: 0.0, d1: 0.0, d2: 0.0)
            if k < m {
                let z = a * (theta - thresholds[k])
                let psi = Logistic.sigmoid(z), bar = Logistic.sigmoid(-z)
                lower = (psi, a * psi * bar, a * a * psi * bar * (bar - psi))
            }
            probability[k] = exp(probability[k])
            first[k] = upper.d1 - lower.d1
            second[k] = upper.d2 - lower.d2
            upper = lower
        }
    }

    public var parameterNames: [String] { ["a"] + thresholds.indices.map { "b\($0 + 1)" } }
    public var parameterValues: [Double] { [discrimination] + thresholds }

    /// (a, d₁, …, d_{K−1}), d_k = −a b_k.
    public var workingParameters: [Double] { [discrimination] + intercepts }

    /// The item at a, d (b_k = −d_k/a), nil unless a > 0 and d₁ > d₂ > … are finite.
    public func withWorkingParameters(_ x: [Double]) -> GradedResponseItem? {
        let a = x[0]
        guard x.count == categoryCount, a > 0, a.isFinite else { return nil }
        for k in 1..<x.count where !(x[k].isFinite && (k == 1 || x[k] < x[k - 1])) { return nil }
        return GradedResponseItem(discrimination: a, thresholds: x[1...].map { -$0 / a })
    }

    /// With w_k = ψ_k ψ̄_k (w_0 = w_K = 0), ∂ψ_k/∂a = θ w_k, ∂ψ_k/∂d_k = w_k:
    /// ```
    /// ∂ log P_k/∂a = θ (w_k − w_{k+1}) / P_k     ∂ log P_k/∂d_k = w_k / P_k     ∂ log P_k/∂d_{k+1} = −w_{k+1} / P_k
    /// ```
    /// with P_k = σ(z_k)σ(−z_{k+1})(1 − e^{−(d_k − d_{k+1})}) so that the ratios keep their digits in the tails.
    public func workingLogGradient(at theta: Double, into g: UnsafeMutableBufferPointer<Double>) {
        let a = discrimination, m = thresholds.count, width = m + 1
        for i in 0..<(width * width) { g[i] = 0 }
        // ψ_k and ψ̄_k for k = 1 … K−1 (on the stack: this runs per node and item in every M-step).
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * m) { buffer in
            let psi = UnsafeMutableBufferPointer(rebasing: buffer[0..<m]), bar = UnsafeMutableBufferPointer(rebasing: buffer[m...])
            for k in 0..<m {
                let z = a * (theta - thresholds[k])
                psi[k] = Logistic.sigmoid(z); bar[k] = Logistic.sigmoid(-z)
            }
            for k in 0...m {
                let row = k * width
                if k == 0 {
                    // P_0 = ψ̄_1: ∂ log/∂z₁ = −ψ_1.
                    g[row] = -theta * psi[0]; g[row + 1] = -psi[0]
                } else if k == m {
                    // P_{K−1} = ψ_{K−1}: ∂ log/∂z = ψ̄.
                    g[row] = theta * bar[m - 1]; g[row + m] = bar[m - 1]
                } else {
                    // P_k = ψ_k − ψ_{k+1} (thresholds k−1, k in 0-based storage), divided without cancellation:
                    // w_k/P_k = ψ̄_k / (σ(−z_{k+1}) (1 − e^{−Δ})) and w_{k+1}/P_k = ψ_{k+1} / (σ(z_k) (1 − e^{−Δ})).
                    let delta = -expm1(-a * (thresholds[k] - thresholds[k - 1]))
                    let lowerRatio = bar[k - 1] / (bar[k] * delta), upperRatio = psi[k] / (psi[k - 1] * delta)
                    g[row] = theta * (lowerRatio - upperRatio)
                    g[row + k] = lowerRatio
                    g[row + k + 1] = -upperRatio
                }
            }
        }
    }
}
