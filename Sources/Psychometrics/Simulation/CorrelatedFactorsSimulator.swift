import Foundation

/// Simulated responses under the correlated-factors model: per session θ = L z, z ~ N(0, I) and L the Cholesky
/// factor of the correlation matrix R, so θ ~ N(0, R); item j answers 1 with probability
/// c_j + (1 − c_j) σ(a_j θ_f(j) + d_j) (the item's `generalSlope` is its slope on its factor f(j)); every item, or a
/// random `itemsPerSession` of them (missing by design).
package struct CorrelatedFactorsSimulator: Sendable {
    package var items: [BifactorItem]
    /// Per item, its factor (below R's order).
    package var factors: [Int]
    /// R, K × K row-major.
    package var correlations: [Double]
    package var itemsPerSession: Int
    let cholesky: [Double]

    /// - Throws: `PsychometricsError(.invalidOptions)` when R is not a K × K positive-definite correlation matrix,
    ///   a factor index is outside it, or `items` and `factors` differ in length.
    package init(items: [BifactorItem], factors: [Int], correlations: [Double], itemsPerSession: Int? = nil) throws(PsychometricsError) {
        let k = Int(Double(correlations.count).squareRoot().rounded())
        guard k * k == correlations.count, k >= 1, (0..<k).allSatisfy({ correlations[$0 * k + $0] == 1 }),
            (0..<k).allSatisfy({ i in (0..<k).allSatisfy { correlations[i * k + $0] == correlations[$0 * k + i] } }),
            let x = FactorCorrelation(k: k).parameters(of: correlations)
        else {
            throw PsychometricsError(
                .invalidOptions, "the factor correlations must be a symmetric positive-definite K × K matrix with 1 on the diagonal")
        }
        guard items.count == factors.count, factors.allSatisfy({ (0..<k).contains($0) }) else {
            throw PsychometricsError(.invalidOptions, "each item needs a factor below \(k)")
        }
        self.items = items
        self.factors = factors
        self.correlations = correlations
        self.itemsPerSession = min(max(1, itemsPerSession ?? items.count), items.count)
        self.cholesky = FactorCorrelation(k: k).cholesky(x).l
    }

    var k: Int { Int(Double(correlations.count).squareRoot().rounded()) }

    /// `count` sessions as a `ResponseMatrix` (sessions s1…, items `itemIDs`) and each session's factor scores.
    package func matrix(count: Int, itemIDs: [String], using rng: inout some RandomNumberGenerator) -> (ResponseMatrix, [[Double]]) {
        let kk = k, J = items.count
        var offsets = [0], cells: [Int32] = [], values: [UInt8] = [], scores: [[Double]] = [], order = Array(0..<J)
        for _ in 0..<count {
            let z = (0..<kk).map { _ in RandomVariate.normal(using: &rng) }
            let theta = (0..<kk).map { i in (0...i).reduce(0.0) { $0 + cholesky[i * kk + $1] * z[$1] } }
            var chosen = Array(0..<J)
            if itemsPerSession < J {
                for slot in 0..<itemsPerSession { order.swapAt(slot, slot + Int(rng.next(upperBound: UInt64(J - slot)))) }
                chosen = order.prefix(itemsPerSession).sorted()
            }
            for j in chosen {
                let p = items[j].probability(general: theta[factors[j]], specific: 0)
                cells.append(Int32(j))
                values.append(RandomVariate.uniform(using: &rng) < p ? 1 : 0)
            }
            offsets.append(cells.count)
            scores.append(theta)
        }
        return (
            ResponseMatrix(
                validatedPersonIDs: (0..<count).map { "s\($0 + 1)" }, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: cells, responses: values),
            scores
        )
    }
}
