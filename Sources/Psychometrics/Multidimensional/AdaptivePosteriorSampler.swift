import Foundation

/// One person's posterior under K correlated factors, p(θ | u) ∝ φ_R(θ) Π_f L_f(θ_f), by adaptive quasi–Monte
/// Carlo importance sampling: the formulas of `CorrelatedFactorsEngine.adaptiveEStep` (where they are derived and
/// their accuracy measured), for one person at a time, shared by the calibration's E-step and by scoring
/// (`CorrelatedFactorsScorer`).
/// ```
/// h_f(x)   each factor's log-likelihood on the fine grid (the caller's, K × G)
/// m_f, v_f = mean and variance of e^{h_f} φ on the grid,   λ_f = 1/v_f − 1,   b_f = m_f (1 + λ_f)
/// P = R⁻¹ + diag(λ),  μ = P⁻¹ b,  C = s L_P⁻ᵀ Q          (Q the person's rotation, s = proposalScale)
/// θ_m = μ + C z_m,   w_m ∝ Π_f L_f(θ_mf) φ_R(θ_m) / φ(z_m),   log L = log[(1/M) Σ_m e^{log w_m}] + log|C| − ½ log|R|
/// ```
/// After `integrate`, `theta` holds the M nodes factor-major (K × M: factor f of node m at f·M + m) and `weight`
/// their normalised posterior masses.
/// A value type with its own work buffers: one per worker thread.
struct AdaptivePosteriorSampler {
    let k: Int
    /// Standard-normal nodes, stored factor-major (K × M: node m's coordinate e at e·M + m; the caller's
    /// `SobolSequence.balancedNormalPoints` is M × K) and ½‖z_m‖².
    let z: [Double]
    let halfNormZ: [Double]
    let points: [Double]
    let logPhi: [Double]
    /// A = L_R⁻¹ (θᵀR⁻¹θ = ‖Aθ‖²), R⁻¹ and ½ log|R|.
    let a: [Double]
    let rInverse: [Double]
    let halfLogDetR: Double
    let scale: Double
    private(set) var theta: [Double]
    private(set) var weight: [Double]
    private var precision: [Double], c: [Double], b: [Double], mu: [Double], y: [Double], rotation: [Double], rotated: [Double]

    var nodeCount: Int { weight.count }

    /// - Parameters:
    ///   - nodes: M × K standard-normal nodes.
    ///   - grid: the fine grid h is tabulated on (equally spaced, at least 4 points).
    ///   - a: L_R⁻¹ (lower triangular, row-major), `rInverse` R⁻¹, `halfLogDetR` ½ log|R|.
    init(nodes: [Double], k: Int, grid: QuadratureGrid, a: [Double], rInverse: [Double], halfLogDetR: Double) {
        let m = nodes.count / k
        self.k = k
        self.z = (0..<(m * k)).map { x in nodes[(x % m) * k + x / m] }
        self.halfNormZ = (0..<m).map { n in (0..<k).reduce(0.0) { $0 + nodes[n * k + $1] * nodes[n * k + $1] } * 0.5 }
        self.points = grid.points
        self.logPhi = grid.points.map { -0.5 * $0 * $0 }
        self.a = a
        self.rInverse = rInverse
        self.halfLogDetR = halfLogDetR
        self.scale = Self.proposalScale(factors: k)
        theta = [Double](repeating: 0, count: m * k)
        weight = [Double](repeating: 0, count: m)
        precision = [Double](repeating: 0, count: k * k)
        c = precision; rotation = precision; rotated = precision
        b = [Double](repeating: 0, count: k)
        mu = b; y = b
    }

    /// The proposal's SD relative to the normal approximation, s = √(1 + 2.2/K): wider, so that the weights stay
    /// bounded where the posterior's tail is heavier than the approximation's (a factor answered all right or all
    /// wrong), but by a determinant ratio s^(2K) ≈ e^2.2 whatever K, since the weights' spread from a too-wide
    /// proposal grows as s^K. Measured (log-likelihood errors against a 61³ grid on the 600 × 9 three-factor
    /// fixture of `CorrelatedFactorsTests`, per person at 1,024 nodes: mean −1.2 × 10⁻⁴ and SD 3.8 × 10⁻⁴ at s = 1,
    /// 1 × 10⁻⁵ and 1.2 × 10⁻⁴ at 1.2, −1.8 × 10⁻⁶ and 1.1 × 10⁻⁴ at 1.35, −1.1 × 10⁻⁵ and 1.7 × 10⁻⁴ at 1.6; on
    /// 5,000 × 36 simulated sessions on 6 factors, the fitted log-likelihood at 1,024 nodes 0.56 below its value at
    /// 16,384 for s = 1, 0.084 below for s = 1.15, 0.68 below for s = 1.35).
    static func proposalScale(factors k: Int) -> Double { (1 + 2.2 / Double(k)).squareRoot() }

