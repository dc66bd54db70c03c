import Foundation

/// Estimates abilities for response patterns on a fixed set of items.
///
/// Built once from a bank and reused: immutable, `Sendable`, safe to call from many threads at once. EAP reads
/// precomputed tables of log P(u = k | θ) (one row per item and category, `LogCategoryTable`); per call it
/// allocates nothing on the heap for patterns up to 256 items. The estimators: EAP in `AbilityEstimator+EAP`,
/// ML/MAP/WLE by safeguarded root finding in `AbilityEstimator+RootFinding`. Items of any model
/// (`init(items:options:latentScale:)`): responses are category indices; for 0/1 items P(θ) and its derivatives
/// come from `ItemResponseFunction`, for the others from the models' `categoryThetaDerivatives`.
public struct AbilityEstimator: Sendable {
    /// The items' dichotomous parameters when every item is dichotomous (`ItemParameters`); empty otherwise
    /// (`items` holds every item).
    package let parameters: [ItemParameters]
    /// The items, in index order.
    package let items: [any ItemResponseModel]
    /// True when every item is an `ItemParameters` (the dichotomous fast path).
    let dichotomous: Bool
    /// Per item: whether it has a lower asymptote (a 3PL item), whose likelihood may have several maxima.
    let hasLowerAsymptote: [Bool]
    /// Per item, its highest score in the raw score (`AbilityEstimate.correctCount`): 1 for a 0/1 item, K − 1 for
    /// a graded or partial-credit item (the category is the score), 0 for a nominal item (an option is no score).
    /// Empty on the dichotomous path.
    let maximumPoints: [Int]
    /// Whether item j's response counts in the raw score (every item but a nominal item's options).
    /// Per item and category, the points a response adds to the raw score (`ItemResponseModel.points`); empty
    /// for 0/1 items (the response is the point).
    let pointTable: [[Int]]
    /// The points response u to item j adds to the raw score.
    @inline(__always) func points(item j: Int, response u: Int) -> Int { pointTable.isEmpty ? u : pointTable[j][u] }
    package let options: AbilityOptions
    /// The prior N(priorMean, priorSD²) of EAP and MAP: the options' prior, or the latent scale's where they
    /// give none.
    package private(set) var priorMean: Double
    package private(set) var priorSD: Double
    package let grid: QuadratureGrid
    /// log P(u = k | θ_t) of every item's categories on the grid (`LogCategoryTable`: item j's rows 2j, 2j + 1
    /// hold log(1 − P) and log P), rows padded with zeros to whole blocks of four nodes.
    let table: LogCategoryTable
    /// The log prior in blocks of four nodes (the grid padded to a multiple of 4), padding −1e300 (weight 0).
    private(set) var logPrior: [SIMD4<Double>]
    let paddedPoints: [SIMD4<Double>]
    let blocks: Int

    /// - Parameter latentScale: the bank's latent distribution (`ItemBank.latentScale`), the prior where
    ///   `options` give none.
    /// - Throws: `PsychometricsError` `.invalidOptions` for options outside their ranges, `.invalidParameters`
    ///   for an item with non-finite parameters or c outside [0, 1).
    public init(parameters: [ItemParameters], options: AbilityOptions = AbilityOptions(), latentScale: LatentScale = .standard) throws {
        try self.init(checking: parameters, options: options, latentScale: latentScale)
    }

    /// An estimator for items of any model (graded, partial credit, nominal, 0/1 beside them).
    /// - Throws: as `init(parameters:options:latentScale:)`; `.invalidParameters` for an item whose log category
    ///   probabilities are not finite on the grid.
    public init(items: [any ItemResponseModel], options: AbilityOptions = AbilityOptions(), latentScale: LatentScale = .standard) throws {
        try self.init(checking: items, options: options, latentScale: latentScale)
    }

    /// This estimator with EAP's and MAP's prior replaced by N(`mean`, `sd`²) — the items' tables shared, only the
    /// prior recomputed (a few dozen values): the per-session prior of scoring with response times, whose times
    /// add a Gaussian factor in θ (`SessionTimeEvidence.thetaTerms`). ML and WLE do not read the prior.
    package func withPrior(mean: Double, sd: Double) -> AbilityEstimator {
        var copy = self
        copy.priorMean = mean
        copy.priorSD = sd
        var prior = [SIMD4<Double>](repeating: SIMD4(repeating: -1e300), count: blocks)
        for (t, theta) in grid.points.enumerated() {
            let z = (theta - mean) / sd
            prior[t / 4][t % 4] = -0.5 * z * z
        }
        copy.logPrior = prior
        return copy
    }

