import Foundation

/// Numerically stable logistic helpers.
@usableFromInline package enum Logistic {
    /// σ(z) = 1 / (1 + e^(−z)), evaluated without overflow for any finite z.
    @inlinable package static func sigmoid(_ z: Double) -> Double {
        if z >= 0 { return 1 / (1 + exp(-z)) }
        let e = exp(z)
        return e / (1 + e)
    }

    /// log σ(z) = −log(1 + e^(−z)), stable for large |z|.
    @inlinable package static func logSigmoid(_ z: Double) -> Double {
        z >= 0 ? -log1p(exp(-z)) : z - log1p(exp(z))
    }

    /// logit(p) = log(p / (1 − p)).
    @inlinable package static func logit(_ p: Double) -> Double { log(p / (1 - p)) }
}
