import Foundation

/// Marginal maximum-likelihood calibration of a correlated-factors model with simple structure: each 0/1 item
/// (2PL or 3PL) on one of K ≥ 2 factors (its domain; `FactorStructure`'s specific factors are the factors, its
/// general factor unused), the factors N(0, R) with unit variances and their correlations R estimated — the model
/// behind index scores when no general factor is wanted (mirt's `mirt(data, model)` with `COV = F1*F2*…`).
///
/// EM (`CorrelatedFactorsEngine`), SQUAREM or plain iterations and the unidimensional engines' stopping rule
/// (`EMRun`); R positive definite by construction (`FactorCorrelation`); standard errors from the observed
/// information (Oakes 1999), of the correlations by the delta method.
///
/// Integration (`integration`): up to 3 factors, exact quadrature on the product grid (`quadraturePoints` per
/// factor on [−`thetaBound`, `thetaBound`], `defaultPoints`: 31 for 2 factors, 21 for 3); from 4 factors on,
/// **adaptive quasi–Monte Carlo** (`CorrelatedFactorsEngine.adaptiveEStep`: `monteCarloPoints` Sobol nodes moved
/// onto each person's normal posterior approximation, each factor's likelihood on a fine grid of
/// `adaptiveTablePoints`), whose cost grows with K² instead of Q^K. A product grid from 4 factors on is coarse
/// (mirt's 15, 9, 7, 5 points for 3…6 factors): on ICAR16 by domain (3 factors) 15 points leave the
/// log-likelihood 2.0 below 21 or 31 points (which agree within 0.04); by item family (4 factors) 9 points leave it
/// 44.8 below 21 points and the correlations up to 0.11 too low. Setting `quadraturePoints` (or `.productGrid`)
/// keeps the grid up to `maximumFactors` factors and `maximumNodes` nodes, to compare with mirt on its own grid.
///
/// Identification: means 0 and variances 1 fixed; each factor's sign is free, so each is reported with its
/// items' slopes summing positive (flipping a factor flips its correlations).
///
/// **Online calibration** (`fixed`): items of a calibrated bank held at their values fix their factors' scales and
/// signs, and the new items are estimated on them, as the unidimensional engine's fixed-parameter calibration
/// (Kim 2006, *JEM* 43) does. The factor correlations are estimated on the new sample (started at the identity),
/// the factors' means and variances stay (0, 1): the sample is taken to come from the bank's population.
package struct CorrelatedFactorsCalibrator: Sendable {
    /// Read: `model` (2PL or 3PL), `thetaBound`, tolerance, cycle limit, acceleration, workers, standard errors,
    /// the slope bound, the minimum responses per item, `slopePrior`, `guessingPrior` (3PL). Not read:
    /// `quadraturePoints` (this type's own, per factor), the E-step strategy, fixed items, the memory budget.
    package var options: CalibrationOptions
    /// Points per factor of the product grid; nil: `defaultPoints(factors:)`.
    package var quadraturePoints: Int?
    /// How the E-step integrates over the factors.
    package var integration: Integration
    /// The adaptive quasi–Monte Carlo nodes per person; nil: `defaultMonteCarloPoints`.
    package var monteCarloPoints: Int?
    /// Starting values EM runs from (1…`StartRecord.maximumStarts`): the default start (R = I), then seeded
    /// perturbations of it (`StartPerturbation`: the items', and R's free values by N(0, 0.3²) each); the run with
    /// the highest log-likelihood plus log prior is kept. Each run costs a calibration.
    package var starts = 1

    /// How the E-step integrates over the factors.
    package enum Integration: String, Sendable, CaseIterable {
        /// The product grid up to 3 factors, or whenever `quadraturePoints` is set; adaptive quasi–Monte Carlo
        /// from 4 factors on, or whenever `monteCarloPoints` is set (and `quadraturePoints` is not).
        case automatic = "auto"
        /// Exact quadrature on the product grid (Q^K nodes).
        case productGrid = "grid"
        /// Adaptive quasi–Monte Carlo (`CorrelatedFactorsEngine.adaptiveEStep`).
        case adaptiveQuasiMonteCarlo = "qmc"
    }

    /// The most factors, and the most nodes of the product grid.
    package static let maximumFactors = 6
    package static let maximumNodes = 250_000
    /// The most factors of the adaptive quasi–Monte Carlo E-step (the Sobol dimensions this build carries).
    package static let maximumAdaptiveFactors = 12
    /// Adaptive nodes per person a caller may ask for: powers of two in 64…65,536 (Sobol points balance in blocks
    /// of 2^m).
    package static let allowedMonteCarloPoints = 64...65_536
    package static let defaultMonteCarloPoints = 1_024

    /// Why `m` adaptive nodes cannot be used (not a power of two in `allowedMonteCarloPoints`), or nil.
    static func monteCarloPointsProblem(_ m: Int) -> String? {
        allowedMonteCarloPoints.contains(m) && m & (m - 1) == 0
            ? nil
            : "\(m) quasi–Monte Carlo points; a power of two in \(allowedMonteCarloPoints.lowerBound)…\(allowedMonteCarloPoints.upperBound)"
    }
    /// The fine grid each factor's likelihood is tabulated on for the adaptive E-step: 241 points on
    /// [−`thetaBound`, `thetaBound`] (0.05 apart at the default bound 6).
    package static let adaptiveTablePoints = 241
    /// The most free parameters standard errors are computed for (two E-steps each).
    package static let maximumStandardErrorParameters = 2_000

    /// The default points per factor: 31, 21, 15, 9 and 7 for 2…6 factors (see the type's documentation).
    package static func defaultPoints(factors: Int) -> Int {
        switch factors {
        case ...2: 31
        case 3: 21
        case 4: 15
        case 5: 9
        default: 7
        }
    }

    package init(
        options: CalibrationOptions = CalibrationOptions(model: .twoPL), quadraturePoints: Int? = nil,
        integration: Integration = .automatic, monteCarloPoints: Int? = nil, starts: Int = 1
    ) {
        self.starts = starts
        self.options = options
        self.quadraturePoints = quadraturePoints
        self.integration = integration
        self.monteCarloPoints = monteCarloPoints
    }

    /// The integration a fit on `factors` factors uses.
    package func resolvedIntegration(factors: Int) -> Integration {
        switch integration {
        case .automatic: quadraturePoints != nil || (factors <= 3 && monteCarloPoints == nil) ? .productGrid : .adaptiveQuasiMonteCarlo
        default: integration
        }
    }

    /// - Parameters:
    ///   - structure: each item's factor (`specificFactorOfItem`); every item of the data must have one.
    ///   - fixed: items held at their values by id (each `factor` indexing `structure.specificFactors`, as the
    ///     structure gives it); the other data items are estimated. Fixed ids not among the calibrated items are
    ///     named in a warning.
    /// - Throws: `PsychometricsError` `.invalidOptions` for options outside their ranges, a model other than 2PL or
    ///   3PL, items in more than two categories, an item without a factor, a fixed item whose factor is not the
    ///   structure's or whose parameters are not finite, more than `maximumFactors` factors or a grid beyond
    ///   `maximumNodes`; `.insufficientData` when fewer than 2 items or persons remain, fewer than 2 factors have
    ///   items or every item is fixed; `.numericalFailure` when the iterations diverge.
    package func calibrate(
        _ input: ResponseMatrix, structure: FactorStructure, fixed: [String: CorrelatedFactorsResult.Item] = [:],
        progress: ((CalibrationProgress) -> Void)? = nil
    ) throws -> CorrelatedFactorsResult {
        let started = DispatchTime.now().uptimeNanoseconds
        var problems = options.validationProblems()
        if options.model != .twoPL && options.model != .threePL {
            problems.append("the correlated-factors model's items are 2PL or 3PL, not \(options.model.rawValue)")
        }
        for (id, item) in fixed.sorted(by: { $0.key < $1.key }) {
            if let own = structure.specificFactorOfItem[id], own != item.factor {
                let named = { (f: Int) in f >= 0 && f < structure.specificFactors.count ? structure.specificFactors[f] : "#\(f)" }
                problems.append("fixed item \(id)'s factor (\(named(item.factor))) is not the structure's (\(named(own)))")
            }
            if !(item.slope.isFinite && item.intercept.isFinite && (0..<1).contains(item.guessing)) {
                problems.append("fixed item \(id) has a parameter that is not finite or c outside [0, 1)")
            }
        }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid options: " + problems.joined(separator: "; ")) }
        let unassigned = input.itemIDs.filter { structure.specificFactorOfItem[$0] == nil }
        guard unassigned.isEmpty else {
            throw PsychometricsError(
                .invalidOptions,
                "\(unassigned.count) item\(unassigned.count == 1 ? " has" : "s have") no factor (\(unassigned.prefix(10).joined(separator: ", "))\(unassigned.count > 10 ? ", …" : "")); in the correlated-factors model every item loads on one factor"
            )
        }
        var warnings: [String] = []
        let screen = try ZeroOneItemScreen(input, minimumResponses: options.minimumItemResponses, model: "correlated-factors")
        let kept = screen.data
        // Factors with items, in the structure's order; the engine's numbering groups items by factor.
        let used = structure.specificFactors.indices.filter { f in kept.itemIDs.contains { structure.specificFactorOfItem[$0] == f } }
        guard used.count >= 2 else {
            throw PsychometricsError(
                .insufficientData,
                "\(used.count) factor has calibrated items; the correlated-factors model needs at least 2 (the unidimensional model fits one)")
        }
        let k = used.count, method = resolvedIntegration(factors: k)
        let points: Int, nodes: Double
        var qmcNodes: [Double]? = nil
        if method == .adaptiveQuasiMonteCarlo {
            guard k <= Self.maximumAdaptiveFactors else {
                throw PsychometricsError(
                    .invalidOptions,
                    "\(k) factors; the adaptive quasi–Monte Carlo E-step is limited to \(Self.maximumAdaptiveFactors) (its Sobol dimensions)")
            }
            let m = monteCarloPoints ?? Self.defaultMonteCarloPoints
            if let problem = Self.monteCarloPointsProblem(m) { throw PsychometricsError(.invalidOptions, problem) }
            points = Self.adaptiveTablePoints
            nodes = Double(m)
            qmcNodes = SobolSequence.balancedNormalPoints(count: m, dimensions: k)
        } else {
            guard k <= Self.maximumFactors else {
                throw PsychometricsError(
                    .invalidOptions,
                    "\(k) factors; the product grid is limited to \(Self.maximumFactors) (its nodes grow as Q^K; the adaptive quasi–Monte Carlo E-step takes up to \(Self.maximumAdaptiveFactors))"
                )
            }
            points = quadraturePoints ?? Self.defaultPoints(factors: k)
            nodes = pow(Double(points), Double(k))
            guard points >= 3, points <= QuadratureGrid.allowedPointCounts.upperBound, nodes <= Double(Self.maximumNodes) else {
                throw PsychometricsError(
                    .invalidOptions,
                    "\(points) points per factor on \(k) factors is \(Int(min(nodes, 1e15))) nodes; at least 3 points and at most \(Self.maximumNodes) nodes"
                )
            }
        }
        let factorNames = used.map { structure.specificFactors[$0] }
        let factorOf = kept.itemIDs.map { used.firstIndex(of: structure.specificFactorOfItem[$0]!)! }
        let (order, engineIndex, groupOf, groups) = BifactorEngine.grouping(factorOf.map { Optional($0) }, specificCount: k)
        let factorItems = Array(groups.dropFirst()), engineFactor = groupOf.map { $0 - 1 }
        for f in 0..<k where factorItems[f].count == 1 {
            warnings.append("factor \(factorNames[f]) has one item: its slope is identified only through the factor correlations")
        }
        let data = kept.renumberingItems(engineIndex, itemIDs: order.map { kept.itemIDs[$0] })
        let (isFixed, fixedNotInData) = try fixedItemMask(itemIDs: data.itemIDs, fixedIDs: fixed.keys, distribution: "N(0, R)", warnings: &warnings)
        for f in 0..<k where !factorItems[f].isEmpty && factorItems[f].allSatisfy({ !isFixed[$0] }) && isFixed.contains(true) {
            warnings.append("factor \(factorNames[f]) has no fixed item: its items are on the N(0, 1) scale of this sample, not linked to the bank's")
        }

        // Starts: a = 1, c at the guessing prior's mode (0.2 without one), d from p by the logistic–normal
        // approximation, R = I.
        let threePL = options.model == .threePL, totals = data.categoryTotals()
        let guessingStart = threePL ? (options.guessingPrior.map { $0.mode } ?? 0.2) : 0
        let start = (0..<data.itemCount).map { e -> BifactorItem in
            if let item = fixed[data.itemIDs[e]] {
                return BifactorItem(
                    generalSlope: item.slope, intercept: item.intercept, guessing: item.guessing, estimatesGuessing: item.estimatesGuessing)
            }
            let n = Double(totals[e][0] + totals[e][1]), p = min(max(Double(totals[e][1]) / n, 0.005), 0.995)
            let pStar = min(max((p - guessingStart) / (1 - guessingStart), 0.02), 0.98)
            return BifactorItem(
                generalSlope: 1, intercept: Logistic.logit(pStar) * (1 + Double.pi / 8).squareRoot(),
                guessing: guessingStart, estimatesGuessing: threePL)
        }
        let grid = QuadratureGrid(validatedCount: points, bound: options.thetaBound)
        let model = FactorCorrelation(k: k, grid: grid)
        func engine(start k: Int) -> CorrelatedFactorsEngine {
            var items = start, correlation = [Double](repeating: 0, count: model.parameterCount)
            if k > 0 {
                var perturbation = StartPerturbation(start: k)
                for e in items.indices where !isFixed[e] {
                    items[e].generalSlope = perturbation.slope(items[e].generalSlope)
                    items[e].intercept = perturbation.shift(items[e].intercept)
                }
                correlation = correlation.map { perturbation.shift($0, by: 0.3) }
            }
            var engine = CorrelatedFactorsEngine(
                items: items, correlation: correlation, data: data, grid: grid,
                factor: engineFactor, factorItems: factorItems, workers: options.workers,
                maximumSlope: options.maximumSlope, slopePrior: options.slopePrior,
                guessingPrior: threePL ? options.guessingPrior : nil, nodes: qmcNodes)
            if isFixed.contains(true) { engine.fixed = isFixed }
            return engine
        }
        guard (1...StartRecord.maximumStarts).contains(starts) else {
            throw PsychometricsError(.invalidOptions, "starts must be 1…\(StartRecord.maximumStarts), got \(starts)")
        }
        let (run, startRecords) = try EMRun.best(of: starts, engine: engine(start:), options: options, started: started, progress: progress)
        if let warning = run.nonConvergence { warnings.append(warning) }
        var engine = run.engine
        // Each factor's sign: its slopes summing positive (its correlations flip with it: R → D R D); a factor
        // with fixed items keeps the sign they give it.
        var r = model.matrix(engine.correlation)
        for f in 0..<k
        where !factorItems[f].contains(where: { isFixed[$0] }) && factorItems[f].reduce(0.0, { $0 + engine.items[$1].generalSlope }) < 0 {
            for e in factorItems[f] { engine.items[e].generalSlope.negate() }
            for g in 0..<k where g != f { r[f * k + g].negate(); r[g * k + f].negate() }
        }
        engine.correlation = model.parameters(of: r) ?? engine.correlation
        let final = engine.eStep()

        let parameterCount = engine.workingParameters().count, correlationStart = parameterCount - model.parameterCount
        let covariance = engine.oakesCovariance(
            standardErrors: options.standardErrors, maximumParameters: Self.maximumStandardErrorParameters,
            cycle: run.cycles, logLikelihood: final.logLikelihood, started: started, workers: engine.workers,
            progress: progress, warnings: &warnings)
        // Correlations' SEs by the delta method: J = ∂ρ/∂x by central differences.
        var correlationSE = [Double](repeating: 0, count: k * k)
        if let covariance {
            let x = engine.correlation, p = x.count
            var jacobian = [[Double]](repeating: [], count: p)
            for c in 0..<p {
                let h = 1e-6 * max(1, abs(x[c]))
                var up = x, down = x
                up[c] += h; down[c] -= h
                let ru = model.matrix(up), rd = model.matrix(down)
                jacobian[c] = (0..<(k * k)).map { (ru[$0] - rd[$0]) / (2 * h) }
            }
            for cell in 0..<(k * k) where cell / k != cell % k {
                var v = 0.0
                for a in 0..<p {
                    for b in 0..<p { v += jacobian[a][cell] * jacobian[b][cell] * covariance.entry(correlationStart + a, correlationStart + b) }
                }
                correlationSE[cell] = max(0, v).squareRoot()
            }
        }
        var itemsOut = [CorrelatedFactorsResult.Item?](repeating: nil, count: data.itemCount)
        var index = 0
        for e in 0..<data.itemCount {
            let item = engine.items[e], m = item.workingParameterCount
            let se = item.workingStandardErrors(covariance: covariance, offset: index, isFixed: isFixed[e])
            if !isFixed[e] { index += m }
            let n = totals[e][0] + totals[e][1]
            itemsOut[order[e]] = .init(
                itemID: data.itemIDs[e], factor: Int(engineFactor[e]), slope: item.generalSlope, intercept: item.intercept,
                guessing: item.guessing, estimatesGuessing: item.estimatesGuessing,
                slopeStandardError: se[0], interceptStandardError: se[1], guessingStandardError: item.estimatesGuessing ? se[2] : nil,
                responses: n, proportionCorrect: Double(totals[e][1]) / Double(max(1, n)),
                atSlopeBound: !isFixed[e] && abs(item.generalSlope) >= options.maximumSlope * (1 - 1e-9), isFixed: isFixed[e])
        }
        let items = itemsOut.map { $0! }
        let atBound = items.filter(\.atSlopeBound).map(\.itemID)
        if !atBound.isEmpty {
            warnings.append(
                "\(atBound.count) item\(atBound.count == 1 ? "" : "s") reached the slope bound \(options.maximumSlope.formatted6) (\(atBound.prefix(10).joined(separator: ", "))): estimates are at the bound"
            )
        }
        let correlations = model.matrix(engine.correlation)
        if let (f, g) = (0..<k).flatMap({ f in (0..<f).map { (f, $0) } }).first(where: { abs(correlations[$0.0 * k + $0.1]) > 0.95 }) {
            warnings.append(
                "factors \(factorNames[g]) and \(factorNames[f]) correlate \(String(format: "%.3f", correlations[f * k + g])): nearly one factor (a model with fewer factors may fit as well)"
            )
        }
        warnings += screen.warnings
        let n = Double(data.personCount), ll = final.logLikelihood
        var result = CorrelatedFactorsResult(
            items: items, factors: factorNames, model: options.model, correlations: correlations,
            correlationStandardErrors: covariance == nil ? nil : correlationSE,
            logLikelihood: ll, parameterCount: parameterCount, aic: -2 * ll + 2 * Double(parameterCount),
            bic: -2 * ll + log(n) * Double(parameterCount),
            integration: method, quadraturePoints: points, nodes: Int(nodes), cycles: run.cycles, eSteps: run.eSteps, converged: run.converged,
            personCount: data.personCount, excludedItems: screen.excluded.map(\.itemID), fixedItemsNotInData: fixedNotInData, warnings: warnings,
            elapsedSeconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        result.starts = startRecords
        return result
    }
}

/// The outcome of a `CorrelatedFactorsCalibrator` run.
package struct CorrelatedFactorsResult: Sendable {
    package struct Item: Sendable {
        package var itemID: String
        /// Its factor, an index into `factors`.
        package var factor: Int
        /// P(u = 1 | θ) = c + (1 − c) σ(slope · θ_factor + intercept).
        package var slope: Double
        package var intercept: Double
        package var guessing: Double
        package var estimatesGuessing: Bool
        package var slopeStandardError: Double?
        package var interceptStandardError: Double?
        package var guessingStandardError: Double?
        package var responses: Int
        package var proportionCorrect: Double
        package var atSlopeBound: Bool
        /// Held at its `fixed` value (online calibration): no standard errors.
        package var isFixed = false

        /// An item without estimation details (a true item of a simulation: no standard errors, no responses).
        package init(itemID: String, factor: Int, slope: Double, intercept: Double, guessing: Double = 0, estimatesGuessing: Bool = false) {
            self.init(
                itemID: itemID, factor: factor, slope: slope, intercept: intercept, guessing: guessing, estimatesGuessing: estimatesGuessing,
                slopeStandardError: nil, interceptStandardError: nil, guessingStandardError: nil, responses: 0, proportionCorrect: .nan,
                atSlopeBound: false)
        }

        init(
            itemID: String, factor: Int, slope: Double, intercept: Double, guessing: Double, estimatesGuessing: Bool, slopeStandardError: Double?,
            interceptStandardError: Double?, guessingStandardError: Double?, responses: Int, proportionCorrect: Double, atSlopeBound: Bool,
            isFixed: Bool = false
        ) {
            self.itemID = itemID
            self.factor = factor
            self.slope = slope
            self.intercept = intercept
            self.guessing = guessing
            self.estimatesGuessing = estimatesGuessing
            self.slopeStandardError = slopeStandardError
            self.interceptStandardError = interceptStandardError
            self.guessingStandardError = guessingStandardError
            self.responses = responses
            self.proportionCorrect = proportionCorrect
            self.atSlopeBound = atSlopeBound
            self.isFixed = isFixed
        }
    }

    /// In the data's item order (excluded items left out).
    package var items: [Item]
    /// The factors with items, in the structure's order.
    package var factors: [String]
    package var model: IRTModel
    /// R, K × K row-major (1 on the diagonal), and the correlations' standard errors (0 on the diagonal; nil
    /// without standard errors).
    package var correlations: [Double]
    package var correlationStandardErrors: [Double]?
    package var logLikelihood: Double
    /// Free parameters: a, d (and c) per item and K(K − 1)/2 correlations.
    package var parameterCount: Int
    package var aic: Double
    package var bic: Double
    /// The E-step's integration (never `.automatic`).
    package var integration: CorrelatedFactorsCalibrator.Integration
    /// The product grid's points per factor and its Q^K nodes; for adaptive quasi–Monte Carlo, the fine grid's
    /// points per factor (`adaptiveTablePoints`) and the nodes per person.
    package var quadraturePoints: Int
    package var nodes: Int
    package var cycles: Int
    package var eSteps: Int
    package var converged: Bool
    package var personCount: Int
    package var excludedItems: [String]
    /// `fixed` ids not among the calibrated items of the data.
    package var fixedItemsNotInData: [String] = []
    /// Every start's run (`starts` of the calibrator; one record for a single start).
    package var starts: [StartRecord] = []
    package var warnings: [String]
    package var elapsedSeconds: Double
}
