import Foundation

/// Responses drawn from items of any model (`ItemResponseModel`): the category of a response at θ by the inverse
/// of the cumulative category probabilities with one uniform draw,
/// ```
/// u = min { k : Σ_{m ≤ k} P_m(θ) ≥ U },   U ~ Uniform(0, 1)
/// ```
/// For recovery studies of the item-model calibrator and for `simulate` on mixed banks. Every function takes the
/// generator explicitly, so results are reproducible from a seed.
package enum CategoryResponseSimulator {
    /// One response to `item` at θ.
    package static func response(to item: some ItemResponseModel, at theta: Double, using rng: inout some RandomNumberGenerator) -> UInt8 {
        response(to: item, at: theta, uniform: RandomVariate.uniform(using: &rng))
    }

    /// The response to `item` at θ for the uniform draw `u` in [0, 1): the first category whose cumulative
    /// probability reaches u.
    package static func response(to item: some ItemResponseModel, at theta: Double, uniform u: Double) -> UInt8 {
        let k = item.categoryCount
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: k) { p in
            item.logCategoryProbabilities(at: theta, into: p)
            var total = 0.0
            for c in 0..<(k - 1) {
                total += exp(p[c])
                if u <= total { return UInt8(c) }
            }
            return UInt8(k - 1)
        }
    }

    /// Persons with θ ~ N(mean, sd²) answering every item, or `itemsPerPerson` of them drawn at random without
    /// replacement (missing by design); returns the matrix (item ids `itemIDs`, category counts from the items)
    /// and the θs drawn.
    /// - Precondition: one id per item, 1 ≤ `itemsPerPerson` ≤ items, at least one person, sd > 0.
    package static func matrix(
        items: [any ItemResponseModel], itemIDs: [String], persons: Int, itemsPerPerson: Int? = nil,
        mean: Double = 0, sd: Double = 1, using rng: inout some RandomNumberGenerator
    ) -> (ResponseMatrix, [Double]) {
        let J = items.count, n = itemsPerPerson ?? J
        precondition(itemIDs.count == J && n >= 1 && n <= J && persons >= 1 && sd > 0, "one id per item, 1…\(J) items per person, a positive SD")
        var offsets = [0], indices: [Int32] = [], responses: [UInt8] = [], thetas: [Double] = []
        offsets.reserveCapacity(persons + 1)
        indices.reserveCapacity(persons * n)
        responses.reserveCapacity(persons * n)
        var order = Array(0..<J)
        for _ in 0..<persons {
            let theta = RandomVariate.normal(mean: mean, sd: sd, using: &rng)
            thetas.append(theta)
            if n < J {
                for k in 0..<n { order.swapAt(k, k + Int(rng.next() % UInt64(J - k))) }
            }
            for j in order[0..<n].sorted() {
                indices.append(Int32(j))
                responses.append(response(to: items[j], at: theta, using: &rng))
            }
            offsets.append(indices.count)
        }
        return (
            ResponseMatrix(
                validatedPersonIDs: (1...persons).map(String.init), itemIDs: itemIDs, rowOffsets: offsets,
                itemIndices: indices, responses: responses, categoryCounts: items.map(\.categoryCount)), thetas
        )
    }
}
