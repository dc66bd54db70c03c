import Foundation

/// What a battery (`Battery`) needs of its model's scorer: EAP and MAP factor scores in the battery layout (the
/// full-scale factor first, then the index factors, `BifactorEstimate`), which index factor each item measures,
/// and the population to simulate (`IndexAddedValue`). `BifactorScorer` (full scale: the general factor;
/// indexes: the specific factors) and `CorrelatedFactorsScorer` (full scale: the factors' composite; indexes:
/// the factors) conform.
package protocol FactorScoring: Sendable {
    var itemCount: Int { get }
    /// The index factors (a bifactor bank's specific factors, a correlated bank's factors).
    var indexFactorCount: Int { get }
    /// The index factor item `j` measures, nil for none (a bifactor item on the general factor only).
    func indexFactor(ofItem j: Int) -> Int?
    func eap(validated itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> BifactorEstimate
    func map(validated itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> BifactorEstimate
    /// A person drawn from the calibration population, in the battery layout.
    func drawPerson(using rng: inout SeededGenerator) -> [Double]
    /// P(u_j = 1) for a person in the battery layout.
    func probability(item j: Int, person: [Double]) -> Double
}

extension BifactorScorer: FactorScoring {
    package var itemCount: Int { items.count }
    package var indexFactorCount: Int { specificFactorCount }
    package func indexFactor(ofItem j: Int) -> Int? { items[j].specific }
    /// θ ~ N(0, I): the general factor, then the specific ones.
    package func drawPerson(using rng: inout SeededGenerator) -> [Double] {
        (0...specificFactorCount).map { _ in RandomVariate.normal(using: &rng) }
    }
    package func probability(item j: Int, person theta: [Double]) -> Double {
        let item = items[j]
        return item.probability(general: theta[0], specific: item.specific.map { theta[$0 + 1] } ?? 0)
    }
}

extension CorrelatedFactorsScorer: FactorScoring {
    package var itemCount: Int { items.count }
    package var indexFactorCount: Int { factorCount }
    package func indexFactor(ofItem j: Int) -> Int? { itemFactor[j] }
    /// θ = L z, z ~ N(0, I), R = L Lᵀ; the composite wᵀθ first.
    package func drawPerson(using rng: inout SeededGenerator) -> [Double] {
        let k = factorCount, l = choleskyFactor
        let z = (0..<k).map { _ in RandomVariate.normal(using: &rng) }
        let theta = (0..<k).map { f in (0...f).reduce(0.0) { $0 + l[f * k + $1] * z[$1] } }
        return [compositeWeight * theta.reduce(0, +)] + theta
    }
    package func probability(item j: Int, person theta: [Double]) -> Double {
        items[j].probability(general: theta[itemFactor[j] + 1], specific: 0)
    }
}
