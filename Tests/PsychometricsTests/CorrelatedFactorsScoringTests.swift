import Foundation
import Testing
@testable import Psychometrics
@testable import PsychometricsIO

// Issue 28: scores on a correlated-factors bank — every factor's EAP and MAP with the posterior covariance, the
// full-scale composite, the battery built on it and the bank file read back.

@Suite("Correlated factors scoring")
struct CorrelatedFactorsScoringTests {
    static let bankItems: [CorrelatedFactorsResult.Item] = zip(CorrelatedFactorsTests.items, CorrelatedFactorsTests.factors).enumerated().map {
        j, pair in
        CorrelatedFactorsResult.Item(itemID: "i\(j)", factor: pair.1, slope: pair.0.generalSlope, intercept: pair.0.intercept)
    }
    static let answers: [(item: Int, response: UInt8)] = [(0, 1), (1, 0), (2, 1), (4, 1), (5, 0), (7, 0)]

    /// Brute force on the Q^K product grid: the prior exp(−½θᵀR⁻¹θ) normalised over the nodes, times the
    /// likelihood; the posterior's mean, covariance and log Σ prior × L.
    static func bruteForce(_ scorer: CorrelatedFactorsScorer, _ answers: [(item: Int, response: UInt8)]) -> (
        mean: [Double], covariance: [Double], logLikelihood: Double
    ) {
        let k = scorer.factorCount, q = scorer.grid.count, points = scorer.grid.points, r = scorer.correlations
        // R⁻¹ by Gauss–Jordan.
        var m = r, inverse = (0..<(k * k)).map { $0 % (k + 1) == 0 ? 1.0 : 0.0 }
        for c in 0..<k {
            let pivot = m[c * k + c]
            for x in 0..<k { m[c * k + x] /= pivot; inverse[c * k + x] /= pivot }
            for row in 0..<k where row != c {
                let f = m[row * k + c]
                for x in 0..<k { m[row * k + x] -= f * m[c * k + x]; inverse[row * k + x] -= f * inverse[c * k + x] }
            }
        }
        let nodes = Int(pow(Double(q), Double(k)))
        var priorMass = 0.0, total = 0.0, mean = [Double](repeating: 0, count: k), second = [Double](repeating: 0, count: k * k)
        for n in 0..<nodes {
            var rest = n, theta = [Double](repeating: 0, count: k)
            for f in stride(from: k - 1, through: 0, by: -1) { theta[f] = points[rest % q]; rest /= q }
            var quadratic = 0.0
            for a in 0..<k { for b in 0..<k { quadratic += theta[a] * inverse[a * k + b] * theta[b] } }
            let prior = exp(-0.5 * quadratic)
            priorMass += prior
            var v = prior
            for (j, u) in answers {
                let p = scorer.items[j].probability(general: theta[scorer.itemFactor[j]], specific: 0)
                v *= u == 1 ? p : 1 - p
            }
            total += v
            for a in 0..<k {
                mean[a] += v * theta[a]
                for b in 0..<k { second[a * k + b] += v * theta[a] * theta[b] }
            }
        }
        mean = mean.map { $0 / total }
        let covariance = (0..<(k * k)).map { second[$0] / total - mean[$0 / k] * mean[$0 % k] }
        return (mean, covariance, log(total / priorMass))
    }

