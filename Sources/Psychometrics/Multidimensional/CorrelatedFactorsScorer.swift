import Foundation

/// Factor scores on a correlated-factors bank (`CorrelatedFactorsCalibrator`: K factors θ ~ N(0, R), each item on
/// one factor f(j) with P(u_j = 1 | θ) = c + (1 − c) σ(a_j θ_f(j) + d_j)): every factor's EAP (Bock & Mislevy 1982)
/// or MAP with the posterior covariance, and a full-scale score, the factors' equally weighted composite
/// standardised in the calibration population,
/// ```
/// θ_FS = wᵀθ,   w_f = 1/√(1ᵀR1)   (Var θ_FS = 1 under N(0, R))
/// ```
/// — the sum of the index scores, rescaled, as a full-scale IQ sums a battery's index or subtest scores (Wechsler
/// 2008, *WAIS-IV Technical and Interpretive Manual*, ch. 2; its posterior mean wᵀE[θ | u] and variance
/// wᵀCov[θ | u]w). Estimates are laid out as a battery's (`BifactorEstimate`): the full-scale composite first,
/// then the K factors, with the (1 + K) × (1 + K) covariance.
///
/// **EAP.** The likelihood is a product over factors, L(u | θ) = Π_f L_f(θ_f), with each L_f tabulated on one
/// rule per factor from per-item log tables (answers × G additions). Up to 3 factors the posterior is summed on
/// the product grid of Q points per factor, the prior weight of a node exp(−½θᵀR⁻¹θ) normalised over the Q^K
/// nodes (`FactorCorrelation.gridPrior`, exact quadrature as the calibrator's and mirt's `fscores()`; the sums are
/// the E-step's, `FactorCorrelation.posteriorSums`); a session that answered one factor's items only is integrated
/// exactly in one dimension (`oneFactorEAP`); from 4
/// factors on by adaptive quasi–Monte Carlo importance sampling (`AdaptivePosteriorSampler`, the calibration's
/// E-step for one person: M nodes moved onto the session's own normal approximation, on a fine grid of
/// `CorrelatedFactorsCalibrator.adaptiveTablePoints` points per factor), its rotation seeded by the session's
/// answers, so the same answers always give the same scores. Measured accuracy: `CorrelatedFactorsScoringTests`.
///
/// **MAP** maximises ℓ(θ) = Σ_j log P(u_j | θ_f(j)) − ½ θᵀR⁻¹θ by Newton's method from the EAP (`posteriorMode`):
/// gradient Σ_j ∂ℓ/∂z · a_j e_f(j) − R⁻¹θ, Hessian Σ_j ∂²ℓ/∂z² · a_j² e_f(j)e_f(j)ᵀ − R⁻¹
/// (`BifactorItem.logitDerivatives`), negative definite for 2PL items; the covariance (−∇²ℓ)⁻¹ at the mode.
/// An unanswered factor's mode follows the answered ones through R.
package struct CorrelatedFactorsScorer: Sendable {
    /// Per item: its slope a_j as a general-only `BifactorItem`'s general slope, its intercept and c.
    package let items: [BifactorItem]
    /// Per item, its factor (0…K − 1).
    package let itemFactor: [Int]
    package let factorCount: Int
    /// R, K × K row-major.
    package let correlations: [Double]
    /// The rule per factor: Q points for the product grid, the fine grid for quasi–Monte Carlo.
    package let grid: QuadratureGrid
    /// `.productGrid` or `.adaptiveQuasiMonteCarlo`.
    package let integration: CorrelatedFactorsCalibrator.Integration
    /// The full-scale composite's weight on every factor, 1/√(1ᵀR1).
    package let compositeWeight: Double
    /// Per item: log P(u = 0) at the grid's points, then log P(u = 1).
    let logTables: [Double]
    /// The product grid's normalised prior weights and their logs (Q^K), nil for quasi–Monte Carlo.
    let logPrior: [Double]?
    let prior: [Double]?
    let sampler: AdaptivePosteriorSampler?
    /// R⁻¹, and R's Cholesky factor L (R = L Lᵀ, lower triangular, row-major).
    let rInverse: [Double]
    let choleskyFactor: [Double]

    /// Quasi–Monte Carlo nodes per session by default: more than the calibration's 1,024, since one session's
    /// score, not a sum over thousands, carries the error.
    package static let defaultMonteCarloPoints = 4096
    /// The most factors scored.
    package static let maximumFactors = CorrelatedFactorsCalibrator.maximumAdaptiveFactors

    /// - Parameters:
    ///   - items: the bank's items (`factor` below the matrix's order; slopes, intercepts and c as calibrated).
    ///   - correlations: R, K × K row-major: symmetric, unit diagonal, positive definite.
    ///   - integration: `.automatic`: the product grid up to 3 factors, quasi–Monte Carlo beyond.
    ///   - quadraturePoints: the product grid's points per factor (`BifactorScorer.allowedPointCounts`, at most
    ///     `CorrelatedFactorsCalibrator.maximumNodes` nodes in all); nil: 31 (29,791 nodes for 3 factors, finer than
    ///     the calibration's 21: one session's score, not a sum over thousands, carries the error).
    ///   - monteCarloPoints: quasi–Monte Carlo nodes (a power of 2, `CorrelatedFactorsCalibrator.allowedMonteCarloPoints`).
    /// - Throws: `PsychometricsError(.invalidOptions)` for no items, more factors than `maximumFactors`, a factor
    ///   out of range, a matrix that is not a correlation matrix or not positive definite, or a rule outside its
    ///   ranges; `.invalidParameters` for a parameter that is not finite or a c outside [0, 1).
    package init(
        items: [CorrelatedFactorsResult.Item], correlations: [Double], integration: CorrelatedFactorsCalibrator.Integration = .automatic,
        quadraturePoints: Int? = nil, monteCarloPoints: Int = defaultMonteCarloPoints, bound: Double = 6
    ) throws(PsychometricsError) {
        let k = Int(Double(correlations.count).squareRoot().rounded())
        guard !items.isEmpty else { throw PsychometricsError(.invalidOptions, "a correlated-factors bank needs items") }
        guard k >= 1, k * k == correlations.count, k <= Self.maximumFactors else {
            throw PsychometricsError(
                .invalidOptions,
                "the factor correlations must be a K × K matrix with 1 ≤ K ≤ \(Self.maximumFactors), got \(correlations.count) values")
        }
        if let j = items.firstIndex(where: { !(0..<k).contains($0.factor) }) {
            throw PsychometricsError(.invalidOptions, "item \(items[j].itemID): factor \(items[j].factor) is not below the \(k) factors")
        }
        if let j = items.firstIndex(where: { !($0.slope.isFinite && $0.intercept.isFinite && $0.guessing >= 0 && $0.guessing < 1) }) {
            throw PsychometricsError(.invalidParameters, "item \(items[j].itemID): the slope and intercept must be finite and c in [0, 1)")
        }
        for f in 0..<k {
            guard abs(correlations[f * k + f] - 1) < 1e-9 else {
                throw PsychometricsError(
                    .invalidOptions, "the factor correlation matrix's diagonal must be 1, got \(correlations[f * k + f]) at \(f + 1)")
            }
            for g in 0..<f where !(abs(correlations[f * k + g] - correlations[g * k + f]) < 1e-6 && abs(correlations[f * k + g]) < 1) {
                throw PsychometricsError(
                    .invalidOptions,
                    "the factor correlations at (\(f + 1), \(g + 1)) must be symmetric and in (−1, 1), got \(correlations[f * k + g]) and \(correlations[g * k + f])"
                )
            }
        }
        let model = FactorCorrelation(k: k)
        guard let x = model.parameters(of: correlations) else {
            throw PsychometricsError(.invalidOptions, "the factor correlation matrix is not positive definite")
        }
        let resolved: CorrelatedFactorsCalibrator.Integration =
            integration == .automatic ? (k <= 3 ? .productGrid : .adaptiveQuasiMonteCarlo) : integration
        let grid: QuadratureGrid
        if resolved == .productGrid {
            let quadraturePoints = quadraturePoints ?? 31
            var problems = QuadratureGrid.validationProblems(points: quadraturePoints, bound: bound)
            if problems.isEmpty, let p = BifactorScorer.allowedPointCounts.problem(quadraturePoints, "the product grid's points per factor") {
                problems.append(p)
            }
            if problems.isEmpty, pow(Double(quadraturePoints), Double(k)) > Double(CorrelatedFactorsCalibrator.maximumNodes) {
                problems.append(
                    "\(quadraturePoints)^\(k) nodes exceed \(CorrelatedFactorsCalibrator.maximumNodes); use fewer points or quasi–Monte Carlo")
            }
            guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid scoring grid: " + problems.joined(separator: "; ")) }
            grid = QuadratureGrid(validatedCount: quadraturePoints, bound: bound)
        } else {
            var problems = QuadratureGrid.validationProblems(points: CorrelatedFactorsCalibrator.adaptiveTablePoints, bound: bound)
            if let p = CorrelatedFactorsCalibrator.monteCarloPointsProblem(monteCarloPoints) { problems.append(p) }
            guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid scoring rule: " + problems.joined(separator: "; ")) }
            grid = QuadratureGrid(validatedCount: CorrelatedFactorsCalibrator.adaptiveTablePoints, bound: bound)
        }
        let (l, norms) = model.cholesky(x)
        let (a, rInverse) = model.inverse(cholesky: l)
        let bifactorItems = items.map {
            BifactorItem(generalSlope: $0.slope, intercept: $0.intercept, guessing: $0.guessing, estimatesGuessing: $0.estimatesGuessing)
        }
        let points = grid.points
        let tables = bifactorItems.flatMap { $0.generalLogTable(at: points) }
        self.items = bifactorItems
        self.itemFactor = items.map(\.factor)
        self.factorCount = k
        self.correlations = correlations
        self.grid = grid
        self.integration = resolved
        self.compositeWeight = 1 / correlations.reduce(0, +).squareRoot()
        self.logTables = tables
        self.rInverse = rInverse
        self.choleskyFactor = l
        if resolved == .productGrid {
            let logPrior = FactorCorrelation(k: k, grid: grid).gridPrior(x).logWeights
            self.logPrior = logPrior
            prior = logPrior.map { exp($0) }
            sampler = nil
        } else {
            logPrior = nil
            prior = nil
            sampler = AdaptivePosteriorSampler(
                nodes: SobolSequence.balancedNormalPoints(count: monteCarloPoints, dimensions: k), k: k, grid: grid,
                a: a, rInverse: rInverse, halfLogDetR: -norms.reduce(0) { $0 + log($1) })
        }
    }

    /// The factor scores (EAP) of the answers `responses` (item index into `items`, 0/1). An empty session gets the
    /// prior: every mean 0, covariance R.
    /// - Throws: `PsychometricsError` `.unknownItem`, `.invalidResponse`, `.repeatedItem` as `BifactorScorer.eap`.
    package func eap(_ responses: [(item: Int, response: UInt8)]) throws(PsychometricsError) -> BifactorEstimate {
        let (items, answers) = try validatedAnswers(responses, itemCount: self.items.count)
        return items.withUnsafeBufferPointer { i in answers.withUnsafeBufferPointer { u in eap(validated: i, u) } }
    }

    /// The factor scores (MAP) of the answers `responses`.
    /// - Throws: as `eap`.
    package func map(_ responses: [(item: Int, response: UInt8)]) throws(PsychometricsError) -> BifactorEstimate {
        let (items, answers) = try validatedAnswers(responses, itemCount: self.items.count)
        return items.withUnsafeBufferPointer { i in answers.withUnsafeBufferPointer { u in map(validated: i, u) } }
    }

    /// Each factor's log-likelihood on the grid (K × G) and the answers per factor.
    private func factorLogLikelihoods(_ itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> (
        h: [Double], answers: [Int]
    ) {
        let g = grid.count
        var h = [Double](repeating: 0, count: factorCount * g), answers = [Int](repeating: 0, count: factorCount)
        logTables.withUnsafeBufferPointer { t in
            for k in 0..<itemIndices.count {
                let j = itemIndices[k], f = itemFactor[j], base = 2 * g * j + Int(responses[k]) * g
                answers[f] += 1
                for x in 0..<g { h[f * g + x] += t[base + x] }
            }
        }
        return (h, answers)
    }

    /// `eap` of answers already checked (distinct indices in range, responses 0/1): the batch path.
    package func eap(validated itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> BifactorEstimate {
        let k = factorCount
        let (h, answers) = factorLogLikelihoods(itemIndices, responses)
        if answers.filter({ $0 > 0 }).count <= 1 { return oneFactorEAP(h, answers) }
        var mean = [Double](repeating: 0, count: k), second = [Double](repeating: 0, count: k * k), logLikelihood: Double
        if let logPrior, let prior {
            let q = grid.count, points = grid.points
            var marginal = [Double](repeating: 0, count: k * q), likelihood = marginal, digits = [Int](repeating: 0, count: k)
            let (total, offset) = FactorCorrelation(k: k, grid: grid).posteriorSums(
                h: h, prior: prior, logPrior: logPrior, likelihood: &likelihood,
                marginal: &marginal, moments: &second, digits: &digits)
            logLikelihood = log(total) + offset
            for f in 0..<k {
                for x in 0..<q { mean[f] += marginal[f * q + x] * points[x] }
                mean[f] /= total
                for g in 0...f { second[f * k + g] /= total; second[g * k + f] = second[f * k + g] }
            }
        } else {
            var sampler = self.sampler!
            // The rotation's seed: the answers themselves (FNV-1a over item indices and responses).
            var seed: UInt64 = 0xCBF2_9CE4_8422_2325
            for x in 0..<itemIndices.count {
                seed = (seed ^ UInt64(itemIndices[x] &* 2 &+ Int(responses[x]))) &* 0x0000_0100_0000_01B3
            }
            logLikelihood = h.withUnsafeBufferPointer { sampler.integrate(h: $0, seed: seed) }
            let theta = sampler.theta, weight = sampler.weight, m = sampler.nodeCount
            for f in 0..<k {
                for n in 0..<m {
                    let pv = weight[n] * theta[f * m + n]
                    mean[f] += pv
                    for g in 0...f { second[f * k + g] += pv * theta[g * m + n] }
                }
            }
            for f in 0..<k { for g in 0..<f { second[g * k + f] = second[f * k + g] } }
        }
        var covariance = second
        for f in 0..<k { for g in 0..<k { covariance[f * k + g] -= mean[f] * mean[g] } }
        return withFullScale(mean, covariance, answers: answers, logLikelihood: logLikelihood)
    }

    /// The EAP of a session that answered the items of one factor f (or none): exact in one dimension, since the
    /// other factors given θ_f are normal, θ_g | θ_f ~ N(R_gf θ_f, 1 − R_gf²). With m and v the posterior mean and
    /// variance of θ_f (its N(0, 1) prior times L_f on the grid, weights φ normalised over the points),
    /// E θ_g = R_gf m, Cov(θ_g, θ_h) = R_gh − R_gf R_hf (1 − v), Cov(θ_g, θ_f) = R_gf v; log L = log Σ_x w_x L_f(x).
    /// A session of one domain, and every subscore of `IndexAddedValue`, costs G operations, not Q^K.
    private func oneFactorEAP(_ h: [Double], _ answers: [Int]) -> BifactorEstimate {
        let k = factorCount, g = grid.count, points = grid.points, f = answers.firstIndex { $0 > 0 } ?? 0
        var top = -Double.infinity, priorTotal = 0.0
        for x in 0..<g { top = max(top, h[f * g + x] - 0.5 * points[x] * points[x]); priorTotal += exp(-0.5 * points[x] * points[x]) }
        var s0 = 0.0, s1 = 0.0, s2 = 0.0
        for x in 0..<g {
            let e = exp(h[f * g + x] - 0.5 * points[x] * points[x] - top)
            s0 += e; s1 += e * points[x]; s2 += e * points[x] * points[x]
        }
        let m = s1 / s0, v = max(0, s2 / s0 - m * m), r = correlations
        let mean = (0..<k).map { r[$0 * k + f] * m }
        var covariance = [Double](repeating: 0, count: k * k)
        for a in 0..<k { for b in 0..<k { covariance[a * k + b] = r[a * k + b] - r[a * k + f] * r[b * k + f] * (1 - v) } }
        return withFullScale(mean, covariance, answers: answers, logLikelihood: top + log(s0 / priorTotal))
    }

    /// `map` of answers already checked.
    package func map(validated itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> BifactorEstimate {
        let k = factorCount, rInverse = self.rInverse
        let start = eap(validated: itemIndices, responses)
        func terms(_ theta: [Double], derivatives: Bool) -> LogPosteriorTerms {
            var likelihood = 0.0, quadratic = 0.0
            var gradient = [Double](repeating: 0, count: derivatives ? k : 0), hessian = [Double](repeating: 0, count: derivatives ? k * k : 0)
            for f in 0..<k {
                var v = 0.0
                for g in 0..<k { v += rInverse[f * k + g] * theta[g] }
                quadratic += theta[f] * v
                if derivatives {
                    gradient[f] = -v
                    for g in 0..<k { hessian[f * k + g] = -rInverse[f * k + g] }
                }
            }
            for x in 0..<itemIndices.count {
                let item = items[itemIndices[x]], f = itemFactor[itemIndices[x]], right = responses[x] == 1
                let z = item.logit(general: theta[f], specific: 0), lp = item.logProbabilities(logit: z)
                likelihood += right ? lp.right : lp.wrong
                guard derivatives else { continue }
                let (first, second) = item.logitDerivatives(logit: z, right: right)
                gradient[f] += first * item.generalSlope
                hessian[f * k + f] += second * item.generalSlope * item.generalSlope
            }
            return LogPosteriorTerms(value: likelihood - quadratic / 2, likelihood: likelihood, gradient: gradient, hessian: hessian)
        }
        let mode = posteriorMode(from: Array(start.means.dropFirst()), bound: grid.points.last!) { terms($0, derivatives: $1) }
        return withFullScale(mode.theta, mode.covariance, answers: start.answersPerFactor, logLikelihood: mode.terms.likelihood)
    }

    /// Item `j` as a unidimensional 2PL/3PL item on the full-scale composite θ_FS = wᵀθ: given θ_FS its factor is
    /// θ_f = ρ_f θ_FS + √(1 − ρ_f²) e, e ~ N(0, 1) independent, with ρ_f = Cov(θ_f, θ_FS) = w Σ_g R_fg, so the item is
    /// a bifactor item with general slope a ρ_f and specific slope a √(1 − ρ_f²), whose general-factor marginal
    /// (`BifactorItem.generalMarginal`, the normal-ogive approximation) it returns: what a unidimensional tool
    /// (the session scorer's bank view, assembly) sees of it. Scores are not computed from it.
    package func fullScaleMarginal(item j: Int) -> ItemParameters {
        let k = factorCount, f = itemFactor[j], item = items[j]
        var rho = 0.0
        for g in 0..<k { rho += correlations[f * k + g] }
        rho = min(1, rho * compositeWeight)
        return BifactorItem(
            generalSlope: item.generalSlope * rho, specificSlope: item.generalSlope * (1 - rho * rho).squareRoot(), specific: 0,
            intercept: item.intercept, guessing: item.guessing, estimatesGuessing: item.estimatesGuessing
        ).generalMarginal
    }

    /// The battery layout: the full-scale composite wᵀθ first, then the factors, with the covariance bordered by
    /// Cov(wᵀθ, θ) = Σw and Var(wᵀθ) = wᵀΣw.
    private func withFullScale(_ mean: [Double], _ covariance: [Double], answers: [Int], logLikelihood: Double) -> BifactorEstimate {
        let k = factorCount, dims = k + 1, w = compositeWeight
        let means = [w * mean.reduce(0, +)] + mean
        var full = [Double](repeating: 0, count: dims * dims)
        var total = 0.0
        for f in 0..<k {
            var row = 0.0
            for g in 0..<k {
                full[(f + 1) * dims + g + 1] = covariance[f * k + g]
                row += covariance[f * k + g]
            }
            full[(f + 1) * dims] = w * row
            full[f + 1] = w * row
            total += row
        }
        full[0] = w * w * total
        return BifactorEstimate(
            means: means, covariance: full, standardErrors: (0..<dims).map { max(0, full[$0 * dims + $0]).squareRoot() },
            answersPerFactor: answers, logLikelihood: logLikelihood)
    }
}
