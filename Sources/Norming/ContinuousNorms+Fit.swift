import Foundation
import Psychometrics

/// The information criterion that chooses the degrees.
package enum InformationCriterion: String, Sendable, Hashable, Codable, CaseIterable {
    /// BIC = −2ℓ + k·log n_eff (Schwarz 1978): consistent, prefers smaller models at large n than AIC.
    case bic
    /// AIC = −2ℓ + 2k (Akaike 1974).
    case aic

    func value(logLikelihood: Double, parameters: Int, effectiveN: Double) -> Double {
        switch self {
        case .bic: -2 * logLikelihood + Double(parameters) * log(effectiveN)
        case .aic: -2 * logLikelihood + 2 * Double(parameters)
        }
    }
}

/// How `ContinuousNorms.fit` chooses the degrees.
package struct ContinuousNormsOptions: Sendable, Hashable {
    /// The largest degrees the search may choose (default μ 5, log σ 3, ε 2, log δ 1).
    package var maximumDegrees = SHASHDegrees(location: 5, logScale: 3, skewness: 2, logTailWeight: 1)
    /// Fit these degrees only (no search).
    package var fixedDegrees: SHASHDegrees?
    package var criterion = InformationCriterion.bic
    /// Newton iterations per fit.
    package var maximumIterations = 200

    package init() {}

    package func validationProblems() -> [String] {
        maximumDegrees.validationProblems(what: "maximum degrees") + (fixedDegrees?.validationProblems(what: "fixed degrees") ?? [])
            + (1...10_000 ~= maximumIterations ? [] : ["the iteration limit must be 1–10000, got \(maximumIterations)"])
    }
}

/// One model the degree search fitted.
package struct CriterionEntry: Sendable, Hashable, Codable {
    package var degrees: SHASHDegrees
    package var parameterCount: Int
    package var logLikelihood: Double
    /// The criterion's value (smaller is better).
    package var value: Double
    package var converged: Bool
}

/// The result of fitting continuous norms: the chosen model, the criterion table, and the checks.
package struct ContinuousNormsFit: Sendable, Hashable {
    package var norms: ContinuousNorms
    package var criterion: InformationCriterion
    /// Every model fitted, in the order fitted.
    package var table: [CriterionEntry]
    /// The chosen model's weighted log-likelihood (weights summing to n_eff).
    package var logLikelihood: Double
    package var converged: Bool
    package var iterations: Int
    package var percentileCheck: PercentileCurveCheck
    /// Degenerate or doubtful fits, in words.
    package var warnings: [String]
}

