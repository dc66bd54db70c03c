import Foundation

/// Does a battery's model — bifactor, testlet or correlated factors — fit 0/1 responses better than one factor?
/// The comparison `analyze` prints for a multidimensional bank: the bank's model against the nested
/// unidimensional model (the same item type; every specific slope 0, or every factor correlation 1) fitted to the
/// same responses by `EMCalibrator`, by
/// - the marginal log-likelihoods, AIC = −2 log L + 2p and BIC = −2 log L + p log N (N persons with an answer);
/// - the likelihood-ratio test G² = 2 (log L_multi − log L_uni) on p_multi − p_uni degrees of freedom. The null
///   lies on the boundary of the larger model (specific slopes 0, where their signs are not identified;
///   correlations 1, where R is singular), so the χ² reference is approximate, conservative for such nulls
///   (Self & Liang 1987);
/// - Maydeu-Olivares & Joe's M2 (`LimitedInformationFit`) of each model on the persons who answered every item
///   (`BifactorJointProbabilities`, `CorrelatedJointProbabilities`);
/// - Yen's Q3 before and after: the residual correlations u_ij − P_j(θ̂_i) with θ̂ each model's EAP (every
///   factor's, for the multidimensional model), summarised over pairs of items on the same (specific) factor and
///   on different ones. Local dependence the factors explain shows as within-factor Q3 falling to the level of
///   the between-factor pairs.
///
/// The bank's log-likelihood is computed here from its parameters with the calibrator's integration, so the
/// comparison is an ML test when the bank was calibrated on these responses.
package struct BatteryModelComparison: Sendable {
    /// One model's fit.
    package struct Fit: Sendable, Hashable {
        package var name: String
        package var logLikelihood: Double
        package var parameters: Int
        package var aic: Double
        package var bic: Double
        /// M2, or nil with `m2Unavailable` saying why.
        package var m2: LimitedInformationFit?
        package var m2Unavailable: String?
        package var q3: Q3Summary
    }

    /// Q3 at a model's EAPs over the compared pairs (`LocalDependenceQ3.Options`' minimum counts).
    package struct Q3Summary: Sendable, Hashable {
        package var pairs: Int
        package var mean: Double?
        /// Mean Q3 of the pairs of items on the same specific factor, and of the other pairs.
        package var meanWithinFactors: Double?
        package var meanBetweenFactors: Double?
        /// The largest |Q3*| (Q3 − mean Q3).
        package var maxAbsStar: Double?
        /// Pairs with Q3* above the threshold (0.2 by default; Christensen, Makransky & Horton 2017).
        package var aboveThreshold: Int
    }

    /// One compared item pair (data item indices).
    package struct Pair: Sendable, Hashable {
        package var first: Int
        package var second: Int
        package var sameFactor: Bool
        package var persons: Int
        package var q3Unidimensional: Double
        package var q3Multidimensional: Double?
    }

    package var unidimensional: Fit
    package var multidimensional: Fit
    /// G² = 2 (log L_multi − log L_uni), its degrees of freedom and χ² p-value.
    package var likelihoodRatio: Double
    package var degreesOfFreedom: Int
    package var pValue: Double
    /// The unidimensional fit's items (data order).
    package var unidimensionalItems: [ItemParameters]
    /// Q3 under both models for every pair compared under the unidimensional one.
    package var pairs: [Pair]
    package var q3Threshold: Double
    /// Persons with at least one answer (the N of BIC).
    package var persons: Int

    /// - Parameters:
    ///   - data: 0/1 responses; item j's model is `items[j]`.
    ///   - items: the bank's bifactor items, one per data item (testlet items with `testletRatio` set count one
    ///     parameter per factor).
    ///   - specificFactorCount: the number of specific factors (every `items[j].specific` below it).
    ///   - q3: the pairs' minimum counts and the Q3* threshold.
    /// - Throws: `PsychometricsError` for mismatched items, an item with a category other than 0/1, a
    ///   unidimensional fit that excludes an item (too few answers), or a failed fit.
    package static func compare(
        _ data: ResponseMatrix, items: [BifactorItem], specificFactorCount: Int, quadraturePoints: Int = 31,
        q3: LocalDependenceQ3.Options = .init(), workers: Int = WorkerThreads.all
    ) throws -> BatteryModelComparison {
        try checkItems(data, count: items.count)
        if let bad = items.firstIndex(where: { ($0.specific ?? 0) >= specificFactorCount || ($0.specific ?? 0) < 0 }) {
            throw PsychometricsError(.invalidOptions, "item \(data.itemIDs[bad])'s specific factor is not below \(specificFactorCount)")
        }
        let grid = try QuadratureGrid(count: quadraturePoints, bound: 6)
        // The bank's log-likelihood: one E-step of the bifactor engine at its parameters.
        let (order, engineIndex, groupOf, groupItems) = BifactorEngine.grouping(items.map(\.specific), specificCount: specificFactorCount)
        let engineData = data.renumberingItems(engineIndex, itemIDs: order.map { data.itemIDs[$0] })
        let engine = BifactorEngine(
            items: order.map { items[$0] }, data: engineData, grid: grid, group: groupOf, groupItems: groupItems,
            workers: workers, maximumSlope: .infinity, slopePrior: nil, guessingPrior: nil)
        let parameters = BifactorJointProbabilities.parameters(items)
        let (patterns, completePersons) = LimitedInformationFit.completePatterns(data)
        let m2: (LimitedInformationFit?, String?)
        do {
            m2 = (
                try LimitedInformationFit.evaluate(
                    responses: patterns, persons: completePersons, itemCount: data.itemCount, parameters: parameters,
                    model: { x, _ in BifactorJointProbabilities(items: BifactorJointProbabilities.items(items, at: x), grid: grid) },
                    workers: workers), nil
            )
        } catch { m2 = (nil, error.message) }
        let scorer = try BifactorScorer(items: items, specificFactorCount: specificFactorCount, quadraturePoints: quadraturePoints)
        let residuals = try residuals(data) { answers in
            let estimate = try scorer.eap(answers)
            return { j in items[j].probability(general: estimate.means[0], specific: items[j].specific.map { estimate.means[$0 + 1] } ?? 0) }
        }
        let multi = Multidimensional(
            name: BifactorJointProbabilities.testletFactors(items).isEmpty ? "bifactor" : "testlet",
            logLikelihood: engine.eStep().logLikelihood, parameters: parameters.count, m2: m2, residuals: residuals,
            factor: items.map { $0.specific ?? -1 })
        return try compare(data, multi: multi, threePL: items.contains { $0.estimatesGuessing || $0.guessing > 0 }, q3: q3, workers: workers)
    }

    /// The correlated-factors bank's items against one factor (see the type's documentation).
    /// - Parameters:
    ///   - data: 0/1 responses; item j's model is `items[j]` (its `factor` indexes `correlations`' rows).
    ///   - correlations: R, K × K row-major, positive definite; factors without an item in `data` integrate out.
    /// - Throws: `PsychometricsError` for mismatched items, a factor outside R, an R that is not positive
    ///   definite, an item with a category other than 0/1, a unidimensional fit that excludes an item, or a
    ///   failed fit.
    package static func compare(
        _ data: ResponseMatrix, correlatedItems items: [CorrelatedFactorsResult.Item], correlations: [Double],
        q3: LocalDependenceQ3.Options = .init(), workers: Int = WorkerThreads.all
    ) throws -> BatteryModelComparison {
        try checkItems(data, count: items.count)
        let k = Int(Double(correlations.count).squareRoot().rounded())
        if let bad = items.firstIndex(where: { !(0..<k).contains($0.factor) }) {
            throw PsychometricsError(.lengthMismatch, "item \(data.itemIDs[bad])'s factor is not among the \(k) factors of the correlation matrix")
        }
        // The factors the data's items load on, and R restricted to them (the others integrate out exactly).
        let used = Array(Set(items.map(\.factor))).sorted()
        let position = Dictionary(uniqueKeysWithValues: used.enumerated().map { ($1, $0) })
        let r = used.flatMap { f in used.map { correlations[f * k + $0] } }
        let factor = items.map { position[$0.factor]! }
        let bifactorItems = items.map {
            BifactorItem(generalSlope: $0.slope, intercept: $0.intercept, guessing: $0.guessing, estimatesGuessing: $0.estimatesGuessing)
        }
        guard let parameters = CorrelatedJointProbabilities.parameters(bifactorItems, correlations: r) else {
            throw PsychometricsError(.invalidParameters, "the factor correlation matrix is not positive definite")
        }
        let logLikelihood = try CorrelatedFactorsCalibrator.logLikelihood(
            data, items: bifactorItems, factor: factor, correlations: r, workers: workers)
        let (patterns, completePersons) = LimitedInformationFit.completePatterns(data)
        let m2: (LimitedInformationFit?, String?)
        do throws(PsychometricsError) {
            m2 = (
                try LimitedInformationFit.evaluate(
                    responses: patterns, persons: completePersons, itemCount: data.itemCount, parameters: parameters,
                    model: { (x, largest) throws(PsychometricsError) in
                        try CorrelatedJointProbabilities.model(bifactorItems, factor: factor, factors: used.count, at: x, largestSet: largest)
                    },
                    workers: workers), nil
            )
        } catch { m2 = (nil, error.message) }
        let scorer = try CorrelatedFactorsScorer(
            items: zip(items, factor).map { item, f in
                var item = item
                item.factor = f
                return item
            }, correlations: r)
        let residuals = try residuals(data) { answers in
            let means = try scorer.eap(answers).means
            return { j in bifactorItems[j].probability(general: means[1 + factor[j]], specific: 0) }
        }
        let multi = Multidimensional(
            name: "correlated", logLikelihood: logLikelihood, parameters: parameters.count, m2: m2, residuals: residuals, factor: factor)
        return try compare(data, multi: multi, threePL: items.contains { $0.estimatesGuessing || $0.guessing > 0 }, q3: q3, workers: workers)
    }

    /// The multidimensional model's side of the comparison.
    struct Multidimensional {
        var name: String
        var logLikelihood: Double
        var parameters: Int
        var m2: (LimitedInformationFit?, String?)
        /// u_ij − P_j(θ̂_i) per response cell of the data.
        var residuals: [Double]
        /// Per item, the factor whose pairs count as within-factor Q3 (−1: none).
        var factor: [Int]
    }

    static func checkItems(_ data: ResponseMatrix, count: Int) throws(PsychometricsError) {
        guard count == data.itemCount else {
            throw PsychometricsError(.lengthMismatch, "\(count) battery items for \(data.itemCount) data items")
        }
        guard data.categoryCounts.allSatisfy({ $0 <= 2 }) else {
            throw PsychometricsError(.invalidResponse, "the model comparison is for 0/1 items")
        }
    }

    /// u_ij − P_j(θ̂_i) per response cell, θ̂_i from `estimate` (which returns person i's P_j(θ̂_i) by item).
    static func residuals(_ data: ResponseMatrix, estimate: ([(item: Int, response: UInt8)]) throws -> (Int) -> Double) throws -> [Double] {
        var out = [Double](repeating: 0, count: data.responses.count)
        for i in 0..<data.personCount {
            let cells = data.cells(ofPerson: i)
            guard !cells.isEmpty else { continue }
            let probability = try estimate(cells.map { (item: Int(data.itemIndices[$0]), response: data.responses[$0]) })
            for cell in cells { out[cell] = Double(data.responses[cell]) - probability(Int(data.itemIndices[cell])) }
        }
        return out
    }

    /// The unidimensional model fitted to `data`, both models' M2 and Q3, and the likelihood-ratio test.
    static func compare(_ data: ResponseMatrix, multi: Multidimensional, threePL: Bool, q3: LocalDependenceQ3.Options, workers: Int) throws
        -> BatteryModelComparison
    {
        let persons = (0..<data.personCount).filter { !data.cells(ofPerson: $0).isEmpty }.count
        let logN = log(Double(max(1, persons)))
        var options = CalibrationOptions(model: threePL ? .threePL : .twoPL)
        options.standardErrors = false
        options.workers = workers
        options.tolerance = 1e-6
        options.minimumItemResponses = 1
        let uni = try EMCalibrator(options: options).calibrate(data)
        guard uni.excludedItems.isEmpty else {
            throw PsychometricsError(
                .insufficientData,
                "the unidimensional fit excluded \(uni.excludedItems.map { "\($0.itemID) (\($0.reason))" }.joined(separator: ", ")): the models would not describe the same items"
            )
        }
        let byID = Dictionary(uniqueKeysWithValues: uni.items.map { ($0.itemID, $0.parameters) })
        let uniItems = data.itemIDs.map { byID[$0]! }
        let uniGrid = try QuadratureGrid(count: options.quadraturePoints, bound: options.thetaBound)
        let uniModel: IRTModel = threePL ? .threePL : .twoPL
        let uniM2 = UnidimensionalJointProbabilities.m2(data, items: uniItems, model: uniModel, grid: uniGrid, workers: workers)

        // Q3 at each model's EAPs.
        let uniResiduals = unidimensionalResiduals(data, items: uniItems, grid: uniGrid)
        let q3Uni = LocalDependenceQ3(
            itemCount: data.itemCount, rowOffsets: data.rowOffsets, items: data.itemIndices, responses: data.responses,
            residuals: uniResiduals, model: nil, options: q3, workers: workers)
        let q3Multi = LocalDependenceQ3(
            itemCount: data.itemCount, rowOffsets: data.rowOffsets, items: data.itemIndices, responses: data.responses,
            residuals: multi.residuals, model: nil, options: q3, workers: workers)
        func same(_ j: Int, _ k: Int) -> Bool { multi.factor[j] >= 0 && multi.factor[j] == multi.factor[k] }
        func summary(_ result: LocalDependenceQ3) -> Q3Summary {
            func mean(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }
            return Q3Summary(
                pairs: result.pairs.count, mean: result.mean,
                meanWithinFactors: mean(result.pairs.filter { same($0.first, $0.second) }.map(\.q3)),
                meanBetweenFactors: mean(result.pairs.filter { !same($0.first, $0.second) }.map(\.q3)),
                maxAbsStar: result.pairs.map { abs($0.q3Star) }.max(),
                aboveThreshold: result.pairs.filter { $0.q3Star > q3.threshold }.count)
        }
        let pairs = q3Uni.pairs.map { p in
            Pair(
                first: p.first, second: p.second, sameFactor: same(p.first, p.second), persons: p.persons,
                q3Unidimensional: p.q3, q3Multidimensional: q3Multi.q3(p.first, p.second))
        }

        let multiLL = multi.logLikelihood, multiP = multi.parameters
        let multiFit = Fit(
            name: multi.name, logLikelihood: multiLL, parameters: multiP,
            aic: -2 * multiLL + 2 * Double(multiP), bic: -2 * multiLL + logN * Double(multiP),
            m2: multi.m2.0, m2Unavailable: multi.m2.1, q3: summary(q3Multi))
        let uniP = UnidimensionalJointProbabilities.parameters(uniItems, model: uniModel).count
        let uniFit = Fit(
            name: uniModel.rawValue.uppercased(), logLikelihood: uni.logLikelihood, parameters: uniP,
            aic: -2 * uni.logLikelihood + 2 * Double(uniP), bic: -2 * uni.logLikelihood + logN * Double(uniP),
            m2: uniM2.fit, m2Unavailable: uniM2.undefined, q3: summary(q3Uni))
        let g2 = 2 * (multiLL - uni.logLikelihood), df = multiP - uniP
        return BatteryModelComparison(
            unidimensional: uniFit, multidimensional: multiFit, likelihoodRatio: g2, degreesOfFreedom: df,
            pValue: df > 0 ? ChiSquare.upperTail(max(0, g2), degreesOfFreedom: Double(df)) : 1,
            unidimensionalItems: uniItems, pairs: pairs, q3Threshold: q3.threshold, persons: persons)
    }

    /// u_ij − P_j(θ̂_i) with θ̂_i the EAP of the unidimensional model, N(0, 1) prior on `grid`.
    static func unidimensionalResiduals(_ data: ResponseMatrix, items: [ItemParameters], grid: QuadratureGrid) -> [Double] {
        let q = grid.count
        var logP1 = [Double](repeating: 0, count: items.count * q), logP0 = logP1
        for (j, item) in items.enumerated() {
            for (n, theta) in grid.points.enumerated() {
                let p = min(max(item.probability(at: theta), 1e-300), 1 - 1e-16)
                logP1[j * q + n] = log(p); logP0[j * q + n] = log1p(-p)
            }
        }
        var residuals = [Double](repeating: 0, count: data.responses.count)
        var h = [Double](repeating: 0, count: q)
        for i in 0..<data.personCount {
            let cells = data.cells(ofPerson: i)
            guard !cells.isEmpty else { continue }
            for n in 0..<q { h[n] = grid.logWeights[n] }
            for cell in cells {
                let row = Int(data.itemIndices[cell]) * q
                if data.responses[cell] == 1 { for n in 0..<q { h[n] += logP1[row + n] } } else { for n in 0..<q { h[n] += logP0[row + n] } }
            }
            let top = h.max()!
            var total = 0.0, moment = 0.0
            for n in 0..<q {
                let w = exp(h[n] - top)
                total += w; moment += w * grid.points[n]
            }
            let theta = moment / total
            for cell in cells {
                residuals[cell] = Double(data.responses[cell]) - items[Int(data.itemIndices[cell])].probability(at: theta)
            }
        }
        return residuals
    }
}
