import Foundation

/// Factor scores of one session on a bifactor bank: the posterior means (EAP; Bock & Mislevy 1982) of the
/// general factor and of every specific factor, with the posterior covariance matrix.
public struct BifactorEstimate: Sendable, Hashable {
    /// θ_g first, then the specific factors in the structure's order.
    public var means: [Double]
    /// The posterior covariance, (1 + S) × (1 + S) row-major, same order.
    public var covariance: [Double]
    /// The posterior SDs (the square roots of the covariance's diagonal).
    public var standardErrors: [Double]
    /// Per specific factor, the number of the session's answers to its items (0: its score is the prior's).
    public var answersPerFactor: [Int]
    /// log ∫ L(u | θ) φ(θ) dθ, the session's marginal log-likelihood on the grid.
    public var logLikelihood: Double

    /// The posterior mean and SD of the linear combination w_g θ_g + w_s θ_s of the general factor and specific
    /// factor `factor` (an index composite, `IndexComposite`): wᵀμ and √(wᵀΣw) from the means and covariance.
    package func combination(general wg: Double, specific ws: Double, factor: Int) -> (mean: Double, sd: Double) {
        let dims = means.count, x = factor + 1
        let mean = wg * means[0] + ws * means[x]
        let variance = wg * wg * covariance[0] + 2 * wg * ws * covariance[x] + ws * ws * covariance[x * dims + x]
        return (mean, max(0, variance).squareRoot())
    }
}