    /// Samples the posterior of the person whose per-factor log-likelihoods on the fine grid are `h` (K × G,
    /// factor major), its nodes turned by the rotation `randomRotation(seed:)`; returns log L, the marginal
    /// log-likelihood, and leaves the nodes in `theta` and their masses in `weight`.
    mutating func integrate(h: UnsafeBufferPointer<Double>, seed: UInt64) -> Double {
        let kk = k, ng = points.count, m = weight.count
        let first = points[0], step = points[1] - points[0]
        // The narrowest likelihood the proposal takes: half a grid spacing's SD.
        let minimumVariance = 0.25 * step * step
        // The proposal: each factor's likelihood as a normal (λ_f, b_f), combined with the prior R⁻¹.
        for x in 0..<(kk * kk) { precision[x] = rInverse[x] }
        for f in 0..<kk {
            var top = -Double.infinity
            for x in 0..<ng { top = max(top, h[f * ng + x] + logPhi[x]) }
            var s0 = 0.0, s1 = 0.0, s2 = 0.0
            for x in 0..<ng {
                let e = exp(h[f * ng + x] + logPhi[x] - top)
                s0 += e; s1 += e * points[x]; s2 += e * points[x] * points[x]
            }
            let mean = s1 / s0, variance = max(s2 / s0 - mean * mean, minimumVariance)
            let lambda = max(1 / variance - 1, 0)
            precision[f * kk + f] += lambda
            b[f] = mean * (1 + lambda)
        }
        // P = L_P L_Pᵀ; μ = P⁻¹ b; C = L_P⁻ᵀ (upper triangular), log|C| = −Σ log L_P,ff.
        if !choleskyInPlace(&precision, n: kk) {
            // Only a likelihood that is not finite gets here (R⁻¹ + diag(λ ≥ 0) is positive definite): the prior's
            // own normal as the proposal.
            for x in 0..<(kk * kk) { precision[x] = rInverse[x] }
            for f in 0..<kk { b[f] = 0 }
            _ = choleskyInPlace(&precision, n: kk)
        }
        var logDetC = Double(kk) * log(scale)
        for f in 0..<kk { logDetC -= log(precision[f * kk + f]) }
        solveCholesky(precision, b, n: kk, work: &y, into: &mu)
        // Column e of C = L_P⁻ᵀ solves L_Pᵀ c_e = e_e (back substitution; C is upper triangular).
        for x in 0..<(kk * kk) { c[x] = 0 }
        for e in 0..<kk {
            for f in stride(from: e, through: 0, by: -1) {
                var v = f == e ? 1.0 : 0.0
                for t in (f + 1)..<(e + 1) { v -= precision[t * kk + f] * c[t * kk + e] }
                c[f * kk + e] = v / precision[f * kk + f]
            }
        }
        // C Q, Q the person's own rotation (any square root of the proposal's covariance serves): the same nodes in
        // a different orientation per person, so their integration errors do not add up coherently over persons.
        randomRotation(k: kk, seed: seed, into: &rotation)
        for f in 0..<kk {
            for e in 0..<kk {
                var v = 0.0
                for t in f..<kk { v += c[f * kk + t] * rotation[t * kk + e] }
                rotated[f * kk + e] = v * scale
            }
        }
        // The nodes and their log weights, factor by factor over all nodes (rows of M contiguous values, which the
        // compiler vectorises): θ_f = μ_f + Σ_e (CQ)_fe z_e, log w += h_f(θ_f) by 4-point Lagrange interpolation
        // on the fine grid, then −½‖Aθ‖² with (Aθ)_f = Σ_{e ≤ f} A_fe θ_e, and +½‖z‖².
        let mu = self.mu, rotated = self.rotated, a = self.a, inverseStep = 1 / step
        theta.withUnsafeMutableBufferPointer { theta in
            weight.withUnsafeMutableBufferPointer { logWeight in
                withUnsafeTemporaryAllocation(of: Double.self, capacity: m) { row in
                    z.withUnsafeBufferPointer { z in
                        halfNormZ.withUnsafeBufferPointer { halfNormZ in
                            for n in 0..<m { logWeight[n] = halfNormZ[n] }
                            for f in 0..<kk {
                                let out = theta.baseAddress! + f * m
                                for n in 0..<m { out[n] = mu[f] }
                                for e in 0..<kk {
                                    let coefficient = rotated[f * kk + e], source = z.baseAddress! + e * m
                                    for n in 0..<m { out[n] += coefficient * source[n] }
                                }
                                let table = h.baseAddress! + f * ng
                                for n in 0..<m {
                                    let position = (out[n] - first) * inverseStep
                                    // floor by truncation of the clamped (positive) position, as the grid's ends extrapolate.
                                    let lower = Int(min(max(position, 1), Double(ng - 3)))
                                    let s = position - Double(lower), base = table + lower
                                    let below = s - 1, twoBelow = s - 2, above = s + 1, sixth = 1.0 / 6
                                    let wm = -s * below * twoBelow * sixth, w0 = above * below * twoBelow * 0.5
                                    let w1 = -above * s * twoBelow * 0.5, w2 = above * s * below * sixth
                                    logWeight[n] += wm * base[-1] + w0 * base[0] + w1 * base[1] + w2 * base[2]
                                }
                            }
                            for f in 0..<kk {
                                for n in 0..<m { row[n] = 0 }
                                for e in 0...f {
                                    let coefficient = a[f * kk + e], source = theta.baseAddress! + e * m
                                    for n in 0..<m { row[n] += coefficient * source[n] }
                                }
                                for n in 0..<m { logWeight[n] -= 0.5 * row[n] * row[n] }
                            }
                        }
                    }
                }
            }
        }
        var top = -Double.infinity
        for n in 0..<m { top = max(top, weight[n]) }
        var total = 0.0
        for n in 0..<m { let v = exp(weight[n] - top); weight[n] = v; total += v }
        let inverse = 1 / total
        for n in 0..<m { weight[n] *= inverse }
        return log(total / Double(m)) + top - halfLogDetR + logDetC
    }
}
