import Foundation

/// Simulated responses to bifactor items (`BifactorItem`): per session θ_g and one θ_s per specific factor drawn
/// independent N(0, 1), each answer 1 with probability P(θ_g, θ_s of the item's factor); a random subset of
/// `itemsPerSession` items per session (missing by design) or every item.
public struct BifactorSimulator: Sendable {
    public var items: [BifactorItem]
    /// The number of specific factors (each item's `specific` is below it).
    public var specificFactorCount: Int
    public var itemsPerSession: Int

    public init(items: [BifactorItem], specificFactorCount: Int, itemsPerSession: Int? = nil) {
        self.items = items
        self.specificFactorCount = specificFactorCount
        self.itemsPerSession = min(max(1, itemsPerSession ?? items.count), items.count)
    }

    /// `count` sessions as a `ResponseMatrix` (sessions s1…, items `itemIDs`) and each session's factor scores
    /// (θ_g first, then the specific factors).
    public func matrix(count: Int, itemIDs: [String], using rng: inout some RandomNumberGenerator) -> (ResponseMatrix, [[Double]]) {
        let J = items.count
        var order = Array(0..<J), offsets = [0], cells: [Int32] = [], values: [UInt8] = [], scores: [[Double]] = []
        scores.reserveCapacity(count)
        var chosen = [Int]()
        for _ in 0..<count {
            let theta = (0...specificFactorCount).map { _ in RandomVariate.normal(using: &rng) }
            scores.append(theta)
            chosen.removeAll(keepingCapacity: true)
            if itemsPerSession == J {
                chosen = Array(0..<J)
            } else {
                for slot in 0..<itemsPerSession {
                    let pick = slot + Int(rng.next(upperBound: UInt64(J - slot)))
                    order.swapAt(slot, pick)
                    chosen.append(order[slot])
                }
                chosen.sort()
            }
            for j in chosen {
                let item = items[j]
                let p = item.probability(general: theta[0], specific: item.specific.map { theta[$0 + 1] } ?? 0)
                cells.append(Int32(j))
                values.append(RandomVariate.uniform(using: &rng) < p ? 1 : 0)
            }
            offsets.append(cells.count)
        }
        let ids = (0..<count).map { "s\($0 + 1)" }
        return (ResponseMatrix(validatedPersonIDs: ids, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: cells, responses: values), scores)
    }
}
