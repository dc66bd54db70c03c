import Foundation

/// Why a calibration could not run at all (as opposed to a fit that did not converge, which is a result).

/// Marginal maximum-likelihood item calibration by the EM algorithm of Bock & Aitkin (1981).
///
/// θ ~ N(0, 1) on a fixed rectangular quadrature grid (Rasch: N(0, σ²) with σ estimated). Each cycle:
/// - E-step: posterior weights of every person at every node give expected counts
///   r̄ⱼ(θ_q) (correct) and n̄ⱼ(θ_q) (answered); dense data use BLAS products, sparse data visit answered
///   cells only.
/// - M-step: per item, Fisher scoring with analytic derivatives maximises
///   Σ_q r̄ log P(θ_q) + (n̄ − r̄) log(1 − P(θ_q)) + log prior (Rasch/1PL: jointly with the shared slope).
///
/// Stops when the largest change in (a, d, c) in one cycle falls below the tolerance or at the cycle limit
/// (then `converged` is false and a warning says so). Standard errors come from the observed information by
/// Louis' (1982) formula, transformed to (a, b, c) by the delta method.
///
/// **Acceleration.** By default (`CalibrationOptions.acceleration == .squarem`) the cycles are accelerated by
/// SQUAREM (Varadhan & Roland 2008; `SQUAREM`): after two cycles x₀ → x₁ → x₂ the working parameters are
/// extrapolated along them and one cycle runs from there, kept only when the extrapolated point does not lower
/// the marginal log-likelihood plus log priors below x₁'s (else the run goes on from x₂). Same stopping rule,
/// same optimum, fewer E-steps; `.none` runs plain EM.
///
/// **Fixed-parameter ("online") calibration.** With `options.fixedItems`, those items keep their bank values
/// and define the scale, the others are estimated on it, and the latent distribution is estimated: the grid
/// is the standard one in z with θ_q = μ + σ z_q (the N(μ, σ²) weights are then the N(0, 1) weights of the
/// z grid), and after each M-step for the free items
/// ```
/// μ ← (1/N) Σᵢ E[θ | uᵢ],      σ² ← (1/N) Σᵢ E[θ² | uᵢ] − μ²
/// ```
/// (Bock & Aitkin 1981, sec. 4; Mislevy 1984), so the nodes move with the distribution. Convergence also
/// requires |Δμ| and |Δσ| below the tolerance. Fixed items are not screened (an item everybody got right
/// still tells about θ); fixed ids no person answered are listed in `fixedItemsNotInData`; at least one fixed
/// item must be answered. The parameter count for AIC/BIC is the free items' parameters + 2 (μ, σ); standard
/// errors come from the Louis information over the free parameters and (μ, σ), treating the fixed
/// parameters as known — which understates the free items' SEs slightly (the bank's own error is left out).
///
/// Thread-safe and free of global state; prints nothing.
public struct EMCalibrator: Sendable {
    public var options: CalibrationOptions

    public init(options: CalibrationOptions) { self.options = options }

