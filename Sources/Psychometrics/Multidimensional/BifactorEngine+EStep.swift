import CKernels
import Foundation

extension BifactorEngine {
    /// The bifactor E-step by Gibbons & Hedeker's (1992) dimension reduction. For person i, with w the rule's
    /// weights, G the general-only items and J_s the items of specific factor s:
    /// ```
    /// L_is(q)  = Σ_t w_t Π_{j ∈ J_s} P(u_ij | θ_g,q, θ_s,t)                 (one specific factor at a time)
    /// h_i(q)   = log w_q + Σ_{j ∈ G} log P(u_ij | θ_g,q) + Σ_s log L_is(q)
    /// log L_i  = log Σ_q exp h_i(q)                                          (the marginal log-likelihood)
    /// p_i(q)   = exp(h_i(q) − log L_i)                                       (posterior of θ_g)
    /// p_i(q,t) = p_i(q) · w_t Π_{j ∈ J_s} P(u_ij | q, t) / L_is(q)           (joint posterior of θ_g, θ_s)
    /// ```
    /// and the expected counts r_ju(q) += p_i(q) for a general-only answer u, r_ju(q,t) += p_i(q,t) for an answer
    /// u to an item of factor s. A factor the person answered nothing of has L_is = 1 and is skipped, so the cost
    /// is Σ_i (answers_i × Q²) multiplications and Σ_i (factors answered_i × Q) logarithms: linear in the number
    /// of specific factors, not Q^(1 + S) as the full grid.
    ///
    /// Layout: per group a table of rows (`AlignedRows`, 64-byte lines): row 2k + u of the group's k-th item holds
    /// P(u) at its nodes (Q for the general-only group, Q² pairs n = q·Q + t for a specific factor), with a second
    /// table of log P. The person's answers to one group are contiguous (items renumbered by group), so each run
    /// is one call of a C kernel:
    /// - general-only answers: `iqscore_log_posterior` sums their log rows into h (Q values);
    /// - a specific factor's answers: `iqscore_specific_products` multiplies their probability rows into the Q²
    ///   block w_t Π_j P (no exponentials: the products are the E-step's whole cost, persons × answers × Q²
    ///   multiplications, and Q² exponentials per block would cost more) and sums each q-row to L_is(q); a block
    ///   whose largest L_is(q) is below 2⁻⁷⁰⁰ (hundreds of answers to one factor) is redone in logs
    ///   (`iqscore_log_posterior`, then `iqscore_normalize_log_posterior` per q-row), so nothing underflows;
    /// - the block's rows are scaled by p_i(q)/L_is(q) and added into the count rows by `iqscore_add_posterior`
    ///   over the q-rows of θ_g's posterior support only (its weights beyond are below 2⁻⁵⁰ of the largest).
    /// Each worker takes a contiguous range of persons into its own count rows, added in worker order: the same
    /// bits for a given number of workers.
    func eStep() -> Expectation {
        let nq = q, pairs = nq * nq, w = workers, persons = data.personCount, groups = groupCount
        let tables = logTables(), products = probabilityTables()
        defer { tables.forEach { $0.deallocate() }; products.forEach { $0.deallocate() } }
        let rowCount = groupItems.map { 2 * $0.count }
        let counts = (0..<groups).map { AlignedRows(rows: w * rowCount[$0], length: nodeCount(group: $0)) }
        defer { counts.forEach { $0.deallocate() } }
        // Per group, each engine item's first table row (only the group's own items are read).
        let rowStarts: [[Int32]] = (0..<groups).map { g in
            (0..<items.count).map { j in Int32(group[j] == Int32(g) ? 2 * (j - groupItems[g].lowerBound) : 0) }
        }
        // The specific factor's prior over the pairs: log w_t (log path) and w_t (products), tiled over q.
        let specificPrior = AlignedRows(rows: 2, length: pairs)
        defer { specificPrior.deallocate() }
        for a in 0..<nq {
            for t in 0..<nq {
                specificPrior.row(0)[a * nq + t] = grid.logWeights[t]
                specificPrior.row(1)[a * nq + t] = grid.weights[t]
            }
        }
        var ll = [Double](repeating: 0, count: w)
        // Per worker, the general factor's posterior mass, then each specific factor's, and per worker and specific
        // factor the persons who answered it (recordsMass).
        let massStride = groups * nq
        var massRows = [Double](repeating: 0, count: recordsMass ? w * massStride : 0)
        var answeredFactor = [Int](repeating: 0, count: recordsMass ? w * groups : 0)
        let records = recordsMass, recordsSpecific = recordsMass && !specificMeans.isEmpty
        let tableBases = UncheckedSendableBox(tables.map(\.base)), productBases = UncheckedSendableBox(products.map(\.base)),
            countBases = UncheckedSendableBox(counts.map(\.base))
        let strides = tables.map(\.stride)
        answeredFactor.withUnsafeMutableBufferPointer { answeredAll in
            massRows.withUnsafeMutableBufferPointer { massAll in
                ll.withUnsafeMutableBufferPointer { llAll in
                    grid.logWeights.withUnsafeBufferPointer { logWeights in
                        group.withUnsafeBufferPointer { groupOf in
                            data.rowOffsets.withUnsafeBufferPointer { offsets in
                                data.itemIndices.withUnsafeBufferPointer { itemsAll in
                                    data.responses.withUnsafeBufferPointer { responsesAll in
                                        let rowStartPointers = rowStarts.map { UnsafeMutablePointer<Int32>.allocate(capacity: max(1, $0.count)) }
                                        defer { rowStartPointers.forEach { $0.deallocate() } }
                                        for (g, rows) in rowStarts.enumerated() { rowStartPointers[g].initialize(from: rows, count: rows.count) }
                                        let starts = UncheckedSendableBox(rowStartPointers)
                                        parallelFor(w) { worker in
                                            let lo = persons * worker / w, hi = persons * (worker + 1) / w
                                            let general = AlignedRows(rows: 1, length: nq),
                                                joint = AlignedRows(rows: max(1, groups - 1), length: pairs)
                                            // Per specific factor, 1/L_is(q) (products) or 1 (logs: the rows are already conditional weights).
                                            let inverse = AlignedRows(rows: max(1, groups - 1), length: nq)
                                            defer { general.deallocate(); joint.deallocate(); inverse.deallocate() }
                                            // The runs of the current person: (group, first answer, end).
                                            var runs = [(group: Int, start: Int, end: Int)]()
                                            runs.reserveCapacity(groups)
                                            let items = itemsAll.baseAddress!, responses = responsesAll.baseAddress!
                                            let h = general.base
                                            var total = 0.0
                                            for i in lo..<hi {
                                                let start = offsets[i], end = offsets[i + 1]
                                                runs.removeAll(keepingCapacity: true)
                                                var k = start
                                                while k < end {
                                                    let g = Int(groupOf[Int(items[k])])
                                                    var e = k + 1
                                                    while e < end && Int(groupOf[Int(items[e])]) == g { e += 1 }
                                                    runs.append((g, k, e))
                                                    k = e
                                                }
                                                // h(q) = log w_q + Σ_{general-only answers} log P.
                                                let generalRun = runs.first.flatMap { $0.group == 0 ? $0 : nil }
                                                iqscore_log_posterior(
                                                    h, logWeights.baseAddress!, items + (generalRun?.start ?? start),
                                                    responses + (generalRun?.start ?? start),
                                                    generalRun.map { $0.end - $0.start } ?? 0, starts.value[0], tableBases.value[0], nq, strides[0])
                                                // Each specific factor answered: log L_is(q) into h, its conditional weights kept.
                                                for run in runs where run.group > 0 {
                                                    let a = joint.row(run.group - 1), inv = inverse.row(run.group - 1)
                                                    let largest = iqscore_specific_products(
                                                        a, inv, specificPrior.row(1), items + run.start, responses + run.start,
                                                        run.end - run.start, starts.value[run.group], productBases.value[run.group],
                                                        nq, strides[run.group])
                                                    if largest >= 0x1p-700 {
                                                        for row in 0..<nq {
                                                            let l = inv[row]
                                                            h[row] += log(l)
                                                            inv[row] = l > 0 ? 1 / l : 0
                                                        }
                                                    } else {
                                                        // Too small for products: the same block in logs, each q-row normalised.
                                                        iqscore_log_posterior(
                                                            a, specificPrior.row(0), items + run.start, responses + run.start, run.end - run.start,
                                                            starts.value[run.group], tableBases.value[run.group], pairs, strides[run.group])
                                                        for row in 0..<nq {
                                                            var first = 0, last = 0
                                                            h[row] += iqscore_normalize_log_posterior(a + row * nq, nq, &first, &last)
                                                            inv[row] = 1
                                                        }
                                                    }
                                                }
                                                var first = 0, last = 0
                                                total += iqscore_normalize_log_posterior(h, nq, &first, &last)
                                                if records { for row in first..<last { massAll[worker * massStride + row] += h[row] } }
                                                for run in runs {
                                                    if run.group == 0 {
                                                        iqscore_add_posterior(
                                                            h, first, last, items + run.start, responses + run.start, run.end - run.start,
                                                            starts.value[0], countBases.value[0] + worker * rowCount[0] * strides[0], strides[0])
                                                        continue
                                                    }
                                                    let a = joint.row(run.group - 1), inv = inverse.row(run.group - 1)
                                                    for row in first..<last {
                                                        let scale = h[row] * inv[row], r = a + row * nq
                                                        for t in 0..<nq { r[t] *= scale }
                                                    }
                                                    if recordsSpecific {
                                                        // The specific factor's posterior p_i(t) = Σ_q p_i(q, t).
                                                        let m = massAll.baseAddress! + worker * massStride + run.group * nq
                                                        for row in first..<last {
                                                            let r = a + row * nq
                                                            for t in 0..<nq { m[t] += r[t] }
                                                        }
                                                        answeredAll[worker * groups + run.group] += 1
                                                    }
                                                    iqscore_add_posterior(
                                                        a, first * nq, last * nq, items + run.start, responses + run.start, run.end - run.start,
                                                        starts.value[run.group],
                                                        countBases.value[run.group] + worker * rowCount[run.group] * strides[run.group],
                                                        strides[run.group])
                                                }
                                            }
                                            llAll[worker] = total
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        let summed = (0..<groups).map { g in
            sumWorkers(
                counts[g].base, workers: w, workerStride: rowCount[g] * counts[g].stride, rows: rowCount[g], rowStride: counts[g].stride,
                length: nodeCount(group: g))
        }
        guard recordsMass else { return Expectation(counts: summed, logLikelihood: ll.reduce(0, +)) }
        // Summed over the workers in order; a person who answered none of a specific factor's items has its prior.
        let mass = (0..<groups).map { g in (0..<nq).map { row in (0..<w).reduce(0.0) { $0 + massRows[$1 * massStride + g * nq + row] } } }
        let specificMass =
            !recordsSpecific
            ? nil
            : (1..<max(1, groups)).map { g in
                let skipped = Double(persons - (0..<w).reduce(0) { $0 + answeredFactor[$1 * groups + g] })
                return (0..<nq).map { t in mass[g][t] + skipped * grid.weights[t] }
            }
        return Expectation(counts: summed, logLikelihood: ll.reduce(0, +), mass: mass[0], specificMass: specificMass)
    }

    /// Per specific factor's group (index 0: an empty placeholder for the general-only group), the rows
    /// P(u | nodes) of its items: `logTables` exponentiated.
    func probabilityTables() -> [AlignedRows] {
        (0..<groupCount).map { g in
            guard g > 0 else { return AlignedRows(rows: 0, length: 1) }
            return itemNodeTable(group: g) { item, z in
                ((1 - item.guessing) * Logistic.sigmoid(-z), item.guessing + (1 - item.guessing) * Logistic.sigmoid(z))
            }
        }
    }

    /// Per group, the rows log P(u | nodes) of its items (see `eStep`'s layout).
    func logTables() -> [AlignedRows] {
        (0..<groupCount).map { g in itemNodeTable(group: g) { item, z in item.logProbabilities(logit: z) } }
    }
}