extension ContinuousNorms {
    /// Fits continuous norms by weighted maximum likelihood and chooses the degrees by `options.criterion`.
    ///
    /// ```
    /// ℓ(β) = Σ_i w_i · log f_SHASH(θ_i | μ(t_i), σ(t_i), ε(t_i), δ(t_i)),   Σ_i w_i = n_eff = (Σ v_i)² / Σ v_i²
    /// ```
    /// with v the given weights: the weights are rescaled to sum to Kish's effective n, so that the curvature of ℓ
    /// and BIC's log n reflect the information in a weighted sample rather than its row count. Each model is fitted
    /// by Newton's method (`NewtonMaximizer`, analytic Hessian `SHASHDerivatives`) from a normal start: weighted
    /// least squares of θ on the μ basis, then of ½ log e² + 0.6352 (E log|Z| = −0.6352 for Z ~ N(0, 1)) on the
    /// log σ basis, ε = 0, log δ = 0. The search is stepwise over the grid 0…maximum (ε, log δ also "none"): for
    /// μ, log σ, ε, log δ in turn, every degree of that parameter with the others held, keeping the best; sweeps
    /// repeat until none changes (at most 4), each model started from the current best fit. Every fit enters
    /// `table`; a model that did not converge is never chosen while a converged one exists.
    /// - Parameters: ages, thetas, weights (positive, finite; nil = equal), of equal length.
    /// - Throws: `PsychometricsError.insufficientData` when the sample cannot support even a constant normal
    ///   (fewer than 10 persons, no spread of θ or of age), `.invalidOptions` for options out of range.
    package static func fit(
        ages: [Double], thetas: [Double], weights: [Double]? = nil,
        options: ContinuousNormsOptions = ContinuousNormsOptions()
    ) throws -> ContinuousNormsFit {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "continuous norms: " + problems.joined(separator: "; ")) }
        guard ages.count < 2 || ages.max()! - ages.min()! >= 1e-6 else {
            throw PsychometricsError(.insufficientData, "continuous norms need persons of different ages; every age is \(fixedText(ages[0]))")
        }
        var likelihood = try SHASHLikelihood(
            ages: ages, thetas: thetas, weights: weights,
            maximumDegree: [options.maximumDegrees, options.fixedDegrees].compactMap { $0 }
                .map { max($0.location, $0.logScale, $0.skewness ?? 0, $0.logTailWeight ?? 0) }.max()!)
        likelihood.maximumIterations = options.maximumIterations
        var fits: [SHASHDegrees: SHASHLikelihood.Fit] = [:]
        var table: [CriterionEntry] = []
        func fitted(_ degrees: SHASHDegrees, from start: SHASHLikelihood.Fit?) -> SHASHLikelihood.Fit {
            if let known = fits[degrees] { return known }
            var fit = likelihood.fit(degrees, start: start)
            if !fit.converged, start != nil {
                let cold = likelihood.fit(degrees, start: nil)
                if cold.converged || cold.logLikelihood > fit.logLikelihood { fit = cold }
            }
            fits[degrees] = fit
            table.append(
                CriterionEntry(
                    degrees: degrees, parameterCount: degrees.parameterCount, logLikelihood: fit.logLikelihood,
                    value: options.criterion.value(
                        logLikelihood: fit.logLikelihood, parameters: degrees.parameterCount,
                        effectiveN: likelihood.effectiveN),
                    converged: fit.converged))
            return fit
        }
        /// Ordering of models: converged before not converged, then by the criterion.
        func better(_ a: SHASHDegrees, than b: SHASHDegrees) -> Bool {
            let x = table.first { $0.degrees == a }!, y = table.first { $0.degrees == b }!
            if x.converged != y.converged { return x.converged }
            return (x.value.isFinite ? x.value : .infinity) < (y.value.isFinite ? y.value : .infinity)
        }
        var best: SHASHDegrees
        if let fixed = options.fixedDegrees {
            best = fixed
            _ = fitted(fixed, from: nil)
        } else {
            let maximum = options.maximumDegrees
            best = SHASHDegrees(location: min(1, maximum.location), logScale: 0)
            var current = fitted(best, from: nil)
            for _ in 0..<4 {
                let before = best
                for parameter in 0..<4 {
                    let choices: [SHASHDegrees]
                    switch parameter {
                    case 0:
                        choices = (0...maximum.location).map {
                            var d = best; d.location = $0; return d
                        }
                    case 1:
                        choices = (0...maximum.logScale).map {
                            var d = best; d.logScale = $0; return d
                        }
                    case 2:
                        let degrees: [Int?] = [nil] + (maximum.skewness.map { Array(0...$0) } ?? [])
                        choices = degrees.map { e in
                            var d = best; d.skewness = e; return d
                        }
                    default:
                        let degrees: [Int?] = [nil] + (maximum.logTailWeight.map { Array(0...$0) } ?? [])
                        choices = degrees.map { e in
                            var d = best; d.logTailWeight = e; return d
                        }
                    }
                    for candidate in choices where candidate != best {
                        let fit = fitted(candidate, from: current)
                        if better(candidate, than: best) { best = candidate; current = fit }
                    }
                }
                if best == before { break }
            }
        }
        let chosen = fits[best]!
        let norms = chosen.norms
        let check = PercentileCurveCheck(norms: .continuous(norms))
        var warnings: [String] = []
        if !chosen.converged {
            warnings.append(
                "the chosen model (\(best)) did not converge in \(chosen.iterations) Newton iterations"
                    + (chosen.hessianDefinite ? "" : "; its information matrix is not positive definite (a flat or degenerate direction)"))
        }
        warnings += degeneracyWarnings(
            norms, degrees: best, effectiveN: likelihood.effectiveN,
            maximum: options.fixedDegrees == nil ? options.maximumDegrees : nil)
        if !check.passed { warnings.append("percentile curves cross: \(check.summary)") }
        return ContinuousNormsFit(
            norms: norms, criterion: options.criterion, table: table, logLikelihood: chosen.logLikelihood,
            converged: chosen.converged, iterations: chosen.iterations, percentileCheck: check, warnings: warnings)
    }

    /// Warnings for a fitted model that is degenerate or doubtful: extreme tail weight or scale somewhere in
    /// the range, few persons per parameter, a degree at the top of the search.
    static func degeneracyWarnings(_ norms: ContinuousNorms, degrees: SHASHDegrees, effectiveN: Double, maximum: SHASHDegrees?) -> [String] {
        var warnings: [String] = []
        var deltas: [Double] = [], sigmas: [Double] = [], epsilons: [Double] = []
        for k in 0...200 {
            let age = norms.ages.minimum + (norms.ages.maximum - norms.ages.minimum) * Double(k) / 200
            let d = norms.distribution(age: age)
            deltas.append(d.tailWeight); sigmas.append(d.scale); epsilons.append(d.skewness)
        }
        let range = "\(fixedText(norms.ages.minimum))–\(fixedText(norms.ages.maximum))"
        if let low = deltas.min(), let high = deltas.max(), low < 0.2 || high > 5 {
            warnings.append(
                "degenerate fit: the tail weight δ ranges \(fixedText(low))–\(fixedText(high)) over ages \(range) (expected within 0.2–5)")
        }
        if let low = sigmas.min(), let high = sigmas.max(), low < 0.05 || high > 20 {
            warnings.append(
                "degenerate fit: the scale σ ranges \(fixedText(low))–\(fixedText(high)) over ages \(range) (θ is in SDs of the calibration population)"
            )
        }
        if let e = epsilons.map(abs).max(), e > 3 {
            warnings.append("degenerate fit: the skewness |ε| reaches \(fixedText(e)) (expected below 3)")
        }
        let perParameter = effectiveN / Double(degrees.parameterCount)
        if perParameter < 20 {
            warnings.append(
                "only \(fixedText(perParameter)) effective persons per parameter (\(fixedText(effectiveN)) for \(degrees.parameterCount) parameters): the norms rest on too few persons"
            )
        }
        if let maximum {
            var top: [String] = []
            if degrees.location == maximum.location && maximum.location > 0 { top.append("μ \(maximum.location)") }
            if degrees.logScale == maximum.logScale && maximum.logScale > 0 { top.append("log σ \(maximum.logScale)") }
            if let e = degrees.skewness, e == maximum.skewness, e > 0 { top.append("ε \(e)") }
            if let d = degrees.logTailWeight, d == maximum.logTailWeight, d > 0 { top.append("log δ \(d)") }
            if !top.isEmpty {
                warnings.append("the criterion chose the largest degree allowed for \(top.joined(separator: ", ")); a higher degree might fit better")
            }
        }
        return warnings
    }
}

