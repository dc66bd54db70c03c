import CKernels
import Foundation

/// The posterior of θ over a grid of nodes for one response pattern, written once for every caller (the E-step,
/// the person-score covariance, EAP, person fit, Q3, the empirical item curves):
/// ```
/// ℓ(θ_t) = log π_t + Σ_{answered j} log P(u_j | θ_t)          (rows of a `LogCategoryTable`)
/// w_t    = exp(ℓ_t − max ℓ) / Σ_s exp(ℓ_s − max ℓ),   log L = max ℓ + log Σ_s exp(ℓ_s − max ℓ)
/// θ̂ = Σ_t w_t θ_t,   SD² = Σ_t w_t (θ_t − θ̂)²
/// ```
/// (Bock & Aitkin 1981; Bock & Mislevy 1982 for EAP). The sums and exponentials are `CKernels`
/// (`iqscore_log_posterior`, `iqscore_normalize_log_posterior`: vectorised, the same bits on every CPU).
package enum GridPosterior {
    /// ℓ(θ_t) for t in 0 ..< `nodes` (default `table.nodeCount`; up to `table.stride`, whose padding is 0) into
    /// `acc`: `prior` plus the row of each answer in order (the row two answers ahead prefetched). `items` and
    /// `responses` are the answered items and their categories (nil when `count` is 0); `rowStart` is `table.rowStart`'s storage.
    @inline(__always)
    package static func accumulate(
        into acc: UnsafeMutablePointer<Double>, prior: UnsafePointer<Double>,
        items: UnsafePointer<Int32>?, responses: UnsafePointer<UInt8>?, count: Int,
        table: LogCategoryTable, rowStart: UnsafePointer<Int32>, nodes: Int? = nil
    ) {
        iqscore_log_posterior(acc, prior, items, responses, count, rowStart, table.base, nodes ?? table.nodeCount, table.stride)
    }

    /// `accumulate` then `normalize`: the normalised posterior of one response pattern in `acc` (`nodeCount`
    /// values), its log-likelihood log Σ_t π_t L(θ_t) and support.
    @inline(__always) @discardableResult
    package static func posterior(
        into acc: UnsafeMutablePointer<Double>, prior: UnsafePointer<Double>,
        items: UnsafePointer<Int32>?, responses: UnsafePointer<UInt8>?, count: Int,
        table: LogCategoryTable, rowStart: UnsafePointer<Int32>
    ) -> (logLikelihood: Double, support: Range<Int>) {
        accumulate(into: acc, prior: prior, items: items, responses: responses, count: count, table: table, rowStart: rowStart)
        return normalize(acc, table.nodeCount)
    }

    /// Turns ℓ in place into the normalised weights w and returns log L and the posterior's support: the nodes
    /// from the first to the last whose weight is at least 2⁻⁵⁰ of the largest (a smaller weight's terms are below
    /// the rounding unit of the largest one's, so sums over the support are the sums over all nodes).
    @inline(__always) @discardableResult
    package static func normalize(_ v: UnsafeMutablePointer<Double>, _ count: Int) -> (logLikelihood: Double, support: Range<Int>) {
        var first = 0, last = 0
        let logLikelihood = iqscore_normalize_log_posterior(v, count, &first, &last)
        return (logLikelihood, first..<last)
    }

    /// The mean and variance of θ under unnormalised weights `w` (four nodes per step; `points` and `w` padded to
    /// `blocks` × 4 with zero weight):
    /// ```
    /// θ̂ = Σ w θ / Σ w,   SD² = Σ w (θ − θ̂)² / Σ w
    /// ```
    @inline(__always)
    package static func moments(weights w: UnsafePointer<SIMD4<Double>>, points: UnsafePointer<SIMD4<Double>>, blocks: Int)
        -> (mean: Double, variance: Double)
    {
        var total = SIMD4<Double>(), first = SIMD4<Double>()
        for i in 0..<blocks {
            total += w[i]
            first += w[i] * points[i]
        }
        let sum = total.sum(), mean = first.sum() / sum
        var second = SIMD4<Double>()
        let center = SIMD4<Double>(repeating: mean)
        for i in 0..<blocks {
            let d = points[i] - center
            second += w[i] * d * d
        }
        return (mean, second.sum() / sum)
    }
}
