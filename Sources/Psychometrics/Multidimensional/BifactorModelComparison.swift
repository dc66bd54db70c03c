import Foundation

/// Does a bifactor (or testlet) model fit 0/1 responses better than one factor? The comparison `analyze` prints
/// for a multidimensional bank: the bank's model against the nested unidimensional model (the same item type,
/// every specific slope 0) fitted to the same responses by `EMCalibrator`, by
/// - the marginal log-likelihoods, AIC = −2 log L + 2p and BIC = −2 log L + p log N (N persons with an answer);
/// - the likelihood-ratio test G² = 2 (log L_multi − log L_uni) on p_multi − p_uni degrees of freedom. Under the
///   null every specific slope is 0, where their signs are not identified, so the χ² reference is approximate
///   (conservative for such boundary-like nulls: Self & Liang 1987);
/// - Maydeu-Olivares & Joe's M2 (`LimitedInformationFit`) of each model on the persons who answered every item;
/// - Yen's Q3 before and after: the residual correlations u_ij − P_j(θ̂_i) with θ̂ each model's EAP (every
///   factor's, for the bifactor), summarised over pairs of items on the same specific factor and on different
///   ones. Local dependence the specific factors explain shows as within-factor Q3 falling to the level of the
///   between-factor pairs.
///
/// The bank's log-likelihood is computed here from its parameters on `quadraturePoints` per dimension, so the
/// comparison is an ML test when the bank was calibrated (by `BifactorCalibrator`) on these responses.
public struct BifactorModelComparison: Sendable {
    /// One model's fit.
    public struct Fit: Sendable, Hashable {
        public var name: String
        public var logLikelihood: Double
        public var parameters: Int
        public var aic: Double
        public var bic: Double
        /// M2, or nil with `m2Unavailable` saying why.
        public var m2: LimitedInformationFit?
        public var m2Unavailable: String?
        public var q3: Q3Summary
    }

    /// Q3 at a model's EAPs over the compared pairs (`LocalDependenceQ3.Options`' minimum counts).
    public struct Q3Summary: Sendable, Hashable {
        public var pairs: Int
        public var mean: Double?
        /// Mean Q3 of the pairs of items on the same specific factor, and of the other pairs.
        public var meanWithinFactors: Double?
        public var meanBetweenFactors: Double?
        /// The largest |Q3*| (Q3 − mean Q3).
        public var maxAbsStar: Double?
        /// Pairs with Q3* above the threshold (0.2 by default; Christensen, Makransky & Horton 2017).
        public var aboveThreshold: Int
    }

    /// One compared item pair (data item indices).
    public struct Pair: Sendable, Hashable {
        public var first: Int
        public var second: Int
        public var sameFactor: Bool
        public var persons: Int
        public var q3Unidimensional: Double
        public var q3Multidimensional: Double?
    }

    public var unidimensional: Fit
    public var multidimensional: Fit
    /// G² = 2 (log L_multi − log L_uni), its degrees of freedom and χ² p-value.
    public var likelihoodRatio: Double
    public var degreesOfFreedom: Int
    public var pValue: Double
    /// The unidimensional fit's items (data order).
    public var unidimensionalItems: [ItemParameters]
    /// Q3 under both models for every pair compared under the unidimensional one.
    public var pairs: [Pair]
    public var q3Threshold: Double
    /// Persons with at least one answer (the N of BIC).
    public var persons: Int

