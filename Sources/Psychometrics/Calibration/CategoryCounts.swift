import CKernels
import Foundation

/// The expected counts of a sparse E-step, per (item, category) row of a `LogCategoryTable` and node:
/// `counts[(rowStart[j] + k) · Q + q]` = Σᵢ wᵢ(q) over the persons who answered category k of item j, with
/// wᵢ the person's normalised posterior (`GridPosterior`); the marginal log-likelihood Σᵢ log Σ_q π_q Πⱼ P(uᵢⱼ | θ_q);
/// and, when asked, `mass[q]` = Σᵢ wᵢ(q).
struct CategoryCounts {
    var counts: [Double]
    var logLikelihood: Double
    var mass: [Double]?
}

/// The sparse E-step of every item model (Bock & Aitkin 1981), visiting answered cells only: for person i,
/// log Lᵢ(θ_q) = log π_q + Σ_{j answered} log P(uᵢⱼ | θ_q) (`GridPosterior.accumulate`), normalised, then wᵢ(q)
/// added to the count row of each answer's (item, category), over the posterior's support. Cost ∝ cells × Q.
/// Each worker takes its persons in order into its own count rows (64-byte lines, `AlignedRows`), added in worker
/// order at the end; the row loops, the exp and the normalisation are `CKernels` (vectorised for the CPU, the same
/// bits from each version, rows prefetched two answers ahead).
func sparseCategoryCounts(
    data: ResponseMatrix, table: LogCategoryTable, logPrior: [Double], workers w: Int,
    withMass: Bool
) -> CategoryCounts {
    let nq = table.nodeCount, persons = data.personCount, rows = table.rowCount, stride = table.stride
    let counts = AlignedRows(rows: w * rows, length: nq)
    defer { counts.deallocate() }
    var ll = [Double](repeating: 0, count: w)
    var mass = [Double](repeating: 0, count: withMass ? w * nq : 0)
    mass.withUnsafeMutableBufferPointer { massAll in
        ll.withUnsafeMutableBufferPointer { llAll in
            logPrior.withUnsafeBufferPointer { prior in
                table.rowStart.withUnsafeBufferPointer { rowStart in
                    data.rowOffsets.withUnsafeBufferPointer { offsets in
                        data.itemIndices.withUnsafeBufferPointer { items in
                            data.responses.withUnsafeBufferPointer { responses in
                                parallelFor(w) { worker in
                                    let lo = persons * worker / w, hi = persons * (worker + 1) / w
                                    let own = counts.row(worker * rows)
                                    let acc = UnsafeMutablePointer<Double>.allocate(capacity: stride)
                                    defer { acc.deallocate() }
                                    var total = 0.0
                                    for i in lo..<hi {
                                        let start = offsets[i], end = offsets[i + 1]
                                        let (logLikelihood, support) = GridPosterior.posterior(
                                            into: acc, prior: prior.baseAddress!, items: items.baseAddress! + start,
                                            responses: responses.baseAddress! + start, count: end - start,
                                            table: table, rowStart: rowStart.baseAddress!)
                                        total += logLikelihood
                                        if withMass {
                                            let mw = massAll.baseAddress! + worker * nq
                                            for t in 0..<nq { mw[t] += acc[t] }
                                        }
                                        iqscore_add_posterior(
                                            acc, support.lowerBound, support.upperBound, items.baseAddress! + start,
                                            responses.baseAddress! + start, end - start, rowStart.baseAddress!, own, stride)
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
    return CategoryCounts(
        counts: sumWorkers(counts.row(0), workers: w, workerStride: rows * stride, rows: rows, rowStride: stride, length: nq),
        logLikelihood: ll.reduce(0, +), mass: withMass ? sumWorkers(mass, w, nq) : nil)
}

/// The workers' `size` values each (worker w's at `w · size`), added in worker order.
func sumWorkers(_ values: [Double], _ workers: Int, _ size: Int) -> [Double] {
    if workers == 1 || size == 0 { return values }
    return values.withUnsafeBufferPointer {
        sumWorkers($0.baseAddress!, workers: workers, workerStride: size, rows: 1, rowStride: size, length: size)
    }
}

/// The workers' `rows` rows of `length` values, added in worker order (the first worker's copied, then each
/// later one's added) into rows packed `length` apart: worker w's row r starts at
/// `values + w · workerStride + r · rowStride` (padded rows have `rowStride` > `length`).
func sumWorkers(
    _ values: UnsafePointer<Double>, workers: Int, workerStride: Int, rows: Int, rowStride: Int,
    length: Int
) -> [Double] {
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
