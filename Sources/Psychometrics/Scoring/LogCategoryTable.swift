import Foundation

/// log P(u = k | θ_t) of every item's categories on a set of nodes: the one builder of the tables that every
/// posterior on a grid reads (the E-step, EAP, person fit, Q3, the empirical item curves; `GridPosterior`).
///
/// One row per (item, category): item j's category k is row `rowStart[j] + k`, rows are `stride` doubles apart
/// (`nodeCount` values, then zero padding to whole 64-byte lines), so a response u to item j selects row
/// `rowStart[j] + u`. For a dichotomous item rows 2j and 2j + 1 of an all-dichotomous table hold log Q and log P.
/// Values come from the items' `logCategoryProbabilities(at:into:)`, stable in both tails.
package struct LogCategoryTable: @unchecked Sendable {
    /// Nodes per row.
    package let nodeCount: Int
    /// Doubles from one row's start to the next (`nodeCount` rounded up to a multiple of 8).
    package let stride: Int
    /// Per item, its first row; `rowStart[itemCount]` is the row count.
    package let rowStart: [Int32]
    /// The rows, `stride` apart, 64-byte aligned (`AlignedRows`), freed with the table's last copy.
    private let storage: Storage

    private final class Storage: @unchecked Sendable {
        let rows: AlignedRows
        init(rows: AlignedRows) { self.rows = rows }
        deinit { rows.deallocate() }
    }

    /// - Precondition: every item has at least two categories and at most 256 (responses are bytes).
    package init<Item: ItemResponseModel>(items: [Item], nodes: [Double]) {
        self.init(count: items.count, categories: { items[$0].categoryCount }, nodes: nodes) { j, theta, out in
            items[j].logCategoryProbabilities(at: theta, into: out)
        }
    }

    /// The same for a bank of mixed models.
    package init(items: [any ItemResponseModel], nodes: [Double]) {
        self.init(count: items.count, categories: { items[$0].categoryCount }, nodes: nodes) { j, theta, out in
            items[j].logCategoryProbabilities(at: theta, into: out)
        }
    }

    /// The builder: `fill(j, θ, out)` writes item j's K_j log probabilities at θ.
    package init(
        count: Int, categories: (Int) -> Int, nodes: [Double],
        fill: (Int, Double, UnsafeMutableBufferPointer<Double>) -> Void
    ) {
        var starts = [Int32](repeating: 0, count: count + 1), largest = 2
        for j in 0..<count {
            let k = categories(j)
            precondition(k >= 2 && k <= 256, "item \(j + 1) has \(k) categories; allowed 2…256")
            starts[j + 1] = starts[j] + Int32(k)
            largest = max(largest, k)
        }
        let nq = nodes.count
        let rows = AlignedRows(rows: Int(starts[count]), length: nq)
        withUnsafeTemporaryAllocation(of: Double.self, capacity: largest) { scratch in
            for j in 0..<count {
                let k = Int(starts[j + 1] - starts[j]), first = Int(starts[j])
                let out = UnsafeMutableBufferPointer(rebasing: scratch[0..<k])
                for t in 0..<nq {
                    fill(j, nodes[t], out)
                    for c in 0..<k { rows.row(first + c)[t] = out[c] }
                }
            }
        }
        nodeCount = nq
        stride = rows.stride
        rowStart = starts
        storage = Storage(rows: rows)
    }

    /// A table whose rows are already filled: `rows` (taken over, deallocated with the table) holds row
    /// `rowStart[j] + k` for category k of item j, `nodeCount` values each.
    package init(rowStart: [Int32], nodeCount: Int, rows: AlignedRows) {
        precondition(rows.stride == (nodeCount + 7) / 8 * 8, "rows of \(nodeCount) nodes")
        self.nodeCount = nodeCount
        stride = rows.stride
        self.rowStart = rowStart
        storage = Storage(rows: rows)
    }

    package var itemCount: Int { rowStart.count - 1 }
    package var rowCount: Int { Int(rowStart[itemCount]) }
    /// Categories of item j.
    package func categoryCount(of j: Int) -> Int { Int(rowStart[j + 1] - rowStart[j]) }

    /// The first of `rowCount × stride` doubles.
    package var base: UnsafePointer<Double> { UnsafePointer(storage.rows.base) }

    /// Item j's category k: `nodeCount` values.
    package func row(item j: Int, category k: Int) -> UnsafeBufferPointer<Double> {
        precondition(j >= 0 && j < itemCount && k >= 0 && k < categoryCount(of: j), "item \(j), category \(k) is outside the table")
        return UnsafeBufferPointer(start: base + (Int(rowStart[j]) + k) * stride, count: nodeCount)
    }

    /// log P (category 1) and log Q (category 0) of an all-dichotomous table, item-major without padding (J × Q):
    /// the dense E-step's BLAS operands.
    package func dichotomousColumns() -> (logP: [Double], logQ: [Double]) {
        let nq = nodeCount
        var logP = [Double](repeating: 0, count: itemCount * nq), logQ = logP
        for j in 0..<itemCount {
            precondition(categoryCount(of: j) == 2, "item \(j + 1) is not dichotomous")
            let q = base + Int(rowStart[j]) * stride, p = q + stride
            for t in 0..<nq { logP[j * nq + t] = p[t]; logQ[j * nq + t] = q[t] }
        }
        return (logP, logQ)
    }
}
