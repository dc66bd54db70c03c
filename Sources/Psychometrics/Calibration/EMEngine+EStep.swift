import CKernels
import CLapack
import Foundation

extension EMEngine {
    /// Expected counts at the current parameters: `r[j·Q + q]` = expected correct responses to item j at node q,
    /// `n[j·Q + q]` = expected responses, and the marginal log-likelihood Σᵢ log Σ_q π_q Πⱼ P(uᵢⱼ | θ_q).
    /// With `estimatesLatent`, `mass[q]` = Σᵢ wᵢ(q), the posterior mass of all persons at node q.
    struct Expectation {
        var r: [Double]
        var n: [Double]
        var logLikelihood: Double
        var mass: [Double]? = nil
        /// Dense E-step: wall time inside the BLAS products (the slowest worker's sum), for benchmarks.
        var blasSeconds = 0.0
    }

    func eStep() -> Expectation {
        let tables = logTables()
        if let dense { return denseEStep(dense, tables) }
        return sparseEStep(tables)
    }

    /// Visits answered cells only: for person i, log Lᵢ(θ_q) = log π_q + Σ_{j answered} log P(uᵢⱼ | θ_q), then
    /// the normalised posterior wᵢ(q) is added to r[j] when uᵢⱼ = 1 and to the wrong-answer count n[j] − r[j]
    /// otherwise (one row per answer; n = r + (n − r) at the end), over the posterior's support. Cost ∝ cells × Q.
    /// Each worker takes its persons in order into its own counts; the row loops, the exp and the normalisation
    /// are `CKernels` (vectorised for the CPU, the same bits from each version, rows prefetched two answers ahead).
    private func sparseEStep(_ tables: (logP: [Double], logQ: [Double])) -> Expectation {
        let nq = q, J = itemCount, persons = data.personCount
        let w = workers
        // Rows of whole 64-byte lines (`AlignedRows`): the tables (log P rows, then log(1 − P) rows) are copied in;
        // each worker's counts (right-answer rows, then wrong-answer rows) are added into r and n at the end.
        let table = AlignedRows(rows: 2 * J, length: nq), counts = AlignedRows(rows: w * 2 * J, length: nq)
        defer { table.deallocate(); counts.deallocate() }
        let stride = table.stride
        for j in 0..<J {
            for t in 0..<nq {
                table.row(j)[t] = tables.logP[j * nq + t]
                table.row(J + j)[t] = tables.logQ[j * nq + t]
            }
        }
        var ll = [Double](repeating: 0, count: w)
        let withMass = estimatesLatent
        var mass = [Double](repeating: 0, count: withMass ? w * nq : 0)
        let logPrior = grid.logWeights
        mass.withUnsafeMutableBufferPointer { massAll in
        ll.withUnsafeMutableBufferPointer { llAll in
        logPrior.withUnsafeBufferPointer { prior in
        data.rowOffsets.withUnsafeBufferPointer { offsets in
        data.itemIndices.withUnsafeBufferPointer { items in
        data.responses.withUnsafeBufferPointer { responses in
            parallelFor(w) { worker in
                let lo = persons * worker / w, hi = persons * (worker + 1) / w
                let right = counts.row(worker * 2 * J), wrong = counts.row(worker * 2 * J + J)
                let acc = UnsafeMutablePointer<Double>.allocate(capacity: stride)
                defer { acc.deallocate() }
                var total = 0.0
                for i in lo..<hi {
                    let start = offsets[i], end = offsets[i + 1]
                    accumulateLogPosterior(into: acc, prior: prior.baseAddress!, cells: start..<end, items: items.baseAddress!,
                                           responses: responses.baseAddress!, logP: table.row(0), logQ: table.row(J), nodes: nq, stride: stride)
                    let (logLikelihood, support) = normalizeLogPosterior(acc, nq)
                    total += logLikelihood
                    if withMass {
                        let mw = massAll.baseAddress! + worker * nq
                        for t in 0..<nq { mw[t] += acc[t] }
                    }
                    // Correct answers add to r, wrong ones to n − r (made n below): one row per answer, over the
                    // posterior's support.
                    iqscore_add_posterior(acc, support.lowerBound, support.upperBound, items.baseAddress! + start,
                                          responses.baseAddress! + start, end - start, right, wrong, stride)
                }
                llAll[worker] = total
            }
        }}}}}}
        let rSum = sumWorkers(counts.row(0), workers: w, workerStride: 2 * J * stride, rows: J, rowStride: stride, length: nq)
        var nSum = sumWorkers(counts.row(J), workers: w, workerStride: 2 * J * stride, rows: J, rowStride: stride, length: nq)
        for k in 0..<(J * nq) { nSum[k] += rSum[k] }
        return Expectation(r: rSum, n: nSum, logLikelihood: ll.reduce(0, +), mass: withMass ? sumWorkers(mass, w, nq) : nil)
    }

