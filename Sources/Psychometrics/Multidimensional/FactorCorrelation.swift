import Foundation

/// A K × K factor correlation matrix R that is positive definite by construction (Pinheiro & Bates 1996,
/// "Unconstrained parametrizations for variance–covariance matrices", *Statistics and Computing* 6; the
/// row-normalised Cholesky factor): K(K − 1)/2 free values x, row by row below the diagonal, give
/// ```
/// v_i = (x_i0, …, x_i,i−1, 1, 0, …),   L_i = v_i / ‖v_i‖,   R = L Lᵀ
/// ```
/// so every row of L has unit length (unit variances) and L has a positive diagonal (R positive definite), for
/// any finite x; x = 0 is R = I. The correlated-factors EM integrates on a product grid (Q points per factor,
/// `QuadratureGrid`'s), with the prior weight of node θ_n its density normalised over the nodes,
/// p_n(x) = exp(−½ θ_nᵀR⁻¹θ_n) / Z(x), as mirt does; the M-step maximises Σ_n r_n log p_n(x) given the posterior
/// node totals r_n of the E-step, which depends on them only through N = Σ r_n and the second moments
/// S = Σ_n r_n θ_n θ_nᵀ = Σ_i E[θ θᵀ | u_i]:
/// ```
/// F(x) = −½ tr(R⁻¹ S) − N log Z(x),   ∂F/∂R = ½ R⁻¹ (S − N S₀) R⁻¹ =: G,   S₀ = Σ_n p_n θ_n θ_nᵀ
/// ∂F/∂x_ij = (2 / ‖v_i‖) [(G L)_ij − L_ij Σ_k (G L)_ik L_ik]          (dR = dL Lᵀ + L dLᵀ)
/// ```
/// (S₀ → R and log Z → ½ log|R| + constant as the grid refines: the normal log density), by Fisher scoring on
/// the numerical Hessian of that gradient (`FisherScoring`). F is exactly the grid log-likelihood's dependence
/// on R, so EM's log-likelihood never decreases and Fisher's identity holds on the grid. Without a grid (the
/// adaptive quasi–Monte Carlo E-step, whose nodes follow each person's posterior) F is the normal density's,
/// −½ tr(R⁻¹ S) − (N/2) log|R|.
struct FactorCorrelation {
    let k: Int
    /// One factor's rule (the product grid's axes), which F needs; the parametrisation alone does not.
    let grid: QuadratureGrid?

    init(k: Int, grid: QuadratureGrid? = nil) {
        self.k = k
        self.grid = grid
    }

    /// The number of free values, K(K − 1)/2.
    var parameterCount: Int { k * (k - 1) / 2 }

    /// L (row-major K × K, lower triangular) and each row's ‖v_i‖.
    func cholesky(_ x: [Double]) -> (l: [Double], norms: [Double]) {
        var l = [Double](repeating: 0, count: k * k), norms = [Double](repeating: 1, count: k), p = 0
        for i in 0..<k {
            var sum = 1.0
            for j in 0..<i { l[i * k + j] = x[p + j]; sum += x[p + j] * x[p + j] }
            l[i * k + i] = 1
            let n = sum.squareRoot()
            for j in 0...i { l[i * k + j] /= n }
            norms[i] = n
            p += i
        }
        return (l, norms)
    }

    /// R = L Lᵀ, row-major.
    func matrix(_ x: [Double]) -> [Double] {
        let l = cholesky(x).l
        var r = [Double](repeating: 0, count: k * k)
        for i in 0..<k {
            for j in 0...i {
                var s = 0.0
                for m in 0...j { s += l[i * k + m] * l[j * k + m] }
                r[i * k + j] = s; r[j * k + i] = s
            }
        }
        for i in 0..<k { r[i * k + i] = 1 }
        return r
    }

    /// The free values of a positive-definite correlation matrix `r` (its Cholesky factor's rows over their
    /// diagonals); nil when `r` is not positive definite.
    func parameters(of r: [Double]) -> [Double]? {
        var l = [Double](repeating: 0, count: k * k)
        for i in 0..<k {
            for j in 0...i {
                var s = r[i * k + j]
                for m in 0..<j { s -= l[i * k + m] * l[j * k + m] }
                if i == j {
                    guard s > 0 else { return nil }
                    l[i * k + i] = s.squareRoot()
                } else {
                    l[i * k + j] = s / l[j * k + j]
                }
            }
        }
        var x: [Double] = []
        for i in 0..<k { for j in 0..<i { x.append(l[i * k + j] / l[i * k + i]) } }
        return x
    }

    /// The grid prior: log p_n(x) on the Q^K nodes (node n's digits: factor 0 most significant) and log Z(x).
    func gridPrior(_ x: [Double]) -> (logWeights: [Double], logNormalizer: Double) {
        let grid = self.grid!, l = cholesky(x).l, nq = grid.count, nodes = Int(pow(Double(nq), Double(k)).rounded())
        var out = [Double](repeating: 0, count: nodes), digits = [Int](repeating: 0, count: k), z = [Double](repeating: 0, count: k)
        for n in 0..<nodes {
            decode(n, into: &digits)
            var quadratic = 0.0
            for i in 0..<k {
                var v = grid.points[digits[i]]
                for m in 0..<i { v -= l[i * k + m] * z[m] }
                z[i] = v / l[i * k + i]
                quadratic += z[i] * z[i]
            }
            out[n] = -0.5 * quadratic
        }
        let top = out.max()!, shift = top + log(out.reduce(0) { $0 + exp($1 - top) })
        for n in 0..<nodes { out[n] -= shift }
        return (out, shift)
    }

