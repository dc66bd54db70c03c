import Foundation

/// The correlated-factors E-step by **adaptive quasi–Monte Carlo** importance sampling, for more factors than a
/// product grid can hold. Each person's posterior p(θ | u_i) ∝ φ_R(θ) Π_f L_if(θ_f) is integrated with the same M
/// standard-normal nodes z_m (`SobolSequence.balancedNormalPoints`: Sobol directions, χ_K-stratified radii,
/// antithetic pairs), turned by the person's own random rotation Q_i and moved onto a widened normal
/// approximation of that person's posterior (adaptive quadrature in the sense of Schilling & Bock 2005,
/// *Psychometrika* 70, with quasi–Monte Carlo nodes in place of Gauss–Hermite products; Genz & Monahan 1998 for the
/// randomised spherical–radial rule):
/// ```
/// h_f(x)  = Σ_{j on f} log P(u_ij | x)          on a fine grid of G points per factor (answers × G per person)
/// m_f, v_f = mean and variance of e^{h_f} φ on the grid (factor f alone, N(0, 1) prior)
/// λ_f = 1/v_f − 1 (the likelihood's precision),  b_f = m_f (1 + λ_f)  (its precision × mean)
/// P = R⁻¹ + diag(λ),  μ = P⁻¹ b,  C = s L_P⁻ᵀ Q_i (C Cᵀ = s² P⁻¹, s = `proposalScale(factors:)`)   the proposal N(μ, C Cᵀ)
/// θ_m = μ + C z_m,   w_m = Π_f L_if(θ_mf) φ_R(θ_m) / [φ(z_m) / |C|]
/// L_i ≈ (1/M) Σ_m w_m,   E[g(θ) | u_i] ≈ Σ_m w_m g(θ_m) / Σ_m w_m
/// ```
/// The rotation (fixed per person by its index, so the E-step is a deterministic, continuous function of the
/// parameters) makes the integration errors of different persons independent instead of shared: without it the
/// same nodes err the same way for everyone and the log-likelihood's error grows with N, not √N.
/// h_f(θ_mf) is read off the fine grid by 4-point (cubic) Lagrange interpolation (error ≤ s⁴/384 · |h''''|, s the
/// spacing: below 10⁻⁶ per factor for slopes up to 4 at s = 0.05). The items' expected counts, which their M-step
/// (`BifactorItemFit`) takes on the fine grid, receive each node's posterior mass split linearly between the two
/// grid points around θ_mf (mass and mean kept, the variance widened by at most s²/4 = 0.000625); the second moments
/// S = Σ_i E[θθᵀ | u_i] for R's M-step (`FactorCorrelation` without a grid: the normal density's) use the nodes
/// themselves. Cost per person: answers × 2G additions, M × (K² + 8K) for the nodes and one exponential per node:
/// linear in persons and items, quadratic in factors, where the product grid is exponential. The nodes move with
/// the parameters (smoothly: μ, C and the interpolation are continuous), so EM's log-likelihood is monotone only to
/// the integration's accuracy; the calibrator states that accuracy (`CorrelatedFactorsCalibrator`).
extension CorrelatedFactorsEngine {
    /// The proposal's SD relative to the normal approximation, s = √(1 + 2.2/K): wider, so that the weights stay
    /// bounded where the posterior's tail is heavier than the approximation's (a factor answered all right or all
    /// wrong), but by a determinant ratio s^(2K) ≈ e^2.2 whatever K, since the weights' spread from a too-wide
    /// proposal grows as s^K. Measured (log-likelihood errors against a 61³ grid on the 600 × 9 three-factor
    /// fixture of `CorrelatedFactorsTests`, per person at 1,024 nodes: mean −1.2 × 10⁻⁴ and SD 3.8 × 10⁻⁴ at s = 1,
    /// 1 × 10⁻⁵ and 1.2 × 10⁻⁴ at 1.2, −1.8 × 10⁻⁶ and 1.1 × 10⁻⁴ at 1.35, −1.1 × 10⁻⁵ and 1.7 × 10⁻⁴ at 1.6; on
    /// 5,000 × 36 simulated sessions on 6 factors, the fitted log-likelihood at 1,024 nodes 0.56 below its value at
    /// 16,384 for s = 1, 0.084 below for s = 1.15, 0.68 below for s = 1.35).
    static func proposalScale(factors k: Int) -> Double { (1 + 2.2 / Double(k)).squareRoot() }

