import CKernels
import CLapack
import Foundation

extension EMEngine {
    /// Expected counts at the current parameters: `r[j·Q + q]` = expected correct responses to item j at node q,
    /// `n[j·Q + q]` = expected responses, and the marginal log-likelihood Σᵢ log Σ_q π_q Πⱼ P(uᵢⱼ | θ_q).
    /// With `recordsMass`, `mass[q]` = Σᵢ wᵢ(q), the posterior mass of all persons at node q.
    struct Expectation {
        var r: [Double]
        var n: [Double]
        var logLikelihood: Double
        var mass: [Double]? = nil
        /// Dense E-step: wall time inside the BLAS products (the slowest worker's sum), for benchmarks.
        var blasSeconds = 0.0
    }

    func eStep() -> Expectation {
        let table = logTable()
        if let patterns { return patternEStep(patterns, table) }
        if let dense { return denseEStep(dense, table.dichotomousColumns()) }
        return sparseEStep(table)
    }

    /// The E-step on item-block patterns (`PatternBlocks`): the blocks' tables, the sparse kernels over the
    /// persons' pattern codes, then r and n folded out of the per-pattern sums.
    private func patternEStep(_ patterns: PatternBlocks, _ table: LogCategoryTable) -> Expectation {
        let blocks = patterns.table(table)
        let counts = sparseCategoryCounts(data: patterns.codes, table: blocks, logPrior: grid.logWeights, workers: workers, withMass: recordsMass)
        let (r, n) = patterns.fold(counts.counts, nodes: q, stride: q)
        return Expectation(r: r, n: n, logLikelihood: counts.logLikelihood, mass: counts.mass)
    }

    /// The sparse E-step (`sparseCategoryCounts`: cost ∝ cells × Q), then per item r = the right answers' count
    /// row and n = wrong + right.
    private func sparseEStep(_ table: LogCategoryTable) -> Expectation {
        let nq = q, J = itemCount
        let counts = sparseCategoryCounts(data: data, table: table, logPrior: grid.logWeights, workers: workers, withMass: recordsMass)
        var rSum = [Double](repeating: 0, count: J * nq), nSum = rSum
        for j in 0..<J {
            let wrong = Int(table.rowStart[j]) * nq, right = wrong + nq
            for t in 0..<nq {
                rSum[j * nq + t] = counts.counts[right + t]
                nSum[j * nq + t] = counts.counts[wrong + t] + counts.counts[right + t]
            }
        }
        return Expectation(r: rSum, n: nSum, logLikelihood: counts.logLikelihood, mass: counts.mass)
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
        let withMass = recordsMass
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
                                                    BLAS.gemm(
                                                        m: rows, n: nq, k: J, a: ub, lda: J, b: logit.baseAddress!, ldb: nq, beta: 0, c: post, ldc: nq
                                                    )
                                                    if let mask = dense.mask {
                                                        mask.withUnsafeBufferPointer { m in
                                                            BLAS.gemm(
                                                                m: rows, n: nq, k: J, a: m.baseAddress! + lo * J, lda: J, b: logQ.baseAddress!,
                                                                ldb: nq, beta: 1, c: post, ldc: nq)
                                                        }
                                                    }
                                                    blasTime += DispatchTime.now().uptimeNanoseconds - t0
                                                    for i in 0..<rows {
                                                        let row = post + i * nq
                                                        for t in 0..<nq { row[t] += base[t] }
                                                        total += GridPosterior.normalize(row, nq).logLikelihood
                                                    }
                                                    t0 = DispatchTime.now().uptimeNanoseconds
                                                    BLAS.gemm(
                                                        transposeA: true, m: J, n: nq, k: rows, a: ub, lda: J, b: post, ldb: nq, beta: 1, c: rw,
                                                        ldc: nq)
                                                    if let mask = dense.mask {
                                                        mask.withUnsafeBufferPointer { m in
                                                            BLAS.gemm(
                                                                transposeA: true, m: J, n: nq, k: rows, a: m.baseAddress! + lo * J, lda: J, b: post,
                                                                ldb: nq, beta: 1, c: nw, ldc: nq)
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
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        var nSum = sumWorkers(n, w, J * nq)
        let totals = dense.mask == nil || withMass ? sumWorkers(columnTotals, w, nq) : []
        if dense.mask == nil {
            for j in 0..<J { for t in 0..<nq { nSum[j * nq + t] = totals[t] } }
        }
        return Expectation(
            r: sumWorkers(r, w, J * nq), n: nSum, logLikelihood: ll.reduce(0, +), mass: withMass ? totals : nil,
            blasSeconds: Double(blasNanoseconds.max() ?? 0) / 1e9)
    }
}