    /// Dense E-step with BLAS: for a block of persons, log L = U·Dᵀ-form products
    /// ```
    /// log L (B×Q) = U (B×J) · logit P (J×Q) + M (B×J) · log(1 − P) (J×Q) + 1·log πᵀ
    /// r (J×Q) += Uᵀ W,   n (J×Q) += Mᵀ W
    /// ```
    /// with U the 0/1 responses, M the answered mask (all ones for complete data: then M·log(1 − P) is one row
    /// of column sums and n is the column sums of W for every item), W the row-normalised posteriors.
    private func denseEStep(_ dense: DenseResponses, _ tables: (logP: [Double], logQ: [Double])) -> Expectation {
        let nq = q, J = itemCount, persons = dense.rows
        let logitTable = zip(tables.logP, tables.logQ).map { $0 - $1 }
        var base = grid.logWeights
        if dense.mask == nil {
            for j in 0..<J { for t in 0..<nq { base[t] += tables.logQ[j * nq + t] } }
        }
        let w = workers
        let withMass = estimatesLatent
        let block = DenseResponses.blockRows
        let blocks = (persons + block - 1) / block
        var r = [Double](repeating: 0, count: w * J * nq)
        var n = [Double](repeating: 0, count: w * J * nq)
        var columnTotals = [Double](repeating: 0, count: w * nq)
        var ll = [Double](repeating: 0, count: w)
        var blasNanoseconds = [UInt64](repeating: 0, count: w)
        blasNanoseconds.withUnsafeMutableBufferPointer { blasAll in
        r.withUnsafeMutableBufferPointer { rAll in
        n.withUnsafeMutableBufferPointer { nAll in
        columnTotals.withUnsafeMutableBufferPointer { colAll in
        ll.withUnsafeMutableBufferPointer { llAll in
        logitTable.withUnsafeBufferPointer { logit in
        tables.logQ.withUnsafeBufferPointer { logQ in
        base.withUnsafeBufferPointer { base in
        dense.u.withUnsafeBufferPointer { u in
            parallelFor(w) { worker in
                let post = UnsafeMutablePointer<Double>.allocate(capacity: block * nq)
                defer { post.deallocate() }
                let rw = rAll.baseAddress! + worker * J * nq
                let nw = nAll.baseAddress! + worker * J * nq
                let cw = colAll.baseAddress! + worker * nq
                var total = 0.0
                var blasTime: UInt64 = 0
                var b = worker
                while b < blocks {
                    let lo = b * block, rows = min(block, persons - lo)
                    let ub = u.baseAddress! + lo * J
                    var t0 = DispatchTime.now().uptimeNanoseconds
                    BLAS.gemm(m: rows, n: nq, k: J, a: ub, lda: J, b: logit.baseAddress!, ldb: nq, beta: 0, c: post, ldc: nq)
                    if let mask = dense.mask {
                        mask.withUnsafeBufferPointer { m in
                            BLAS.gemm(m: rows, n: nq, k: J, a: m.baseAddress! + lo * J, lda: J, b: logQ.baseAddress!, ldb: nq, beta: 1, c: post, ldc: nq)
                        }
                    }
                    blasTime += DispatchTime.now().uptimeNanoseconds - t0
                    for i in 0..<rows {
                        let row = post + i * nq
                        for t in 0..<nq { row[t] += base[t] }
                        total += normalizeLogPosterior(row, nq).logLikelihood
                    }
                    t0 = DispatchTime.now().uptimeNanoseconds
                    BLAS.gemm(transposeA: true, m: J, n: nq, k: rows, a: ub, lda: J, b: post, ldb: nq, beta: 1, c: rw, ldc: nq)
                    if let mask = dense.mask {
                        mask.withUnsafeBufferPointer { m in
                            BLAS.gemm(transposeA: true, m: J, n: nq, k: rows, a: m.baseAddress! + lo * J, lda: J, b: post, ldb: nq, beta: 1, c: nw, ldc: nq)
                        }
                    }
                    blasTime += DispatchTime.now().uptimeNanoseconds - t0
                    if dense.mask == nil || withMass {
                        for i in 0..<rows { for t in 0..<nq { cw[t] += post[i * nq + t] } }
                    }
                    b += w
                }
                llAll[worker] = total
                blasAll[worker] = blasTime
            }
        }}}}}}}}}
        var nSum = sumWorkers(n, w, J * nq)
        let totals = dense.mask == nil || withMass ? sumWorkers(columnTotals, w, nq) : []
        if dense.mask == nil {
            for j in 0..<J { for t in 0..<nq { nSum[j * nq + t] = totals[t] } }
        }
        return Expectation(r: sumWorkers(r, w, J * nq), n: nSum, logLikelihood: ll.reduce(0, +), mass: withMass ? totals : nil,
                           blasSeconds: Double(blasNanoseconds.max() ?? 0) / 1e9)
    }

