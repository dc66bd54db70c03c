import Foundation

/// Andrich's (1978) rating scale model, the partial-credit (Rasch) model whose step structure is shared by every
/// item of a scale: item j in K categories has a location λ_j, and the K − 1 thresholds τ_v (centred,
/// Σ_v τ_v = 0) are common to all the items fitted with it, so its step locations are b_jv = λ_j + τ_v:
/// ```
/// P_k(θ) = exp(Σ_{v=1}^{k} (aθ − λ_j − τ_v)) / Σ_{m=0}^{K−1} exp(Σ_{v=1}^{m} (aθ − λ_j − τ_v))
/// ```
/// with a = 1 on the θ scale. In a calibration θ = a z on the N(0, 1) grid, a the common slope (the latent SD, as
/// for Masters' partial credit model), λ and τ staying in θ units. As a partial-credit item it is the gpcm item
/// of slope a and steps (λ_j + τ_v)/a, which `parameterNames`/`parameterValues` give; the bank writes it so with
/// a = 1. λ_j is the mean of its steps and τ_v the steps less λ_j. mirt 1.47's `rsm` item type is the same model
/// identified otherwise (the first item's location 0, thresholds free): its b_v − c_j are these b_jv.
///
/// Working parameters (the EM's): (a, τ₁ … τ_{K−2}, λ), τ_{K−1} = −Σ τ_v; the first K − 1 are shared by the
/// rating-scale items of a calibration (`ItemModelEngine`'s shared leading parameters). With z_k = a k θ + d_k
/// and d_k = −k λ − Σ_{v ≤ k} τ_v.
public struct RatingScaleItem: CalibratableItemModel, DivideByTotalModel, Hashable {
    /// The common slope a (the latent SD in a calibration; 1 on the θ scale).
    public let discrimination: Double
    /// λ_j.
    public let location: Double
    /// τ_v, v = 1 … K−1, summing to 0.
    public let thresholds: [Double]
    let categorySlopes: [Double]
    let categoryIntercepts: [Double]

    /// - Precondition: at least one threshold; `thresholds` are centred here (their mean moves into nothing:
    ///   pass centred values).
    public init(discrimination: Double, location: Double, thresholds: [Double]) {
        precondition(!thresholds.isEmpty, "a rating-scale item has at least two categories")
        self.discrimination = discrimination
        self.location = location
        self.thresholds = thresholds
        var intercepts = [0.0], sum = 0.0
        for (v, tau) in thresholds.enumerated() { sum += tau; intercepts.append(-Double(v + 1) * location - sum) }
        categoryIntercepts = intercepts
        categorySlopes = (0...thresholds.count).map { discrimination * Double($0) }
    }

    public var categoryCount: Int { thresholds.count + 1 }

    /// The partial-credit (gpcm) form: a and the steps (λ + τ_v)/a, which the bank writes with a = 1.
    public var parameterNames: [String] { ["a"] + thresholds.indices.map { "b\($0 + 1)" } }
    public var parameterValues: [Double] { [discrimination] + thresholds.map { (location + $0) / discrimination } }

    /// (a, τ₁ … τ_{K−2}, λ).
    public var workingParameters: [Double] { [discrimination] + thresholds.dropLast() + [location] }

    /// The item at (a, τ₁ … τ_{K−2}, λ) with τ_{K−1} = −Σ τ_v; nil unless a > 0 and every value is finite.
    public func withWorkingParameters(_ x: [Double]) -> RatingScaleItem? {
        guard x.count == categoryCount, x[0] > 0, x.allSatisfy(\.isFinite) else { return nil }
        let free = Array(x[1..<(x.count - 1)])
        return RatingScaleItem(discrimination: x[0], location: x[x.count - 1], thresholds: free + [-free.reduce(0, +)])
    }

    /// With E = Σ_m m P_m, the mean score, and S_v = Σ_{m ≥ v} P_m − P_{K−1} (∂d_m/∂τ_v = −([v ≤ m] − [m = K−1])):
    /// ```
    /// ∂ log P_k/∂a = z (k − E)      ∂ log P_k/∂λ = −(k − E)      ∂ log P_k/∂τ_v = −([v ≤ k] − [k = K−1]) + S_v
    /// ```
    public func workingLogGradient(at theta: Double, into g: UnsafeMutableBufferPointer<Double>) {
        let k = categoryCount, m = k
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * k) { buffer in
            let p = UnsafeMutableBufferPointer(rebasing: buffer[0..<k]), above = UnsafeMutableBufferPointer(rebasing: buffer[k..<(2 * k)])
            logCategoryProbabilities(at: theta, into: p)
            var mean = 0.0
            for c in 0..<k { p[c] = exp(p[c]); mean += Double(c) * p[c] }
            var tail = 0.0
            for c in stride(from: k - 1, through: 0, by: -1) { tail += p[c]; above[c] = tail }
            for c in 0..<k {
                let row = c * m, deviation = Double(c) - mean
                g[row] = theta * deviation
                for v in 1..<(k - 1) {
                    let indicator = (v <= c ? 1.0 : 0) - (c == k - 1 ? 1.0 : 0)
                    g[row + v] = -indicator + above[v] - p[k - 1]
                }
                g[row + m - 1] = -deviation
            }
        }
    }
}
