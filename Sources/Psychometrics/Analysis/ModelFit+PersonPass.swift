import Foundation

/// Buffers that several workers fill at disjoint indices (persons, cells), behind one handle: the workers
/// share the class reference, each writes only its own indices, and `array` is read after they have all ended.
final class DisjointWrites<Element>: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<Element>

    init(repeating value: Element, count: Int) {
        buffer = .allocate(capacity: count)
        buffer.initialize(repeating: value)
    }

    deinit {
        buffer.deinitialize()
        buffer.deallocate()
    }

    subscript(index: Int) -> Element {
        get { buffer[index] }
        set { buffer[index] = newValue }
    }

    var array: [Element] { Array(buffer) }
}

/// What `ModelFit` computes for one person at a time: one value per worker, holding that worker's
/// accumulators of the item statistics and its scratch space.
struct PersonPass {
    /// Read-only inputs shared by every worker.
    struct Context {
        let data: ResponseMatrix
        let parameters: [ItemParameters]
        let wle: AbilityEstimator
        let eap: AbilityEstimator
        let grid: QuadratureGrid
        let expectation: SummedScoreExpectation
        /// The expectation table of the complete form (every item), when some person answered every item.
        let completeTable: [Double]?
        /// log P(u | θ_q) per item, category and node (`LogCategoryTable`), for each person's posterior.
        let table: LogCategoryTable
        /// P/(1 − P), 1/P and 1/(1 − P) per item and node, with P clamped to [1e-15, 1 − 1e-15] so that every
        /// ratio is finite (the leave-one-out posteriors of RMSD).
        let odds: [Double], inverseP: [Double], inverseQ: [Double]

        init(data: ResponseMatrix, parameters: [ItemParameters], options: ModelFit.Options) throws {
            self.data = data
            self.parameters = parameters
            var abilityOptions = AbilityOptions(method: .wle)
            abilityOptions.quadraturePoints = options.quadraturePoints
            abilityOptions.thetaBound = options.thetaBound
            wle = try AbilityEstimator(parameters: parameters, options: abilityOptions)
            abilityOptions.method = .eap
            eap = try AbilityEstimator(parameters: parameters, options: abilityOptions)
            grid = QuadratureGrid(validatedCount: options.quadraturePoints, bound: options.thetaBound)
            let expectation = SummedScoreExpectation(parameters: parameters, grid: grid)
            self.expectation = expectation
            let J = data.itemCount, Q = grid.count
            table = LogCategoryTable(items: parameters, nodes: grid.points)
            var odds = [Double](repeating: 0, count: J * Q), inverseP = odds, inverseQ = odds
            for t in 0..<(J * Q) {
                let p = min(max(expectation.probabilities[t], 1e-15), 1 - 1e-15)
                odds[t] = p / (1 - p); inverseP[t] = 1 / p; inverseQ[t] = 1 / (1 - p)
            }
            (self.odds, self.inverseP, self.inverseQ) = (odds, inverseP, inverseQ)
            completeTable =
                (0..<data.personCount).contains { data.cells(ofPerson: $0).count == J }
                ? Array(0..<J).withUnsafeBufferPointer { expectation.table(items: $0) } : nil
        }
    }

    /// Per person and per cell results, written at the person's and the cells' own indices.
    final class Outputs: Sendable {
        let persons: DisjointWrites<ModelFit.PersonFit>
        let eapTheta: DisjointWrites<Double>, eapVariance: DisjointWrites<Double>
        /// u − P(θ̂_WLE) per cell, for Q3.
        let residuals: DisjointWrites<Double>

        init(personCount: Int, cellCount: Int) {
            persons = DisjointWrites(repeating: ModelFit.PersonFit(personID: "", theta: 0, standardError: 0), count: personCount)
            eapTheta = DisjointWrites(repeating: 0, count: personCount)
            eapVariance = DisjointWrites(repeating: 0, count: personCount)
            residuals = DisjointWrites(repeating: 0, count: cellCount)
        }
    }

    var sx2: OrlandoThissenSX2
    var meanSquares: ConditionalMeanSquares
    var rmsd: RootMeanSquareDeviation
    /// Persons with 0 < s < n (those S-X² and the mean squares use).
    var informative = 0
    private var scratch: [Double] = [], posterior: [Double], flipped: [Double], expected: [Double]
    private var items: [Int] = [], responses: [UInt8] = [], rows: [Int32] = []

    init(itemCount J: Int, nodes Q: Int, replicates: Int) {
        sx2 = OrlandoThissenSX2(itemCount: J)
        meanSquares = ConditionalMeanSquares(itemCount: J)
        rmsd = RootMeanSquareDeviation(itemCount: J, nodes: Q, replicates: replicates)
        posterior = [Double](repeating: 0, count: Q)
        flipped = posterior
        expected = [Double](repeating: 0, count: J)
    }

