import Foundation

/// The divide-by-total form shared by the partial-credit family and the nominal model (Thissen & Steinberg's
/// 1986 taxonomy): each category k has a linear predictor z_k = s_k θ + c_k and
/// ```
/// P_k(θ) = exp(z_k) / Σ_m exp(z_m)
/// log P_k = z_k − log Σ_m exp(z_m)                     (shifted by max z: no overflow)
/// P′_k = P_k (s_k − s̄),  P″_k = P_k ((s_k − s̄)² − V)   s̄ = Σ_m s_m P_m,  V = Σ_m (s_m − s̄)² P_m
/// ```
/// Written once here for `GeneralizedPartialCreditItem` (s_k = a k) and `NominalResponseItem` (s_k = a_k), which
/// conform to `DivideByTotalModel` and get their log probabilities and θ-derivatives from it.
enum DivideByTotal {
    /// log P_k for z_k = slopes[k]·θ + intercepts[k].
    @inline(__always)
    static func logProbabilities(
        slopes: UnsafeBufferPointer<Double>, intercepts: UnsafeBufferPointer<Double>, theta: Double,
        into out: UnsafeMutableBufferPointer<Double>
    ) {
        let k = slopes.count
        var top = -Double.infinity
        for c in 0..<k { out[c] = slopes[c] * theta + intercepts[c]; top = max(top, out[c]) }
        var total = 0.0
        for c in 0..<k { total += exp(out[c] - top) }
        let logTotal = top + log(total)
        for c in 0..<k { out[c] -= logTotal }
    }

    /// P_k, P′_k and P″_k (see the type's formulas).
    static func thetaDerivatives(
        slopes: UnsafeBufferPointer<Double>, intercepts: UnsafeBufferPointer<Double>, theta: Double,
        probability: UnsafeMutableBufferPointer<Double>, first: UnsafeMutableBufferPointer<Double>,
        second: UnsafeMutableBufferPointer<Double>
    ) {
        let k = slopes.count
        logProbabilities(slopes: slopes, intercepts: intercepts, theta: theta, into: probability)
        var mean = 0.0
        for c in 0..<k { probability[c] = exp(probability[c]); mean += slopes[c] * probability[c] }
        var variance = 0.0
        for c in 0..<k { variance += (slopes[c] - mean) * (slopes[c] - mean) * probability[c] }
        for c in 0..<k {
            let deviation = slopes[c] - mean
            first[c] = probability[c] * deviation
            second[c] = probability[c] * (deviation * deviation - variance)
        }
    }
}

/// An item model of the divide-by-total form: it gives each category's slope s_k and intercept c_k, and gets
/// `logCategoryProbabilities` and `categoryThetaDerivatives` from `DivideByTotal`.
protocol DivideByTotalModel: ItemResponseModel {
    /// s_k, k = 0 … K−1.
    var categorySlopes: [Double] { get }
    /// c_k, k = 0 … K−1.
    var categoryIntercepts: [Double] { get }
}

extension DivideByTotalModel {
    public func logCategoryProbabilities(at theta: Double, into out: UnsafeMutableBufferPointer<Double>) {
        categorySlopes.withUnsafeBufferPointer { s in
            categoryIntercepts.withUnsafeBufferPointer { c in
                DivideByTotal.logProbabilities(slopes: s, intercepts: c, theta: theta, into: out)
            }
        }
    }

    public func categoryThetaDerivatives(
        at theta: Double, probability: UnsafeMutableBufferPointer<Double>,
        first: UnsafeMutableBufferPointer<Double>, second: UnsafeMutableBufferPointer<Double>
    ) {
        categorySlopes.withUnsafeBufferPointer { s in
            categoryIntercepts.withUnsafeBufferPointer { c in
                DivideByTotal.thetaDerivatives(slopes: s, intercepts: c, theta: theta, probability: probability, first: first, second: second)
            }
        }
    }
}
