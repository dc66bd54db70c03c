import Foundation

/// SQUAREM, the squared iterative method of Varadhan & Roland (2008), scheme S3, with the step-length
/// adaptation of their R package `SQUAREM` (`squarem1`): the extrapolation step over the EM map F.
///
/// From x₀, two EM cycles give x₁ = F(x₀) and x₂ = F(x₁); then
/// ```
/// r = x₁ − x₀,    v = x₂ − 2x₁ + x₀,    α = −‖r‖ / ‖v‖  clamped to [−αmax, −1]
/// x′ = x₀ − 2αr + α²v
/// ```
/// (α = −1 gives x′ = x₂, plain EM; ‖v‖ = 0 gives α = −αmax) and one stabilising EM cycle from x′ gives the
/// next x₀ = F(x′). The step bound αmax starts at 1 (so the first iteration is two plain cycles), is multiplied
/// by 4 whenever a kept step reaches it, and divided by 4 (not below 1) when a step at the bound is rejected —
/// the package's defaults step.min0 = 1, step.max0 = 1, mstep = 4.
///
/// **One α, or one per block.** S3 takes one α for the whole vector, which is exact when every parameter
/// converges at the same linear rate ρ (α = −1/(1 − ρ)). A bank where a few items converge far more slowly
/// than the rest breaks that: an item whose responses are pure guessing (p-value ≈ c) has its b drifting to
/// +∞ by ever smaller EM steps; its r and v dominate the norms, and the large α they ask for throws every
/// other item far past its optimum, so the safeguard rejects step after step. So after a rejected step the
/// next ones take one α per block (`blocks`: each item's parameters; μ and log σ), the same formula over the
/// block's own r and v — S3 under a block-diagonal model of the EM rate matrix — and the other form again after
/// a rejection in that mode. (Measured on a sparse 3PL bank of 1,500 items × 20,000 sessions × 25 with one such
/// item: one α throughout hit the 500-cycle limit, 105 of 179 extrapolations rejected; switching to one α per
/// item after the first rejection, it converged in 32 E-steps. On dense data, where all items converge at
/// about one rate, one α does better than per-item ones, and is seldom rejected.)
///
/// Varadhan, R. & Roland, C. (2008). Simple and globally convergent methods for accelerating the convergence of
/// any EM algorithm. *Scandinavian Journal of Statistics* 35(2), 335–353.
struct SQUAREM {
    /// αmax: the largest |α| the next step may take.
    private(set) var stepBound = 1.0
    static let boundFactor = 4.0
    /// The safeguard's allowance for rounding, relative to |ℓ|: the E-step's sum of per-person log-likelihoods
    /// carries rounding of about 10⁻¹⁵ relative (measured: near convergence ℓ moves up and down by 10⁻¹⁰–10⁻⁹ at
    /// ℓ ≈ −3·10⁵ from one point to the next), so a smaller drop is not evidence that x′ is worse.
    static let roundingTolerance = 1e-12
    /// True while the step takes one α per block.
    private(set) var perBlock = false
    /// Contiguous blocks covering the parameter vector, for the per-block form.
    let blocks: [Range<Int>]

    init(blocks: [Range<Int>]) { self.blocks = blocks }

    /// The extrapolated point x′ from x₀, x₁ = F(x₀), x₂ = F(x₁), and the most negative α used; nil when every
    /// α is −1 (x′ = x₂). x′ may lie outside the parameters' ranges (the caller projects it), and is not finite
    /// only when the inputs are not (or |α| overflows).
    func extrapolate(_ x0: [Double], _ x1: [Double], _ x2: [Double]) -> (alpha: Double, point: [Double])? {
        precondition(x0.count == x1.count && x1.count == x2.count, "three points of one dimension, got \(x0.count), \(x1.count), \(x2.count)")
        var point = x2
        var largest = -1.0
        for block in perBlock ? blocks : [x0.indices] {
            var rr = 0.0, vv = 0.0
            for k in block {
                let r = x1[k] - x0[k], v = x2[k] - 2 * x1[k] + x0[k]
                rr += r * r
                vv += v * v
            }
            let ratio = vv > 0 ? (rr / vv).squareRoot() : stepBound
            let alpha = -min(max(ratio, 1), stepBound)
            guard alpha < -1 else { continue }
            largest = min(largest, alpha)
            for k in block {
                let r = x1[k] - x0[k], v = x2[k] - 2 * x1[k] + x0[k]
                point[k] = x0[k] - 2 * alpha * r + alpha * alpha * v
            }
        }
        return largest < -1 ? (largest, point) : nil
    }

    /// Adapts αmax after a step whose most negative α was `alpha` (−1 for plain EM), kept or rejected by the
    /// safeguard; a rejection also switches between one α and one per block.
    mutating func record(alpha: Double, kept: Bool) {
        if -alpha == stepBound { stepBound = kept ? stepBound * Self.boundFactor : max(1, stepBound / Self.boundFactor) }
        if !kept { perBlock.toggle() }
    }
}

extension EMRun {
    /// EM accelerated by SQUAREM (`SQUAREM`) over the free working parameters (`EMEngine.workingParameters`:
    /// the items' s, d, γ and, with fixed items, μ and log σ; fixed items never move).
    ///
    /// Safeguard (monotonicity): the extrapolated x′ is projected into the parameters' ranges
    /// (`EMEngine.setWorkingParameters`) and its E-step computes ℓ(x′), the marginal log-likelihood plus the
    /// log priors — the objective EM increases. x′ is kept only when ℓ(x′) ≥ ℓ(x₁); that E-step then serves the
    /// stabilising cycle, and as an EM cycle does not lower ℓ, the points the cycles start from have
    /// non-decreasing ℓ (`logPosteriorTrace`). Otherwise (or when x′ is not finite) the iteration falls back to
    /// x₂, the plain EM result, and the E-step at x′ is the only cost.
    ///
    /// Each iteration: 2 cycles (α = −1), 3 cycles and 3 E-steps (x′ kept) or 2 cycles and 3 E-steps (x′
    /// rejected). Every cycle applies the stopping rule of plain EM, so the estimates satisfy the same
    /// criterion: one EM cycle changes no parameter by `tolerance` or more.
    mutating func runSQUAREM() throws {
        var squarem = SQUAREM(blocks: engine.parameterBlocks())
        while cycles < maxCycles {
            let x0 = engine.workingParameters()
            if try cycle(expectation()) { return }
            let x1 = engine.workingParameters()
            let e1 = expectation()
            let objective1 = e1.logLikelihood + engine.logPrior()
            if try cycle(e1) { return }
            guard let (alpha, point) = squarem.extrapolate(x0, x1, engine.workingParameters()) else {
                squarem.record(alpha: -1, kept: true)
                continue
            }
            var kept = false
            let atX2 = engine
            if point.allSatisfy(\.isFinite) {
                engine.setWorkingParameters(point)
                let e = expectation()
                let objective = e.logLikelihood + engine.logPrior()
                if objective >= objective1 - SQUAREM.roundingTolerance * abs(objective1) {
                    kept = true
                    squarem.record(alpha: alpha, kept: true)
                    extrapolations += 1
                    if try cycle(e) { return }
                }
            }
            if !kept {
                squarem.record(alpha: alpha, kept: false)
                rejectedExtrapolations += 1
                engine = atX2
            }
        }
    }
}
