import Foundation

/// `JointCorrectProbabilities` of a bifactor (or testlet) model, by the dimension reduction of its E-step
/// (`BifactorEngine+EStep.swift`): the items of a set S that share a specific factor are integrated over it
/// together, the rest of S over the general factor alone,
/// ```
/// P(all of S) = Σ_q w_q Π_{j ∈ S, general only} P_j(θ_g,q) Π_{s} Σ_t w_t Π_{j ∈ S ∩ J_s} P_j(θ_g,q, θ_s,t)
/// ```
/// on the Q-point rule per dimension of the calibration (`QuadratureGrid`), factors independent N(0, 1).
package struct BifactorJointProbabilities: JointCorrectProbabilities {
    package let itemCount: Int
    let q: Int
    let weights: [Double]
    /// Per item its specific factor, −1 for a general-only item.
    let specific: [Int]
    /// Per item its first entry in `table`: Q values P_j(θ_g,q) (general only) or Q² values P_j(θ_g,q, θ_s,t) at
    /// q·Q + t.
    let offsets: [Int]
    let table: [Double]

    package init(items: [BifactorItem], grid: QuadratureGrid) {
        itemCount = items.count
        q = grid.count
        weights = grid.weights
        specific = items.map { $0.specific ?? -1 }
        var offsets: [Int] = [], table: [Double] = []
        for item in items {
            offsets.append(table.count)
            if item.specific == nil {
                table += grid.points.map { item.probability(general: $0, specific: 0) }
            } else {
                for g in grid.points { table += grid.points.map { item.probability(general: g, specific: $0) } }
            }
        }
        self.offsets = offsets
        self.table = table
    }

    /// The free parameters of `items`: each item's working parameters (a_g, [a_s,] d, [logit c]), then one
    /// testlet ratio λ per specific factor of the testlet items (in factor order).
    package static func parameters(_ items: [BifactorItem]) -> [Double] {
        items.flatMap(\.workingParameters) + testletFactors(items).map { f in items.first { $0.specific == f }!.testletRatio! }
    }

    /// `items` at free parameters `x` (`parameters(_:)`'s layout).
    package static func items(_ items: [BifactorItem], at x: [Double]) -> [BifactorItem] {
        var out = items, offset = 0
        let factors = testletFactors(items)
        let ratioStart = items.reduce(0) { $0 + $1.workingParameterCount }
        for j in items.indices {
            var item = items[j]
            if let f = item.specific, let position = factors.firstIndex(of: f) { item = item.withTestletRatio(x[ratioStart + position]) }
            let m = item.workingParameterCount
            out[j] = item.withWorkingParameters(Array(x[offset..<(offset + m)])) ?? item
            offset += m
        }
        return out
    }

    /// The specific factors whose items are testlet items (a_s = λ a_g), ascending.
    static func testletFactors(_ items: [BifactorItem]) -> [Int] {
        Array(Set(items.compactMap { $0.testletRatio == nil ? nil : $0.specific })).sorted()
    }

    package func allCorrect(_ items: UnsafeBufferPointer<Int>) -> Double {
        let count = items.count
        // The items' factors, and for each item whether an earlier item of S already took its factor.
        var total = 0.0
        for g in 0..<q {
            var p = weights[g]
            var done: UInt8 = 0
            for a in 0..<count {
                let j = items[a]
                if specific[j] < 0 { p *= table[offsets[j] + g]; continue }
                if done & (1 << a) != 0 { continue }
                // The items of S on factor specific[j], integrated over θ_s together.
                var members: (Int, Int, Int, Int) = (offsets[j] + g * q, -1, -1, -1), size = 1
                for b in (a + 1)..<count where specific[items[b]] == specific[j] {
                    done |= 1 << b
                    let start = offsets[items[b]] + g * q
                    if size == 1 { members.1 = start } else if size == 2 { members.2 = start } else { members.3 = start }
                    size += 1
                }
                var inner = 0.0
                table.withUnsafeBufferPointer { t in
                    weights.withUnsafeBufferPointer { w in
                        switch size {
                        case 1: for s in 0..<q { inner += w[s] * t[members.0 + s] }
                        case 2: for s in 0..<q { inner += w[s] * t[members.0 + s] * t[members.1 + s] }
                        case 3: for s in 0..<q { inner += w[s] * t[members.0 + s] * t[members.1 + s] * t[members.2 + s] }
                        default: for s in 0..<q { inner += w[s] * t[members.0 + s] * t[members.1 + s] * t[members.2 + s] * t[members.3 + s] }
                        }
                    }
                }
                p *= inner
            }
            total += p
        }
        return total
    }
}
