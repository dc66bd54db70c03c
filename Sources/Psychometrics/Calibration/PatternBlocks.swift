import Foundation

/// The responses to dichotomous items regrouped into blocks of consecutive items, each person's responses to a
/// block coded as one pattern: the dense E-step's matrix products as table look-ups.
///
/// A block of k items has B^k patterns (B = 2 when every person answered every item: k = 8, 256 patterns; B = 3
/// with missing cells, digit 2 = not answered: k = 5, 243 patterns). Per E-step the table of each block holds,
/// for every pattern p and node θ_q, the block's log-likelihood
/// ```
/// L_b(p, q) = Σ_{j ∈ b} [u_j(p) = 1] log P_j(θ_q) + [u_j(p) = 0] log(1 − P_j(θ_q))   (missing: 0)
/// ```
/// built item by item (B^m rows after m items, each one row plus one item's row). Then each person's
/// log posterior is Σ_b L_b(p_ib, ·) + log π: K/k row additions in place of a K-term product per node; the
/// posteriors are summed per (block, pattern) (`sparseCategoryCounts`, the sparse E-step's kernels, over a
/// response matrix whose "items" are the blocks and whose "responses" the pattern codes), and the expected counts
/// follow from the pattern sums S_b(p, q):
/// ```
/// r_jq = Σ_{p: u_j(p) = 1} S_b(p, q),    n_jq = Σ_{p: u_j(p) ≠ missing} S_b(p, q)
/// ```
/// Same sums as the products, in another order. Per person 2K/k row operations instead of 2K (4K with a mask);
/// per E-step a fixed B^k · Q · (K/k) for the tables and the folding, paid back from a few hundred persons on.
struct PatternBlocks: Sendable {
    /// 2 (complete data) or 3 (some cells missing).
    let base: Int
    /// The items of each block.
    let blocks: [Range<Int>]
    /// Persons × blocks, each cell the person's pattern code in that block (categories B^k).
    let codes: ResponseMatrix
    let itemCount: Int

    /// Worth it when there are at least this many persons per pattern row of the tables.
    static let minimumPersonsPerBlockRow = 2

    /// Nil for data that are not 0/1 or too few persons for the tables to pay back.
    init?(_ data: ResponseMatrix) {
        guard data.isDichotomous, data.itemCount > 0 else { return nil }
        let base = data.isComplete ? 2 : 3, size = base == 2 ? 8 : 5
        let blocks = stride(from: 0, to: data.itemCount, by: size).map { $0..<min($0 + size, data.itemCount) }
        let rowsPerBlock = Int(pow(Double(base), Double(size)))
        guard data.personCount >= Self.minimumPersonsPerBlockRow * rowsPerBlock else { return nil }
        var offsets = [0], items: [Int32] = [], values: [UInt8] = []
        offsets.reserveCapacity(data.personCount + 1)
        items.reserveCapacity(data.personCount * blocks.count)
        values.reserveCapacity(data.personCount * blocks.count)
        var digits = [Int](repeating: base - 1, count: data.itemCount)
        for i in 0..<data.personCount {
            for j in 0..<data.itemCount { digits[j] = base - 1 }
            for c in data.cells(ofPerson: i) { digits[Int(data.itemIndices[c])] = Int(data.responses[c]) }
            for (b, block) in blocks.enumerated() {
                var code = 0, place = 1
                for j in block { code += digits[j] * place; place *= base }
                items.append(Int32(b)); values.append(UInt8(code))
            }
            offsets.append(items.count)
        }
        let categories = blocks.map { Int(pow(Double(base), Double($0.count))) }
        guard
            let codes = try? ResponseMatrix(
                personIDs: data.personIDs, itemIDs: blocks.indices.map { "block\($0)" }, rowOffsets: offsets,
                itemIndices: items, responses: values, categoryCounts: categories)
        else { return nil }
        self.base = base
        self.blocks = blocks
        self.codes = codes
        self.itemCount = data.itemCount
    }

    /// The blocks' pattern tables from the items' log Q and log P rows (`EMEngine.logTable`).
    func table(_ items: LogCategoryTable) -> LogCategoryTable {
        let nq = items.nodeCount
        var starts = [Int32](repeating: 0, count: blocks.count + 1)
        for (b, block) in blocks.enumerated() { starts[b + 1] = starts[b] + Int32(pow(Double(base), Double(block.count))) }
        let rows = AlignedRows(rows: Int(starts[blocks.count]), length: nq)
        let source = items.base, itemStride = items.stride
        for (b, block) in blocks.enumerated() {
            let first = Int(starts[b])
            var size = 1
            for j in block {
                // Patterns d·size + p for digit d of item j: row p plus item j's row for d (nothing for missing).
                for d in stride(from: base - 1, through: 0, by: -1) {
                    for p in 0..<size {
                        let to = rows.row(first + d * size + p), from = rows.row(first + p)
                        if d == 2 {
                            for t in 0..<nq { to[t] = from[t] }
                            continue
                        }
                        let item = source + (Int(items.rowStart[j]) + d) * itemStride
                        for t in 0..<nq { to[t] = from[t] + item[t] }
                    }
                }
                size *= base
            }
        }
        return LogCategoryTable(rowStart: starts, nodeCount: nq, rows: rows)
    }

    /// r and n (items × nodes) from the per-pattern posterior sums `counts` (rows as `table`'s, `stride` apart),
    /// one item at a time from a block's most significant digit down: the slice of patterns with digit d there is
    /// summed into item j's n (d ≠ missing) and r (d = 1), then the slices are added together, which leaves the
    /// sums over the remaining items' patterns (2·B^k·Q/(B − 1) additions per block).
    func fold(_ counts: [Double], nodes nq: Int, stride: Int) -> (r: [Double], n: [Double]) {
        var r = [Double](repeating: 0, count: itemCount * nq), n = r
        var work = counts
        work.withUnsafeMutableBufferPointer { w in
            r.withUnsafeMutableBufferPointer { rAll in
                n.withUnsafeMutableBufferPointer { nAll in
                    var first = 0
                    for block in blocks {
                        let size = Int(pow(Double(base), Double(block.count)))
                        var slice = size
                        for j in block.reversed() {
                            slice /= base
                            let rj = rAll.baseAddress! + j * nq, nj = nAll.baseAddress! + j * nq
                            let rows = w.baseAddress! + first * stride
                            for d in 0..<base {
                                let part = rows + d * slice * stride
                                for p in 0..<slice {
                                    let row = part + p * stride
                                    if d < 2 { for t in 0..<nq { nj[t] += row[t] } }
                                    if d == 1 { for t in 0..<nq { rj[t] += row[t] } }
                                    if d > 0 {
                                        let to = rows + p * stride
                                        for t in 0..<nq { to[t] += row[t] }
                                    }
                                }
                            }
                        }
                        first += size
                    }
                }
            }
        }
        return (r, n)
    }
}