    /// Node n's digits (one point index per factor, factor 0 most significant).
    @inline(__always) func decode(_ n: Int, into digits: inout [Int]) {
        var rest = n
        let q = grid!.count
        for f in stride(from: k - 1, through: 0, by: -1) { digits[f] = rest % q; rest /= q }
    }

    /// One person's posterior sums over the product grid (`h`: each factor's log-likelihood on its Q points, K × Q;
    /// `prior` and `logPrior`: `gridPrior`'s weights and their logs), the E-step's per-person work
    /// (`CorrelatedFactorsEngine`) and the scorer's (`CorrelatedFactorsScorer`): with each factor's likelihood
    /// scaled by its largest value (`likelihood`, K × Q), the nodes are visited with the last factor innermost — per
    /// node one product with the prefix's, one with the prior, four additions — and the prefix factors' marginals
    /// and moments take the inner row's sums. Returns the total of the scaled weights and the log of the scale
    /// (log L = log total + offset), with `marginal` (K × Q) and the lower triangle of `moments` (K × K) summed on
    /// the same scale; a person whose total still underflows is redone in logs (`logSums`).
    @inline(__always)
    func posteriorSums(
        h: [Double], prior: [Double], logPrior: [Double], likelihood: inout [Double], marginal: inout [Double],
        moments node: inout [Double], digits: inout [Int]
    ) -> (total: Double, offset: Double) {
        let kk = k, grid = self.grid!, nq = grid.count, points = grid.points, inner = nq, outer = prior.count / nq
        var offset = 0.0
        for f in 0..<kk {
            var top = -Double.infinity
            for a in 0..<nq { top = max(top, h[f * nq + a]) }
            offset += top
            for a in 0..<nq { likelihood[f * nq + a] = exp(h[f * nq + a] - top) }
        }
        for x in 0..<(kk * nq) { marginal[x] = 0 }
        for x in 0..<(kk * kk) { node[x] = 0 }
        var total = 0.0
        // Products path: the last factor innermost.
        for o in 0..<outer {
            var rest = o, prefix = 1.0
            for f in stride(from: kk - 2, through: 0, by: -1) { digits[f] = rest % nq; rest /= nq }
            for f in 0..<(kk - 1) { prefix *= likelihood[f * nq + digits[f]] }
            if prefix == 0 { continue }
            var rowSum = 0.0, rowFirst = 0.0, rowSecond = 0.0
            let base = o * inner, last = (kk - 1) * nq
            for t in 0..<inner {
                let value = prefix * likelihood[last + t] * prior[base + t]
                rowSum += value
                rowFirst += value * points[t]
                rowSecond += value * points[t] * points[t]
                marginal[last + t] += value
            }
            total += rowSum
            for f in 0..<(kk - 1) {
                let tf = points[digits[f]]
                marginal[f * nq + digits[f]] += rowSum
                for g in 0...f { node[f * kk + g] += tf * points[digits[g]] * rowSum }
                node[(kk - 1) * kk + f] += tf * rowFirst
            }
            node[(kk - 1) * kk + kk - 1] += rowSecond
        }
        if !(total > 1e-280) {
            // Logs over the nodes: every weight relative to the largest.
            (total, offset) = logSums(h: h, logPrior: logPrior, marginal: &marginal, moments: &node)
        }
        return (total, offset)
    }

    /// One person's sums over the product grid's nodes, in logs (`h`: each factor's log-likelihood on its Q points,
    /// K × Q; `logPrior`: `gridPrior`'s): the total of the weights relative to the largest node, and that node's
    /// log weight as the offset; `marginal` (K × Q) and the lower triangle of `moments` (K × K) summed relative to
    /// the same node, as the E-step's products path sums them (`CorrelatedFactorsEngine`).
    func logSums(h: [Double], logPrior: [Double], marginal: inout [Double], moments: inout [Double]) -> (Double, Double) {
        let kk = k, grid = self.grid!, nq = grid.count, nodes = logPrior.count, points = grid.points
        var logs = [Double](repeating: 0, count: nodes), digits = [Int](repeating: 0, count: kk)
        var top = -Double.infinity
        for n in 0..<nodes {
            decode(n, into: &digits)
            var v = logPrior[n]
            for f in 0..<kk { v += h[f * nq + digits[f]] }
            logs[n] = v
            top = max(top, v)
        }
        for x in marginal.indices { marginal[x] = 0 }
        for x in moments.indices { moments[x] = 0 }
        var total = 0.0
        for n in 0..<nodes {
            decode(n, into: &digits)
            let value = exp(logs[n] - top)
            total += value
            for f in 0..<kk {
                marginal[f * nq + digits[f]] += value
                for g in 0...f { moments[f * kk + g] += value * points[digits[f]] * points[digits[g]] }
            }
        }
        return (total, top)
    }

