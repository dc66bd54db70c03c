import Foundation
@testable import Norming
import Numerics
import Psychometrics
import Testing

@Suite("Raking (iterative proportional fitting)")
struct RakingTests {
    /// A 2×2 sample: A = a1/a2, B = b1/b2 with cell counts 30, 10 / 20, 40 (100 persons).
    static func twoByTwo() -> [String: [String]] {
        var a: [String] = [], b: [String] = []
        for (ca, cb, count) in [("a1", "b1", 30), ("a1", "b2", 10), ("a2", "b1", 20), ("a2", "b2", 40)] {
            a += Array(repeating: ca, count: count)
            b += Array(repeating: cb, count: count)
        }
        return ["A": a, "B": b]
    }

    static let twoByTwoTargets = try! RakingTargets([
        RakingMargin(variable: "A", category: "a1", share: 0.5), RakingMargin(variable: "A", category: "a2", share: 0.5),
        RakingMargin(variable: "B", category: "b1", share: 0.4), RakingMargin(variable: "B", category: "b2", share: 0.6)
    ])

    /// Each person's weight by cell.
    static func cellWeights(_ result: RakingResult, _ values: [String: [String]]) -> [String: Double] {
        var out: [String: Double] = [:]
        for i in result.weights.indices { out[values["A"]![i] + values["B"]![i]] = result.weights[i] }
        return out
    }

