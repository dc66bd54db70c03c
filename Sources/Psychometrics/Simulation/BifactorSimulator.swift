import Foundation

/// Simulated responses to bifactor items (`BifactorItem`): per session θ_g and one θ_s per specific factor drawn
/// independent N(0, 1), each answer 1 with probability P(θ_g, θ_s of the item's factor); a random subset of
/// `itemsPerSession` items per session (missing by design) or every item.
package struct BifactorSimulator: Sendable {
    package var items: [BifactorItem]
    /// The number of specific factors (each item's `specific` is below it).
    package var specificFactorCount: Int
    package var itemsPerSession: Int

    package init(items: [BifactorItem], specificFactorCount: Int, itemsPerSession: Int? = nil) {
        self.items = items
        self.specificFactorCount = specificFactorCount
        self.itemsPerSession = min(max(1, itemsPerSession ?? items.count), items.count)
    }

    /// Generates `count` sessions, calling `body` for each in order with its factor scores (θ_g first, then the
    /// specific factors) and its answers (item, 0/1) ascending by item (streaming: nothing is kept).
    package func generate(
        count: Int, using rng: inout some RandomNumberGenerator,
        _ body: (_ scores: [Double], _ responses: [(item: Int, response: UInt8)]) throws -> Void
    ) rethrows {
        let J = items.count
        var order = Array(0..<J), chosen = [Int](), responses: [(item: Int, response: UInt8)] = []
        for _ in 0..<count {
            let theta = (0...specificFactorCount).map { _ in RandomVariate.normal(using: &rng) }
            chosen.removeAll(keepingCapacity: true)
            if itemsPerSession == J {
                chosen = Array(0..<J)
            } else {
                // Partial Fisher–Yates: the first k slots become a uniform sample without replacement.
                for slot in 0..<itemsPerSession {
                    let pick = slot + Int(rng.next(upperBound: UInt64(J - slot)))
                    order.swapAt(slot, pick)
                    chosen.append(order[slot])
                }
                chosen.sort()
            }
            responses.removeAll(keepingCapacity: true)
            for j in chosen {
                let item = items[j]
                let p = item.probability(general: theta[0], specific: item.specific.map { theta[$0 + 1] } ?? 0)
                responses.append((j, RandomVariate.uniform(using: &rng) < p ? 1 : 0))
            }
            try body(theta, responses)
        }
    }

    /// `count` sessions as a `ResponseMatrix` (sessions s1…, items `itemIDs`) and each session's factor scores
    /// (θ_g first, then the specific factors).
    package func matrix(count: Int, itemIDs: [String], using rng: inout some RandomNumberGenerator) -> (ResponseMatrix, [[Double]]) {
        var offsets = [0], cells: [Int32] = [], values: [UInt8] = [], scores: [[Double]] = []
        scores.reserveCapacity(count)
        generate(count: count, using: &rng) { theta, responses in
            scores.append(theta)
            for (j, u) in responses {
                cells.append(Int32(j))
                values.append(u)
            }
            offsets.append(cells.count)
        }
        let ids = (0..<count).map { "s\($0 + 1)" }
        return (ResponseMatrix(validatedPersonIDs: ids, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: cells, responses: values), scores)
    }

    /// A bifactor (or testlet) bank from a unidimensional one (`BankSpecification.draw`): item j keeps a_g = a,
    /// d = −a·b and c, and loads on specific factor `factors[j]` (nil: the general factor only) with
    /// a_s = r_j · a_g, r_j ~ U(0.3, 0.9) per item, or for the testlet model a_s = λ_f · a_g with λ_f ~ U(0.3, 0.9)
    /// per factor (drawn first, in factor order).
    package static func items(from bank: ItemBank, factors: [Int?], testlet: Bool, using rng: inout some RandomNumberGenerator) -> [BifactorItem] {
        let count = (factors.compactMap { $0 }.max() ?? -1) + 1
        let ratios = testlet ? (0..<count).map { _ in 0.3 + 0.6 * RandomVariate.uniform(using: &rng) } : []
        return zip(bank.items, factors).map { entry, factor in
            let p = entry.parameters
            let ratio = factor.map { testlet ? ratios[$0] : 0.3 + 0.6 * RandomVariate.uniform(using: &rng) } ?? 0
            return BifactorItem(
                generalSlope: p.discrimination, specificSlope: ratio * p.discrimination, specific: factor,
                intercept: -p.discrimination * p.difficulty, guessing: p.guessing, estimatesGuessing: entry.model == .threePL,
                testletRatio: testlet && factor != nil ? ratio : nil)
        }
    }
}