    /// - Parameters:
    ///   - data: 0/1 responses; item j's model is `items[j]`.
    ///   - items: the bank's bifactor items, one per data item (testlet items with `testletRatio` set count one
    ///     parameter per factor).
    ///   - specificFactorCount: the number of specific factors (every `items[j].specific` below it).
    ///   - q3: the pairs' minimum counts and the Q3* threshold.
    /// - Throws: `PsychometricsError` for mismatched items, an item with a category other than 0/1, a
    ///   unidimensional fit that excludes an item (too few answers), or a failed fit.
    public static func compare(_ data: ResponseMatrix, items: [BifactorItem], specificFactorCount: Int, quadraturePoints: Int = 31,
                               q3: LocalDependenceQ3.Options = .init(), workers: Int = WorkerThreads.all) throws -> BifactorModelComparison {
        guard items.count == data.itemCount else {
            throw PsychometricsError(.lengthMismatch, "\(items.count) bifactor items for \(data.itemCount) data items")
        }
        guard data.categoryCounts.allSatisfy({ $0 <= 2 }) else {
            throw PsychometricsError(.invalidResponse, "the model comparison is for 0/1 items")
        }
        if let bad = items.firstIndex(where: { ($0.specific ?? 0) >= specificFactorCount || ($0.specific ?? 0) < 0 }) {
            throw PsychometricsError(.invalidOptions, "item \(data.itemIDs[bad])'s specific factor is not below \(specificFactorCount)")
        }
        let grid = try QuadratureGrid(count: quadraturePoints, bound: 6)
        let threePL = items.contains { $0.estimatesGuessing || $0.guessing > 0 }
        let persons = (0..<data.personCount).filter { !data.cells(ofPerson: $0).isEmpty }.count
        let logN = log(Double(max(1, persons)))

        // The bank's log-likelihood: one E-step of the bifactor engine at its parameters.
        let (order, engineIndex, groupOf, groupItems) = BifactorEngine.grouping(items.map(\.specific), specificCount: specificFactorCount)
        let engineData = data.renumberingItems(engineIndex, itemIDs: order.map { data.itemIDs[$0] })
        let engine = BifactorEngine(items: order.map { items[$0] }, data: engineData, grid: grid, group: groupOf, groupItems: groupItems,
                                    workers: workers, maximumSlope: .infinity, slopePrior: nil, guessingPrior: nil)
        let multiLL = engine.eStep().logLikelihood
        let multiParameters = BifactorJointProbabilities.parameters(items)
        let testlet = !BifactorJointProbabilities.testletFactors(items).isEmpty

        // The nested unidimensional model, fitted.
        var options = CalibrationOptions(model: threePL ? .threePL : .twoPL)
        options.standardErrors = false
        options.workers = workers
        options.tolerance = 1e-6
        options.minimumItemResponses = 1
        let uni = try EMCalibrator(options: options).calibrate(data)
        guard uni.excludedItems.isEmpty else {
            throw PsychometricsError(.insufficientData, "the unidimensional fit excluded \(uni.excludedItems.map { "\($0.itemID) (\($0.reason))" }.joined(separator: ", ")): the models would not describe the same items")
        }
        let byID = Dictionary(uniqueKeysWithValues: uni.items.map { ($0.itemID, $0.parameters) })
        let uniItems = data.itemIDs.map { byID[$0]! }
        let uniGrid = try QuadratureGrid(count: options.quadraturePoints, bound: options.thetaBound)

        // M2 on the complete patterns.
        let (patterns, completePersons) = LimitedInformationFit.completePatterns(data)
        let uniModel: IRTModel = threePL ? .threePL : .twoPL
        let uniM2 = UnidimensionalJointProbabilities.m2(data, items: uniItems, model: uniModel, grid: uniGrid, workers: workers)
        let multiM2: (LimitedInformationFit?, String?)
        do {
            multiM2 = (try LimitedInformationFit.evaluate(responses: patterns, persons: completePersons, itemCount: data.itemCount, parameters: multiParameters,
                                                          model: { BifactorJointProbabilities(items: BifactorJointProbabilities.items(items, at: $0), grid: grid) },
                                                          workers: workers), nil)
        } catch { multiM2 = (nil, error.message) }

        // Q3 at each model's EAPs.
        let uniResiduals = unidimensionalResiduals(data, items: uniItems, grid: uniGrid)
        let scorer = try BifactorScorer(items: items, specificFactorCount: specificFactorCount, quadraturePoints: quadraturePoints)
        var multiResiduals = [Double](repeating: 0, count: data.responses.count)
        for i in 0..<data.personCount {
            let cells = data.cells(ofPerson: i)
            guard !cells.isEmpty else { continue }
            let answers = cells.map { (item: Int(data.itemIndices[$0]), response: data.responses[$0]) }
            let estimate = try scorer.eap(answers)
            for cell in cells {
                let item = items[Int(data.itemIndices[cell])]
                let p = item.probability(general: estimate.means[0], specific: item.specific.map { estimate.means[$0 + 1] } ?? 0)
                multiResiduals[cell] = Double(data.responses[cell]) - p
            }
        }
        let q3Uni = LocalDependenceQ3(itemCount: data.itemCount, rowOffsets: data.rowOffsets, items: data.itemIndices, responses: data.responses,
                                      residuals: uniResiduals, model: nil, options: q3, workers: workers)
        let q3Multi = LocalDependenceQ3(itemCount: data.itemCount, rowOffsets: data.rowOffsets, items: data.itemIndices, responses: data.responses,
                                        residuals: multiResiduals, model: nil, options: q3, workers: workers)
        func same(_ j: Int, _ k: Int) -> Bool { items[j].specific != nil && items[j].specific == items[k].specific }
        func summary(_ result: LocalDependenceQ3) -> Q3Summary {
            func mean(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }
            return Q3Summary(pairs: result.pairs.count, mean: result.mean,
                             meanWithinFactors: mean(result.pairs.filter { same($0.first, $0.second) }.map(\.q3)),
                             meanBetweenFactors: mean(result.pairs.filter { !same($0.first, $0.second) }.map(\.q3)),
                             maxAbsStar: result.pairs.map { abs($0.q3Star) }.max(),
                             aboveThreshold: result.pairs.filter { $0.q3Star > q3.threshold }.count)
        }
        let pairs = q3Uni.pairs.map { p in
            Pair(first: p.first, second: p.second, sameFactor: same(p.first, p.second), persons: p.persons,
                 q3Unidimensional: p.q3, q3Multidimensional: q3Multi.q3(p.first, p.second))
        }

        let multiP = multiParameters.count
        let multi = Fit(name: testlet ? "testlet" : "bifactor", logLikelihood: multiLL, parameters: multiP,
                        aic: -2 * multiLL + 2 * Double(multiP), bic: -2 * multiLL + logN * Double(multiP),
                        m2: multiM2.0, m2Unavailable: multiM2.1, q3: summary(q3Multi))
        let uniP = UnidimensionalJointProbabilities.parameters(uniItems, model: uniModel).count
        let uniFit = Fit(name: uniModel.rawValue.uppercased(), logLikelihood: uni.logLikelihood, parameters: uniP,
                         aic: -2 * uni.logLikelihood + 2 * Double(uniP), bic: -2 * uni.logLikelihood + logN * Double(uniP),
                         m2: uniM2.fit, m2Unavailable: uniM2.undefined, q3: summary(q3Uni))
        let g2 = 2 * (multiLL - uni.logLikelihood), df = multiP - uniP
        return BifactorModelComparison(
            unidimensional: uniFit, multidimensional: multi, likelihoodRatio: g2, degreesOfFreedom: df,
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
