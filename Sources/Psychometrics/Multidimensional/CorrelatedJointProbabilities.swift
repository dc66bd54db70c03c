import Foundation

/// `JointCorrectProbabilities` of a correlated-factors model (each item on one factor, θ ~ N(0, R)): a set S of
/// up to four items touches the factors F(S) of its items only, and the others integrate out of the normal prior
/// exactly, so
/// ```
/// P(all of S) = E[Π_{j ∈ S} P_j(θ_f(j))],   θ_F ~ N(0, R_FF),   d = |F(S)| ≤ 4 dimensions, not K
///             ≈ Σ_n w_n Π_{j ∈ S} P_j((L_F z_n)_f(j))         (R_FF = L_F L_Fᵀ, z_n the nodes of the d-fold
///                                                              product of a `QuadratureGrid`, w_n its weights)
/// ```
/// in whitened coordinates z, so the rule follows R's shape however strong the correlations (a grid in θ, as
/// mirt's, needs ever finer points as R nears singularity). `rules[d − 1]` gives the points and bound per
/// dimension: 61, 41 and 21 points on [−6, 6] for 1…3 factors, 15 on [−5.6, 5.6] (50,625 nodes) for 4. The
/// trapezoidal rule converges geometrically for integrands analytic in a strip (Trefethen & Weideman 2014, *SIAM
/// Review* 56), faster here than Gauss–Hermite with as many nodes (a 13-point Gauss–Hermite rule is 5e-5 off on a
/// slope-2.4 item, the 21-point grid 1e-6). Each
/// factor subset's rule and its items' P_j at the rule's nodes are tabulated once (memory Σ_F nodes_F × items on F,
/// at most `maximumTableValues`); `largestSet` limits the subsets to those sets of that many items can touch, so
/// the models M2 builds for Δ₂ (moments of ≤ 2 items) tabulate 1- and 2-factor subsets only. Accuracy against a
/// 4-dimensional 15-point rule: `CorrelatedJointProbabilitiesTests`.
package struct CorrelatedJointProbabilities: JointCorrectProbabilities {
    package let itemCount: Int
    /// Per item, its factor.
    let factor: [Int]
    /// Per factor subset (a bitmask), its rule's index in `weights`/`offsets`, −1 where none was built.
    let ruleOfSubset: [Int32]
    /// Per rule, its nodes' weights.
    let weights: [[Double]]
    /// Per rule, per item: the first of its P_j values in `table` (one per node), −1 for an item off the subset.
    let offsets: [[Int]]
    let table: [Double]

    /// Points and bound per dimension for subsets of 1…4 factors.
    package static let rules: [(points: Int, bound: Double)] = [(61, 6), (41, 6), (21, 6), (15, 5.6)]
    /// The most tabulated probabilities (128 MB).
    package static let maximumTableValues = 16_000_000

    /// - Parameters:
    ///   - items: general-only `BifactorItem`s (slope `generalSlope` on their factor), `factor[j]` below K.
    ///   - correlations: R, K × K row-major, positive definite.
    ///   - largestSet: the most items of a set `allCorrect` will be asked for (1…4).
    /// - Throws: `PsychometricsError(.insufficientData)` when the tables would exceed `maximumTableValues`;
    ///   `.numericalFailure` for an R that is not positive definite.
    package init(
        items: [BifactorItem], factor: [Int], correlations r: [Double], largestSet: Int,
        rules: [(points: Int, bound: Double)] = CorrelatedJointProbabilities.rules
    ) throws(PsychometricsError) {
        let k = Int(Double(r.count).squareRoot().rounded())
        precondition(
            k * k == r.count && items.count == factor.count && (1...4).contains(largestSet) && k <= 20,
            "a K × K correlation matrix, one factor per item")
        itemCount = items.count
        self.factor = factor
        var membersOf = [[Int]](repeating: [], count: k)
        for (j, f) in factor.enumerated() { membersOf[f].append(j) }
        // Subsets of factors with items, of at most `largestSet` factors.
        let populated = (0..<k).filter { !membersOf[$0].isEmpty }
        var subsets: [[Int]] = [[]]
        for f in populated { subsets += subsets.filter { $0.count < largestSet }.map { $0 + [f] } }
        subsets.removeFirst()
        let size = subsets.reduce(0) { total, s in
            total + Int(pow(Double(rules[s.count - 1].points), Double(s.count))) * s.reduce(0) { $0 + membersOf[$1].count }
        }
        guard size <= Self.maximumTableValues else {
            throw PsychometricsError(
                .insufficientData,
                "the joint probabilities of \(populated.count) correlated factors need \(size) tabulated values, more than \(Self.maximumTableValues)"
            )
        }
        var ruleOfSubset = [Int32](repeating: -1, count: 1 << k)
        var weights: [[Double]] = [], offsets: [[Int]] = [], table: [Double] = []
        table.reserveCapacity(size)
        let grids = rules.map { QuadratureGrid(validatedCount: $0.points, bound: $0.bound) }
        for s in subsets {
            let d = s.count, rule = grids[d - 1], q = rule.count
            var l = [Double](repeating: 0, count: d * d)
            for a in 0..<d { for b in 0..<d { l[a * d + b] = r[s[a] * k + s[b]] } }
            guard choleskyInPlace(&l, n: d) else {
                throw PsychometricsError(.numericalFailure, "the factor correlation matrix is not positive definite")
            }
            let nodes = Int(pow(Double(q), Double(d)).rounded())
            var theta = [Double](repeating: 0, count: d * nodes), w = [Double](repeating: 1, count: nodes)
            var z = [Double](repeating: 0, count: d)
            for n in 0..<nodes {
                var rest = n
                for a in 0..<d {
                    let digit = rest % q
                    rest /= q
                    z[a] = rule.points[digit]
                    w[n] *= rule.weights[digit]
                }
                for a in 0..<d {
                    var v = 0.0
                    for b in 0...a { v += l[a * d + b] * z[b] }
                    theta[a * nodes + n] = v
                }
            }
            var itemOffsets = [Int](repeating: -1, count: items.count)
            for (a, f) in s.enumerated() {
                for j in membersOf[f] {
                    itemOffsets[j] = table.count
                    for n in 0..<nodes { table.append(items[j].probability(general: theta[a * nodes + n], specific: 0)) }
                }
            }
            ruleOfSubset[s.reduce(0) { $0 | (1 << $1) }] = Int32(weights.count)
            weights.append(w)
            offsets.append(itemOffsets)
        }
        self.ruleOfSubset = ruleOfSubset
        self.weights = weights
        self.offsets = offsets
        self.table = table
    }

    /// The free parameters: each item's working parameters (a, d, [logit c]) then R's (`FactorCorrelation`).
    package static func parameters(_ items: [BifactorItem], correlations r: [Double]) -> [Double]? {
        let k = Int(Double(r.count).squareRoot().rounded())
        return FactorCorrelation(k: k).parameters(of: r).map { items.flatMap(\.workingParameters) + $0 }
    }

    /// The model at free parameters `x` (`parameters(_:correlations:)`'s layout) for sets of up to `largestSet`.
    package static func model(_ items: [BifactorItem], factor: [Int], factors k: Int, at x: [Double], largestSet: Int) throws(PsychometricsError)
        -> CorrelatedJointProbabilities
    {
        var out = items, offset = 0
        for j in items.indices {
            let m = items[j].workingParameterCount
            out[j] = items[j].withWorkingParameters(Array(x[offset..<(offset + m)])) ?? items[j]
            offset += m
        }
        return try CorrelatedJointProbabilities(
            items: out, factor: factor, correlations: FactorCorrelation(k: k).matrix(Array(x[offset...])),
            largestSet: largestSet)
    }

    package func allCorrect(_ items: UnsafeBufferPointer<Int>) -> Double {
        var mask = 0
        for j in items { mask |= 1 << factor[j] }
        let rule = Int(ruleOfSubset[mask])
        precondition(rule >= 0, "a set touching more factors than the model was built for")
        let w = weights[rule], itemOffsets = offsets[rule]
        var total = 0.0
        table.withUnsafeBufferPointer { t in
            w.withUnsafeBufferPointer { w in
                switch items.count {
                case 1:
                    let a = itemOffsets[items[0]]
                    for n in w.indices { total += w[n] * t[a + n] }
                case 2:
                    let a = itemOffsets[items[0]], b = itemOffsets[items[1]]
                    for n in w.indices { total += w[n] * t[a + n] * t[b + n] }
                case 3:
                    let a = itemOffsets[items[0]], b = itemOffsets[items[1]], c = itemOffsets[items[2]]
                    for n in w.indices { total += w[n] * t[a + n] * t[b + n] * t[c + n] }
                default:
                    let starts = items.map { itemOffsets[$0] }
                    for n in w.indices {
                        var p = w[n]
                        for a in starts { p *= t[a + n] }
                        total += p
                    }
                }
            }
        }
        return total
    }
}
