import Foundation

/// Marginal maximum-likelihood calibration (Bock & Aitkin 1981 EM) of items scored in any number of categories:
/// graded, generalized partial credit, partial credit (Rasch) and nominal items (`ItemModelKind`), mixed in one
/// bank (0/1 items beside polytomous ones), dense or missing-by-design data, θ ~ N(0, 1) (N(0, σ²) with σ
/// estimated when the partial-credit Rasch items are in). The EM engine is `ItemModelEngine` with the shared
/// iterations (`EMRun`: plain or SQUAREM) and stopping rule; standard errors from the observed information
/// (Louis 1982), delta method to the IRT form.
///
/// Categories: item j's responses are 0 ..< `data.categoryCounts[j]`. A category nobody chose cannot be
/// estimated (its intercept runs to −∞): it is collapsed — the categories above it move down one — and the
/// result says so per item (`Item.categoryMap`) and in a warning; an item left with one category is excluded
/// with its reason. Categories below the lowest one chosen are the data's coding (1…4 as mirt's `Science`) and
/// are dropped without a warning (the map says so).
///
/// **Fixed-parameter ("online") calibration.** Items given in `fixedItems` (any `ItemResponseModel`: 0/1 items
/// of any logistic model, the 3PL included, or items in several categories) keep their values and put the free
/// items on their scale: θ ~ N(μ, σ²) with μ and σ estimated (`NormalLatentDistribution`), the free items'
/// parameters on the θ scale (partial-credit and rating-scale items with a = 1: the latent SD is σ), standard
/// errors over the free parameters and (μ, σ). A fixed item's data categories are its categories (no
/// collapsing); a response outside them is refused. At least one fixed item must be answered.
public struct PolytomousCalibrator: Sendable {
    /// Quadrature, tolerance, cycle limit, acceleration, workers, standard errors, the slope bound, the minimum
    /// responses per item and the slope prior (`slopePrior`: on graded, gpcm and 3PL items' a, MAP item estimates) are
    /// read; the dichotomous `model`, the guessing prior, `fixedItems` (given to `calibrate` as models instead),
    /// the E-step strategy and the memory budget are not.
    public var options: CalibrationOptions

    /// The priors of 3PL items (`ItemModelKind.threePL`): c ~ `threePLGuessingPrior` and a ~ `threePLSlopePrior`
    /// (defaults: the 3PL's, Beta(5, 17) and LogNormal(0, 0.5); nil: none), MAP item estimates as the 0/1
    /// engine's. `options.slopePrior`, when set, is the slope prior of the 3PL items too.
    public var threePLGuessingPrior: BetaPrior? = .standard
    public var threePLSlopePrior: LogNormalPrior? = .standard

    /// The most free parameters standard errors are computed for: the observed information is P × P doubles per
    /// worker (4,000 parameters: 128 MB each). Beyond it the fit is reported without standard errors, and a
    /// warning says so.
    package static let maximumStandardErrorParameters = 4_000

    public init(options: CalibrationOptions = CalibrationOptions(model: .twoPL)) { self.options = options }