/// EAP scoring on a bifactor bank (`BifactorItem`s on a general factor and at most one specific factor each,
/// all factors N(0, 1)), by the dimension reduction of the bifactor E-step (Gibbons & Hedeker 1992): with w the
/// rule's weights on the points θ_q (one rule per dimension), for each specific factor s the session answered,
/// ```
/// A_s(q, t) = w_t Π_{j ∈ s} P(u_j | θ_q, θ_t),   L_s(q) = Σ_t A_s(q, t),   m_s(q) = Σ_t A_s(q, t) θ_t / L_s(q)
/// p(q) ∝ w_q Π_{j general only} P(u_j | θ_q) Π_s L_s(q)                        (posterior of θ_g)
/// E θ_g = Σ_q p(q) θ_q,   E θ_s = Σ_q p(q) m_s(q),   E θ_s² = Σ_q p(q) Σ_t A_s(q,t) θ_t² / L_s(q)
/// E θ_g θ_s = Σ_q p(q) θ_q m_s(q),   E θ_s θ_s′ = Σ_q p(q) m_s(q) m_s′(q)   (s ≠ s′: independent given θ_g)
/// ```
/// A factor the session did not answer keeps its prior on the grid (mean Σ w_t θ_t = 0, variance Σ w_t θ_t²),
/// uncorrelated with the rest. The sums run in logs (each block normalised by its largest entry), so any number
/// of answers is safe.
///
/// Layout: every item's log-probabilities of both answers are tabulated once, at construction — Q² pairs for an
/// item on a specific factor (general node q major, specific node t minor), Q for a general-only item — so a
/// session costs answers × Q² additions and (specific factors answered) × Q² exponentials; the table holds
/// 16·Q² bytes per item (15 KB at the default 31 points, 23 MB for 1,500 items).
package struct BifactorScorer: Sendable {
    package let items: [BifactorItem]
    package let specificFactorCount: Int
    package let grid: QuadratureGrid
    /// Per item, where its table starts in `logTable`: `[log P(1) …, log P(0) …]`, each Q² (specific) or Q long.
    let offsets: [Int]
    let logTable: [Double]

    /// Point counts the scorer accepts per dimension: 5…61 (the table grows with the square).
    package static let allowedPointCounts = 5...61

    /// - Parameters:
    ///   - items: the bank's items (each `specific` below `specificFactorCount`).
    ///   - quadraturePoints: points per dimension (default 31, the calibration's), `allowedPointCounts`.
    ///   - bound: the grid's [−bound, bound], `QuadratureGrid.allowedBounds`.
    /// - Throws: `PsychometricsError(.invalidOptions)` for a grid outside its ranges or an item whose specific
    ///   factor is not below `specificFactorCount`; `.invalidParameters` for a parameter that is not finite or a
    ///   c outside [0, 1).
    package init(items: [BifactorItem], specificFactorCount: Int, quadraturePoints: Int = 31, bound: Double = 6) throws(PsychometricsError) {
        var problems = QuadratureGrid.validationProblems(points: quadraturePoints, bound: bound)
        if problems.isEmpty, let p = Self.allowedPointCounts.problem(quadraturePoints, "the bifactor scoring grid's points per dimension") {
            problems.append(p)
        }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid scoring grid: " + problems.joined(separator: "; ")) }
        if let j = items.firstIndex(where: { item in item.specific.map { $0 < 0 || $0 >= specificFactorCount } ?? false }) {
            throw PsychometricsError(
                .invalidOptions, "item \(j): specific factor \(items[j].specific!) is not below the \(specificFactorCount) specific factors")
        }
        if let j = items.firstIndex(where: {
            !($0.generalSlope.isFinite && $0.specificSlope.isFinite && $0.intercept.isFinite && $0.guessing >= 0 && $0.guessing < 1)
        }) {
            throw PsychometricsError(.invalidParameters, "item \(j): slopes and intercept must be finite and c in [0, 1)")
        }
        let grid = QuadratureGrid(validatedCount: quadraturePoints, bound: bound)
        let q = grid.count, points = grid.points
        var offsets: [Int] = [], size = 0
        for item in items {
            offsets.append(size)
            size += 2 * (item.specific == nil ? q : q * q)
        }
        var table = [Double](repeating: 0, count: size)
        for (j, item) in items.enumerated() {
            let base = offsets[j]
            if item.specific == nil {
                for a in 0..<q {
                    let lp = item.logProbabilities(logit: item.logit(general: points[a], specific: 0))
                    table[base + a] = lp.right
                    table[base + q + a] = lp.wrong
                }
            } else {
                for a in 0..<q {
                    for t in 0..<q {
                        let lp = item.logProbabilities(logit: item.logit(general: points[a], specific: points[t]))
                        table[base + a * q + t] = lp.right
                        table[base + q * q + a * q + t] = lp.wrong
                    }
                }
            }
        }
        self.items = items
        self.specificFactorCount = specificFactorCount
        self.grid = grid
        self.offsets = offsets
        self.logTable = table
    }

    /// The factor scores of the answers `responses` (item index into `items`, 0/1). An empty session gets the prior.
    /// - Throws: `PsychometricsError` `.unknownItem` for an index outside the items, `.invalidResponse` for a
    ///   response other than 0 or 1, `.repeatedItem` for an item answered twice.
    package func eap(_ responses: [(item: Int, response: UInt8)]) throws(PsychometricsError) -> BifactorEstimate {
        let (items, answers) = try validatedAnswers(responses, itemCount: self.items.count)
        return items.withUnsafeBufferPointer { i in answers.withUnsafeBufferPointer { u in eap(validated: i, u) } }
    }

    /// `eap` of answers already checked (distinct indices in range, responses 0/1): the batch path.
    package func eap(validated itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> BifactorEstimate {
        let q = grid.count, q2 = q * q, points = grid.points, s = specificFactorCount, dims = 1 + s
        // log of the general factor's posterior (unnormalised) and, per specific factor answered, its block in logs.
        var h = grid.logWeights
        var blocks = [[Double]?](repeating: nil, count: s), answers = [Int](repeating: 0, count: s)
        logTable.withUnsafeBufferPointer { table in
            for k in 0..<itemIndices.count {
                let j = itemIndices[k], item = items[j]
                if let f = item.specific {
                    answers[f] += 1
                    if blocks[f] == nil {
                        var block = [Double](repeating: 0, count: q2)
                        for a in 0..<q { for t in 0..<q { block[a * q + t] = grid.logWeights[t] } }
                        blocks[f] = block
                    }
                    let base = offsets[j] + (responses[k] == 1 ? 0 : q2)
                    blocks[f]!.withUnsafeMutableBufferPointer { block in
                        for n in 0..<q2 { block[n] += table[base + n] }
                    }
                } else {
                    let base = offsets[j] + (responses[k] == 1 ? 0 : q)
                    for a in 0..<q { h[a] += table[base + a] }
                }
            }
        }
        // Per answered factor and general node: log L_s(q), and the conditional moments m_s(q), v_s(q) = E[θ_s² | q].
        var first = [[Double]](repeating: [], count: s), second = [[Double]](repeating: [], count: s)
        for f in 0..<s {
            guard let block = blocks[f] else { continue }
            first[f] = [Double](repeating: 0, count: q)
            second[f] = [Double](repeating: 0, count: q)
            for a in 0..<q {
                var m = -Double.infinity
                for t in 0..<q { m = max(m, block[a * q + t]) }
                var total = 0.0, sum1 = 0.0, sum2 = 0.0
                for t in 0..<q {
                    let e = exp(block[a * q + t] - m)
                    total += e
                    sum1 += e * points[t]
                    sum2 += e * points[t] * points[t]
                }
                h[a] += m + log(total)
                first[f][a] = sum1 / total
                second[f][a] = sum2 / total
            }
        }
        let top = h.max()!
        var p = h.map { exp($0 - top) }
        let mass = p.reduce(0, +)
        for a in 0..<q { p[a] /= mass }
        let logLikelihood = top + log(mass)
        // Moments: E θ, E θθᵀ.
        var mean = [Double](repeating: 0, count: dims), moment = [Double](repeating: 0, count: dims * dims)
        let priorMean = zip(grid.weights, points).reduce(0) { $0 + $1.0 * $1.1 }
        let priorSecond = zip(grid.weights, points).reduce(0) { $0 + $1.0 * $1.1 * $1.1 }
        for a in 0..<q {
            mean[0] += p[a] * points[a]
            moment[0] += p[a] * points[a] * points[a]
        }
        for f in 0..<s {
            let x = f + 1
            if blocks[f] == nil {
                mean[x] = priorMean
                moment[x * dims + x] = priorSecond
                moment[x * dims] = priorMean * mean[0]
                moment[x] = moment[x * dims]
                continue
            }
            for a in 0..<q {
                mean[x] += p[a] * first[f][a]
                moment[x * dims + x] += p[a] * second[f][a]
                moment[x * dims] += p[a] * points[a] * first[f][a]
            }
            moment[x] = moment[x * dims]
        }
        for f in 0..<s {
            for g in (f + 1)..<s {
                let x = f + 1, y = g + 1
                var value = 0.0
                switch (blocks[f] != nil, blocks[g] != nil) {
                case (true, true): for a in 0..<q { value += p[a] * first[f][a] * first[g][a] }
                case (true, false): value = mean[x] * priorMean
                case (false, true): value = priorMean * mean[y]
                case (false, false): value = priorMean * priorMean
                }
                moment[x * dims + y] = value
                moment[y * dims + x] = value
            }
        }
        var covariance = [Double](repeating: 0, count: dims * dims)
        for x in 0..<dims { for y in 0..<dims { covariance[x * dims + y] = moment[x * dims + y] - mean[x] * mean[y] } }
        return BifactorEstimate(
            means: mean, covariance: covariance, standardErrors: (0..<dims).map { max(0, covariance[$0 * dims + $0]).squareRoot() },
            answersPerFactor: answers, logLikelihood: logLikelihood)
    }
}

/// `responses` checked and split into item indices and answers, for the multidimensional scorers' `eap` and `map`.
/// - Throws: `PsychometricsError` `.unknownItem` for an index outside 0..<`itemCount`, `.invalidResponse` for a
///   response other than 0 or 1, `.repeatedItem` for an item answered twice.
func validatedAnswers(_ responses: [(item: Int, response: UInt8)], itemCount: Int) throws(PsychometricsError) -> ([Int], [UInt8]) {
    var seen = Set<Int>(), indices = [Int](), answers = [UInt8]()
    indices.reserveCapacity(responses.count); answers.reserveCapacity(responses.count)
    for (j, u) in responses {
        guard (0..<itemCount).contains(j) else { throw PsychometricsError(.unknownItem, "item index \(j) is outside 0…\(itemCount - 1)") }
        guard u <= 1 else { throw PsychometricsError(.invalidResponse, "item index \(j): responses must be 0 or 1, got \(u)") }
        guard seen.insert(j).inserted else { throw PsychometricsError(.repeatedItem, "item index \(j) is answered twice") }
        indices.append(j); answers.append(u)
    }
    return (indices, answers)
}
