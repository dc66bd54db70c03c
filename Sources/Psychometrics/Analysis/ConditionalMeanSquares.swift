import Foundation

/// Infit and outfit mean squares of the residuals from each person's summed-score expectation, their model
/// standard deviations, and their Wilson–Hilferty standardisation (ZSTD).
///
/// For the persons who answered item j with 0 < s < n, E_ij = P(u_ij = 1 | s, form) (`SummedScoreExpectation`),
/// W = E (1 − E), C = E[(u − E)⁴] = W ((1 − E)³ + E³) and z = (u − E)/√W (Wright & Masters 1982, ch. 5):
/// ```
/// outfit = Σ z² / n                     Var(outfit) = Σ (C/W² − 1) / n²
/// infit  = Σ (u − E)² / Σ W             Var(infit)  = Σ (C − W²) / (Σ W)²
/// ZSTD   = (MS^⅓ − 1) (3/q) + q/3       q = √Var(MS)   (Wilson & Hilferty 1931; Wright & Masters 1982, p. 100)
/// ```
/// The residuals are conditional on the summed score (Christensen & Kreiner 2013; Müller 2020, "Item fit
/// statistics for Rasch analysis: can we trust them?", J. Stat. Distrib. Appl. 7:5) rather than taken at an
/// estimated θ̂: given s, u_ij is Bernoulli(E_ij) under the model, so E[MS] = 1 exactly and the variances above
/// are the model's, however few items a person answered. At θ̂ (the Rasch programs' convention) a short form's
/// θ̂ is fitted to the very responses being checked, which pulls the mean squares of high-slope items far
/// below 1 (a 25-item form: outfit 0.2–0.7 for a = 2 items on data from the model). The variance grows with
/// 1/n, so a fixed mean-square range flags noise at small n; ZSTD scales the deviation by the n at hand.
/// Outfit's distribution is skewed for items far from the persons (Müller 2020), so ZSTD is approximate there.
package struct ConditionalMeanSquares: Sendable {
    package struct Result: Sendable, Hashable {
        package var infit: Double
        package var outfit: Double
        package var infitZ: Double?
        package var outfitZ: Double?
        package var persons: Int
    }

    private var count: [Double], sumZ2: [Double], sumR2: [Double], sumW: [Double], outfitVariance: [Double], infitVariance: [Double]

    package init(itemCount: Int) {
        count = [Double](repeating: 0, count: itemCount)
        (sumZ2, sumR2, sumW, outfitVariance, infitVariance) = (count, count, count, count, count)
    }

    /// One response u to item j with expectation e given the person's summed score; e ∈ {0, 1} is ignored.
    package mutating func add(item j: Int, response u: UInt8, expected e: Double) {
        let w = e * (1 - e)
        add(item: j, residual: Double(u) - e, variance: w, fourthMoment: w * ((1 - e) * (1 - e) * (1 - e) + e * e * e))
    }

    /// One residual r = u − E of item j with its conditional variance W = E[(u − E)²] and fourth central moment
    /// C = E[(u − E)⁴] (an item in K categories: W = Σ_k (k − E)² P_k, C = Σ_k (k − E)⁴ P_k given the score;
    /// Wright & Masters 1982, ch. 5). W ≈ 0 (the score fixes the response) is ignored.
    package mutating func add(item j: Int, residual r: Double, variance w: Double, fourthMoment c: Double) {
        guard w > 1e-12, w.isFinite else { return }
        count[j] += 1
        sumZ2[j] += r * r / w
        sumR2[j] += r * r
        sumW[j] += w
        outfitVariance[j] += c / (w * w) - 1
        infitVariance[j] += c - w * w
    }

    package mutating func merge(_ other: ConditionalMeanSquares) {
        for j in count.indices {
            count[j] += other.count[j]; sumZ2[j] += other.sumZ2[j]; sumR2[j] += other.sumR2[j]; sumW[j] += other.sumW[j]
            outfitVariance[j] += other.outfitVariance[j]; infitVariance[j] += other.infitVariance[j]
        }
    }

    /// Wilson–Hilferty standardisation of a mean square with model standard deviation q.
    package static func standardized(_ meanSquare: Double, sd q: Double) -> Double? {
        guard q > 0, q.isFinite, meanSquare >= 0, meanSquare.isFinite else { return nil }
        return (pow(meanSquare, 1.0 / 3) - 1) * (3 / q) + q / 3
    }

    /// nil when no person with 0 < s < n answered item j.
    package func result(item j: Int) -> Result? {
        let n = count[j]
        guard n > 0, sumW[j] > 0 else { return nil }
        let outfit = sumZ2[j] / n, infit = sumR2[j] / sumW[j]
        let qOut = (max(0, outfitVariance[j]) / (n * n)).squareRoot()
        let qIn = (max(0, infitVariance[j]) / (sumW[j] * sumW[j])).squareRoot()
        return Result(
            infit: infit, outfit: outfit, infitZ: Self.standardized(infit, sd: qIn),
            outfitZ: Self.standardized(outfit, sd: qOut), persons: Int(n))
    }
}