    /// Folds another worker's accumulators into these.
    mutating func merge(_ other: PersonPass) {
        sx2.merge(other.sx2); meanSquares.merge(other.meanSquares); rmsd.merge(other.rmsd)
        informative += other.informative
    }

    mutating func process(person i: Int, _ c: Context, _ out: Outputs) {
        let data = c.data, cells = data.cells(ofPerson: i)
        items.removeAll(keepingCapacity: true); responses.removeAll(keepingCapacity: true)
        for cell in cells { items.append(Int(data.itemIndices[cell])); responses.append(data.responses[cell]) }
        let n = items.count, s = responses.reduce(0) { $0 + Int($1) }
        // Local references, so that the closures below can read them while they mutate `self`.
        let items = self.items, responses = self.responses
        items.withUnsafeBufferPointer { items in
            responses.withUnsafeBufferPointer { responses in
                // WLE: l_z, l_z*, the residuals Q3 correlates.
                let wle = c.wle.estimate(items, responses)
                let fit = PersonFitLz.statistics(parameters: c.parameters, items: items, responses: responses, theta: wle.theta)
                out.persons[i] = ModelFit.PersonFit(
                    personID: data.personIDs[i], theta: wle.theta, standardError: wle.standardError,
                    lz: fit.lz, lzStar: fit.lzStar)
                for (k, cell) in cells.enumerated() {
                    out.residuals[cell] = Double(responses[k]) - c.parameters[items[k]].probability(at: wle.theta)
                }
                // EAP: empirical reliability.
                let eap = c.eap.estimate(items, responses)
                out.eapTheta[i] = eap.theta
                out.eapVariance[i] = eap.standardError * eap.standardError
                addRMSD(person: i, items, responses, c)
                // Summed-score expectations: S-X², infit, outfit.
                guard s > 0, s < n else { return }
                informative += 1
                if n == data.itemCount, let table = c.completeTable {
                    for k in 0..<n { expected[k] = table[k * (n + 1) + s] }
                } else {
                    expected.withUnsafeMutableBufferPointer { out in
                        c.expectation.expectations(items: items, score: s, into: out, scratch: &scratch)
                    }
                }
                for k in 0..<n {
                    sx2.add(item: items[k], answered: n, score: s, response: responses[k], expected: expected[k])
                    meanSquares.add(item: items[k], response: responses[k], expected: expected[k])
                }
            }
        }
    }

    /// The person's posterior on the grid and, per answered item, the posterior had the response been the other
    /// one and the response's posterior predictive given the other responses (RMSD and its replicates, drawn
    /// from a generator seeded by the person's row so that results do not depend on the number of workers).
    private mutating func addRMSD(person i: Int, _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ c: Context) {
        let Q = c.grid.count, n = items.count
        rows.removeAll(keepingCapacity: true)
        for k in 0..<n { rows.append(Int32(truncatingIfNeeded: items[k])) }
        c.grid.logWeights.withUnsafeBufferPointer { prior in
            c.table.rowStart.withUnsafeBufferPointer { rowStart in
                rows.withUnsafeBufferPointer { rows in
                    posterior.withUnsafeMutableBufferPointer { posterior in
                        _ = GridPosterior.posterior(
                            into: posterior.baseAddress!, prior: prior.baseAddress!, items: rows.baseAddress,
                            responses: responses.baseAddress, count: n, table: c.table, rowStart: rowStart.baseAddress!)
                    }
                }
            }
        }
        var rng = SeededGenerator(seed: 0x9E37_79B9_7F4A_7C15 &* UInt64(i + 1))
        for k in 0..<n {
            let row = items[k] * Q, u = responses[k]
            var flippedTotal = 0.0, e: Double
            if u == 1 {
                // e = ∫P π₋ⱼ = 1 / Σ π/P; the flipped posterior ∝ π (1 − P)/P.
                var inverse = 0.0
                for q in 0..<Q {
                    flipped[q] = posterior[q] / c.odds[row + q]; flippedTotal += flipped[q]
                    inverse += posterior[q] * c.inverseP[row + q]
                }
                e = 1 / inverse
            } else {
                // e = Σ π P/(1 − P) / Σ π/(1 − P); the flipped posterior ∝ π P/(1 − P).
                var num = 0.0, den = 0.0
                for q in 0..<Q {
                    flipped[q] = posterior[q] * c.odds[row + q]; flippedTotal += flipped[q]
                    num += flipped[q]; den += posterior[q] * c.inverseQ[row + q]
                }
                e = num / den
            }
            for q in 0..<Q { flipped[q] /= flippedTotal }
            posterior.withUnsafeBufferPointer { post in
                flipped.withUnsafeBufferPointer { alt in
                    rmsd.add(item: items[k], response: u, posterior: post, flipped: alt, predictive: min(1, max(0, e)), using: &rng)
                }
            }
        }
    }
}
