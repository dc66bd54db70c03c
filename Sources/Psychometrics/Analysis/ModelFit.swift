import Foundation

/// Item and person fit of calibrated items to a response matrix.
///
/// - S-X² (Orlando & Thissen 2000): persons who answered every item are grouped by summed score s = 1 … n − 1;
///   the expected proportion correct on item j at score s is
///   ```
///   E_js = ∫ P_j(θ) f₋ⱼ(s − 1 | θ) φ(θ) dθ / ∫ f(s | θ) φ(θ) dθ
///   ```
///   with the summed-score likelihoods f from the Lord–Wingersky (1984) recursion on the quadrature grid.
///   Adjacent score groups are pooled from the low end until both expected counts N·E and N·(1 − E) reach
///   `minimumExpected` (1, as mirt); a short last group joins the one before. S-X² = Σ_g N_g (O_g − E_g)² /
///   (E_g (1 − E_g)), df = groups − free parameters of the item (Rasch/1PL 1, 2PL 2, 3PL 3).
/// - Infit / outfit mean squares (Wright & Masters 1982) with standardised residuals z = (u − P)/√(P(1 − P)) at
///   each person's WLE θ̂: outfit = mean z², infit = Σ(u − P)² / Σ P(1 − P), over the persons who answered the
///   item.
/// - l_z person fit (Drasgow, Levine & Williams 1985) at the WLE θ̂: (l₀ − E[l₀]) / √Var(l₀) with
///   l₀ = Σ u log P + (1 − u) log(1 − P), E = Σ P log P + (1 − P) log(1 − P), Var = Σ P(1 − P) log²(P/(1 − P)).
/// - Yen's Q3 (1984): correlation of residuals u − P(θ̂_WLE) over persons who answered both items.
/// - Marginal (empirical) reliability: var(θ̂_EAP) / (var(θ̂_EAP) + mean SE²_EAP).
public struct ModelFit: Sendable {
    public struct ItemFit: Sendable, Hashable {
        public var itemID: String
        public var infit: Double?
        public var outfit: Double?
        public var sx2: Double?
        public var sx2DegreesOfFreedom: Int?
        public var sx2P: Double?
    }

    public struct PersonFit: Sendable, Hashable {
        public var personID: String
        public var theta: Double
        public var standardError: Double
        public var lz: Double?
    }

    public struct Q3Pair: Sendable, Hashable {
        public var first: String
        public var second: String
        public var q3: Double
    }

    public var items: [ItemFit]
    public var persons: [PersonFit]
    /// Persons used by S-X² (answered every item).
    public var sx2Persons: Int
    public var marginalReliability: Double?
    /// Q3 over all pairs with at least `minimumPairCount` common persons: matrix (items × items, nil on the
    /// diagonal or when too few), its mean, largest absolute value, and pairs more than 0.2 above the mean
    /// (Christensen, Makransky & Horton 2017).
    public var q3: [[Double?]]
    public var q3Mean: Double?
    public var q3MaxAbs: Double?
    public var q3Flagged: [Q3Pair]

