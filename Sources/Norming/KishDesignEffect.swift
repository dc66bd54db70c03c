import Foundation

/// Kish's design effect of unequal weights and the effective sample size (Kish 1965, *Survey Sampling*, §11.7).
///
/// ```
/// deff = n · Σ w² / (Σ w)²        (1 for equal weights, larger the more the weights vary)
/// n_eff = (Σ w)² / Σ w² = n / deff
/// ```
/// Valid for positive, finite weights; the variance of a weighted mean is deff times that of an unweighted one
/// when the weights are unrelated to the variable measured.
package struct KishDesignEffect: Sendable, Hashable, Codable {
    package var count: Int
    package var sumOfWeights: Double
    package var sumOfSquaredWeights: Double

    /// - Precondition: at least one weight; every weight positive and finite.
    package init(weights: [Double]) {
        precondition(!weights.isEmpty, "the design effect needs at least one weight")
        var sum = 0.0, squares = 0.0
        for w in weights {
            precondition(w > 0 && w.isFinite, "weights must be positive and finite, got \(w)")
            sum += w
            squares += w * w
        }
        count = weights.count
        sumOfWeights = sum
        sumOfSquaredWeights = squares
    }

    /// deff = n Σw² / (Σw)².
    package var designEffect: Double { Double(count) * sumOfSquaredWeights / (sumOfWeights * sumOfWeights) }

    /// n_eff = (Σw)² / Σw².
    package var effectiveN: Double { sumOfWeights * sumOfWeights / sumOfSquaredWeights }
}
