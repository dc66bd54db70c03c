import Foundation

/// The probability of a correct response to each item a person answered, given that person's summed score on
/// the items they answered: the expected item score S-X² and the conditional mean squares compare with.
///
/// For a person who answered the items F (their form) with summed score s, under the model and a N(0, 1)
/// population (Orlando & Thissen 2000, eq. 5, applied to the form F instead of a fixed test):
/// ```
/// E_j(s) = ∫ P_j(θ) f_{F∖j}(s − 1 | θ) φ(θ) dθ  /  ∫ f_F(s | θ) φ(θ) dθ          (j ∈ F, 0 < s < |F|)
/// ```
/// with the summed-score likelihoods f from the Lord & Wingersky (1984) recursion on the quadrature grid
/// (E = 0 at s = 0, 1 at s = |F|). Given s, the response u_j is Bernoulli(E_j(s)) under the model, and
/// persons are independent, whatever items each answered: no θ is estimated, so short forms do not bias it.
///
/// The leave-one-out likelihood f_{F∖j} comes from f_F by deconvolution of
/// ```
/// f_F(t) = P_j f_{F∖j}(t − 1) + (1 − P_j) f_{F∖j}(t)
/// ```
/// solved upward from t = 0 where P_j ≤ ½ (each step multiplies earlier rounding by P/(1 − P) ≤ 1) and
/// downward from t = |F| where P_j > ½ (factor (1 − P)/P < 1): O(|F|² · nodes) for a whole form.
package struct SummedScoreExpectation: Sendable {
    /// P_j(θ_q), item-major: `probabilities[j * nodes + q]`.
    package let probabilities: [Double]
    /// Normalised N(0, 1) quadrature weights.
    package let weights: [Double]
    package let nodes: Int

    package init(parameters: [ItemParameters], grid: QuadratureGrid) {
        nodes = grid.count
        weights = grid.weights
        var p = [Double](repeating: 0, count: parameters.count * grid.count)
        for (j, item) in parameters.enumerated() {
            for q in 0..<grid.count { p[j * grid.count + q] = item.probability(at: grid.points[q]) }
        }
        probabilities = p
    }

    /// f_F(t | θ_q) for t = 0…|F|, score-major (`f[t * nodes + q]`), into `f` (resized).
    private func summedScoreLikelihood(_ items: UnsafeBufferPointer<Int>, into f: inout [Double]) {
        let n = items.count, Q = nodes
        f.removeAll(keepingCapacity: true)
        f.append(contentsOf: repeatElement(0, count: (n + 1) * Q))
        for q in 0..<Q { f[q] = 1 }
        probabilities.withUnsafeBufferPointer { prob in
            f.withUnsafeMutableBufferPointer { f in
                for (k, j) in items.enumerated() {
                    let row = j * Q
                    for t in stride(from: k + 1, through: 1, by: -1) {
                        for q in 0..<Q {
                            let p = prob[row + q]
                            f[t * Q + q] = f[t * Q + q] * (1 - p) + f[(t - 1) * Q + q] * p
                        }
                    }
                    for q in 0..<Q { f[q] *= 1 - prob[row + q] }
                }
            }
        }
    }

    /// E_j(s) for every item of the form at one summed score s, written to `out` in the items' order.
    /// `scratch` is reused between calls. O(|F|² · nodes), vectorised across the nodes: since P_j is monotone
    /// in θ, the nodes with P_j ≤ ½ (solved upward) are a prefix or a suffix of the grid and the others
    /// (solved downward) the rest.
    package func expectations(
        items: UnsafeBufferPointer<Int>, score s: Int, into out: UnsafeMutableBufferPointer<Double>,
        scratch f: inout [Double]
    ) {
        let n = items.count, Q = nodes
        precondition(out.count >= n && s >= 0 && s <= n, "score \(s) outside 0…\(n)")
        if s == 0 || s == n {
            for k in 0..<n { out[k] = s == 0 ? 0 : 1 }
            return
        }
        summedScoreLikelihood(items, into: &f)
        withUnsafeTemporaryAllocation(of: Double.self, capacity: Q) { g in
            probabilities.withUnsafeBufferPointer { prob in
                weights.withUnsafeBufferPointer { w in
                    f.withUnsafeBufferPointer { f in
                        var denominator = 0.0
                        for q in 0..<Q { denominator += w[q] * f[s * Q + q] }
                        for (k, j) in items.enumerated() {
                            let p = UnsafeBufferPointer(rebasing: prob[(j * Q)..<(j * Q + Q)])
                            // The nodes with p ≤ ½: a prefix when P increases in θ, else a suffix.
                            let increasing = p[Q - 1] >= p[0]
                            var split = 0
                            while split < Q && (p[split] <= 0.5) == increasing { split += 1 }
                            let up = increasing ? 0..<split : split..<Q, down = increasing ? split..<Q : 0..<split
                            // Upward: g(0) = f(0)/(1 − p), g(t) = (f(t) − p g(t − 1))/(1 − p), to t = s − 1.
                            for q in up { g[q] = f[q] / (1 - p[q]) }
                            if s > 1 {
                                for t in 1..<s { for q in up { g[q] = max(0, (f[t * Q + q] - p[q] * g[q]) / (1 - p[q])) } }
                            }
                            // Downward: g(n − 1) = f(n)/p, g(t − 1) = (f(t) − (1 − p) g(t))/p, to t − 1 = s − 1.
                            for q in down { g[q] = f[n * Q + q] / p[q] }
                            for t in stride(from: n - 1, through: s, by: -1) {
                                for q in down { g[q] = max(0, (f[t * Q + q] - (1 - p[q]) * g[q]) / p[q]) }
                            }
                            var numerator = 0.0
                            for q in 0..<Q { numerator += w[q] * p[q] * g[q] }
                            out[k] = denominator > 0 ? min(1, max(0, numerator / denominator)) : .nan
                        }
                    }
                }
            }
        }
    }

    /// E_j(s) for every item of the form and every score: `table[k * (n + 1) + s]` for the k-th item.
    /// O(|F|² · nodes) for the whole table, for a form many persons share.
    package func table(items: UnsafeBufferPointer<Int>) -> [Double] {
        let n = items.count, Q = nodes
        var f: [Double] = []
        summedScoreLikelihood(items, into: &f)
        var table = [Double](repeating: 0, count: n * (n + 1))
        var denominator = [Double](repeating: 0, count: n + 1)
        for t in 0...n { for q in 0..<Q { denominator[t] += weights[q] * f[t * Q + q] } }
        var g = [Double](repeating: 0, count: n), numerator = [Double](repeating: 0, count: n + 1)
        for (k, j) in items.enumerated() {
            for t in 0...n { numerator[t] = 0 }
            for q in 0..<Q {
                let p = probabilities[j * Q + q]
                if p <= 0.5 {
                    g[0] = f[q] / (1 - p)
                    if n > 1 { for t in 1..<n { g[t] = max(0, (f[t * Q + q] - p * g[t - 1]) / (1 - p)) } }
                } else {
                    g[n - 1] = f[n * Q + q] / p
                    if n > 1 { for t in stride(from: n - 1, through: 1, by: -1) { g[t - 1] = max(0, (f[t * Q + q] - (1 - p) * g[t]) / p) } }
                }
                for s in 1...n { numerator[s] += weights[q] * p * g[s - 1] }
            }
            table[k * (n + 1)] = 0
            table[k * (n + 1) + n] = 1
            if n > 1 {
                for s in 1..<n { table[k * (n + 1) + s] = denominator[s] > 0 ? min(1, max(0, numerator[s] / denominator[s])) : .nan }
            }
        }
        return table
    }
}