    /// - Parameters:
    ///   - model: the model of every item not in `itemModels`.
    ///   - itemModels: models of single items by item id (ids not in the data are ignored).
    ///   - categoryLabels: per item id, the label of each data category (index = the response), where the data's
    ///     categories stand for something other than their numbers (option letters: `["A", "B", "C", "D"]`); the
    ///     warnings and `Item.categoryLabels` use them.
    ///   - keys: per item id, the data category of a nominal item's correct option: its starting slope is the
    ///     largest (the fit does not depend on which option is the reference), and the fitted item counts it 1 in
    ///     the raw score (`NominalResponseItem.key`).
    ///   - fixedItems: per item id, a model held at its values (online calibration; see the type). The item's
    ///     responses are its categories 0 ..< K.
    /// - Throws: `PsychometricsError` `.invalidOptions` for options outside their ranges, `.invalidResponse` for a
    ///   fixed item's response outside its categories, `.insufficientData` when fewer than 2 items or 2 persons
    ///   remain or no fixed item is answered, `.invalidOptions` for a key nobody chose, `.numericalFailure` when
    ///   the iterations diverge.
    public func calibrate(
        _ input: ResponseMatrix, model: ItemModelKind, itemModels: [String: ItemModelKind] = [:],
        categoryLabels: [String: [String]] = [:], keys: [String: Int] = [:],
        fixedItems: [String: any ItemResponseModel] = [:],
        progress: ((CalibrationProgress) -> Void)? = nil
    ) throws -> PolytomousCalibrationResult {
        let started = DispatchTime.now().uptimeNanoseconds
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid options: " + problems.joined(separator: "; ")) }
        var warnings: [String] = []

        // Categories in use; items with too few responses or one category left are excluded.
        let totals = input.categoryTotals()
        var keep = [Bool](repeating: true, count: input.itemCount), maps: [[Int]] = []
        var excluded: [(String, String)] = []
        var unansweredFixed: [String] = []
        for j in 0..<input.itemCount {
            let used = totals[j].indices.filter { totals[j][$0] > 0 }, n = totals[j].reduce(0, +)
            if let held = fixedItems[input.itemIDs[j]] {
                // A fixed item's categories are its model's: kept whole (no collapsing), responses inside them.
                let k = held.categoryCount
                if let outside = used.first(where: { $0 >= k }) {
                    throw PsychometricsError(
                        .invalidResponse,
                        "fixed item \(input.itemIDs[j]) has \(totals[j][outside]) response\(totals[j][outside] == 1 ? "" : "s") in category \(outside); its bank model has categories 0…\(k - 1)"
                    )
                }
                if n == 0 { keep[j] = false; unansweredFixed.append(input.itemIDs[j]) }
                maps.append(Array(0..<k))
                continue
            }
            if n < options.minimumItemResponses {
                keep[j] = false
                excluded.append((input.itemIDs[j], "\(n) responses (at least \(options.minimumItemResponses) needed)"))
            } else if used.count < 2 {
                keep[j] = false
                excluded.append((input.itemIDs[j], "every response is in category \(used.first ?? 0)"))
            }
            maps.append(used)
        }
        let fixedNotInData = try fixedItemsNobodyAnswered(fixedItems.keys, dataItems: input.itemIDs, unanswered: unansweredFixed)
        let (kept, droppedPersons) = input.keepingItems(keep)
        let keptMaps = maps.indices.filter { keep[$0] }.map { maps[$0] }
        // Renumber the categories in use 0 ..< K′ (order kept).
        var newCategory = keptMaps.map { used -> [UInt8] in
            var table = [UInt8](repeating: 0, count: 256)
            for (new, old) in used.enumerated() { table[old] = UInt8(new) }
            return table
        }
        let responses = (0..<kept.cellCount).map { newCategory[Int(kept.itemIndices[$0])][Int(kept.responses[$0])] }
        newCategory.removeAll()
        let data = ResponseMatrix(
            validatedPersonIDs: kept.personIDs, itemIDs: kept.itemIDs, rowOffsets: kept.rowOffsets,
            itemIndices: kept.itemIndices, responses: responses, categoryCounts: keptMaps.map(\.count))
        let fixed = data.itemIDs.map { fixedItems[$0] }, estimatesLatent = fixed.contains { $0 != nil }
        // Categories below the lowest in use are the data's coding (responses 1…4, as mirt's Science), not a gap:
        // the map says so without a warning (`Item.categoryMap`).
        func label(_ j: Int, _ category: Int) -> String {
            guard let labels = categoryLabels[data.itemIDs[j]], category < labels.count else { return String(category) }
            return labels[category]
        }
        for (j, used) in keptMaps.enumerated() where fixed[j] == nil && used.count < used.last! - used.first! + 1 {
            let unused = (used.first!...used.last!).filter { !used.contains($0) }
            warnings.append(
                "item \(data.itemIDs[j]): categor\(unused.count == 1 ? "y" : "ies") \(unused.map { label(j, $0) }.joined(separator: ", ")) of \(label(j, 0))…\(label(j, kept.categoryCounts[j] - 1)) \(unused.count == 1 ? "has" : "have") no responses and \(unused.count == 1 ? "is" : "are") collapsed: \(used.count) categories fitted (the categories above move down)"
            )
        }
        guard data.itemCount >= 2 else {
            throw PsychometricsError(
                .insufficientData,
                "only \(data.itemCount) of \(input.itemCount) items can be calibrated (at least 2 needed)"
                    + (excluded.isEmpty ? "" : "; excluded: " + excluded.map { "\($0.0) (\($0.1))" }.joined(separator: ", ")))
        }
        guard data.personCount >= 2 else {
            throw PsychometricsError(.insufficientData, "only \(data.personCount) person has responses to calibrated items; at least 2 are needed")
        }

        let kinds = data.itemIDs.map { itemModels[$0] ?? model }
        // A 3PL item is a 0/1 item: responses 0 and 1 both in use.
        if let j = kinds.indices.first(where: { kinds[$0] == .threePL && fixed[$0] == nil && keptMaps[$0] != [0, 1] }) {
            throw PsychometricsError(
                .invalidOptions,
                "item \(data.itemIDs[j]) is fitted as 3pl, a 0/1 item, but its responses in use are \(keptMaps[j].map { label(j, $0) }.joined(separator: ", ")) (a 3pl item is answered 0 or 1)"
            )
        }
        // Rating-scale items share their thresholds, so they need the same number of categories in use.
        let ratingScale = kinds.indices.filter { kinds[$0] == .ratingScale && fixed[$0] == nil }
        if let first = ratingScale.first, let other = ratingScale.first(where: { data.categoryCounts[$0] != data.categoryCounts[first] }) {
            throw PsychometricsError(
                .invalidOptions,
                "rating-scale (rsm) items share their thresholds, so they need the same categories in use: item \(data.itemIDs[first]) has \(data.categoryCounts[first]) (\(keptMaps[first].map(String.init).joined(separator: ", "))), item \(data.itemIDs[other]) has \(data.categoryCounts[other]) (\(keptMaps[other].map(String.init).joined(separator: ", "))); fit items on another scale as pcm or gpcm"
            )
        }
        // A key is a fitted category (it counts in the raw score); one nobody chose has none.
        if let j = data.itemIDs.indices.first(where: { j in keys[data.itemIDs[j]].map { !keptMaps[j].contains($0) } ?? false }) {
            let key = keys[data.itemIDs[j]]!
            throw PsychometricsError(
                .invalidOptions,
                "item \(data.itemIDs[j]): its key, option \(label(j, key)), was chosen by nobody, so the fit has no category for it (fitted: \(keptMaps[j].map { label(j, $0) }.joined(separator: ", "))); correct the key or leave it empty"
            )
        }
        let finalTotals = data.categoryTotals()
        let start: [any CalibratableItemModel] = (0..<data.itemCount).map { j in
            if let held = fixed[j] { return FixedItemModel(model: held) }
            let n = Double(finalTotals[j].reduce(0, +))
            let key = keys[data.itemIDs[j]].flatMap { keptMaps[j].firstIndex(of: $0) }
            return kinds[j].startingItem(proportions: finalTotals[j].map { Double($0) / n }, key: key)
        }
        let grid = QuadratureGrid(validatedCount: options.quadraturePoints, bound: options.thetaBound)
        let workers = options.workers
        var run = EMRun(
            engine: ItemModelEngine(
                items: start, data: data, grid: grid, workers: workers, maximumSlope: options.maximumSlope,
                shared: (0..<data.itemCount).map { fixed[$0] != nil ? 0 : Self.sharedParameters(kinds[$0], categories: data.categoryCounts[$0]) },
                slopePriors: kinds.indices.map { j -> LogNormalPrior? in
                    guard fixed[j] == nil else { return nil }
                    switch kinds[j] {
                    case .graded, .generalizedPartialCredit: return options.slopePrior
                    case .threePL: return options.slopePrior ?? threePLSlopePrior
                    case .partialCredit, .ratingScale, .nominal: return nil
                    }
                },
                guessingPriors: kinds.indices.map { fixed[$0] == nil && kinds[$0] == .threePL ? threePLGuessingPrior : nil },
                estimatesLatent: estimatesLatent),
            options: options, started: started, progress: progress)
        switch options.acceleration {
        case .none: try run.runPlain()
        case .squarem: try run.runSQUAREM()
        }
        let engine = run.engine
        if let warning = run.nonConvergence { warnings.append(warning) }
        let final = engine.eStep()

        // Standard errors of the working parameters (Louis), then the delta method.
        let layout = engine.parameterLayout()
        var covariance: ParameterCovariance?
        let freeCount = layout.count - layout.held.count
        if options.standardErrors && freeCount > Self.maximumStandardErrorParameters {
            warnings.append(
                "standard errors not computed: \(freeCount) free parameters, more than the \(Self.maximumStandardErrorParameters) the observed information is formed for (\(freeCount * freeCount * 8 >> 20) MiB per worker)"
            )
        } else if options.standardErrors {
            progress?(
                CalibrationProgress(
                    phase: .standardErrors, cycle: run.cycles, logLikelihood: final.logLikelihood, largestChange: run.change,
                    elapsedSeconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9))
            covariance = ParameterCovariance(
                information: engine.observedInformation(final), count: layout.count, held: layout.held, workers: engine.workers)
            if covariance == nil {
                warnings.append(ParameterCovariance.notPositiveDefiniteWarning)
            }
        }
        let sigma = engine.commonSlope, shared = engine.hasSharedSlope && !estimatesLatent
        let items = (0..<data.itemCount).map { j -> PolytomousCalibrationResult.Item in
            if let held = fixed[j] {
                return .init(
                    itemID: data.itemIDs[j], model: kinds[j], item: FixedItemModel(model: held), parameterNames: held.parameterNames,
                    parameters: held.parameterValues, standardErrors: held.parameterValues.map { _ in nil },
                    workingParameters: [], workingStandardErrors: [],
                    responses: finalTotals[j].reduce(0, +), categoryResponses: finalTotals[j], categoryMap: keptMaps[j],
                    categoryLabels: keptMaps[j].map { label(j, $0) }, isFixed: true)
            }
            let fitted = engine.items[j], rasch = engine.shared[j] > 0
            let reported = rasch ? Self.onThetaScale(fitted, sigma: sigma) : fitted
            let working = fitted.workingParameters
            var workingSE = [Double?](repeating: nil, count: working.count)
            var parameterSE = [Double?](repeating: nil, count: reported.parameterValues.count)
            if let covariance {
                let indices = working.indices.map { layout.global(j, $0) }
                for a in working.indices where !(rasch && a == 0) {
                    workingSE[a] = covariance.entry(indices[a], indices[a]).squareRoot()
                }
                // Delta method: J = ∂(reported parameters)/∂(working) by central differences.
                let jacobian = Self.jacobian(fitted, sigma: rasch && !estimatesLatent ? sigma : nil)
                let m = working.count
                for p in parameterSE.indices {
                    var v = 0.0
                    for a in 0..<m { for b in 0..<m { v += jacobian[p * m + a] * covariance.entry(indices[a], indices[b]) * jacobian[p * m + b] } }
                    parameterSE[p] = rasch && p == 0 ? nil : max(0, v).squareRoot()
                }
            }
            return .init(
                itemID: data.itemIDs[j], model: kinds[j], item: reported, parameterNames: reported.parameterNames,
                parameters: reported.parameterValues, standardErrors: parameterSE,
                workingParameters: working, workingStandardErrors: workingSE,
                responses: finalTotals[j].reduce(0, +), categoryResponses: finalTotals[j], categoryMap: keptMaps[j],
                categoryLabels: keptMaps[j].map { label(j, $0) })
        }
        for (id, reason) in excluded { warnings.append("item \(id) excluded: \(reason)") }
        if !droppedPersons.isEmpty {
            warnings.append("\(droppedPersons.count) person\(droppedPersons.count == 1 ? "" : "s") excluded: no responses to any calibrated item")
        }
        let parameterCount = freeCount
        let n = Double(data.personCount), ll = final.logLikelihood
        let latentSE = layout.latentMean.flatMap { mu in covariance.map { ($0.entry(mu, mu).squareRoot(), $0.entry(mu + 1, mu + 1).squareRoot()) } }
        return PolytomousCalibrationResult(
            items: items, logLikelihood: ll, parameterCount: parameterCount,
            aic: -2 * ll + 2 * Double(parameterCount), bic: -2 * ll + log(n) * Double(parameterCount),
            latentMean: engine.latentMean, latentMeanStandardError: latentSE?.0,
            latentSD: estimatesLatent ? engine.latentSD : shared ? sigma : 1,
            latentSDStandardError: estimatesLatent ? latentSE?.1 : shared ? covariance.map { $0.entry(0, 0).squareRoot() } : nil,
            fixedItemIDs: data.itemIDs.indices.filter { fixed[$0] != nil }.map { data.itemIDs[$0] },
            fixedItemsNotInData: fixedNotInData,
            cycles: run.cycles, eSteps: run.eSteps, converged: run.converged, personCount: data.personCount,
            excludedItems: excluded.map(\.0), warnings: warnings,
            elapsedSeconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
    }

    /// The working parameters an item of `kind` in K categories shares with the other items of its scale: the
    /// common slope σ for partial-credit items, σ and the thresholds τ₁ … τ_{K−2} for rating-scale items, none
    /// for the others.
    static func sharedParameters(_ kind: ItemModelKind, categories k: Int) -> Int {
        switch kind {
        case .partialCredit: 1
        case .ratingScale: k - 1
        case .graded, .generalizedPartialCredit, .nominal, .threePL: 0
        }
    }

    /// A partial-credit or rating-scale item fitted on the N(0, 1) grid with slope σ, on θ = σz: a = 1 and steps
    /// σ·b (the rating-scale item's location and thresholds are in θ units already).
    static func onThetaScale(_ item: any CalibratableItemModel, sigma: Double) -> any CalibratableItemModel {
        if let rating = item as? RatingScaleItem {
            return RatingScaleItem(discrimination: 1, location: rating.location, thresholds: rating.thresholds)
        }
        guard let gpc = item as? GeneralizedPartialCreditItem else { return item }
        return GeneralizedPartialCreditItem(discrimination: 1, steps: gpc.steps.map { $0 * sigma })
    }

    /// ∂(reported parameters)/∂(working parameters), rows × m, by central differences (step 10⁻⁶·max(1, |x|)).
    static func jacobian(_ item: any CalibratableItemModel, sigma: Double?) -> [Double] {
        let x = item.workingParameters, m = x.count
        func reported(_ y: [Double]) -> [Double]? {
            guard let changed = item.withWorkingParameters(y) else { return nil }
            return sigma.map { _ in onThetaScale(changed, sigma: y[0]).parameterValues } ?? changed.parameterValues
        }
        let rows = item.parameterValues.count
        var out = [Double](repeating: 0, count: rows * m)
        for a in 0..<m {
            let h = 1e-6 * max(1, abs(x[a]))
            var up = x, down = x
            up[a] += h; down[a] -= h
            guard let u = reported(up), let d = reported(down) else { continue }
            for p in 0..<rows { out[p * m + a] = (u[p] - d[p]) / (2 * h) }
        }
        return out
    }
}

/// The outcome of a `PolytomousCalibrator` run.
public struct PolytomousCalibrationResult: Sendable {
    public struct Item: Sendable {
        public var itemID: String
        public var model: ItemModelKind
        /// The fitted item on the θ scale (partial credit: a = 1, steps in θ units).
        public var item: any CalibratableItemModel
        /// The parameters in the IRT (slope–location) form, as `item.parameterNames` names them.
        public var parameterNames: [String]
        public var parameters: [Double]
        /// Per parameter; nil where fixed by the model (a partial-credit item's a) or not computed.
        public var standardErrors: [Double?]
        /// The slope–intercept form the EM works in (graded, gpcm: a, d₁ … d_{K−1}; nominal: a₁ … a_{K−1},
        /// c₁ … c_{K−1} against category 0; partial credit: σ, then the intercepts on the N(0, 1) grid), and their
        /// standard errors (mirt's `coef(printSE = TRUE)` form).
        public var workingParameters: [Double]
        public var workingStandardErrors: [Double?]
        public var responses: Int
        /// Responses per fitted category.
        public var categoryResponses: [Int]
        /// Fitted category k is the data's category `categoryMap[k]` (the identity unless the data's categories
        /// start above 0 or a category was collapsed).
        public var categoryMap: [Int]
        /// The data's label of each fitted category (`categoryMap` as text, or the labels the calibration was
        /// given: option letters).
        public var categoryLabels: [String]
        /// True for an item held at its given values (`fixedItems`): its parameters are those values, with no
        /// standard errors, and `model` is the calibration's (the item's own model is `item`'s).
        public var isFixed: Bool = false
    }

    public var items: [Item]
    public var logLikelihood: Double
    public var parameterCount: Int
    public var aic: Double
    public var bic: Double
    /// The latent mean: estimated with fixed items, otherwise 0.
    public var latentMean: Double
    public var latentMeanStandardError: Double?
    /// The latent SD: estimated with fixed items or partial-credit (Rasch) items, otherwise 1.
    public var latentSD: Double
    public var latentSDStandardError: Double?
    /// The items held at their given values (answered in the data), and the given ones nobody answered.
    public var fixedItemIDs: [String]
    public var fixedItemsNotInData: [String]
    public var cycles: Int
    package var eSteps: Int
    public var converged: Bool
    public var personCount: Int
    public var excludedItems: [String]
    public var warnings: [String]
    public var elapsedSeconds: Double
}