    /// Calibrates `input`. `progress`, when given, is called on the calling thread after every EM cycle and
    /// once before the standard errors (`CalibrationProgress`); it must return quickly.
    /// - Throws: `PsychometricsError`: `.invalidOptions` for options out of range, `.invalidResponse` for an item
    ///   with more than two categories, `.insufficientData` when too few items or persons have responses,
    ///   `.resourceLimit` when the fit would need more memory than `CalibrationOptions.maxMemoryBytes`. Non-
    ///   convergence is not an error: it is `CalibrationResult.converged` with a warning.
    public func calibrate(_ input: ResponseMatrix, progress: ((CalibrationProgress) -> Void)? = nil) throws -> CalibrationResult {
        let started = DispatchTime.now().uptimeNanoseconds
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid options: " + problems.joined(separator: "; ")) }
        if let j = input.categoryCounts.firstIndex(where: { $0 != 2 }) {
            throw PsychometricsError(
                .invalidResponse,
                "item \(input.itemIDs[j]) has \(input.categoryCounts[j]) categories; the dichotomous models take 0/1 items (graded, partial-credit and nominal items: `PolytomousCalibrator`)"
            )
        }
        guard input.personCount > 0, input.cellCount > 0 else {
            throw PsychometricsError(
                .insufficientData, "no responses to calibrate: the data hold \(input.personCount) persons and \(input.cellCount) answered cells")
        }

        // Screen items that carry no information about their parameters (fixed items need none: they are
        // only dropped when nobody answered them).
        let totals = input.itemTotals()
        var keep = [Bool](repeating: true, count: input.itemCount)
        var excluded: [ExcludedItem] = []
        var unansweredFixed: [String] = []
        let fixedItems = options.fixedItems
        for j in 0..<input.itemCount {
            let n = totals.responses[j], r = totals.correct[j]
            var reason: String?
            if fixedItems[input.itemIDs[j]] != nil {
                if n == 0 { keep[j] = false; unansweredFixed.append(input.itemIDs[j]) }
                continue
            }
            if n < options.minimumItemResponses {
                reason = "only \(n) response\(n == 1 ? "" : "s") (minimum \(options.minimumItemResponses))"
            } else if r == n {
                reason = "all \(n) responses correct: the difficulty has no finite estimate"
            } else if r == 0 {
                reason = "all \(n) responses incorrect: the difficulty has no finite estimate"
            }
            if let reason {
                keep[j] = false
                excluded.append(ExcludedItem(itemID: input.itemIDs[j], responses: n, correct: r, reason: reason))
            }
        }
        let fixedNotInData = try fixedItemsNobodyAnswered(fixedItems.keys, dataItems: input.itemIDs, unanswered: unansweredFixed)
        var data = input
        var excludedPersons: [String] = []
        if !excluded.isEmpty || !unansweredFixed.isEmpty {
            let kept = input.keepingItems(keep)
            data = kept.matrix
            excludedPersons = kept.droppedPersons.map { input.personIDs[$0] }
        }
        let minimumItems = 2
        guard data.itemCount >= minimumItems else {
            let listed = excluded.prefix(5).map { "\($0.itemID): \($0.reason)" }.joined(separator: "; ")
            throw PsychometricsError(
                .insufficientData,
                "only \(data.itemCount) of \(input.itemCount) items can be calibrated (at least \(minimumItems) needed)"
                    + (listed.isEmpty ? "" : "; excluded: \(listed)"))
        }
        guard data.personCount >= 2 else {
            throw PsychometricsError(.insufficientData, "only \(data.personCount) person has responses to calibrated items; at least 2 are needed")
        }

        let useDense: Bool
        switch options.eStep {
        case .dense: useDense = true
        case .sparse: useDense = false
        case .automatic: useDense = data.density >= 0.15 && Double(data.personCount) * Double(data.itemCount) <= 4e8
        }
        // Within the memory budget: fewer workers when their per-worker buffers are what does not fit, else refuse.
        var options = self.options
        var budgetNote: String?
        if let limit = options.maxMemoryBytes {
            func need(_ workers: Int) -> Int {
                var o = options
                o.workers = workers
                return Self.estimatedMemoryBytes(
                    persons: data.personCount, items: data.itemCount, cells: data.cellCount,
                    options: o, dense: useDense, complete: data.isComplete)
            }
            var workers = options.workers
            while workers > 1 && need(workers) > limit { workers -= 1 }
            if workers < options.workers {
                budgetNote =
                    "\(workers) of \(options.workers) worker threads used: each needs its own expected counts, and more do not fit the memory limit of \(limit >> 20) MiB"
                options.workers = workers
            }
            let need = need(workers)
            if need > limit {
                throw PsychometricsError(
                    .resourceLimit,
                    "the fit needs about \(need >> 20) MiB of memory (\(data.personCount) persons, \(data.itemCount) items, "
                        + "\(data.cellCount) responses\(useDense ? ", dense E-step" : "")), more than the limit of \(limit >> 20) MiB; "
                        + "raise \(options.naming.name("max_memory"))\(useDense ? ", use \(options.naming.name("e_step")) sparse" : "")"
                        + (options.standardErrors ? " or skip standard errors\(options.naming == .option ? " (--no-se)" : "")" : ""))
            }
        }
        let fixed: [ItemParameters?] = fixedItems.isEmpty ? [] : data.itemIDs.map { fixedItems[$0] }
        // Rasch free items have a = 1 on the bank's θ scale; 1PL free items take the fixed items' common slope.
        let commonSlope = options.model == .onePL ? (fixed.compactMap { $0?.discrimination }.first ?? 1) : 1
        var run = EMRun(
            engine: EMEngine(
                model: options.model, options: options, data: data, useDense: useDense,
                fixed: fixed, commonSlope: commonSlope),
            options: options, started: started, progress: progress)
        switch options.acceleration {
        case .none: try run.runPlain()
        case .squarem: try run.runSQUAREM()
        }
        let engine = run.engine
        let cycles = run.cycles, converged = run.converged, change = run.change
        var warnings: [String] = budgetNote.map { [$0] } ?? []
        func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
        if !converged {
            warnings.append(nonConvergenceWarning(cycles: cycles, change: change, tolerance: options.tolerance))
        }

        // Log-likelihood (and SEs) at the final estimates.
        let final = engine.eStep()
        var covariance: CholeskyInverse?
        var seMethod = "not computed (disabled)"
        let seStarted = DispatchTime.now().uptimeNanoseconds
        if options.standardErrors {
            progress?(
                CalibrationProgress(
                    phase: .standardErrors, cycle: cycles, logLikelihood: final.logLikelihood, largestChange: change,
                    elapsedSeconds: seconds(since: started)))
            var info = engine.observedInformation(final)
            let P = engine.freeParameterCount
            if info.allSatisfy(\.isFinite), let inverse = CholeskyInverse(upperTriangleOf: &info, n: P, workers: engine.workers) {
                covariance = inverse
                seMethod = "observed information (Louis 1982), delta method to a, b, c"
            } else {
                seMethod = "unavailable: the observed information matrix is not positive definite"
                warnings.append(ParameterCovariance.notPositiveDefiniteWarning)
            }
        }

        let seSeconds = Double(DispatchTime.now().uptimeNanoseconds - seStarted) / 1e9
        let calibrated = buildItems(engine: engine, data: data, covariance: covariance, warnings: &warnings)
        var latentSD = 1.0, latentSE: Double?
        var latentMean = 0.0, latentMeanSE: Double?
        let k: Int
        if engine.estimatesLatent {
            latentMean = engine.latentMean
            latentSD = engine.latentSD
            if let covariance {
                latentMeanSE = covariance.entry(engine.latentMeanIndex, engine.latentMeanIndex).squareRoot()
                latentSE = covariance.entry(engine.latentSDIndex, engine.latentSDIndex).squareRoot()
            }
            k = engine.freeParameterCount
        } else {
            if options.model == .rasch {
                latentSD = engine.slope(0)
                if let covariance { latentSE = covariance.entry(0, 0).squareRoot() }
            }
            k = options.model.parameterCount(itemCount: data.itemCount)
        }
        let ll = final.logLikelihood
        if !excludedPersons.isEmpty {
            warnings.append("\(excludedPersons.count) person\(excludedPersons.count == 1 ? "" : "s") excluded: no responses to any calibrated item")
        }
        for item in excluded { warnings.append("item \(item.itemID) excluded: \(item.reason)") }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        var result = CalibrationResult(
            model: options.model, items: calibrated, excludedItems: excluded, excludedPersons: excludedPersons,
            personCount: data.personCount, cellCount: data.cellCount, latentSD: latentSD, latentSDStandardError: latentSE,
            logLikelihood: ll, parameterCount: k, aic: -2 * ll + 2 * Double(k), bic: -2 * ll + Double(k) * log(Double(data.personCount)),
            cycles: cycles, converged: converged, lastChange: change, logLikelihoodTrace: run.logLikelihoodTrace,
            eStep: useDense ? .dense : .sparse, standardErrorMethod: seMethod, options: options,
            warnings: warnings, elapsedSeconds: elapsed, standardErrorSeconds: seSeconds, timing: run.timing)
        result.eSteps = run.eSteps
        result.logPosteriorTrace = run.logPosteriorTrace
        result.extrapolations = run.extrapolations
        result.rejectedExtrapolations = run.rejectedExtrapolations
        if engine.estimatesLatent {
            result.latentMean = latentMean
            result.latentMeanStandardError = latentMeanSE
            result.fixedItemIDs = calibrated.filter(\.isFixed).map(\.itemID)
            result.freeItemIDs = calibrated.filter { !$0.isFixed }.map(\.itemID)
            result.fixedItemsNotInData = fixedNotInData
        }
        return result
    }