    /// The workers' `size` values each (worker w's at `w · size`), added in worker order.
    private func sumWorkers(_ values: [Double], _ workers: Int, _ size: Int) -> [Double] {
        if workers == 1 || size == 0 { return values }
        return values.withUnsafeBufferPointer {
            sumWorkers($0.baseAddress!, workers: workers, workerStride: size, rows: 1, rowStride: size, length: size)
        }
    }

    /// The workers' `rows` rows of `length` values, added in worker order (the first worker's copied, then each
    /// later one's added) into rows packed `length` apart: worker w's row r starts at
    /// `values + w · workerStride + r · rowStride` (padded rows have `rowStride` > `length`).
    private func sumWorkers(_ values: UnsafePointer<Double>, workers: Int, workerStride: Int, rows: Int, rowStride: Int,
                            length: Int) -> [Double] {
        var out = [Double](repeating: 0, count: rows * length)
        for worker in 0..<workers {
            let block = values + worker * workerStride
            for r in 0..<rows {
                for t in 0..<length {
                    let v = block[r * rowStride + t]
                    out[r * length + t] = worker == 0 ? v : out[r * length + t] + v
                }
            }
        }
        return out
    }
}

/// log π_q + Σ_{answered j} log P(uᵢⱼ | θ_q) for one person's `cells`, into `acc` (Q values). Each answer's
/// table row sits at an item-dependent address that the hardware cannot predict, so the row two answers ahead is
/// prefetched. Used by the sparse E-step and the person-score covariance (the same sums, in the same order).
@inline(__always)
func accumulateLogPosterior(into acc: UnsafeMutablePointer<Double>, prior: UnsafePointer<Double>, cells: Range<Int>,
                            items: UnsafePointer<Int32>, responses: UnsafePointer<UInt8>,
                            logP: UnsafePointer<Double>, logQ: UnsafePointer<Double>, nodes nq: Int, stride: Int) {
    iqscore_log_posterior(acc, prior, items + cells.lowerBound, responses + cells.lowerBound, cells.count, logP, logQ, nq, stride)
}

/// Turns log L(θ_q) + log π_q in place into the normalised posterior and returns log Σ_q exp(·) (the person's
/// marginal log-likelihood, shifting by the maximum to avoid underflow) and the posterior's support: the nodes
/// from the first to the last whose weight is at least 2⁻⁵⁰ of the largest. A smaller weight's terms are below
/// the rounding unit of the largest one's, so the E-step's counts and the standard errors' score rows leave them
/// out (a 25-item session's posterior covers about 38 of 61 nodes). The kernel is
/// `iqscore_normalize_log_posterior` (CKernels: the exponentials as `expShifted`, vectorised for the CPU; libm's
/// `exp` was a fifth of a sparse E-step).
@inline(__always) @discardableResult
func normalizeLogPosterior(_ v: UnsafeMutablePointer<Double>, _ count: Int) -> (logLikelihood: Double, support: Range<Int>) {
    var first = 0, last = 0
    let logLikelihood = iqscore_normalize_log_posterior(v, count, &first, &last)
    return (logLikelihood, first..<last)
}