    @Test("one sweep by hand on the 2×2 table: A factors 50/40, 50/60; then B factors 40/54.1667, 60/45.8333")
    func oneSweepByHand() throws {
        // Sweep 1, A: a1 holds 40 persons → ×1.25; a2 holds 60 → ×5/6. Cells 37.5, 12.5 | 16.667, 33.333.
        // B: b1 holds 37.5 + 16.667 = 325/6 → ×40/(325/6) = 48/65; b2 holds 12.5 + 33.333 = 275/6 → ×72/55.
        // Person weights: a1b1 1.25·48/65 = 12/13, a1b2 1.25·72/55 = 18/11, a2b1 (5/6)(48/65) = 8/13, a2b2 (5/6)(72/55) = 12/11.
        var options = RakingOptions()
        options.maximumIterations = 1
        options.trimFactor = nil
        let values = Self.twoByTwo()
        let result = try Raking.rake(values: values, targets: Self.twoByTwoTargets, options: options)
        let w = Self.cellWeights(result, values)
        #expect(w["a1b1"]!.isApproximatelyEqual(to: 12.0 / 13, absoluteTolerance: 1e-14))
        #expect(w["a1b2"]!.isApproximatelyEqual(to: 18.0 / 11, absoluteTolerance: 1e-14))
        #expect(w["a2b1"]!.isApproximatelyEqual(to: 8.0 / 13, absoluteTolerance: 1e-14))
        #expect(w["a2b2"]!.isApproximatelyEqual(to: 12.0 / 11, absoluteTolerance: 1e-14))
        // A is off after one sweep: a1 = 30·12/13 + 10·18/11 = 44.056 of 100, target 50.
        #expect(!result.converged)
        #expect(result.iterations == 1)
        let a1: Double = (30 * 12.0 / 13 + 10 * 18.0 / 11) / 100
        #expect(result.maximumMarginError.isApproximatelyEqual(to: 0.5 - a1, absoluteTolerance: 1e-14))
        #expect(
            result.warnings.count == 1
                && result.warnings[0].hasPrefix("raking did not converge: after 1 sweeps the largest margin error is 5.944e-02"), "\(result.warnings)"
        )
    }

    @Test("converged 2×2 equals the closed form: odds ratio 6 kept, margins 50/50 and 40/60 → cells 30, 20, 10, 40")
    func twoByTwoClosedForm() throws {
        // IPF keeps the sample odds ratio (30·40)/(10·20) = 6. With m11 = x: m12 = 50 − x, m21 = 40 − x, m22 = 10 + x,
        // and x(10 + x) = 6(50 − x)(40 − x) ⇔ x² − 110x + 2400 = 0 ⇔ x = 30. Person weights: 30/30, 20/10, 10/20, 40/40.
        var options = RakingOptions()
        options.tolerance = 1e-13
        options.trimFactor = nil
        let values = Self.twoByTwo()
        let result = try Raking.rake(values: values, targets: Self.twoByTwoTargets, options: options)
        #expect(result.converged)
        let w = Self.cellWeights(result, values)
        #expect(w["a1b1"]!.isApproximatelyEqual(to: 1, absoluteTolerance: 1e-9))
        #expect(w["a1b2"]!.isApproximatelyEqual(to: 2, absoluteTolerance: 1e-9))
        #expect(w["a2b1"]!.isApproximatelyEqual(to: 0.5, absoluteTolerance: 1e-9))
        #expect(w["a2b2"]!.isApproximatelyEqual(to: 1, absoluteTolerance: 1e-9))
        #expect(result.weights.reduce(0, +).isApproximatelyEqual(to: 100, absoluteTolerance: 1e-9))
        for m in result.margins { #expect(abs(m.achieved - m.target) <= 1e-12, "\(m)") }
        // Kish: Σw = 100, Σw² = 30 + 10·4 + 20·0.25 + 40 = 115 → deff = 100·115/100² = 1.15.
        #expect(result.designEffect.designEffect.isApproximatelyEqual(to: 1.15, absoluteTolerance: 1e-9))
    }

    @Test("seeded recovery: a multiplicatively selected sample raked to three population margins recovers the population's joint shares")
    func recovery() throws {
        // Population: A (3), B (2), C (4) with a joint distribution that is not independent; selection ∝ s_A·s_B·s_C.
        var rng = SeededGenerator(seed: 7)
        let pa = [0.2, 0.5, 0.3], pbGivenA = [[0.7, 0.3], [0.4, 0.6], [0.2, 0.8]], pc = [0.1, 0.2, 0.3, 0.4]
        let sa = [1.0, 0.4, 0.7], sb = [0.3, 1.0], sc = [1.0, 0.8, 0.5, 0.2]
        func draw(_ p: [Double]) -> Int {
            let u = RandomVariate.uniform(using: &rng)
            var c = 0.0
            for (k, x) in p.enumerated() { c += x; if u < c { return k } }
            return p.count - 1
        }
        var a: [String] = [], b: [String] = [], c: [String] = []
        var codes: [(Int, Int, Int)] = []
        while codes.count < 20_000 {
            let i = draw(pa), j = draw(pbGivenA[i]), k = draw(pc)
            guard RandomVariate.uniform(using: &rng) < sa[i] * sb[j] * sc[k] else { continue }
            codes.append((i, j, k)); a.append("a\(i)"); b.append("b\(j)"); c.append("c\(k)")
        }
        var margins: [RakingMargin] = []
        for i in 0..<3 { margins.append(RakingMargin(variable: "A", category: "a\(i)", share: pa[i])) }
        for j in 0..<2 { margins.append(RakingMargin(variable: "B", category: "b\(j)", share: (0..<3).reduce(0) { $0 + pa[$1] * pbGivenA[$1][j] })) }
        for k in 0..<4 { margins.append(RakingMargin(variable: "C", category: "c\(k)", share: pc[k])) }
        // No trimming: it trades bias for variance, and here the selection spans a factor of 40.
        var options = RakingOptions()
        options.trimFactor = nil
        let result = try Raking.rake(values: ["A": a, "B": b, "C": c], targets: try RakingTargets(margins), options: options)
        #expect(result.converged)
        #expect(result.maximumMarginError <= 1e-10)
        for m in result.margins { #expect(abs(m.achieved - m.target) <= 1e-9, "\(m.variable)=\(m.category)") }
        // The joint share of (A, B) cells: population pa·pb|a; raked within 0.01 (sampling error of 20,000 persons).
        let total = result.weights.reduce(0, +)
        var cells = [Double](repeating: 0, count: 6)
        for (k, code) in codes.enumerated() { cells[code.0 * 2 + code.1] += result.weights[k] / total }
        for i in 0..<3 {
            for j in 0..<2 {
                #expect(abs(cells[i * 2 + j] - pa[i] * pbGivenA[i][j]) < 0.01, "cell a\(i)b\(j): \(cells[i * 2 + j]) vs \(pa[i] * pbGivenA[i][j])")
            }
        }
        // Raking again gives the same weights.
        #expect(result == (try Raking.rake(values: ["A": a, "B": b, "C": c], targets: try RakingTargets(margins), options: options)))
    }

    @Test("trimming caps weights at k × mean and re-rakes: margins still met, trimmed persons counted")
    func trimming() throws {
        // 5 persons in the rare category r of 200; target share 0.3 → weight ≈ 0.3·200/5 = 12 ≫ 5 × mean.
        let values = [
            "G": Array(repeating: "r", count: 5) + Array(repeating: "s", count: 195),
            "H": (0..<200).map { $0 % 2 == 0 ? "x" : "y" }
        ]
        let targets = try RakingTargets([
            RakingMargin(variable: "G", category: "r", share: 0.3), RakingMargin(variable: "G", category: "s", share: 0.7),
            RakingMargin(variable: "H", category: "x", share: 0.5), RakingMargin(variable: "H", category: "y", share: 0.5)
        ])
        let result = try Raking.rake(values: values, targets: targets)
        // The margin needs weights of 12: trimming cannot hold them, so the cap is exceeded and said so.
        #expect(result.trimmedCount == 5)
        #expect(result.trimRounds == 20)
        #expect(result.converged)
        #expect(result.warnings == ["after 20 trimming rounds, 5 weights still exceed 5.000 × the mean weight (the margins need them)"])
        for m in result.margins { #expect(abs(m.achieved - m.target) <= 1e-9) }

        // A milder case: trimming succeeds; every weight ends within the cap.
        let mild = try RakingTargets([
            RakingMargin(variable: "G", category: "r", share: 0.05), RakingMargin(variable: "G", category: "s", share: 0.95),
            RakingMargin(variable: "H", category: "x", share: 0.5), RakingMargin(variable: "H", category: "y", share: 0.5)
        ])
        var options = RakingOptions()
        options.trimFactor = 1.5
        let trimmed = try Raking.rake(values: values, targets: mild, options: options)
        #expect(trimmed.trimmedCount > 0)
        #expect(trimmed.largestWeightRatio <= 1.5 * (1 + 1e-6) || !trimmed.warnings.isEmpty)
        for m in trimmed.margins { #expect(abs(m.achieved - m.target) <= 1e-9) }
    }

    @Test("unreachable margins: no convergence, a warning, no crash")
    func unreachable() throws {
        // A and B are the same variable in the sample; margins 50/50 for A and 30/70 for B cannot both hold.
        let values = ["A": ["p", "p", "q", "q"], "B": ["u", "u", "v", "v"]]
        let targets = try RakingTargets([
            RakingMargin(variable: "A", category: "p", share: 0.5), RakingMargin(variable: "A", category: "q", share: 0.5),
            RakingMargin(variable: "B", category: "u", share: 0.3), RakingMargin(variable: "B", category: "v", share: 0.7)
        ])
        var options = RakingOptions()
        options.maximumIterations = 50
        let result = try Raking.rake(values: values, targets: targets, options: options)
        #expect(!result.converged)
        #expect(result.iterations == 50)
        #expect(result.weights.allSatisfy { $0 > 0 && $0.isFinite })
        #expect(
            result.warnings.contains { $0.hasPrefix("raking did not converge: after 50 sweeps the largest margin error is 2.000e-01") },
            "\(result.warnings)")
    }

    @Test("validation: shares, duplicates, unknown and empty categories, missing variables — exact messages")
    func validation() throws {
        #expect(throws: PsychometricsError(.invalidOptions, "the shares of education sum to 0.900000, not 1 (allowed ±1e-06)")) {
            try RakingTargets([
                RakingMargin(variable: "education", category: "low", share: 0.4), RakingMargin(variable: "education", category: "high", share: 0.5)
            ])
        }
        #expect(throws: PsychometricsError(.invalidOptions, "margin education = 'low': share 0.0 is outside (0, 1]")) {
            try RakingTargets([
                RakingMargin(variable: "education", category: "low", share: 0), RakingMargin(variable: "education", category: "high", share: 1)
            ])
        }
        #expect(throws: PsychometricsError(.invalidOptions, "margin sex = 'f' is given twice")) {
            try RakingTargets([
                RakingMargin(variable: "sex", category: "f", share: 0.5), RakingMargin(variable: "sex", category: "f", share: 0.5),
                RakingMargin(variable: "sex", category: "m", share: 0.5)
            ])
        }
        let targets = try RakingTargets([
            RakingMargin(variable: "education", category: "low", share: 0.3), RakingMargin(variable: "education", category: "mid", share: 0.4),
            RakingMargin(variable: "education", category: "high", share: 0.3)
        ])
        #expect(throws: PsychometricsError(.invalidOptions, "the sample has education = 'phd' (2 persons), which the margins do not list")) {
            try Raking.rake(values: ["education": ["low", "mid", "high", "phd", "phd"]], targets: targets)
        }
        #expect(
            throws: PsychometricsError(
                .invalidOptions, "margin education = 'high' (share 0.300000) has no person in the sample; raking cannot give it weight")
        ) {
            try Raking.rake(values: ["education": ["low", "mid", "mid"]], targets: targets)
        }
        #expect(
            throws: PsychometricsError(.invalidOptions, "the margins' variable 'education' is not a column of the sample (columns given: region)")
        ) {
            try Raking.rake(values: ["region": ["n", "s"]], targets: targets)
        }
    }
}
