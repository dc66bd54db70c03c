import Foundation

/// Observed proportions correct by ability group for one item, beside what the model expects for the same
/// persons: the empirical item plot (mirt's `itemfit(empirical.plot = j)`), built so that observed and expected
/// can be compared exactly.
///
/// For each person i who answered item j the posterior of θ is taken given the person's *other* responses, as
/// S-X² leaves the studied item out of the summed score (Orlando & Thissen 2000), on a quadrature grid θ_q with
/// N(priorMean, priorSD²) weights w_q:
/// ```
/// π₋ⱼ(θ_q) ∝ w_q Π_{k ≠ j} P_k(θ_q)^u_ik (1 − P_k(θ_q))^(1 − u_ik)
/// θ̂ᵢ = Σ_q θ_q π₋ⱼ(θ_q)              the rest-of-pattern EAP, the grouping variable
/// Eᵢ = Σ_q P_j(θ_q) π₋ⱼ(θ_q)          P(u_ij = 1 | the other responses) under the model
/// ```
/// The persons are sorted by θ̂ and cut into G groups of nearly equal size, G = min(groups, ⌊n / minimumGroupSize⌋),
/// a run of equal θ̂ never split (a group left smaller than `minimumGroupSize` joins its neighbour). Per group g:
/// ```
/// θ̄_g = mean θ̂,   O_g = Σ u / n_g  with a Wilson interval (BinomialInterval.wilson),
/// E_g = mean Eᵢ,   z_g = (Σ u − Σ Eᵢ) / √(Σ Eᵢ (1 − Eᵢ))
/// ```
/// Because u_ij takes no part in the grouping, under the model (with the item parameters taken as known) the
/// responses in a group are independent Bernoulli(Eᵢ) draws: O_g − E_g is pure sampling noise and z_g is
/// approximately N(0, 1). E_g is flatter than the curve P_j(θ̄_g) at the extremes, because it averages P_j over
/// each person's posterior; mirt instead plots O_g against the curve at the full-pattern EAP.
package struct EmpiricalItemCurve: Sendable, Hashable {
    package struct Options: Sendable, Hashable {
        /// Most groups per item (mirt's default for empirical plots: 10).
        package var groups = 10
        /// Fewest persons per group; fewer groups are formed when an item has fewer than groups × this.
        package var minimumGroupSize = 20
        /// Coverage of the Wilson intervals.
        package var confidenceLevel = 0.95
        /// The posterior grid: points on [−thetaBound, thetaBound] (81 points on ±6 are 0.15 apart).
        package var quadraturePoints = 81
        package var thetaBound = 6.0
        /// The prior of θ (the calibration population: N(0, 1)).
        package var priorMean = 0.0
        package var priorSD = 1.0

        package init() {}
    }

    package struct Group: Sendable, Hashable {
        package var count: Int
        package var correct: Int
        /// θ̄_g, the mean rest-of-pattern EAP, where the group is drawn.
        package var meanTheta: Double
        package var lowestTheta: Double
        package var highestTheta: Double
        /// O_g = correct / count.
        package var observed: Double
        package var interval: BinomialInterval
        /// E_g, the model's expected proportion correct for these persons.
        package var expected: Double
        /// z_g = (correct − Σ Eᵢ) / √(Σ Eᵢ(1 − Eᵢ)); nil when that variance is below 1e-12.
        package var standardizedResidual: Double?
    }

    /// Groups in increasing θ; empty when fewer than `minimumGroupSize` persons answered the item.
    package var groups: [Group]
    /// Persons who answered the item.
    package var responseCount: Int

    /// The groups for one item from each respondent's grouping θ, response (0/1) and model expectation Eᵢ.
    /// - Precondition: equal lengths, responses 0 or 1, finite θ, expectations in [0, 1], valid options.
    package init(thetas: [Double], responses: [UInt8], expected: [Double], options: Options = Options()) {
        precondition(
            thetas.count == responses.count && thetas.count == expected.count,
            "one θ, response and expectation per person, got \(thetas.count), \(responses.count), \(expected.count)")
        precondition(
            options.groups >= 1 && options.minimumGroupSize >= 1,
            "groups and minimumGroupSize must be positive, got \(options.groups), \(options.minimumGroupSize)")
        let n = thetas.count
        responseCount = n
        groups = []
        guard n >= options.minimumGroupSize else { return }
        let order = thetas.indices.sorted { thetas[$0] < thetas[$1] }
        let sorted = order.map { thetas[$0] }
        let count = min(options.groups, n / options.minimumGroupSize)
        // Cuts at g·n/G, each moved past a run of equal θ.
        var cuts = [0]
        for g in 1..<max(count, 1) {
            var c = g * n / count
            while c < n && sorted[c] == sorted[c - 1] { c += 1 }
            if c > cuts.last! && c < n { cuts.append(c) }
        }
        cuts.append(n)
        var segments = zip(cuts, cuts.dropFirst()).map { $0..<$1 }
        // A segment shortened by a run of ties joins its neighbour (the previous one, or the next for the first).
        var k = 0
        while k < segments.count && segments.count > 1 {
            if segments[k].count < options.minimumGroupSize {
                if k > 0 {
                    segments[k - 1] = segments[k - 1].lowerBound..<segments[k].upperBound
                    segments.remove(at: k)
                } else {
                    segments[1] = segments[0].lowerBound..<segments[1].upperBound
                    segments.remove(at: 0)
                }
            } else {
                k += 1
            }
        }
        for segment in segments {
            var correct = 0, thetaSum = 0.0, expectedSum = 0.0, variance = 0.0
            for r in segment {
                let i = order[r]
                precondition(responses[i] <= 1, "responses must be 0 or 1, got \(responses[i])")
                correct += Int(responses[i])
                thetaSum += thetas[i]
                expectedSum += expected[i]
                variance += expected[i] * (1 - expected[i])
            }
            let m = segment.count
            groups.append(
                Group(
                    count: m, correct: correct, meanTheta: thetaSum / Double(m),
                    lowestTheta: sorted[segment.lowerBound], highestTheta: sorted[segment.upperBound - 1],
                    observed: Double(correct) / Double(m),
                    interval: .wilson(successes: correct, trials: m, confidenceLevel: options.confidenceLevel),
                    expected: expectedSum / Double(m),
                    standardizedResidual: variance < 1e-12 ? nil : (Double(correct) - expectedSum) / variance.squareRoot()))
        }
    }

    /// The group with the largest |z_g|, if any has one.
    package var largestResidual: Group? {
        groups.filter { $0.standardizedResidual != nil }.max { abs($0.standardizedResidual!) < abs($1.standardizedResidual!) }
    }

    /// Groups whose interval does not contain the model's expectation E_g.
    package var groupsMissingExpectation: Int { groups.filter { !$0.interval.contains($0.expected) }.count }

    /// One curve per item of `data` (in its item order), with θ̂ and Eᵢ from each person's posterior given the
    /// other responses (see the type's description), computed on `options`' grid.
    /// - Precondition: one parameter set per item, each with finite a, b and 0 ≤ c < 1; a grid of 2…100,000
    ///   points on a positive bound and a finite prior with a positive SD.
    package static func curves(data: ResponseMatrix, parameters: [ItemParameters], options: Options = Options()) -> [EmpiricalItemCurve] {
        precondition(parameters.count == data.itemCount, "one parameter set per item, got \(parameters.count) for \(data.itemCount) items")
        precondition(data.isDichotomous, "empirical curves of 0/1 items")
        let grid = checkedGrid(options)
        // P(u = 0) and P(u = 1) at each node, item-major.
        let p = parameters.enumerated().map { j, item -> [Double] in
            precondition(
                item.discrimination.isFinite && item.difficulty.isFinite && item.guessing >= 0 && item.guessing < 1,
                "item \(j + 1) has unusable parameters a = \(item.discrimination), b = \(item.difficulty), c = \(item.guessing)")
            let correct = grid.points.map { item.probability(at: $0) }
            return correct.map { 1 - $0 } + correct
        }
        let rest = restOfPattern(data: data, table: LogCategoryTable(items: parameters, nodes: grid.points), probabilities: p, grid: grid)
        return (0..<data.itemCount).map {
            EmpiricalItemCurve(thetas: rest.thetas[$0], responses: rest.responses[$0], expected: rest.expected[$0][1], options: options)
        }
    }

    /// Per item of any model (`ItemResponseModel`) and per category k, the curve of the indicator u = k: the
    /// observed share of the group choosing k against P(u_ij = k | the other responses) (the type's description
    /// with P_jk for P_j). Every category of an item shares the item's groups.
    /// - Precondition: one model per item with the data's number of categories; usable options (as `curves`).
    package static func categoryCurves(data: ResponseMatrix, items: [any ItemResponseModel], options: Options = Options()) -> [[EmpiricalItemCurve]] {
        precondition(
            items.count == data.itemCount && (0..<data.itemCount).allSatisfy { items[$0].categoryCount == data.categoryCounts[$0] },
            "one model per item with the data's categories")
        let grid = checkedGrid(options)
        let p = items.map { item -> [Double] in
            let k = item.categoryCount
            var out = [Double](repeating: 0, count: k * grid.count)
            for (q, theta) in grid.points.enumerated() {
                for (c, value) in item.categoryProbabilities(at: theta).enumerated() { out[c * grid.count + q] = value }
            }
            return out
        }
        let rest = restOfPattern(data: data, table: LogCategoryTable(items: items, nodes: grid.points), probabilities: p, grid: grid)
        return (0..<data.itemCount).map { j in
            (0..<items[j].categoryCount).map { k in
                EmpiricalItemCurve(
                    thetas: rest.thetas[j], responses: rest.responses[j].map { $0 == k ? 1 : 0 }, expected: rest.expected[j][k], options: options)
            }
        }
    }

    private static func checkedGrid(_ options: Options) -> QuadratureGrid {
        precondition(
            QuadratureGrid.constructiblePointCounts.contains(options.quadraturePoints) && options.thetaBound > 0 && options.thetaBound.isFinite
                && options.priorMean.isFinite && options.priorSD > 0 && options.priorSD.isFinite, "the options' grid and prior must be usable")
        return QuadratureGrid(validatedCount: options.quadraturePoints, bound: options.thetaBound, mean: options.priorMean, sd: options.priorSD)
    }

    /// For every answered cell: the rest-of-pattern EAP θ̂ᵢ and, per category k of the item, Σ_q P_jk(θ_q) π₋ⱼ(θ_q)
    /// (`probabilities[j]`: category-major, K × nodes); grouped by item (`expected[j][k][i]`).
    private static func restOfPattern(data: ResponseMatrix, table: LogCategoryTable, probabilities p: [[Double]], grid: QuadratureGrid)
        -> (thetas: [[Double]], responses: [[UInt8]], expected: [[[Double]]])
    {
        let nq = grid.count, J = data.itemCount
        let totals = data.itemTotals().responses
        var thetas = totals.map { [Double](reserveCapacity: $0) }
        var expected = (0..<J).map { j in [[Double]](repeating: [Double](reserveCapacity: totals[j]), count: data.categoryCounts[j]) }
        var responses = totals.map { [UInt8](reserveCapacity: $0) }
        var full = [Double](repeating: 0, count: nq), weights = full
        grid.logWeights.withUnsafeBufferPointer { prior in
            table.rowStart.withUnsafeBufferPointer { rowStart in
                data.itemIndices.withUnsafeBufferPointer { itemIndices in
                    data.responses.withUnsafeBufferPointer { allResponses in
                        full.withUnsafeMutableBufferPointer { full in
                            weights.withUnsafeMutableBufferPointer { weights in
                                for i in 0..<data.personCount {
                                    let cells = data.cells(ofPerson: i)
                                    guard !cells.isEmpty else { continue }
                                    // The full pattern's log posterior (`GridPosterior`), then each answer's row taken out of it.
                                    GridPosterior.accumulate(
                                        into: full.baseAddress!, prior: prior.baseAddress!, items: itemIndices.baseAddress! + cells.lowerBound,
                                        responses: allResponses.baseAddress! + cells.lowerBound, count: cells.count, table: table,
                                        rowStart: rowStart.baseAddress!)
                                    for c in cells {
                                        let j = Int(data.itemIndices[c]), u = data.responses[c]
                                        let row = table.row(item: j, category: Int(u))
                                        var top = -Double.infinity
                                        for q in 0..<nq {
                                            weights[q] = full[q] - row[q]
                                            top = max(top, weights[q])
                                        }
                                        var total = 0.0, first = 0.0
                                        for q in 0..<nq {
                                            let w = exp(weights[q] - top)
                                            weights[q] = w
                                            total += w
                                            first += w * grid.points[q]
                                        }
                                        thetas[j].append(first / total)
                                        responses[j].append(u)
                                        p[j].withUnsafeBufferPointer { pj in
                                            for k in 0..<data.categoryCounts[j] {
                                                var predicted = 0.0
                                                for q in 0..<nq { predicted += weights[q] * pj[k * nq + q] }
                                                expected[j][k].append(predicted / total)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return (thetas, responses, expected)
    }
}

private extension Array {
    init(reserveCapacity n: Int) {
        self.init()
        reserveCapacity(n)
    }
}
