import CKernels
import Foundation

extension EMEngine {
    /// The covariance term of Louis' formula for persons who each answered their own items (sparse banks,
    /// incomplete data, fixed items, 3PL banks too large for the by-node form), subtracted from the upper
    /// triangle of `info` (P × P, row-major):
    /// ```
    /// Cov_post(Sᵢ) = Σ_q wᵢ(q) (Sᵢ(θ_q) − sᵢ)(Sᵢ(θ_q) − sᵢ)ᵀ = G̃ᵢ G̃ᵢᵀ,   sᵢ = Σ_q wᵢ(q) Sᵢ(θ_q),
    /// G̃ᵢ[x, q] = (Sᵢₓ(θ_q) − sᵢₓ) √wᵢ(q)
    /// Sᵢₓ(θ) = (uᵢⱼ − Pⱼ(θ)) hⱼₓ(θ)   for parameter x of item j (summed over the items for a shared slope),
    /// ```
    /// over the person's local parameters, with wᵢ(q) the person's posterior weights and hⱼ = ∇Pⱼ / (Pⱼ(1 − Pⱼ))
    /// (Louis 1982, eq. 3.1; the μ, σ rows with fixed items use the score of log N(θ; μ, σ²)).
    ///
    /// Centring before the product (rather than Gᵢ Gᵢᵀ − sᵢ sᵢᵀ) leaves one Gram product per person and no rank-one
    /// correction, and it does not subtract two large, nearly equal numbers. (Over the posterior's support
    /// Σ_q wᵢ(q) = 1 − ε with ε < 61·2⁻⁵⁰; the two forms differ by ε sᵢ sᵢᵀ.)
    ///
    /// Persons go in chunks of up to 128 MB of local matrices, each chunk in two parallel passes:
    /// 1. the chunk's persons, split evenly over the workers: posterior, G̃ᵢ (`iqscore_score_rows` from the items'
    ///    terms, then `iqscore_centre_rows`), and Cᵢ = G̃ᵢ G̃ᵢᵀ on the local
    ///    parameters (`gramUpperPacked`: the upper triangle written packed by rows into the chunk buffer,
    ///    m(m + 1)/2 doubles a person, half the traffic of a square m × m);
    /// 2. the matrix rows, one band per worker with equal numbers of updates: each worker gathers the chunk's
    ///    local rows that land in its band, orders them by global row with a stable counting sort (persons stay
    ///    in order) and subtracts them row by row, while that matrix row is in cache.
    /// No worker writes another's rows, so there are no per-worker matrices to add and no serial apply; every
    /// entry receives its terms in person order whatever the thread count, so the result does not depend on it.
    ///
    /// Gᵢ and sᵢ run over the posterior's support (`GridPosterior.normalize`): the nodes left out have weights below
    /// 2⁻⁵⁰ of the largest, so entries move by less than their own rounding error summed over the nodes.
    ///
    /// Serial parts, O(P·workers + persons) integer work: adding the per-row update counts, the band and chunk
    /// boundaries.
    func subtractPersonScoreCovariances(from info: UnsafeMutablePointer<Double>, prob: [Double], h: [Double]) {
        let P = freeParameterCount, p = perItem, nq = q, persons = data.personCount, J = itemCount
        let w = workers
        let theta = nodes
        let table = logTable()
        let sharedModel = model == .rasch || model == .onePL
        let shared = sharedModel && !estimatesLatent // one slope for all items: local parameter 0
        let slopeFixed = sharedModel && estimatesLatent // the free items' slope is given, not estimated
        // h per item and parameter, contiguous over the nodes (the inner loop of Gᵢ).
        var hRows = [Double](repeating: 0, count: J * p * nq)
        for j in 0..<J { for t in 0..<nq { for x in 0..<p { hRows[(j * p + x) * nq + t] = h[(j * nq + t) * p + x] } } }

        /// The person's local parameters' global indices, ascending (cells are in item order; shared slope first,
        /// μ and σ last); returns their count.
        func localParameters(of i: Int, into global: UnsafeMutablePointer<Int32>) -> Int {
            var m = 0
            if shared { global[0] = 0; m = 1 }
            for k in data.cells(ofPerson: i) {
                let j = Int(data.itemIndices[k])
                if isFixed(j) { continue }
                for x in 0..<p where !(x == 0 && sharedModel) {
                    global[m] = Int32(globalIndex(item: j, parameter: x))
                    m += 1
                }
            }
            if estimatesLatent {
                global[m] = Int32(latentMeanIndex)
                global[m + 1] = Int32(latentSDIndex)
                m += 2
            }
            return m
        }

        // Pass 0: local sizes, and the updates per global row (a person's local row x of m receives m − x).
        var localCount = [Int32](repeating: 0, count: persons)
        var rowUpdates = [Int](repeating: 0, count: w * P)
        localCount.withUnsafeMutableBufferPointer { counts in
            rowUpdates.withUnsafeMutableBufferPointer { updates in
                let box = UncheckedSendableBox((counts.baseAddress!, updates.baseAddress!))
                parallelFor(w) { worker in
                    let (counts, updates) = box.value
                    let mine = updates + worker * P
                    let global = UnsafeMutablePointer<Int32>.allocate(capacity: P)
                    defer { global.deallocate() }
                    for i in (persons * worker / w)..<(persons * (worker + 1) / w) {
                        let m = localParameters(of: i, into: global)
                        counts[i] = Int32(m)
                        for x in 0..<m { mine[Int(global[x])] += m - x }
                    }
                }
            }
        }
        var rowWork = [Int](repeating: 0, count: P)
        for worker in 0..<w { for x in 0..<P { rowWork[x] += rowUpdates[worker * P + x] } }
        rowUpdates = []
        // Bands of rows with equal numbers of updates.
        let totalWork = max(1, rowWork.reduce(0, +))
        var bandStart = [Int](repeating: P, count: w + 1)
        bandStart[0] = 0
        var cumulative = 0, band = 1
        for x in 0..<P {
            cumulative += rowWork[x]
            while band < w && cumulative * w >= totalWork * band { bandStart[band] = x + 1; band += 1 }
        }
        let maxLocal = Int(localCount.max() ?? 0)
        guard maxLocal > 0 else { return }
        // Chunks: consecutive persons whose local matrices fit `capacity` doubles (128 MB, or one person's).
        let capacity = max(Self.personCovarianceChunkDoubles, Self.packedCount(maxLocal))
        var chunkStarts = [0], largestChunk = 0, largestIndex = 0, doubles = 0, indices = 0
        for i in 0..<persons {
            let m = Int(localCount[i])
            if i > chunkStarts[chunkStarts.count - 1] && doubles + Self.packedCount(m) > capacity {
                chunkStarts.append(i)
                doubles = 0
                indices = 0
            }
            doubles += Self.packedCount(m)
            indices += m
            largestChunk = max(largestChunk, doubles)
            largestIndex = max(largestIndex, indices)
        }
        chunkStarts.append(persons)

        let values = UnsafeMutablePointer<Double>.allocate(capacity: largestChunk)
        let globals = UnsafeMutablePointer<Int32>.allocate(capacity: largestIndex)
        defer { values.deallocate(); globals.deallocate() }
        var valueOffset: [Int] = [], indexOffset: [Int] = []
        grid.logWeights.withUnsafeBufferPointer { prior in
            table.rowStart.withUnsafeBufferPointer { rowStart in
                data.itemIndices.withUnsafeBufferPointer { items in
                    data.responses.withUnsafeBufferPointer { responses in
                        let pointers = UncheckedSendableBox((prior.baseAddress!, items.baseAddress!, responses.baseAddress!, rowStart.baseAddress!))
                        for k in 0..<(chunkStarts.count - 1) {
                            let first = chunkStarts[k], last = chunkStarts[k + 1]
                            valueOffset.removeAll(keepingCapacity: true)
                            indexOffset.removeAll(keepingCapacity: true)
                            var used = 0, usedIndex = 0
                            for i in first..<last {
                                let m = Int(localCount[i])
                                valueOffset.append(used)
                                indexOffset.append(usedIndex)
                                used += Self.packedCount(m)
                                usedIndex += m
                            }
                            let chunk = (first: first, count: last - first)
                            let box = UncheckedSendableBox((values, globals, valueOffset, indexOffset, info))

                            // Pass 1: each person's Cᵢ on its local parameters.
                            parallelFor(min(w, chunk.count)) { worker in
                                let (values, globals, valueOffset, indexOffset, _) = box.value
                                let (prior, items, responses, rowStart) = pointers.value
                                let lanes = min(w, chunk.count)
                                let post = UnsafeMutablePointer<Double>.allocate(capacity: nq)
                                let root = UnsafeMutablePointer<Double>.allocate(capacity: nq)
                                let g = UnsafeMutablePointer<Double>.allocate(capacity: maxLocal * nq)
                                let scratch = UnsafeMutablePointer<Double>.allocate(capacity: gramScratchCount(rows: maxLocal, columns: nq))
                                // The score rows' terms: target row, the item's probability row and the parameter's h row, response.
                                // (At most p a local parameter: a shared slope's terms all go to row 0.)
                                let terms = maxLocal * p
                                let termRow = UnsafeMutablePointer<Int64>.allocate(capacity: terms),
                                    termProb = UnsafeMutablePointer<Int64>.allocate(capacity: terms)
                                let termH = UnsafeMutablePointer<Int64>.allocate(capacity: terms),
                                    termU = UnsafeMutablePointer<Double>.allocate(capacity: terms)
                                defer {
                                    post.deallocate(); root.deallocate(); g.deallocate(); scratch.deallocate()
                                    termRow.deallocate(); termProb.deallocate(); termH.deallocate(); termU.deallocate()
                                }
                                for position in (chunk.count * worker / lanes)..<(chunk.count * (worker + 1) / lanes) {
                                    let i = chunk.first + position
                                    let cells = data.cells(ofPerson: i)
                                    let support = GridPosterior.posterior(
                                        into: post, prior: prior, items: items + cells.lowerBound, responses: responses + cells.lowerBound,
                                        count: cells.count, table: table, rowStart: rowStart
                                    ).support
                                    let t0 = support.lowerBound, t1 = support.upperBound
                                    let width = t1 - t0
                                    for t in t0..<t1 { root[t] = post[t].squareRoot() }
                                    let m = localParameters(of: i, into: globals + indexOffset[position])
                                    var local = shared ? 1 : 0, terms = 0
                                    for k in cells {
                                        let j = Int(data.itemIndices[k])
                                        if isFixed(j) { continue }
                                        for x in 0..<p where !(x == 0 && slopeFixed) {
                                            termRow[terms] = Int64(x == 0 && shared ? 0 : local)
                                            if !(x == 0 && shared) { local += 1 }
                                            termProb[terms] = Int64(j * nq + t0)
                                            termH[terms] = Int64((j * p + x) * nq + t0)
                                            termU[terms] = Double(data.responses[k])
                                            terms += 1
                                        }
                                    }
                                    hRows.withUnsafeBufferPointer { hr in
                                        prob.withUnsafeBufferPointer { pr in
                                            iqscore_score_rows(
                                                g, m, width, root + t0, terms, termRow, termProb, termH, termU, pr.baseAddress!, hr.baseAddress!)
                                        }
                                    }
                                    if estimatesLatent {
                                        let meanRow = g + (m - 2) * width, sdRow = g + (m - 1) * width
                                        for t in t0..<t1 {
                                            let score = NormalLatentDistribution.score(at: theta[t], mean: latentMean, sd: latentSD)
                                            meanRow[t - t0] += score.mean * root[t]
                                            sdRow[t - t0] += score.sd * root[t]
                                        }
                                    }
                                    // sᵢ = Gᵢ √wᵢ (Σ_q wᵢ(q) Sᵢ(θ_q)); centred rows G̃ᵢ[x, q] = Gᵢ[x, q] − sᵢₓ √wᵢ(q); Cᵢ = G̃ᵢ G̃ᵢᵀ.
                                    iqscore_centre_rows(g, m, width, root + t0)
                                    // The product's upper triangle, packed by rows straight into the chunk.
                                    gramUpperPacked(
                                        g, rows: m, columns: width, rowStride: width, scratch: scratch, into: values + valueOffset[position])
                                }
                            }

                            // Pass 2: each band's rows, in row order, persons in order within a row.
                            parallelFor(w) { band in
                                let (values, globals, valueOffset, indexOffset, info) = box.value
                                let lo = bandStart[band], hi = bandStart[band + 1]
                                guard lo < hi else { return }
                                var count = [Int](repeating: 0, count: hi - lo + 1)
                                var entries: [(person: Int32, local: Int32)] = [], rowOf: [Int32] = []
                                entries.reserveCapacity(indexOffset.last ?? 0)
                                rowOf.reserveCapacity(indexOffset.last ?? 0)
                                for c in 0..<chunk.count {
                                    let m = Int(localCount[chunk.first + c])
                                    let global = globals + indexOffset[c]
                                    for x in 0..<m {
                                        let row = Int(global[x])
                                        if row < lo { continue }
                                        if row >= hi { break }
                                        entries.append((Int32(c), Int32(x)))
                                        rowOf.append(Int32(row - lo))
                                        count[row - lo + 1] += 1
                                    }
                                }
                                for r in 0..<(hi - lo) { count[r + 1] += count[r] }
                                var sorted = entries
                                for e in 0..<entries.count {
                                    let r = Int(rowOf[e])
                                    sorted[count[r]] = entries[e]
                                    count[r] += 1
                                }
                                // Row by row: the row's upper part is copied out, updated in cache and copied back, which costs
                                // less than the cache misses of scattering into it in place.
                                let scratch = UnsafeMutablePointer<Double>.allocate(capacity: P)
                                defer { scratch.deallocate() }
                                var start = 0
                                for r in 0..<(hi - lo) {
                                    let end = count[r]
                                    defer { start = end }
                                    guard end > start else { continue }
                                    let row = lo + r
                                    let target = info + row * P + row
                                    scratch.update(from: target, count: P - row)
                                    for e in start..<end {
                                        if e + 8 < sorted.count {
                                            let ahead = sorted[e + 8], c = Int(ahead.person)
                                            let m = Int(localCount[chunk.first + c])
                                            let lx = Int(ahead.local)
                                            iqscore_prefetch_row(values + valueOffset[c] + Self.packedRowBase(lx, m), lx, m)
                                        }
                                        let c = Int(sorted[e].person), lx = Int(sorted[e].local)
                                        let m = Int(localCount[chunk.first + c])
                                        let global = globals + indexOffset[c]
                                        let source = values + valueOffset[c] + Self.packedRowBase(lx, m)
                                        for y in lx..<m { scratch[Int(global[y]) - row] -= source[y] }
                                    }
                                    target.update(from: scratch, count: P - row)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Doubles of an m × m upper triangle stored packed by rows: m(m + 1)/2.
    @inline(__always) static func packedCount(_ m: Int) -> Int { m * (m + 1) / 2 }

    /// Where row x of a packed upper triangle of order m would start if it held columns from 0: entry (x, y),
    /// y ≥ x, is at `packedRowBase(x, m) + y` (row x starts at x·m − x(x − 1)/2; minus x).
    @inline(__always) static func packedRowBase(_ x: Int, _ m: Int) -> Int { x * m - x * (x + 1) / 2 }

    /// The person-score covariance's chunk of local matrices: 2²⁴ doubles (128 MB). Each chunk streams the
    /// matrix rows once, so fewer, larger chunks move less memory.
    static var personCovarianceChunkDoubles: Int { 1 << 24 }
}