    /// - Parameters:
    ///   - parameters: the item parameters in `data`'s item order.
    ///   - freeParameters: free parameters per item for the S-X² df (Rasch/1PL 1, 2PL 2, 3PL 3).
    public init(data: ResponseMatrix, parameters: [ItemParameters], freeParameters: Int, quadraturePoints: Int = 61,
                thetaBound: Double = 6, minimumExpected: Double = 1, minimumPairCount: Int = 30) throws {
        precondition(parameters.count == data.itemCount, "one parameter set per item")
        let J = data.itemCount, N = data.personCount
        let wle = try AbilityEstimator(parameters: parameters, options: AbilityOptions(method: .wle))
        let eap = try AbilityEstimator(parameters: parameters, options: AbilityOptions(method: .eap))

        // Person estimates, residual sums for infit/outfit and Q3, l_z.
        var outfitSum = [Double](repeating: 0, count: J), infitNum = outfitSum, infitDen = outfitSum, counts = [Int](repeating: 0, count: J)
        var persons: [PersonFit] = []
        persons.reserveCapacity(N)
        var eapThetas: [Double] = [], eapVariances: [Double] = []
        var resid = [Double](repeating: .nan, count: J)
        var q3n = [Double](repeating: 0, count: J * J), q3x = q3n, q3y = q3n, q3xx = q3n, q3yy = q3n, q3xy = q3n
        for i in 0..<N {
            let cells = data.cells(ofPerson: i)
            let items = cells.map { Int(data.itemIndices[$0]) }, responses = cells.map { data.responses[$0] }
            let e = wle.estimate(items: items, responses: responses)
            let post = eap.estimate(items: items, responses: responses)
            eapThetas.append(post.theta)
            eapVariances.append(post.standardError * post.standardError)
            var l0 = 0.0, el = 0.0, vl = 0.0
            for (j, u) in zip(items, responses) {
                let p = min(max(parameters[j].probability(at: e.theta), 1e-12), 1 - 1e-12)
                let x = Double(u), r = x - p, v = p * (1 - p)
                outfitSum[j] += r * r / v
                infitNum[j] += r * r
                infitDen[j] += v
                counts[j] += 1
                resid[j] = r
                l0 += x * log(p) + (1 - x) * log(1 - p)
                el += p * log(p) + (1 - p) * log(1 - p)
                vl += v * pow(log(p / (1 - p)), 2)
            }
            for j in items {
                for k in items where k != j {
                    let a = resid[j], b = resid[k]
                    q3n[j * J + k] += 1; q3x[j * J + k] += a; q3y[j * J + k] += b
                    q3xx[j * J + k] += a * a; q3yy[j * J + k] += b * b; q3xy[j * J + k] += a * b
                }
            }
            for j in items { resid[j] = .nan }
            persons.append(PersonFit(personID: data.personIDs[i], theta: e.theta, standardError: e.standardError,
                                     lz: vl > 0 ? (l0 - el) / vl.squareRoot() : nil))
        }
        self.persons = persons

        // Q3.
        var q3 = [[Double?]](repeating: [Double?](repeating: nil, count: J), count: J)
        var q3Values: [Double] = []
        for j in 0..<J {
            for k in 0..<J where k != j {
                let m = q3n[j * J + k]
                guard m >= Double(minimumPairCount) else { continue }
                let sxy = q3xy[j * J + k] - q3x[j * J + k] * q3y[j * J + k] / m
                let sxx = q3xx[j * J + k] - q3x[j * J + k] * q3x[j * J + k] / m
                let syy = q3yy[j * J + k] - q3y[j * J + k] * q3y[j * J + k] / m
                guard sxx > 0, syy > 0 else { continue }
                let r = sxy / (sxx * syy).squareRoot()
                q3[j][k] = r
                if k > j { q3Values.append(r) }
            }
        }
        self.q3 = q3
        let q3Mean = q3Values.isEmpty ? nil : q3Values.reduce(0, +) / Double(q3Values.count)
        self.q3Mean = q3Mean
        q3MaxAbs = q3Values.map(abs).max()
        var flagged: [Q3Pair] = []
        if let q3Mean {
            for j in 0..<J { for k in (j + 1)..<max(j + 1, J) { if let r = q3[j][k], r - q3Mean > 0.2 {
                flagged.append(Q3Pair(first: data.itemIDs[j], second: data.itemIDs[k], q3: r))
            } } }
        }
        q3Flagged = flagged.sorted { $0.q3 > $1.q3 }

        // Marginal reliability from the EAP estimates.
        if eapThetas.count > 1 {
            let mean = eapThetas.reduce(0, +) / Double(eapThetas.count)
            let variance = eapThetas.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(eapThetas.count - 1)
            let errorVariance = eapVariances.reduce(0, +) / Double(eapVariances.count)
            marginalReliability = variance / (variance + errorVariance)
        }

        // S-X² on complete persons.
        let complete = (0..<N).filter { data.cells(ofPerson: $0).count == J }
        sx2Persons = complete.count
        var sx2 = [(Double, Int, Double)?](repeating: nil, count: J)
        if complete.count >= 2 && J >= 3 {
            let grid = QuadratureGrid(count: quadraturePoints, bound: thetaBound)
            let Q = grid.count
            let prob = parameters.map { p in grid.points.map { p.probability(at: $0) } }
            func summedScore(excluding skip: Int?) -> [[Double]] {
                // f[s][q] = P(summed score s | θ_q) over the items except `skip`.
                var f = [[Double]](repeating: [Double](repeating: 0, count: Q), count: 1)
                f[0] = [Double](repeating: 1, count: Q)
                for j in 0..<J where j != skip {
                    var next = [[Double]](repeating: [Double](repeating: 0, count: Q), count: f.count + 1)
                    for s in 0..<f.count {
                        for q in 0..<Q {
                            next[s][q] += f[s][q] * (1 - prob[j][q])
                            next[s + 1][q] += f[s][q] * prob[j][q]
                        }
                    }
                    f = next
                }
                return f
            }
            let full = summedScore(excluding: nil)
            let denominator = (0...J).map { s in (0..<Q).reduce(0.0) { $0 + grid.weights[$1] * full[s][$1] } }
            // Observed: persons per score and correct on j per score.
            var scoreCount = [Int](repeating: 0, count: J + 1)
            var correctAt = [[Int]](repeating: [Int](repeating: 0, count: J + 1), count: J)
            for i in complete {
                let cells = data.cells(ofPerson: i)
                let s = cells.reduce(0) { $0 + Int(data.responses[$1]) }
                scoreCount[s] += 1
                for c in cells where data.responses[c] == 1 { correctAt[Int(data.itemIndices[c])][s] += 1 }
            }
            for j in 0..<J {
                let without = summedScore(excluding: j)
                var groups: [(n: Double, observed: Double, expected: Double)] = []
                var pending = (n: 0.0, observed: 0.0, expected: 0.0)
                for s in 1..<J {
                    let n = Double(scoreCount[s])
                    guard n > 0, denominator[s] > 0 else { continue }
                    let numerator = (0..<Q).reduce(0.0) { $0 + grid.weights[$1] * prob[j][$1] * without[s - 1][$1] }
                    let e = numerator / denominator[s]
                    pending.n += n
                    pending.observed += Double(correctAt[j][s])
                    pending.expected += n * e
                    if pending.expected >= minimumExpected && pending.n - pending.expected >= minimumExpected {
                        groups.append(pending)
                        pending = (0, 0, 0)
                    }
                }
                if pending.n > 0 {
                    if groups.isEmpty { groups.append(pending) } else {
                        groups[groups.count - 1].n += pending.n
                        groups[groups.count - 1].observed += pending.observed
                        groups[groups.count - 1].expected += pending.expected
                    }
                }
                var statistic = 0.0
                for g in groups {
                    let o = g.observed / g.n, e = g.expected / g.n
                    if e > 0 && e < 1 { statistic += g.n * (o - e) * (o - e) / (e * (1 - e)) }
                }
                let df = groups.count - freeParameters
                sx2[j] = (statistic, df, df > 0 ? ChiSquare.upperTail(statistic, degreesOfFreedom: Double(df)) : .nan)
            }
        }
        items = (0..<J).map { j in
            let n = Double(counts[j])
            return ItemFit(itemID: data.itemIDs[j], infit: infitDen[j] > 0 ? infitNum[j] / infitDen[j] : nil,
                           outfit: n > 0 ? outfitSum[j] / n : nil, sx2: sx2[j]?.0, sx2DegreesOfFreedom: sx2[j]?.1,
                           sx2P: sx2[j].flatMap { $0.2.isFinite ? $0.2 : nil })
        }
    }

    /// Test information Σⱼ Iⱼ(θ) and SE = 1/√I at each θ.
    public static func testInformation(_ parameters: [ItemParameters], at thetas: [Double]) -> [(theta: Double, information: Double, standardError: Double)] {
        thetas.map { t in
            let info = parameters.reduce(0) { $0 + $1.information(at: t) }
            return (t, info, info > 0 ? 1 / info.squareRoot() : .infinity)
        }
    }
}