    func adaptiveEStep(nodes z: [Double]) -> Expectation {
        let kk = k, ng = q, m = z.count / kk, points = grid.points
        let first = points[0], step = points[1] - points[0]
        let (lr, norms) = correlationModel.cholesky(correlation)
        // A = L_R⁻¹ (θᵀR⁻¹θ = ‖Aθ‖²), R⁻¹ = AᵀA, ½ log|R| = −Σ log ‖v_i‖.
        let (a, rInverse) = correlationModel.inverse(cholesky: lr)
        let halfLogDetR = -norms.reduce(0) { $0 + log($1) }
        let halfNormZ = (0..<m).map { n in (0..<kk).reduce(0.0) { $0 + z[n * kk + $1] * z[n * kk + $1] } * 0.5 }
        let logPhi = points.map { -0.5 * $0 * $0 }
        let tables = itemLogTables()
        // The narrowest likelihood the proposal takes: half a grid spacing's SD.
        let minimumVariance = 0.25 * step * step
        let proposalScale = Self.proposalScale(factors: kk)
        let firstItem = factorItems.map(\.lowerBound)
        let engine = self
        return summedOverWorkers { persons in
            var counts = engine.factorItems.map { [Double](repeating: 0, count: 2 * $0.count * ng) }
            var moments = [Double](repeating: 0, count: kk * kk), ll = 0.0
            var h = [Double](repeating: 0, count: kk * ng), marginal = h
            var theta = [Double](repeating: 0, count: m * kk), logWeight = [Double](repeating: 0, count: m)
            var precision = [Double](repeating: 0, count: kk * kk), c = precision, b = [Double](repeating: 0, count: kk)
            var mu = b, y = b, rotation = precision, rotated = precision
            for i in persons {
                for x in 0..<(kk * ng) { h[x] = 0 }
                for cell in engine.data.cells(ofPerson: i) {
                    let j = Int(engine.data.itemIndices[cell]), f = Int(engine.factor[j]), base = Int(engine.data.responses[cell]) * ng
                    tables[j].withUnsafeBufferPointer { t in
                        for x in 0..<ng { h[f * ng + x] += t[base + x] }
                    }
                }
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
                    // Only a likelihood that is not finite gets here (R⁻¹ + diag(λ ≥ 0) is positive definite):
                    // the prior's own normal as the proposal.
                    for x in 0..<(kk * kk) { precision[x] = rInverse[x] }
                    for f in 0..<kk { b[f] = 0 }
                    _ = choleskyInPlace(&precision, n: kk)
                }
                var logDetC = Double(kk) * log(proposalScale)
                for f in 0..<kk { logDetC -= log(precision[f * kk + f]) }
                for f in 0..<kk {
                    var v = b[f]
                    for t in 0..<f { v -= precision[f * kk + t] * y[t] }
                    y[f] = v / precision[f * kk + f]
                }
                for f in stride(from: kk - 1, through: 0, by: -1) {
                    var v = y[f]
                    for t in (f + 1)..<kk { v -= precision[t * kk + f] * mu[t] }
                    mu[f] = v / precision[f * kk + f]
                }
                // Column e of C = L_P⁻ᵀ solves L_Pᵀ c_e = e_e (back substitution; C is upper triangular).
                for x in 0..<(kk * kk) { c[x] = 0 }
                for e in 0..<kk {
                    for f in stride(from: e, through: 0, by: -1) {
                        var v = f == e ? 1.0 : 0.0
                        for t in (f + 1)..<(e + 1) { v -= precision[t * kk + f] * c[t * kk + e] }
                        c[f * kk + e] = v / precision[f * kk + f]
                    }
                }
                // C Q_i, Q_i the person's own rotation (any square root of the proposal's covariance serves): the
                // same nodes in a different orientation per person, so their integration errors do not add up
                // coherently over persons.
                randomRotation(k: kk, seed: UInt64(i), into: &rotation)
                for f in 0..<kk { for e in 0..<kk {
                    var v = 0.0
                    for t in f..<kk { v += c[f * kk + t] * rotation[t * kk + e] }
                    rotated[f * kk + e] = v * proposalScale
                }}
                // The nodes and their log weights.
                var top = -Double.infinity
                for n in 0..<m {
                    var logLikelihood = 0.0, quadratic = 0.0
                    for f in 0..<kk {
                        var v = mu[f]
                        for e in 0..<kk { v += rotated[f * kk + e] * z[n * kk + e] }
                        theta[n * kk + f] = v
                        // h_f(v) by 4-point Lagrange interpolation on the fine grid.
                        let position = (v - first) / step
                        let lower = min(max(Int(position.rounded(.down)), 1), ng - 3)
                        let s = position - Double(lower), base = f * ng + lower
                        let wm = -s * (s - 1) * (s - 2) / 6, w0 = (s + 1) * (s - 1) * (s - 2) / 2
                        let w1 = -(s + 1) * s * (s - 2) / 2, w2 = (s + 1) * s * (s - 1) / 6
                        logLikelihood += wm * h[base - 1] + w0 * h[base] + w1 * h[base + 1] + w2 * h[base + 2]
                    }
                    for f in 0..<kk {
                        var v = 0.0
                        for e in 0...f { v += a[f * kk + e] * theta[n * kk + e] }
                        quadratic += v * v
                    }
                    let lw = logLikelihood - 0.5 * quadratic + halfNormZ[n]
                    logWeight[n] = lw
                    top = max(top, lw)
                }
                var total = 0.0
                for n in 0..<m { let v = exp(logWeight[n] - top); logWeight[n] = v; total += v }
                ll += log(total / Double(m)) + top - halfLogDetR + logDetC
                // Posterior masses onto the fine grid (linear split) and into the second moments.
                for x in 0..<(kk * ng) { marginal[x] = 0 }
                let inverse = 1 / total
                for n in 0..<m {
                    let p = logWeight[n] * inverse
                    for f in 0..<kk {
                        let v = theta[n * kk + f], position = (v - first) / step
                        let lower = min(max(Int(position.rounded(.down)), 0), ng - 2)
                        let s = min(max(position - Double(lower), 0), 1)
                        marginal[f * ng + lower] += p * (1 - s)
                        marginal[f * ng + lower + 1] += p * s
                        let pv = p * v
                        for g in 0...f { moments[f * kk + g] += pv * theta[n * kk + g] }
                    }
                }
                for cell in engine.data.cells(ofPerson: i) {
                    let j = Int(engine.data.itemIndices[cell]), f = Int(engine.factor[j]), u = Int(engine.data.responses[cell])
                    let row = (2 * (j - firstItem[f]) + u) * ng
                    for x in 0..<ng { counts[f][row + x] += marginal[f * ng + x] }
                }
            }
            for f in 0..<kk { for g in 0..<f { moments[g * kk + f] = moments[f * kk + g] } }
            return Expectation(counts: counts, secondMoments: moments, logLikelihood: ll)
        }
    }
}

/// A Haar-random K × K orthogonal matrix (row-major) determined by `seed`: Gram–Schmidt on the columns of a matrix
/// of independent standard normals (Mezzadri 2007, "How to generate random matrices from the classical compact
/// groups", *Notices of the AMS* 54).
func randomRotation(k: Int, seed: UInt64, into q: inout [Double]) {
    var rng = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 ^ 0xD1B5_4A32_D192_ED03)
    for x in 0..<(k * k) { q[x] = RandomVariate.normal(using: &rng) }
    for e in 0..<k {
        for p in 0..<e {
            var dot = 0.0
            for f in 0..<k { dot += q[f * k + e] * q[f * k + p] }
            for f in 0..<k { q[f * k + e] -= dot * q[f * k + p] }
        }
        var norm = 0.0
        for f in 0..<k { norm += q[f * k + e] * q[f * k + e] }
        norm = norm.squareRoot()
        for f in 0..<k { q[f * k + e] /= norm }
    }
}