    private init(checking items: [any ItemResponseModel], options: AbilityOptions, latentScale: LatentScale) throws {
        let problems = options.validationProblems(latent: latentScale)
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid scoring options: " + problems.joined(separator: "; ")) }
        let parameters = items as? [ItemParameters] ?? []
        for (j, p) in parameters.enumerated() {
            guard p.discrimination.isFinite, p.difficulty.isFinite, p.guessing.isFinite, p.guessing >= 0, p.guessing < 1 else {
                throw PsychometricsError(
                    .invalidParameters,
                    "item \(j + 1) has unusable parameters a = \(p.discrimination.formatted6), b = \(p.difficulty.formatted6), c = \(p.guessing.formatted6)"
                )
            }
        }
        self.parameters = parameters
        self.items = items
        dichotomous = items.count == parameters.count
        hasLowerAsymptote = items.map { ($0 as? ItemParameters).map { $0.guessing > 0 } ?? false }
        maximumPoints = dichotomous ? [] : items.map(\.maximumScore)
        pointTable = dichotomous ? [] : items.map { m in (0..<m.categoryCount).map { m.points(category: $0) } }
        self.options = options
        (priorMean, priorSD) = options.prior(on: latentScale)
        let priorMean = priorMean, priorSD = priorSD
        let grid = QuadratureGrid(validatedCount: options.quadraturePoints, bound: options.thetaBound)
        self.grid = grid
        let nq = grid.count
        table = dichotomous ? LogCategoryTable(items: parameters, nodes: grid.points) : LogCategoryTable(items: items, nodes: grid.points)
        if !dichotomous {
            for j in items.indices {
                for k in 0..<items[j].categoryCount where !table.row(item: j, category: k).allSatisfy({ $0.isFinite || $0 == -.infinity }) {
                    throw PsychometricsError(
                        .invalidParameters,
                        "item \(j + 1) (\(items[j].parameterNames.joined(separator: ", ")) = \(items[j].parameterValues.map(\.formatted6).joined(separator: ", "))) has log probabilities that are not numbers on the grid"
                    )
                }
            }
        }
        let blocks = (nq + 3) / 4
        self.blocks = blocks
        func padded(_ values: some Collection<Double>, fill: Double) -> [SIMD4<Double>] {
            let v = Array(values) + [Double](repeating: fill, count: 4 * blocks - values.count)
            return (0..<blocks).map { SIMD4(v[4 * $0], v[4 * $0 + 1], v[4 * $0 + 2], v[4 * $0 + 3]) }
        }
        logPrior = padded(
            grid.points.map { -0.5 * (($0 - priorMean) / priorSD) * (($0 - priorMean) / priorSD) },
            fill: -1e300)
        paddedPoints = padded(grid.points, fill: 0)
    }

    /// Estimates θ from `responses` (category indices: 0/1 for dichotomous items) to the items at `items` (indices
    /// into `items`).
    /// - Throws: `PsychometricsError` `.lengthMismatch`, `.unknownItem` (an index outside the parameters) or
    ///   `.invalidResponse` (a response other than 0 or 1); nothing a caller passes traps.
    public func estimate(items: some Collection<Int>, responses: some Collection<UInt8>) throws(PsychometricsError) -> AbilityEstimate {
        guard items.count == responses.count else {
            throw PsychometricsError(.lengthMismatch, "one response per item is needed: \(items.count) items and \(responses.count) responses")
        }
        let n = items.count
        var problem: PsychometricsError?
        let result = withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { idx in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: n) { resp -> AbilityEstimate? in
                var k = 0
                for (j, u) in zip(items, responses) {
                    guard j >= 0 && j < self.items.count else {
                        problem = PsychometricsError(.unknownItem, "item index \(j) is out of range 0..<\(self.items.count)")
                        return nil
                    }
                    let categories = dichotomous ? 2 : self.items[j].categoryCount
                    guard Int(u) < categories else {
                        problem = PsychometricsError(
                            .invalidResponse, "the response to item index \(j) is \(u); allowed \(categories == 2 ? "0 or 1" : "0…\(categories - 1)")"
                        )
                        return nil
                    }
                    idx[k] = j
                    resp[k] = u
                    k += 1
                }
                return estimate(UnsafeBufferPointer(idx), UnsafeBufferPointer(resp))
            }
        }
        if let problem { throw problem }
        return result!
    }

    /// Pointer-based entry point for batch scoring (no copies), unchecked: the package's own callers pass validated
    /// positions and responses within each item's categories. `prior`: the session's own prior N(mean, sd²) for EAP
    /// and MAP instead of the estimator's (nil: the estimator's); under EAP it costs no allocation.
    package func estimate(
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>,
        prior: (mean: Double, sd: Double)? = nil
    ) -> AbilityEstimate {
        if let prior, options.method == .map { return withPrior(mean: prior.mean, sd: prior.sd).estimate(items, responses) }
        let eapPrior = options.method == .eap ? prior : nil
        guard !dichotomous else {
            let correct = responses.reduce(0) { $0 + Int($1) }
            switch options.method {
            case .eap: return eapPrior.map { eap(items, responses, correct, priorMean: $0.mean, priorSD: $0.sd) } ?? eap(items, responses, correct)
            case .map, .ml, .wle: return root(items, responses, correct)
            }
        }
        // The raw score: categories of graded and partial-credit items, 0/1 answers, a nominal item's key (other
        // options count nothing).
        var points = 0, maximum = 0
        for k in 0..<items.count {
            maximum += maximumPoints[items[k]]
            points += pointTable[items[k]][Int(responses[k])]
        }
        var estimate: AbilityEstimate
        switch options.method {
        case .eap: estimate = eapPrior.map { eap(items, responses, points, priorMean: $0.mean, priorSD: $0.sd) } ?? eap(items, responses, points)
        case .map, .ml, .wle: estimate = root(items, responses, points)
        }
        estimate.maximumScore = maximum
        return estimate
    }
}