/// "1.234" (three decimals, trailing zeros kept), finite values only.
func fixedText(_ v: Double) -> String { v.isFinite ? String(format: "%.3f", v) : "\(v)" }

/// The weighted SHASH log-likelihood of a sample in the coefficients of the age polynomials, with its gradient
/// and Hessian (`SHASHDerivatives` through the Legendre basis), and fits of given degrees.
package struct SHASHLikelihood {
    let ages: AgeStandardization
    let thetas: [Double]
    /// Normalised weights (summing to `effectiveN`).
    let weights: [Double]
    /// P_0(t_i) … P_D(t_i), row-major, D = `maximumDegree`.
    let basis: [Double]
    let maximumDegree: Int
    package let effectiveN: Double
    var maximumIterations = 200

    package struct Fit {
        package var norms: ContinuousNorms
        package var logLikelihood: Double
        package var converged: Bool
        package var iterations: Int
        package var hessianDefinite: Bool
    }

    package init(ages: [Double], thetas: [Double], weights: [Double]?, maximumDegree: Int) throws {
        precondition(ages.count == thetas.count && (weights?.count ?? ages.count) == ages.count, "ages, thetas and weights must have equal lengths")
        guard ages.count >= 10 else {
            throw PsychometricsError(.insufficientData, "continuous norms need at least 10 persons, got \(ages.count)")
        }
        // One age throughout (a band of one year of age): the range is nominal, only constants are fitted.
        let low = ages.min()!, high = ages.max()! > low ? ages.max()! : low + 1
        let v = weights ?? [Double](repeating: 1, count: ages.count)
        let kish = KishDesignEffect(weights: v)
        self.effectiveN = kish.effectiveN
        self.weights = v.map { $0 * kish.effectiveN / kish.sumOfWeights }
        self.thetas = thetas
        self.ages = AgeStandardization(minimum: low, maximum: high)
        self.maximumDegree = maximumDegree
        var basis = [Double](repeating: 0, count: ages.count * (maximumDegree + 1))
        for (i, age) in ages.enumerated() {
            AgePolynomial.legendre(self.ages.standardized(age), degree: maximumDegree, into: &basis, offset: i * (maximumDegree + 1))
        }
        self.basis = basis
        let mean = zip(self.weights, thetas).reduce(0) { $0 + $1.0 * $1.1 } / effectiveN
        let variance = zip(self.weights, thetas).reduce(0) { $0 + $1.0 * ($1.1 - mean) * ($1.1 - mean) } / effectiveN
        guard variance > 1e-12 else {
            throw PsychometricsError(.insufficientData, "continuous norms need a spread of θ; every θ is \(fixedText(mean))")
        }
    }

    /// The normal start: weighted least squares for μ, then for log σ from log residuals.
    func normalStart(_ degrees: SHASHDegrees) -> [Double] {
        let stride = maximumDegree + 1
        func regression(_ values: [Double], degree: Int) -> [Double] {
            let p = degree + 1
            var xtx = [Double](repeating: 0, count: p * p), xty = [Double](repeating: 0, count: p)
            for i in 0..<values.count {
                let w = weights[i]
                for a in 0..<p {
                    let ba = basis[i * stride + a]
                    xty[a] += w * ba * values[i]
                    for b in 0..<p { xtx[a * p + b] += w * ba * basis[i * stride + b] }
                }
            }
            for a in 0..<p { xtx[a * p + a] += 1e-9 * effectiveN }
            return choleskySolve(xtx, xty, n: p) ?? ([values.reduce(0, +) / Double(values.count)] + [Double](repeating: 0, count: degree))
        }
        let mu = regression(thetas, degree: degrees.location)
        let logAbs = thetas.indices.map { i -> Double in
            var m = 0.0
            for k in 0...degrees.location { m += mu[k] * basis[i * stride + k] }
            let e = thetas[i] - m
            return 0.5 * log(e * e + 1e-8) + 0.6352
        }
        let s = regression(logAbs, degree: degrees.logScale)
        return mu + s + [Double](repeating: 0, count: (degrees.skewness.map { $0 + 1 } ?? 0) + (degrees.logTailWeight.map { $0 + 1 } ?? 0))
    }

    /// The coefficients of `fit` re-laid for `degrees` (extra coefficients 0, missing ones dropped).
    func start(_ degrees: SHASHDegrees, from fit: Fit) -> [Double] {
        func pad(_ p: AgePolynomial?, _ count: Int) -> [Double] {
            let c = p?.coefficients ?? []
            return (0..<count).map { $0 < c.count ? c[$0] : 0 }
        }
        let counts = degrees.counts
        return pad(fit.norms.location, counts[0]) + pad(fit.norms.logScale, counts[1]) + pad(fit.norms.skewness, counts[2])
            + pad(fit.norms.logTailWeight, counts[3])
    }

    func norms(_ degrees: SHASHDegrees, _ x: [Double]) -> ContinuousNorms {
        let c = degrees.counts
        var offset = 0
        func next(_ count: Int) -> AgePolynomial? {
            guard count > 0 else { return nil }
            defer { offset += count }
            return AgePolynomial(coefficients: Array(x[offset..<(offset + count)]))
        }
        let mu = next(c[0])!, s = next(c[1])!, e = next(c[2]), d = next(c[3])
        return ContinuousNorms(ages: ages, location: mu, logScale: s, skewness: e, logTailWeight: d)
    }

    /// ℓ, ∂ℓ/∂β and ∂²ℓ/∂β² at coefficients x for `degrees`.
    func evaluate(_ degrees: SHASHDegrees, _ x: [Double]) -> (value: Double, gradient: [Double], hessian: [Double]) {
        let counts = degrees.counts
        let offsets = [0, counts[0], counts[0] + counts[1], counts[0] + counts[1] + counts[2]]
        let n = x.count, stride = maximumDegree + 1
        var value = 0.0
        var gradient = [Double](repeating: 0, count: n), hessian = [Double](repeating: 0, count: n * n)
        var eta = [0.0, 0.0, 0.0, 0.0]
        var block = [Double](repeating: 0, count: 16)
        for i in 0..<thetas.count {
            let row = i * stride
            for p in 0..<4 {
                var sum = 0.0
                for k in 0..<counts[p] { sum += x[offsets[p] + k] * basis[row + k] }
                eta[p] = sum
            }
            // Guard the exponentials: a trial step far outside the domain is rejected by a non-finite value.
            guard abs(eta[1]) < 30, abs(eta[3]) < 10 else { return (-.infinity, gradient, hessian) }
            let d = SHASHDerivatives(y: thetas[i], mu: eta[0], s: eta[1], epsilon: eta[2], tau: eta[3])
            let w = weights[i]
            value += w * d.logDensity
            for p in 0..<4 where counts[p] > 0 {
                let gp = w * d.gradient(p)
                for k in 0..<counts[p] { gradient[offsets[p] + k] += gp * basis[row + k] }
                for q in p..<4 where counts[q] > 0 { block[p * 4 + q] = w * d.hessian(p, q) }
            }
            for p in 0..<4 where counts[p] > 0 {
                for q in p..<4 where counts[q] > 0 {
                    let h = block[p * 4 + q]
                    for k in 0..<counts[p] {
                        let hk = h * basis[row + k]
                        let r = (offsets[p] + k) * n + offsets[q]
                        for l in 0..<counts[q] { hessian[r + l] += hk * basis[row + l] }
                    }
                }
            }
        }
        // Blocks were accumulated for parameters p ≤ q (diagonal blocks in full): mirror the blocks below them.
        for a in 0..<n {
            for b in 0..<a where blockOf(a, offsets) > blockOf(b, offsets) { hessian[a * n + b] = hessian[b * n + a] }
        }
        guard value.isFinite, gradient.allSatisfy(\.isFinite), hessian.allSatisfy(\.isFinite) else { return (-.infinity, gradient, hessian) }
        return (value, gradient, hessian)
    }

    /// Which parameter (0–3) coefficient `a` belongs to.
    private func blockOf(_ a: Int, _ offsets: [Int]) -> Int { offsets.lastIndex { $0 <= a }! }

    /// Fits `degrees` from `start` (nil: the normal start).
    func fit(_ degrees: SHASHDegrees, start: Fit?) -> Fit {
        let x0 = start.map { self.start(degrees, from: $0) } ?? normalStart(degrees)
        var newton = NewtonMaximizer(maximumIterations: maximumIterations)
        newton.tolerance = 1e-10
        let result = newton.maximize(from: x0) { evaluate(degrees, $0) }
        return Fit(
            norms: norms(degrees, result.parameters), logLikelihood: result.value, converged: result.converged,
            iterations: result.iterations, hessianDefinite: result.hessianDefinite)
    }
}
