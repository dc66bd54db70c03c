import Foundation

/// Marginal maximum-likelihood calibration of a bifactor model (Gibbons & Hedeker 1992; `BifactorItem`): 0/1
/// items, 2PL or 3PL, each on the general factor and at most one specific factor (`FactorStructure`), the
/// factors independent N(0, 1). EM with the dimension reduction (`BifactorEngine`: the E-step integrates over
/// the general factor × one specific factor at a time, so its cost is linear in the number of specific
/// factors), SQUAREM or plain iterations and the unidimensional engines' stopping rule (`EMRun`), standard
/// errors from the observed information (Oakes 1999). Dense or missing-by-design data.
///
/// Quadrature: `options.quadraturePoints` per dimension on [−`thetaBound`, `thetaBound`]; the default
/// (`defaultOptions`) is mirt's for a two-dimensional integral, 31 points on [−6, 6] (`bfactor()`'s
/// `quadpts`), so its log-likelihood is comparable with mirt's.
///
/// Identification: the factors' means and variances are fixed (0, 1) and they are uncorrelated; a specific
/// factor's sign is free (flipping it and its slopes leaves the likelihood unchanged), so each is reported with
/// its items' slopes summing positive. A specific factor needs at least two items (one item's specific slope is
/// not separable from its general slope and intercept); with two its slopes are identified only through their
/// product with each other's, and a warning says so.
///
/// **Online calibration** (`fixed`): items of a calibrated bank held at their values define the factors' scales
/// and signs, and the new items are estimated on them — the unidimensional engine's fixed-parameter calibration
/// (`EMCalibrator`) for the bifactor model. The factors stay N(0, 1): the new sample is taken to come from the
/// bank's calibration population (the unidimensional engine estimates its mean and SD; here that would mean a
/// mean and SD per factor, which the fixed items of one domain seldom determine).
package struct BifactorCalibrator: Sendable {
    /// Read: `model` (2PL or 3PL), quadrature points (per dimension) and bound, tolerance, cycle limit,
    /// acceleration, workers, standard errors, the slope bound, the minimum responses per item, `slopePrior` (on
    /// the general slope a_g) and `guessingPrior` (3PL). Not read: the E-step strategy, the dense products'
    /// threading, per-item guessing priors, fixed items, the memory budget.
    package var options: CalibrationOptions

    /// The default options: the 2PL, 31 quadrature points per dimension on [−6, 6] (mirt's `bfactor()`), the
    /// unidimensional defaults otherwise.
    package static var defaultOptions: CalibrationOptions {
        var options = CalibrationOptions(model: .twoPL)
        options.quadraturePoints = 31
        return options
    }

    /// The most free parameters standard errors are computed for: each costs two E-steps (Oakes' identity by
    /// central differences), and the information is P × P doubles.
    package static let maximumStandardErrorParameters = 2_000

    /// The testlet model (Wainer, Bradlow & Wang 2007) instead: each specific factor's items have specific slopes
    /// proportional to their general slopes, a_s = λ_f · a_g, one λ_f per factor (|λ_f| is the SD of the testlet
    /// effect on the general factor's scale, reported positive): the bifactor model with one parameter per factor
    /// in place of one per item, nested in it (a likelihood-ratio test compares the two).
    package var testlet = false
    /// Starting values EM runs from (1…`StartRecord.maximumStarts`): the default start, then seeded perturbations
    /// of it (`StartPerturbation`); the run with the highest log-likelihood plus log prior is kept
    /// (`EMRun.best(of:engine:options:started:progress:)`). Each run costs a calibration.
    package var starts = 1

    package init(options: CalibrationOptions = BifactorCalibrator.defaultOptions, testlet: Bool = false, starts: Int = 1) {
        self.starts = starts
        self.options = options
        self.testlet = testlet
    }

    /// - Parameters:
    ///   - structure: each item's specific factor (items of the data it does not list load on the general factor
    ///     only; items it lists that are not in the data are named in a warning).
    ///   - fixed: items held at their values by id (each `specific` indexing `structure.specificFactors`, as the
    ///     structure gives it); the other data items are estimated. Fixed ids not in the data are named in a
    ///     warning and in `fixedItemsNotInData`.
    ///   - progress: told after each EM cycle and while the standard errors are computed.
    /// - Throws: `PsychometricsError` `.invalidOptions` for options outside their ranges, a model other than 2PL
    ///   or 3PL, fixed items with the testlet model, a fixed item whose specific factor differs from the
    ///   structure's, or items in more than two categories; `.insufficientData` when fewer than 2 items or persons
    ///   remain, no specific factor has items, or a specific factor keeps fewer than 2 items; `.numericalFailure`
    ///   when the iterations diverge.
    package func calibrate(
        _ input: ResponseMatrix, structure: FactorStructure, fixed: [String: BifactorItem] = [:],
        progress: ((CalibrationProgress) -> Void)? = nil
    ) throws -> BifactorCalibrationResult {
        try fit(input, structure: structure, fixed: fixed, grouping: nil, progress: progress)
    }

    /// Multiple-group calibration of the bifactor model (as mirt's `bfactor(…, group =, invariance = c(<items>,
    /// "free_means", "free_var"))`): person i in group `groups[i]`; the reference group's factors N(0, 1), every
    /// other group's general factor N(μ_k, σ_k²) estimated and, with `specificFactorsByGroup`, each specific factor's
    /// N(μ_ks, σ_ks²) too (else N(0, 1) in every group); the factors independent within each group; every item's
    /// parameters shared by all groups (`MultipleGroupBifactorEngine`). Groups may see different items; a group
    /// that answered fewer than 2 of a specific factor's items keeps that factor N(0, 1) (a warning says so). The
    /// result's `groups` gives each group's general mean and SD with standard errors (delta method to σ) and its part
    /// of the log-likelihood, `groupSpecificFactors` the specific factors'.
    /// - Parameters:
    ///   - specificFactorsByGroup: whether each group's specific factors get their own mean and SD.
    ///   - minimumGroupPersons: the fewest persons with calibrated responses a group may have.
    /// - Throws: as `calibrate(_:structure:fixed:progress:)`, and `PsychometricsError` `.invalidOptions` with the
    ///   testlet model; `.lengthMismatch` (not one label per person), `.invalidResponse` (an empty label),
    ///   `.insufficientData` (a missing or small group, one group only, a group that shares no item with the
    ///   reference).
    package func calibrate(
        _ input: ResponseMatrix, structure: FactorStructure, groups labels: [String], reference: String,
        specificFactorsByGroup: Bool = true, minimumGroupPersons: Int = 20,
        progress: ((CalibrationProgress) -> Void)? = nil
    ) throws -> BifactorCalibrationResult {
        try fit(
            input, structure: structure, fixed: [:], grouping: (labels, reference, minimumGroupPersons, specificFactorsByGroup), progress: progress)
    }

    private func fit(
        _ input: ResponseMatrix, structure: FactorStructure, fixed: [String: BifactorItem],
        grouping: (labels: [String], reference: String, minimumPersons: Int, specifics: Bool)?,
        progress: ((CalibrationProgress) -> Void)?
    ) throws -> BifactorCalibrationResult {
        let started = DispatchTime.now().uptimeNanoseconds
        var problems = options.validationProblems()
        if grouping != nil && testlet { problems.append("multiple-group calibration fits the bifactor model, not the testlet model") }
        if options.model != .twoPL && options.model != .threePL {
            problems.append("the bifactor model's items are 2PL or 3PL, not \(options.model.rawValue)")
        }
        if testlet && !fixed.isEmpty {
            problems.append("fixed items go with the bifactor model, not the testlet model (whose ratio λ is shared by a factor's items)")
        }
        for (id, item) in fixed.sorted(by: { $0.key < $1.key }) {
            if item.specific != structure.specificFactorOfItem[id] {
                let named = { (f: Int?) in f.map { $0 < structure.specificFactors.count ? structure.specificFactors[$0] : "#\($0)" } ?? "none" }
                problems.append(
                    "fixed item \(id)'s specific factor (\(named(item.specific))) is not the structure's (\(named(structure.specificFactorOfItem[id])))"
                )
            }
            if !(item.generalSlope.isFinite && item.specificSlope.isFinite && item.intercept.isFinite && (0..<1).contains(item.guessing)) {
                problems.append("fixed item \(id) has a parameter that is not finite or c outside [0, 1)")
            }
        }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid options: " + problems.joined(separator: "; ")) }
        var warnings: [String] = []
        // Items with too few responses or one category are excluded (as the unidimensional calibrators do).
        let screen = try ZeroOneItemScreen(input, minimumResponses: options.minimumItemResponses, model: "bifactor")
        let kept = screen.data
        let notInData = structure.specificFactorOfItem.keys.filter { !Set(input.itemIDs).contains($0) }.sorted()
        if !notInData.isEmpty {
            warnings.append(
                "\(notInData.count) item\(notInData.count == 1 ? "" : "s") of the factor structure \(notInData.count == 1 ? "is" : "are") not in the data: \(notInData.prefix(10).joined(separator: ", "))\(notInData.count > 10 ? ", …" : "")"
            )
        }

        // Groups: general-only items, then each specific factor's, in the structure's order.
        let factorOf = kept.itemIDs.map { structure.specificFactorOfItem[$0] }
        let s = structure.specificFactors.count
        // The engine's numbering: items grouped by factor, general-only first; the responses renumbered with them.
        let (order, engineIndex, groupOf, groupItems) = BifactorEngine.grouping(factorOf, specificCount: s)
        guard groupItems.dropFirst().contains(where: { !$0.isEmpty }) else {
            throw PsychometricsError(
                .insufficientData,
                "no calibrated item loads on a specific factor: the bifactor model needs item groups (the unidimensional model fits this structure)")
        }
        for f in 0..<s where groupItems[f + 1].count == 1 {
            throw PsychometricsError(
                .insufficientData,
                "specific factor \(structure.specificFactors[f]) has one calibrated item (\(kept.itemIDs[order[groupItems[f + 1].lowerBound]])); a specific factor needs at least 2 items: give the item another factor or none"
            )
        }
        for f in 0..<s where groupItems[f + 1].count == 2 {
            warnings.append(
                "specific factor \(structure.specificFactors[f]) has 2 items: their specific slopes are identified only through each other (3 or more items identify each)"
            )
        }
        let emptyFactors = (0..<s).filter { groupItems[$0 + 1].isEmpty }.map { structure.specificFactors[$0] }
        if !emptyFactors.isEmpty {
            warnings.append(
                "specific factor\(emptyFactors.count == 1 ? "" : "s") \(emptyFactors.joined(separator: ", ")) \(emptyFactors.count == 1 ? "has" : "have") no calibrated items"
            )
        }
        let data = kept.renumberingItems(engineIndex, itemIDs: order.map { kept.itemIDs[$0] })
        let (isFixed, fixedNotInData) = try fixedItemMask(itemIDs: data.itemIDs, fixedIDs: fixed.keys, distribution: "N(0, 1)", warnings: &warnings)

        // Starting values: a_g = 1, a_s = 0.5, c at the guessing prior's mode (0.2 without one), d from the item's
        // proportion correct p by the logistic–normal approximation E σ(z) ≈ σ(E z / √(1 + π Var z / 8)).
        let threePL = options.model == .threePL, finalTotals = data.categoryTotals()
        let guessingStart = threePL ? (options.guessingPrior.map { $0.mode } ?? 0.2) : 0
        let start = (0..<data.itemCount).map { e -> BifactorItem in
            if let item = fixed[data.itemIDs[e]] { return item }
            let n = Double(finalTotals[e][0] + finalTotals[e][1])
            let p = min(max(Double(finalTotals[e][1]) / n, 0.005), 0.995)
            let g = Int(groupOf[e]), aS = g > 0 ? 0.5 : 0
            let pStar = min(max((p - guessingStart) / (1 - guessingStart), 0.02), 0.98)
            let d = Logistic.logit(pStar) * (1 + Double.pi / 8 * (1 + aS * aS)).squareRoot()
            return BifactorItem(
                generalSlope: 1, specificSlope: aS, specific: g > 0 ? g - 1 : nil, intercept: d,
                guessing: guessingStart, estimatesGuessing: threePL, testletRatio: testlet && g > 0 ? aS : nil)
        }
        let grid = QuadratureGrid(validatedCount: options.quadraturePoints, bound: options.thetaBound)
        func engine(start k: Int) -> BifactorEngine {
            var items = start
            if k > 0 {
                var perturbation = StartPerturbation(start: k)
                for e in items.indices where !isFixed[e] {
                    items[e].generalSlope = perturbation.slope(items[e].generalSlope)
                    if items[e].specific != nil {
                        items[e].specificSlope = perturbation.slope(items[e].specificSlope)
                        if testlet { items[e].testletRatio = items[e].specificSlope }
                    }
                    items[e].intercept = perturbation.shift(items[e].intercept)
                }
                // A testlet factor's items share one ratio: its first item's.
                if testlet {
                    for range in groupItems.dropFirst() where !range.isEmpty {
                        let ratio = items[range.lowerBound].specificSlope / items[range.lowerBound].generalSlope
                        for e in range { items[e].testletRatio = ratio; items[e].specificSlope = ratio * items[e].generalSlope }
                    }
                }
            }
            var engine = BifactorEngine(
                items: items, data: data, grid: grid, group: groupOf, groupItems: groupItems,
                workers: options.workers, maximumSlope: options.maximumSlope,
                slopePrior: options.slopePrior, guessingPrior: threePL ? options.guessingPrior : nil)
            if isFixed.contains(true) { engine.fixed = isFixed }
            return engine
        }
        guard (1...StartRecord.maximumStarts).contains(starts) else {
            throw PsychometricsError(.invalidOptions, "starts must be 1…\(StartRecord.maximumStarts), got \(starts)")
        }
        guard let grouping else {
            let (run, startRecords) = try EMRun.best(of: starts, engine: engine(start:), options: options, started: started, progress: progress)
            var outcome = try finish(
                run, data: data, order: order, isFixed: isFixed, context: (structure, screen, fixedNotInData), started: started,
                progress: progress, warnings: &warnings)
            outcome.result.starts = startRecords
            return outcome.result
        }

        // Multiple groups: the kept persons' groups, one engine each over the same item numbering.
        let (names, inputGroupOf) = try MultipleGroupCalibrator.indexGroups(
            input, labels: grouping.labels, reference: grouping.reference,
            minimumPersons: grouping.minimumPersons)
        let dropped = Set(screen.droppedPersonIndices)
        let personGroup = inputGroupOf.indices.filter { !dropped.contains($0) }.map { inputGroupOf[$0] }
        let groupData = try names.indices.map { k in
            try MultipleGroupCalibrator.groupMatrix(data, groupOf: personGroup, group: k, keep: { _ in true }).matrix
        }
        if let k = groupData.indices.first(where: { groupData[$0].personCount < grouping.minimumPersons }) {
            throw PsychometricsError(
                .insufficientData,
                "group \(TextFidelity.quoted(names[k])) keeps \(groupData[k].personCount) persons with calibrated responses after the exclusions; each group needs at least \(grouping.minimumPersons)"
            )
        }
        let answered = groupData.map { $0.categoryTotals().map { $0[0] + $0[1] > 0 } }
        try MultipleGroupCalibrator.checkIdentified(
            slots: (0..<data.itemCount).map { j in .init(item: j, groups: names.indices.filter { answered[$0][j] }) },
            names: names)
        // Per group, the specific factors whose distribution it estimates: those it answered 2 or more items of.
        var freeFactors = [[Int]](repeating: [], count: names.count)
        if grouping.specifics {
            for k in 1..<names.count {
                for f in 0..<s where !groupItems[f + 1].isEmpty {
                    if groupItems[f + 1].filter({ answered[k][$0] }).count >= 2 {
                        freeFactors[k].append(f)
                    } else {
                        warnings.append(
                            "group \(TextFidelity.quoted(names[k])) answered fewer than 2 items of specific factor \(structure.specificFactors[f]): that factor stays N(0, 1) in the group"
                        )
                    }
                }
            }
        }
        func groupsEngine(start k: Int) -> MultipleGroupBifactorEngine {
            let base = engine(start: k)
            return MultipleGroupBifactorEngine(
                groups: groupData.map { d in
                    BifactorEngine(
                        items: base.items, data: d, grid: grid, group: groupOf, groupItems: groupItems, workers: options.workers,
                        maximumSlope: options.maximumSlope, slopePrior: options.slopePrior, guessingPrior: threePL ? options.guessingPrior : nil)
                }, latent: [(mean: Double, sd: Double)](repeating: (0, 1), count: names.count - 1), freeFactors: freeFactors)
        }
        let (run, startRecords) = try EMRun.best(of: starts, engine: groupsEngine(start:), options: options, started: started, progress: progress)
        var outcome = try finish(
            run, data: data, order: order, isFixed: isFixed, context: (structure, screen, fixedNotInData), started: started,
            progress: progress, warnings: &warnings)
        outcome.result.starts = startRecords
        let engine = outcome.engine, covariance = outcome.covariance
        /// Group k's distribution of factor f with its standard errors (delta method to σ).
        func estimate(_ k: Int, _ f: Int?, at i: Int) -> (mean: Double, sd: Double, meanSE: Double?, sdSE: Double?) {
            let (mean, sd) = engine.distribution(k, f)
            guard let covariance else { return (mean, sd, nil, nil) }
            return (mean, sd, covariance.entry(i, i).squareRoot(), sd * covariance.entry(i + 1, i + 1).squareRoot())
        }
        outcome.result.groups = names.indices.map { k in
            let (mean, sd) = engine.latent(k)
            var distribution = GroupDistribution(
                group: names[k], isReference: k == 0, persons: groupData[k].personCount,
                responses: groupData[k].cellCount, mean: mean, sd: sd,
                logLikelihood: outcome.final.groups[k].logLikelihood)
            if k > 0 {
                let general = estimate(k, nil, at: engine.latentIndex(group: k))
                distribution.meanStandardError = general.meanSE
                distribution.sdStandardError = general.sdSE
            }
            return distribution
        }
        outcome.result.groupSpecificFactors = names.indices.map { k in
            guard k > 0 else { return [] }
            return engine.freeFactors[k].enumerated().map { position, f in
                let e = estimate(k, f, at: engine.latentIndex(group: k) + 2 * (position + 1))
                return FactorDistribution(
                    factor: structure.specificFactors[f], mean: e.mean, sd: e.sd, meanStandardError: e.meanSE, sdStandardError: e.sdSE)
            }
        }
        for k in 1..<names.count {
            for f in engine.distributions(k) {
                let sd = engine.distribution(k, f).sd
                if sd <= NormalLatentDistribution.sdRange.lowerBound * 1.001 || sd >= NormalLatentDistribution.sdRange.upperBound * 0.999 {
                    outcome.result.warnings.append(
                        "group \(TextFidelity.quoted(names[k])): the SD of factor \(f.map { structure.specificFactors[$0] } ?? structure.generalFactor) at its bound (\(sd.formatted6)); its responses may not vary"
                    )
                }
            }
        }
        return outcome.result
    }

    /// The run's end, for one group or several: each specific factor's sign, the final E-step, the standard errors
    /// (Oakes) and the result (the items in the data's order).
    private func finish<Engine: BifactorFitState>(
        _ run: EMRun<Engine>, data: ResponseMatrix, order: [Int], isFixed: [Bool],
        context: (structure: FactorStructure, screen: ZeroOneItemScreen, fixedNotInData: [String]),
        started: UInt64, progress: ((CalibrationProgress) -> Void)?, warnings: inout [String]
    )
        throws -> (result: BifactorCalibrationResult, engine: Engine, final: Engine.Expectation, covariance: ParameterCovariance?)
    {
        let (structure, screen, fixedNotInData) = context
        if let warning = run.nonConvergence { warnings.append(warning) }
        var engine = run.engine
        let s = structure.specificFactors.count, groupItems = engine.groupItems
        // Each specific factor's sign: its slopes summing positive (a testlet's λ positive); a factor with fixed
        // items keeps the sign they give it.
        for f in 0..<s where !groupItems[f + 1].isEmpty && !groupItems[f + 1].contains(where: { isFixed[$0] }) {
            let range = groupItems[f + 1]
            if testlet {
                if engine.testletRatio(f) < 0 { engine.setTestletRatio(f, -engine.testletRatio(f)) }
            } else if range.reduce(0.0, { $0 + engine.items[$1].specificSlope }) < 0 {
                for e in range { engine.items[e].specificSlope.negate() }
            }
        }
        let final = engine.eStep()

        // Standard errors (Oakes), working parameters then c by the delta method.
        let parameterCount = engine.workingParameters().count, ratioStart = engine.itemParameterCount - engine.testletFactors.count
        let covariance = engine.oakesCovariance(
            standardErrors: options.standardErrors, maximumParameters: Self.maximumStandardErrorParameters,
            cycle: run.cycles, logLikelihood: final.logLikelihood, started: started, workers: engine.workers,
            progress: progress, warnings: &warnings)
        let finalTotals = data.categoryTotals()
        var itemsOut = [BifactorCalibrationResult.Item?](repeating: nil, count: data.itemCount)
        var index = 0
        for e in 0..<data.itemCount {
            let item = engine.items[e], m = item.workingParameterCount
            let se = item.workingStandardErrors(covariance: covariance, offset: index, isFixed: isFixed[e])
            if !isFixed[e] { index += m }
            var k = 0
            let seGeneral = se[k]; k += 1
            var seSpecific = item.hasFreeSpecificSlope ? se[k] : nil; if item.hasFreeSpecificSlope { k += 1 }
            if let ratio = item.testletRatio, let f = item.specific, let covariance, let position = engine.testletFactors.firstIndex(of: f) {
                // a_s = λ a_g: Var = a_g² Var λ + λ² Var a_g + 2 λ a_g Cov(λ, a_g) (delta method).
                let l = ratioStart + position, a = index - m
                let v =
                    item.generalSlope * item.generalSlope * covariance.entry(l, l) + ratio * ratio * covariance.entry(a, a)
                    + 2 * ratio * item.generalSlope * covariance.entry(l, a)
                seSpecific = max(0, v).squareRoot()
            }
            let seIntercept = se[k]; k += 1
            let seGuessing = item.estimatesGuessing ? se[k] : nil
            let n = finalTotals[e][0] + finalTotals[e][1]
            itemsOut[order[e]] = .init(
                itemID: data.itemIDs[e], item: item, generalSlopeStandardError: seGeneral,
                specificSlopeStandardError: seSpecific, interceptStandardError: seIntercept,
                guessingStandardError: seGuessing, responses: n,
                proportionCorrect: Double(finalTotals[e][1]) / Double(max(1, n)),
                atSlopeBound: !isFixed[e] && max(abs(item.generalSlope), abs(item.specificSlope)) >= options.maximumSlope * (1 - 1e-9),
                isFixed: isFixed[e])
        }
        let items = itemsOut.map { $0! }
        let atBound = items.filter(\.atSlopeBound).map(\.itemID)
        if !atBound.isEmpty {
            warnings.append(
                "\(atBound.count) item\(atBound.count == 1 ? "" : "s") reached the slope bound \(options.maximumSlope.formatted6) (\(atBound.prefix(10).joined(separator: ", "))): the likelihood rises without limit along the slope (a Heywood case); estimates are at the bound"
            )
        }
        warnings += screen.warnings
        let n = Double(data.personCount), ll = final.logLikelihood
        let result = BifactorCalibrationResult(
            items: items, structure: structure, model: options.model, testlet: testlet,
            testletRatios: testlet ? (0..<s).map { groupItems[$0 + 1].isEmpty ? nil : engine.testletRatio($0) } : [],
            testletRatioStandardErrors: testlet
                ? (0..<s).map { f in
                    engine.testletFactors.firstIndex(of: f).flatMap { p in covariance.map { $0.entry(ratioStart + p, ratioStart + p).squareRoot() } }
                } : [],
            logLikelihood: ll, parameterCount: parameterCount,
            aic: -2 * ll + 2 * Double(parameterCount), bic: -2 * ll + log(n) * Double(parameterCount),
            quadraturePoints: options.quadraturePoints, cycles: run.cycles, eSteps: run.eSteps, converged: run.converged,
            personCount: data.personCount, excludedItems: screen.excluded.map(\.itemID), fixedItemsNotInData: fixedNotInData, warnings: warnings,
            elapsedSeconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        return (result, engine, final, covariance)
    }
}

/// What `BifactorCalibrator` reads of a finished run, one group's engine or several groups'.
protocol BifactorFitState: FisherIdentityGradient {
    var items: [BifactorItem] { get set }
    /// Per item group (general-only, then each specific factor), its items.
    var groupItems: [Range<Int>] { get }
    var testletFactors: [Int] { get }
    func testletRatio(_ f: Int) -> Double
    mutating func setTestletRatio(_ f: Int, _ ratio: Double)
    /// The free items' working parameters (the first of the working parameters).
    var itemParameterCount: Int { get }
    var workers: Int { get }
}

extension BifactorEngine: BifactorFitState {
    var itemParameterCount: Int { workingParameters().count }
}

extension MultipleGroupBifactorEngine: BifactorFitState {
    var groupItems: [Range<Int>] { groups[0].groupItems }
    var testletFactors: [Int] { [] }
    func testletRatio(_ f: Int) -> Double { groups[0].testletRatio(f) }
    mutating func setTestletRatio(_ f: Int, _ ratio: Double) { for k in groups.indices { groups[k].setTestletRatio(f, ratio) } }
}

/// The outcome of a `BifactorCalibrator` run.
package struct BifactorCalibrationResult: Sendable {
    package struct Item: Sendable {
        package var itemID: String
        /// The fitted item (its `specific` indexes `structure.specificFactors`).
        package var item: BifactorItem
        package var generalSlopeStandardError: Double?
        /// Nil for an item without a specific factor, or without standard errors.
        package var specificSlopeStandardError: Double?
        package var interceptStandardError: Double?
        /// 3PL items only.
        package var guessingStandardError: Double?
        package var responses: Int
        package var proportionCorrect: Double
        /// Whether a slope reached ±`maximumSlope` (a Heywood case).
        package var atSlopeBound: Bool
        /// Held at its `fixed` value (online calibration): no standard errors.
        package var isFixed = false
    }

    /// In the data's item order (excluded items left out).
    package var items: [Item]
    package var structure: FactorStructure
    package var model: IRTModel
    /// Whether this is the testlet model (`BifactorCalibrator.testlet`).
    package var testlet: Bool
    /// The testlet model's λ per specific factor (nil for a factor without items; empty for the bifactor model),
    /// and their standard errors.
    package var testletRatios: [Double?]
    package var testletRatioStandardErrors: [Double?]
    package var logLikelihood: Double
    /// Free parameters (a_g, a_s, d and c per item; the testlet model: a_g, d and c per item and λ per factor).
    package var parameterCount: Int
    package var aic: Double
    package var bic: Double
    /// Quadrature points per dimension.
    package var quadraturePoints: Int
    package var cycles: Int
    package var eSteps: Int
    package var converged: Bool
    package var personCount: Int
    package var excludedItems: [String]
    /// `fixed` ids not among the calibrated items of the data.
    package var fixedItemsNotInData: [String] = []
    /// Every start's run (`starts` of the calibrator; one record for a single start).
    package var starts: [StartRecord] = []
    /// A multiple-group fit's groups (`calibrate(_:structure:groups:reference:minimumGroupPersons:progress:)`), the
    /// reference first: each group's general-factor mean and SD with their standard errors; empty for one group.
    package var groups: [GroupDistribution] = []
    /// Parallel to `groups`: each group's estimated specific-factor distributions (empty for the reference, and for
    /// factors a group keeps at N(0, 1)).
    package var groupSpecificFactors: [[FactorDistribution]] = []
    package var warnings: [String]
    package var elapsedSeconds: Double
}
