import Foundation

extension BifactorEngine {
    /// Item group g's table over its nodes (`nodeCount(group:)` long rows): two rows per item of the group, row 2k
    /// for u = 0 and 2k + 1 for u = 1 of its k-th item, each node's entries `values(item, z)` at the item's logit
    /// there, z = a_g θ_g + a_s θ_s + d (`coordinates`). The E-step's tables of probabilities
    /// (`probabilityTables`) and of log probabilities (`logTables`).
    func itemNodeTable(group g: Int, _ values: (BifactorItem, Double) -> (wrong: Double, right: Double)) -> AlignedRows {
        let n = nodeCount(group: g), range = groupItems[g]
        let table = AlignedRows(rows: 2 * range.count, length: n)
        for j in range {
            let item = items[j], wrong = table.row(2 * (j - range.lowerBound)), right = table.row(2 * (j - range.lowerBound) + 1)
            for node in 0..<n {
                let (tg, ts) = coordinates(node, group: g)
                let value = values(item, item.logit(general: tg, specific: ts))
                wrong[node] = value.wrong
                right[node] = value.right
            }
        }
        return table
    }
}