    @Test("EAP on the product grid: the brute-force posterior mean, covariance and likelihood; the full-scale composite wᵀθ with w = 1/√(1ᵀR1)")
    func eapKnownValue() throws {
        let scorer = try CorrelatedFactorsScorer(
            items: Self.bankItems, correlations: CorrelatedFactorsTests.correlations, quadraturePoints: 15, bound: 5)
        #expect(scorer.integration == .productGrid && scorer.grid.count == 15)
        let e = try scorer.eap(Self.answers), truth = Self.bruteForce(scorer, Self.answers)
        for f in 0..<3 {
            #expect(abs(e.means[f + 1] - truth.mean[f]) < 1e-12, "factor \(f): \(e.means[f + 1]) against \(truth.mean[f])")
            for g in 0..<3 { #expect(abs(e.covariance[(f + 1) * 4 + g + 1] - truth.covariance[f * 3 + g]) < 1e-12) }
        }
        #expect(abs(e.logLikelihood - truth.logLikelihood) < 1e-12)
        #expect(e.answersPerFactor == [3, 2, 1])
        // 1ᵀR1 = 3 + 2(0.6 + 0.3 + 0.5) = 5.8.
        let w = 1 / 5.8.squareRoot()
        #expect(abs(scorer.compositeWeight - w) < 1e-15)
        #expect(abs(e.means[0] - w * truth.mean.reduce(0, +)) < 1e-12)
        #expect(abs(e.covariance[0] - w * w * truth.covariance.reduce(0, +)) < 1e-12)
        for f in 0..<3 { #expect(abs(e.covariance[f + 1] - w * (0..<3).reduce(0) { $0 + truth.covariance[f * 3 + $1] }) < 1e-12) }
        #expect(abs(e.standardErrors[0] - e.covariance[0].squareRoot()) < 1e-15)
        // No answers: the prior (means 0, covariance R: N(0, 1) on the 15 points on ±5 has variance 1 to 1e-5).
        let empty = try scorer.eap([])
        for f in 0..<3 {
            #expect(abs(empty.means[f + 1]) < 1e-12)
            for g in 0..<3 { #expect(abs(empty.covariance[(f + 1) * 4 + g + 1] - CorrelatedFactorsTests.correlations[f * 3 + g]) < 1e-5) }
        }
        #expect(abs(empty.means[0]) < 1e-12 && abs(empty.standardErrors[0] - 1) < 1e-5)
    }

    @Test("a session of one factor: exact in one dimension, equal to the 2-factor product grid; R = I gives each factor's unidimensional EAP")
    func oneFactorSessions() throws {
        let two = Array(Self.bankItems.prefix(6)), r: [Double] = [1, 0.7, 0.7, 1]
        let scorer = try CorrelatedFactorsScorer(items: two, correlations: r, quadraturePoints: 61, bound: 6)
        let answers: [(item: Int, response: UInt8)] = [(0, 1), (1, 1), (2, 0)]
        let e = try scorer.eap(answers), truth = Self.bruteForce(scorer, answers)
        for f in 0..<2 {
            #expect(abs(e.means[f + 1] - truth.mean[f]) < 1e-9, "factor \(f): \(e.means[f + 1]) against \(truth.mean[f])")
            for g in 0..<2 { #expect(abs(e.covariance[(f + 1) * 3 + g + 1] - truth.covariance[f * 2 + g]) < 1e-9) }
        }
        #expect(abs(e.logLikelihood - truth.logLikelihood) < 1e-9)
        // The unanswered factor is predicted through R: E θ_2 = 0.7 E θ_1.
        #expect(abs(e.means[2] - 0.7 * e.means[1]) < 1e-14)
        // R = I: every factor's EAP is the unidimensional one (N(0, 1) on the same 61 points).
        let independent = try CorrelatedFactorsScorer(items: two, correlations: [1, 0, 0, 1], quadraturePoints: 61, bound: 6)
        let both: [(item: Int, response: UInt8)] = [(0, 1), (1, 0), (3, 1), (4, 1), (5, 0)]
        let joint = try independent.eap(both)
        for f in 0..<2 {
            var s0 = 0.0, s1 = 0.0, s2 = 0.0
            for t in independent.grid.points {
                var v = exp(-0.5 * t * t)
                for (j, u) in both where independent.itemFactor[j] == f {
                    let p = independent.items[j].probability(general: t, specific: 0)
                    v *= u == 1 ? p : 1 - p
                }
                s0 += v; s1 += v * t; s2 += v * t * t
            }
            #expect(abs(joint.means[f + 1] - s1 / s0) < 1e-12)
            #expect(abs(joint.standardErrors[f + 1] - (s2 / s0 - s1 * s1 / s0 / s0).squareRoot()) < 1e-12)
        }
        #expect(abs(joint.covariance[1 * 3 + 2]) < 1e-12)
    }

    @Test(
        "adaptive quasi–Monte Carlo EAP against a 41³ grid: means and SDs within 0.001, log-likelihoods within 0.0005, the same answers the same scores"
    )
    func quasiMonteCarloAccuracy() throws {
        let grid = try CorrelatedFactorsScorer(
            items: Self.bankItems, correlations: CorrelatedFactorsTests.correlations, quadraturePoints: 41, bound: 6)
        let qmc = try CorrelatedFactorsScorer(
            items: Self.bankItems, correlations: CorrelatedFactorsTests.correlations, integration: .adaptiveQuasiMonteCarlo)
        #expect(qmc.integration == .adaptiveQuasiMonteCarlo && qmc.grid.count == CorrelatedFactorsCalibrator.adaptiveTablePoints)
        var rng = SeededGenerator(seed: 44)
        var worstMean = 0.0, worstSD = 0.0, worstLL = 0.0
        for _ in 0..<60 {
            var answers: [(item: Int, response: UInt8)] = []
            for j in 0..<9 where RandomVariate.uniform(using: &rng) < 0.8 { answers.append((j, RandomVariate.uniform(using: &rng) < 0.5 ? 1 : 0)) }
            if Set(answers.map { qmc.itemFactor[$0.item] }).count < 2 { continue }
            let a = try grid.eap(answers), b = try qmc.eap(answers)
            for x in 0..<4 {
                worstMean = max(worstMean, abs(a.means[x] - b.means[x]))
                worstSD = max(worstSD, abs(a.standardErrors[x] - b.standardErrors[x]))
            }
            worstLL = max(worstLL, abs(a.logLikelihood - b.logLikelihood))
            #expect(try qmc.eap(answers) == b)
        }
        // Measured: 1.5e-4, 3.6e-4 and 5.6e-5 at the default 4,096 nodes.
        #expect(worstMean < 0.001 && worstSD < 0.001 && worstLL < 0.0005, "mean \(worstMean), SD \(worstSD), log-likelihood \(worstLL)")
    }

    @Test("MAP: the gradient of ℓ vanishes at the mode, the covariance is −∇²ℓ⁻¹ (finite differences), R = I gives the unidimensional MAP")
    func mapKnownValue() throws {
        let scorer = try CorrelatedFactorsScorer(items: Self.bankItems, correlations: CorrelatedFactorsTests.correlations)
        let e = try scorer.map(Self.answers), r = CorrelatedFactorsTests.correlations
        let inverse = try #require(scorer.rInverse.count == 9 ? scorer.rInverse : nil)
        func ell(_ t: [Double]) -> Double {
            var v = 0.0
            for (j, u) in Self.answers {
                let p = scorer.items[j].probability(general: t[scorer.itemFactor[j]], specific: 0)
                v += log(u == 1 ? p : 1 - p)
            }
            for a in 0..<3 { for b in 0..<3 { v -= 0.5 * t[a] * inverse[a * 3 + b] * t[b] } }
            return v
        }
        let mode = Array(e.means.dropFirst()), h = 1e-4
        var hessian = [Double](repeating: 0, count: 9)
        for a in 0..<3 {
            var up = mode, down = mode
            up[a] += h; down[a] -= h
            #expect(abs((ell(up) - ell(down)) / (2 * h)) < 1e-6, "∂ℓ/∂θ\(a) at the mode")
            for b in 0..<3 {
                var pp = mode, pm = mode, mp = mode, mm = mode
                pp[a] += h; pp[b] += h; pm[a] += h; pm[b] -= h; mp[a] -= h; mp[b] += h; mm[a] -= h; mm[b] -= h
                hessian[a * 3 + b] = (ell(pp) - ell(pm) - ell(mp) + ell(mm)) / (4 * h * h)
            }
        }
        // Σ (−H) = I.
        for a in 0..<3 {
            for b in 0..<3 {
                let v = (0..<3).reduce(0.0) { $0 + e.covariance[(a + 1) * 4 + $1 + 1] * -hessian[$1 * 3 + b] }
                #expect(abs(v - (a == b ? 1 : 0)) < 1e-4, "(Σ(−H))[\(a),\(b)] = \(v)")
            }
        }
        _ = r
        // R = I: each factor's mode solves Σ_j a_j (u_j − P_j) = θ (the 2PL's MAP with an N(0, 1) prior).
        let independent = try CorrelatedFactorsScorer(items: Self.bankItems, correlations: [1, 0, 0, 0, 1, 0, 0, 0, 1])
        let m = try independent.map(Self.answers)
        for f in 0..<3 {
            let t = m.means[f + 1]
            var score = -t, information = 1.0
            for (j, u) in Self.answers where independent.itemFactor[j] == f {
                let item = independent.items[j], p = item.probability(general: t, specific: 0)
                score += item.generalSlope * (Double(u) - p)
                information += item.generalSlope * item.generalSlope * p * (1 - p)
            }
            #expect(abs(score) < 1e-8)
            #expect(abs(m.standardErrors[f + 1] - 1 / information.squareRoot()) < 1e-8)
        }
    }

    @Test(
        "recovery on 3,000 simulees of a 4-factor bank (quasi–Monte Carlo): Var θ = E Var(θ | u) + Var E(θ | u) and Corr²(EAP, θ) = 1 − E Var(θ | u), within 0.04"
    )
    func recovery() throws {
        var rng = SeededGenerator(seed: 808)
        let k = 4, perFactor = 6
        var items: [CorrelatedFactorsResult.Item] = [], bifactorItems: [BifactorItem] = [], factors: [Int] = []
        for j in 0..<(k * perFactor) {
            let a = 0.8 + 1.2 * RandomVariate.uniform(using: &rng), d = 2 * RandomVariate.normal(using: &rng) * 0.7
            items.append(CorrelatedFactorsResult.Item(itemID: "i\(j)", factor: j / perFactor, slope: a, intercept: d))
            bifactorItems.append(BifactorItem(generalSlope: a, intercept: d))
            factors.append(j / perFactor)
        }
        var r = [Double](repeating: 0.5, count: k * k)
        for f in 0..<k { r[f * k + f] = 1 }
        let scorer = try CorrelatedFactorsScorer(items: items, correlations: r)
        #expect(scorer.integration == .adaptiveQuasiMonteCarlo)
        let simulator = try CorrelatedFactorsSimulator(items: bifactorItems, factors: factors, correlations: r)
        let (data, thetas) = simulator.matrix(count: 3000, itemIDs: items.map(\.itemID), using: &rng)
        var sums = [[Double]](repeating: [Double](repeating: 0, count: 6), count: k) // Σe, Σe², Σθ, Σθ², Σeθ, Σvar
        for i in 0..<data.personCount {
            let answers = data.cells(ofPerson: i).map { (item: Int(data.itemIndices[$0]), response: data.responses[$0]) }
            let e = try scorer.eap(answers)
            for f in 0..<k {
                let m = e.means[f + 1], t = thetas[i][f]
                sums[f][0] += m; sums[f][1] += m * m; sums[f][2] += t; sums[f][3] += t * t; sums[f][4] += m * t
                sums[f][5] += e.covariance[(f + 1) * (k + 1) + f + 1]
            }
        }
        let n = Double(data.personCount)
        for f in 0..<k {
            let s = sums[f], varE = s[1] / n - pow(s[0] / n, 2), varT = s[3] / n - pow(s[2] / n, 2)
            let cov = s[4] / n - s[0] / n * s[2] / n, meanVar = s[5] / n
            #expect(abs(varE + meanVar - 1) < 0.04, "factor \(f): Var E \(varE) + E Var \(meanVar)")
            #expect(abs(cov * cov / (varE * varT) - (1 - meanVar)) < 0.04, "factor \(f): Corr² \(cov * cov / (varE * varT)) against \(1 - meanVar)")
        }
    }

    @Test("a correlated battery: indexes are the factors, the full-scale score their composite; added value by Haberman's PRMSE")
    func battery() throws {
        let scorer = try CorrelatedFactorsScorer(items: Self.bankItems, correlations: CorrelatedFactorsTests.correlations)
        let battery = try Battery(correlated: scorer, factors: ["logic", "spatial", "verbal"])
        #expect(battery.structure.generalFactor == "full_scale" && battery.reportedNames == ["logic", "spatial", "verbal"])
        #expect(battery.composites.allSatisfy { $0.generalWeight == 0 && $0.specificWeight == 1 })
        let values = try battery.addedValue(simulees: 400)
        #expect(
            values.map(\.factor) == ["logic", "spatial", "verbal"]
                && values.allSatisfy { $0.items == 3 && $0.subscore > 0 && $0.augmented >= $0.subscore - 0.02 })
        let scale = try Battery.indexScale(IQScale())
        let score = try [0, 1, 2, 4, 5, 7].withUnsafeBufferPointer { i in
            try [UInt8(1), 0, 1, 1, 0, 0].withUnsafeBufferPointer { u in try battery.score(i, u, method: .eap, indexScale: scale) }
        }
        let e = try scorer.eap(Self.answers)
        #expect(score.factors == e && score.indexes.map(\.theta) == Array(e.means.dropFirst()))
        #expect(score.indexes.map(\.answered) == [3, 2, 1] && score.indexes.map(\.correct) == [2, 1, 0])
        #expect(throws: PsychometricsError.self) { try Battery(correlated: scorer, factors: ["a", "a", "b"]) }
        #expect(throws: PsychometricsError.self) {
            try CorrelatedFactorsScorer(items: Self.bankItems, correlations: [1, 0.9, 0.9, 0.9, 1, -0.9, 0.9, -0.9, 1])
        }
        #expect(throws: PsychometricsError.self) { try CorrelatedFactorsScorer(items: Self.bankItems, correlations: [1, 0.5, 0.5, 1]) }
        #expect(throws: PsychometricsError.self) {
            try CorrelatedFactorsScorer(
                items: Self.bankItems, correlations: CorrelatedFactorsTests.correlations, integration: .adaptiveQuasiMonteCarlo,
                monteCarloPoints: 1000)
        }
    }

    @Test("the bank file: calibrate's layout read back to the same items, R and metadata; bad rows named by line and column")
    func bankFile() throws {
        var metadata = ItemMetadata(columns: ["domain"], values: [:])
        for (j, item) in Self.bankItems.enumerated() { metadata.values[item.itemID] = ["domain": ["logic", "spatial", "verbal"][item.factor]] }
        let text = CorrelatedFactorsResult.bankCSV(
            items: Self.bankItems, factors: ["logic", "spatial", "verbal"], correlations: CorrelatedFactorsTests.correlations, metadata: metadata)
        let path = try BifactorBankTests.write(text)
        let file = try CorrelatedFactorsBank.load(csv: path)
        #expect(file.factors == ["logic", "spatial", "verbal"] && file.correlations == CorrelatedFactorsTests.correlations)
        #expect(file.items.map(\.factor) == CorrelatedFactorsTests.factors && file.items.map(\.slope) == Self.bankItems.map(\.slope))
        #expect(file.metadataColumns == ["domain"] && file.metadata[3]["domain"] == "spatial")
        let battery = try BatteryBank.load(csv: path, quadraturePoints: nil, bound: 6)
        #expect(battery.model == "correlated" && battery.bank.items.count == 9 && battery.battery.itemCount == 9)
        #expect(battery.bank.items[0].metadata["domain"] == "logic")
        // A slope off the item's factor; rows of R that disagree.
        var lines = text.split(separator: "\n").map(String.init)
        var cells = lines[2].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        cells[3] = "0.500000"
        lines[2] = cells.joined(separator: ",")
        var other = lines[3].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        other[14] = "0.400000"
        lines[3] = other.joined(separator: ",")
        let bad = try BifactorBankTests.write(lines.joined(separator: "\n") + "\n")
        let error = try #require(throws: InputErrors.self) { try CorrelatedFactorsBank.load(csv: bad) }
        let message = error.description
        #expect(message.contains(":3:4:") && message.contains("a slope on spatial besides its factor logic"), "\(message)")
        #expect(message.contains(":4:15:") && message.contains("r_spatial = 0.4 but the row of factor logic on line 2 has 0.6"), "\(message)")
    }
}