    /// Converts working parameters to (a, b, c) with delta-method standard errors and flags.
    private func buildItems(engine: EMEngine, data: ResponseMatrix, covariance: CholeskyInverse?, warnings: inout [String]) -> [CalibratedItem] {
        let totals = data.itemTotals()
        let model = options.model
        var items: [CalibratedItem] = []
        /// √(gᵀ Σ g) for a gradient g given as (global index, value) pairs; nil when unusable.
        func se(_ gradient: [(Int, Double)]) -> Double? {
            guard let cov = covariance else { return nil }
            var v = 0.0
            for (x, gx) in gradient { for (y, gy) in gradient { v += gx * gy * cov.entry(x, y) } }
            return v > 0 && v.isFinite ? v.squareRoot() : nil
        }
        for j in 0..<data.itemCount {
            if let bank = engine.fixedParameters[j] {
                // Reported exactly as given (no round trip through the working parameters).
                let n = totals.responses[j]
                var item = CalibratedItem(
                    itemID: data.itemIDs[j], parameters: bank, standardErrors: ItemStandardErrors(),
                    responses: n, pValue: Double(totals.correct[j]) / Double(n), flags: ["fixed"])
                item.isFixed = true
                items.append(item)
                continue
            }
            let s = engine.s[j], d = engine.d[j]
            let a = engine.slope(j), c = engine.asymptote(j)
            let iS = engine.globalIndex(item: j, parameter: 0), iD = engine.globalIndex(item: j, parameter: 1)
            let aS = engine.logSlope ? a : 1
            var params: ItemParameters
            var errors = ItemStandardErrors()
            switch model {
            case .rasch:
                // θ = σZ: P = σ(σZ + d) = σ(θ + d), so b = −d and a = 1 (with fixed items the nodes are θ).
                params = ItemParameters(discrimination: 1, difficulty: -d)
                errors.difficulty = se([(iD, -1)])
            case .onePL where engine.estimatesLatent:
                // The common slope is the fixed items' (not estimated): b = −d/a.
                params = ItemParameters(discrimination: a, difficulty: -d / a)
                errors.difficulty = se([(iD, -1 / a)])
            case .onePL, .twoPL, .threePL:
                params = ItemParameters(discrimination: a, difficulty: -d / a, guessing: c)
                errors.discrimination = se([(iS, aS)])
                errors.difficulty = se([(iS, d * aS / (a * a)), (iD, -1 / a)])
                if model == .threePL {
                    errors.guessing = se([(engine.globalIndex(item: j, parameter: 2), c * (1 - c))])
                }
            }
            _ = s
            var flags: [String] = []
            if model.hasItemSlopes {
                if abs(a) >= options.maximumSlope * 0.999 { flags.append("slope at bound \(options.maximumSlope.formatted6)") }
                if a < 0 { flags.append("negative slope") }
                if engine.logSlope && a <= 1.001e-3 { flags.append("slope at lower bound") }
            }
            if model == .threePL && c < 1e-6 { flags.append("guessing at 0") }
            if engine.estimatesLatent {
                if params.difficulty < engine.nodes.first! || params.difficulty > engine.nodes.last! {
                    flags.append("difficulty outside the quadrature range")
                }
            } else if abs(params.difficulty) > engine.grid.points.last! {
                flags.append("difficulty outside the quadrature range")
            }
            if covariance != nil && (errors.difficulty == nil || (model.hasItemSlopes && errors.discrimination == nil)) {
                flags.append("standard error unavailable")
            }
            if !flags.isEmpty { warnings.append("item \(data.itemIDs[j]): " + flags.joined(separator: ", ")) }
            let n = totals.responses[j]
            items.append(
                CalibratedItem(
                    itemID: data.itemIDs[j], parameters: params, standardErrors: errors,
                    responses: n, pValue: Double(totals.correct[j]) / Double(n), flags: flags))
        }
        return items
    }
}
