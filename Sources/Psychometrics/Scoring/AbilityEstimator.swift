import Foundation

/// Estimates abilities for response patterns on a fixed set of items.
///
/// Built once from a bank and reused: immutable, `Sendable`, safe to call from many threads at once. EAP reads
/// precomputed log P / log(1 − P) tables (items × nodes); per call it allocates nothing on the heap for
/// patterns up to 256 items. The estimators: EAP in `AbilityEstimator+EAP`, ML/MAP/WLE by safeguarded root
/// finding in `AbilityEstimator+RootFinding`; P(θ) and its derivatives come from `ItemResponseFunction`.
public struct AbilityEstimator: Sendable {
    public let parameters: [ItemParameters]
    public let options: AbilityOptions
    /// The prior N(priorMean, priorSD²) of EAP and MAP: the options' prior, or the latent scale's where they
    /// give none.
    public let priorMean: Double
    public let priorSD: Double
    public let grid: QuadratureGrid
    /// EAP tables in blocks of four nodes (the grid padded to a multiple of 4): for item j, row 2j holds
    /// log(1 − P_j(θ_t)) and row 2j + 1 log P_j(θ_t); padding is 0. The log prior's padding is −1e300 (weight 0).
    let logPQ: [SIMD4<Double>]
    let logPrior: [SIMD4<Double>]
    let paddedPoints: [SIMD4<Double>]
    let blocks: Int

    /// - Parameter latentScale: the bank's latent distribution (`ItemBank.latentScale`), the prior where
    ///   `options` give none.
    /// - Throws: `PsychometricsError` `.invalidOptions` for options outside their ranges, `.invalidParameters`
    ///   for an item with non-finite parameters or c outside [0, 1).
    public init(parameters: [ItemParameters], options: AbilityOptions = AbilityOptions(), latentScale: LatentScale = .standard) throws {
        let problems = options.validationProblems(latent: latentScale)
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid scoring options: " + problems.joined(separator: "; ")) }
        for (j, p) in parameters.enumerated() {
            guard p.discrimination.isFinite, p.difficulty.isFinite, p.guessing.isFinite, p.guessing >= 0, p.guessing < 1 else {
                throw PsychometricsError(.invalidParameters, "item \(j + 1) has unusable parameters a = \(p.discrimination.formatted6), b = \(p.difficulty.formatted6), c = \(p.guessing.formatted6)")
            }
        }
        self.parameters = parameters
        self.options = options
        (priorMean, priorSD) = options.prior(on: latentScale)
        let priorMean = priorMean, priorSD = priorSD
        let grid = QuadratureGrid(validatedCount: options.quadraturePoints, bound: options.thetaBound)
        self.grid = grid
        let nq = grid.count
        var lp = [Double](repeating: 0, count: parameters.count * nq), lq = lp
        for (j, p) in parameters.enumerated() {
            for t in 0..<nq {
                (lp[j * nq + t], lq[j * nq + t]) = p.logProbabilities(at: grid.points[t])
            }
        }
        let blocks = (nq + 3) / 4
        self.blocks = blocks
        func padded(_ values: some Collection<Double>, fill: Double) -> [SIMD4<Double>] {
            let v = Array(values) + [Double](repeating: fill, count: 4 * blocks - values.count)
            return (0..<blocks).map { SIMD4(v[4 * $0], v[4 * $0 + 1], v[4 * $0 + 2], v[4 * $0 + 3]) }
        }
        var table: [SIMD4<Double>] = []
        table.reserveCapacity(2 * parameters.count * blocks)
        for j in 0..<parameters.count {
            table += padded(lq[(j * nq)..<((j + 1) * nq)], fill: 0)
            table += padded(lp[(j * nq)..<((j + 1) * nq)], fill: 0)
        }
        logPQ = table
        logPrior = padded(grid.points.map { -0.5 * (($0 - priorMean) / priorSD) * (($0 - priorMean) / priorSD) },
                          fill: -1e300)
        paddedPoints = padded(grid.points, fill: 0)
    }

    /// Estimates θ from `responses` (0/1) to the items at `items` (indices into `parameters`).
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
                    guard j >= 0 && j < parameters.count else {
                        problem = PsychometricsError(.unknownItem, "item index \(j) is out of range 0..<\(parameters.count)")
                        return nil
                    }
                    guard u <= 1 else {
                        problem = PsychometricsError(.invalidResponse, "the response to item index \(j) is \(u); allowed 0 or 1")
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
    /// positions and 0/1 responses.
    package func estimate(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> AbilityEstimate {
        let correct = responses.reduce(0) { $0 + Int($1) }
        switch options.method {
        case .eap: return eap(items, responses, correct)
        case .map, .ml, .wle: return root(items, responses, correct)
        }
    }
}
