import CKernels
import Dispatch
import Psychometrics

/// A physical reference for the sparse E-step: how long this machine takes to move the E-step's rows, with
/// none of its arithmetic beyond additions. Per cell (a person's answer to an item drawn at random from `items`):
/// the item's row of `nodes` log-probabilities is added into the person's posterior (`iqscore_log_posterior`,
/// the E-step's own kernel), and the person's posterior row is added into the accumulator row of that item's category
/// (`iqscore_add_posterior`, the E-step's own kernel, over all nodes). Tables
/// and accumulators are per worker as in the E-step; exp, normalisation, the posterior's support and the
/// log-likelihood are left out. `passes` sweeps over the same `cells` (one per E-step). Best of `repeats`.
///
/// A sparse E-step cannot beat this: each cell reads one table row and updates one accumulator row of
/// `nodes` doubles, rows scattered over items × nodes × 8 bytes × 4 (log Q, log P and two count rows) per worker. dgemm
/// (`BLASReference`) does the same multiply-adds out of registers and L1, which a bank of 1,500 items does not
/// fit in.
package enum RowTrafficReference {
    package static func seconds(
        cells: Int, items: Int, nodes: Int, cellsPerPerson: Int, passes: Int, workers: Int = 2,
        repeats: Int = 3
    ) -> Double {
        precondition(cells > 0 && items > 0 && nodes > 0 && cellsPerPerson > 0 && passes > 0 && workers > 0, "positive sizes needed")
        let persons = max(1, cells / cellsPerPerson)
        // The same random forms on every repeat and worker layout: item k of person i from a seeded generator.
        var rng = SeededGenerator(seed: 20_261_123)
        var itemOf = [Int32](repeating: 0, count: persons * cellsPerPerson)
        var response = [UInt8](repeating: 0, count: persons * cellsPerPerson)
        for c in 0..<itemOf.count {
            itemOf[c] = Int32(rng.next() % UInt64(items))
            response[c] = UInt8(rng.next() & 1)
        }
        var best = Double.infinity
        for _ in 0..<repeats {
            let start = DispatchTime.now().uptimeNanoseconds
            itemOf.withUnsafeBufferPointer { itemOf in
                response.withUnsafeBufferPointer { response in
                    let box = UncheckedSendableBox((itemOf.baseAddress!, response.baseAddress!))
                    parallelFor(workers) { worker in
                        let (items_, responses) = box.value
                        // The E-step's layout: rows of whole cache lines (`AlignedRows`).
                        let table = AlignedRows(rows: 2 * items, length: nodes), counts = AlignedRows(rows: 2 * items, length: nodes)
                        defer { table.deallocate(); counts.deallocate() }
                        for j in 0..<items { for t in 0..<nodes { table.row(2 * j)[t] = -1; table.row(2 * j + 1)[t] = -0.5 } }
                        let prior = [Double](repeating: 0, count: nodes)
                        let rowStart = (0...items).map { Int32(2 * $0) }
                        let post = UnsafeMutablePointer<Double>.allocate(capacity: table.stride)
                        defer { post.deallocate() }
                        prior.withUnsafeBufferPointer { prior in
                            rowStart.withUnsafeBufferPointer { rowStart in
                                for _ in 0..<passes {
                                    for i in (persons * worker / workers)..<(persons * (worker + 1) / workers) {
                                        let cells = (i * cellsPerPerson)..<((i + 1) * cellsPerPerson)
                                        iqscore_log_posterior(
                                            post, prior.baseAddress!, items_ + cells.lowerBound, responses + cells.lowerBound,
                                            cells.count, rowStart.baseAddress!, table.base, nodes, table.stride)
                                        iqscore_add_posterior(
                                            post, 0, nodes, items_ + cells.lowerBound, responses + cells.lowerBound,
                                            cells.count, rowStart.baseAddress!, counts.base, counts.stride)
                                    }
                                }
                            }
                        }
                        precondition((0..<(2 * items * counts.stride)).allSatisfy { counts.base[$0].isFinite })
                    }
                }
            }
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return best
    }
}
