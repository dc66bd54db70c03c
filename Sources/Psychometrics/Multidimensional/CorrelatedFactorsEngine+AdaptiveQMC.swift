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
/// P = R⁻¹ + diag(λ),  μ = P⁻¹ b,  C = s L_P⁻ᵀ Q_i (C Cᵀ = s² P⁻¹, s = `AdaptivePosteriorSampler.proposalScale(factors:)`)   the proposal N(μ, C Cᵀ)
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
    func adaptiveEStep(nodes z: [Double]) -> Expectation {
        let kk = k, ng = q, points = grid.points
        let first = points[0], inverseStep = 1 / (points[1] - points[0])
        let (lr, norms) = correlationModel.cholesky(correlation)
        // A = L_R⁻¹ (θᵀR⁻¹θ = ‖Aθ‖²), R⁻¹ = AᵀA, ½ log|R| = −Σ log ‖v_i‖.
        let (a, rInverse) = correlationModel.inverse(cholesky: lr)
        let sampler = AdaptivePosteriorSampler(nodes: z, k: kk, grid: grid, a: a, rInverse: rInverse, halfLogDetR: -norms.reduce(0) { $0 + log($1) })
        let m = sampler.nodeCount
        let tables = itemLogTables()
        let firstItem = factorItems.map(\.lowerBound)
        let engine = self
        return summedOverWorkers { persons in
            var sampler = sampler
            var counts = engine.factorItems.map { [Double](repeating: 0, count: 2 * $0.count * ng) }
            var moments = [Double](repeating: 0, count: kk * kk), ll = 0.0
            var h = [Double](repeating: 0, count: kk * ng), marginal = h, weighted = [Double](repeating: 0, count: m)
            for i in persons {
                h.withUnsafeMutableBufferPointer { engine.logLikelihoods(person: i, tables: tables, into: $0) }
                ll += h.withUnsafeBufferPointer { sampler.integrate(h: $0, seed: UInt64(i)) }
                // Posterior masses onto the fine grid (linear split) and into the second moments, factor by factor
                // over the nodes (θ factor-major): S_fg += Σ_n (p_n θ_fn) θ_gn.
                for x in 0..<(kk * ng) { marginal[x] = 0 }
                sampler.theta.withUnsafeBufferPointer { theta in
                    sampler.weight.withUnsafeBufferPointer { weight in
                        marginal.withUnsafeMutableBufferPointer { marginal in
                            weighted.withUnsafeMutableBufferPointer { pv in
                                for f in 0..<kk {
                                    let row = theta.baseAddress! + f * m
                                    for n in 0..<m {
                                        let p = weight[n], v = row[n], position = (v - first) * inverseStep
                                        // floor by truncation of the clamped (non-negative) position.
                                        let lower = Int(min(max(position, 0), Double(ng - 2)))
                                        let s = min(max(position - Double(lower), 0), 1)
                                        marginal[f * ng + lower] += p * (1 - s)
                                        marginal[f * ng + lower + 1] += p * s
                                        pv[n] = p * v
                                    }
                                    for g in 0...f {
                                        let other = theta.baseAddress! + g * m
                                        var sum = 0.0
                                        for n in 0..<m { sum += pv[n] * other[n] }
                                        moments[f * kk + g] += sum
                                    }
                                }
                            }
                        }
                    }
                }
                marginal.withUnsafeBufferPointer { engine.addCounts(person: i, marginal: $0, scale: 1, firstItem: firstItem, into: &counts) }
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