    /// A = L⁻¹ (lower triangular, by forward substitution; θᵀR⁻¹θ = ‖Aθ‖²) and R⁻¹ = AᵀA, from L of `cholesky`.
    func inverse(cholesky l: [Double]) -> (a: [Double], inverse: [Double]) {
        var a = [Double](repeating: 0, count: k * k)
        for c in 0..<k {
            for i in c..<k {
                var v = i == c ? 1.0 : 0.0
                for m in c..<i { v -= l[i * k + m] * a[m * k + c] }
                a[i * k + c] = v / l[i * k + i]
            }
        }
        var inverse = [Double](repeating: 0, count: k * k)
        for i in 0..<k {
            for j in 0..<k {
                var v = 0.0
                for m in max(i, j)..<k { v += a[m * k + i] * a[m * k + j] }
                inverse[i * k + j] = v
            }
        }
        return (a, inverse)
    }

    /// F(x) and ∂F/∂x for `persons` persons with posterior second moments `s` (K × K, summed over persons).
    func logDensity(_ x: [Double], persons: Double, secondMoments s: [Double]) -> (value: Double, gradient: [Double]) {
        let (l, norms) = cholesky(x)
        let inverse = self.inverse(cholesky: l).inverse
        // The prior's normaliser and second moments S₀: on the grid, its sums; without one, the normal density's
        // (log Z = ½ log|R| = −Σ log ‖v_i‖, S₀ = R).
        var s0 = [Double](repeating: 0, count: k * k), logZ = 0.0
        if let grid {
            let logWeights: [Double]
            (logWeights, logZ) = gridPrior(x)
            var digits = [Int](repeating: 0, count: k)
            for (n, lw) in logWeights.enumerated() {
                decode(n, into: &digits)
                let p = exp(lw)
                for i in 0..<k { for j in 0...i { s0[i * k + j] += p * grid.points[digits[i]] * grid.points[digits[j]] } }
            }
            for i in 0..<k { for j in 0..<i { s0[j * k + i] = s0[i * k + j] } }
        } else {
            s0 = matrix(x)
            logZ = -norms.reduce(0) { $0 + log($1) }
        }
        var trace = 0.0
        for i in 0..<k { for j in 0..<k { trace += inverse[i * k + j] * s[j * k + i] } }
        // G = ½ R⁻¹ (S − N S₀) R⁻¹, then G L.
        var d = [Double](repeating: 0, count: k * k)
        for i in 0..<(k * k) { d[i] = s[i] - persons * s0[i] }
        var rd = [Double](repeating: 0, count: k * k)
        for i in 0..<k { for j in 0..<k { var v = 0.0; for m in 0..<k { v += inverse[i * k + m] * d[m * k + j] }; rd[i * k + j] = v } }
        var g = [Double](repeating: 0, count: k * k)
        for i in 0..<k {
            for j in 0..<k {
                var v = 0.0
                for m in 0..<k { v += rd[i * k + m] * inverse[m * k + j] }
                g[i * k + j] = 0.5 * v
            }
        }
        var gl = [Double](repeating: 0, count: k * k)
        for i in 0..<k { for j in 0..<k { var v = 0.0; for m in 0..<k { v += g[i * k + m] * l[m * k + j] }; gl[i * k + j] = v } }
        var gradient: [Double] = []
        for i in 0..<k {
            var along = 0.0
            for m in 0...i { along += gl[i * k + m] * l[i * k + m] }
            for j in 0..<i { gradient.append(2 / norms[i] * (gl[i * k + j] - l[i * k + j] * along)) }
        }
        return (-0.5 * trace - persons * logZ, gradient)
    }

    /// x maximising F from `start` (Fisher scoring with the Hessian by central differences of the gradient).
    func maximize(from start: [Double], persons: Double, secondMoments s: [Double]) -> [Double] {
        let p = parameterCount
        guard p > 0 else { return start }
        return FisherScoring.maximize(
            start, iterations: 50, objective: { logDensity($0, persons: persons, secondMoments: s).value },
            direction: { x in
                let g = logDensity(x, persons: persons, secondMoments: s).gradient
                var information = [Double](repeating: 0, count: p * p)
                for c in 0..<p {
                    let h = 1e-6 * max(1, abs(x[c]))
                    var up = x, down = x
                    up[c] += h; down[c] -= h
                    let gu = logDensity(up, persons: persons, secondMoments: s).gradient,
                        gd = logDensity(down, persons: persons, secondMoments: s).gradient
                    for r in 0..<p { information[r * p + c] = -(gu[r] - gd[r]) / (2 * h) }
                }
                for r in 0..<p {
                    for c in 0..<r {
                        let v = (information[r * p + c] + information[c * p + r]) / 2; information[r * p + c] = v; information[c * p + r] = v
                    }
                }
                return (x, solveSmallSPD(information, g, n: p))
            }, candidate: { y in y.allSatisfy(\.isFinite) ? y : nil })
    }
}
