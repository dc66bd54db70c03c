import Foundation
import Testing
import Psychometrics
@testable import Fairness

/// The DIF statistics against hand computation, R (`glm`, `mantelhaen.test`, `p.adjust`) and mirt 1.47's `DIF()`
/// on `Fixtures/dif/two_groups.csv` (item i1 uniform DIF, i2 non-uniform, the others none).
@Suite("Differential item functioning")
struct DIFTests {
    @Test("Mantel–Haenszel on a 2 × 2 × 3 table by hand: α, χ² (continuity-corrected), RBG variance, delta, ETS class")
    func mantelHaenszelByHand() throws {
        // Strata (A, B, C, D) = (ref correct, ref incorrect, focal correct, focal incorrect).
        let strata: [(Double, Double, Double, Double)] = [(20, 30, 10, 40), (40, 20, 25, 35), (30, 5, 20, 15)]
        let mh = try #require(
            MantelHaenszelDIF(
                tables: strata.map { .init(referenceCorrect: $0.0, referenceIncorrect: $0.1, focalCorrect: $0.2, focalIncorrect: $0.3) }))
        // Σ AD/N = 800/100 + 1400/120 + 450/70; Σ BC/N = 300/100 + 500/120 + 100/70.
        let r = 8 + 1400.0 / 120 + 450.0 / 70, s = 3 + 500.0 / 120 + 100.0 / 70
        let alpha = try #require(mh.commonOddsRatio)
        #expect(abs(alpha - r / s) < 1e-12)
        // E A = n_R m_1 / N: 50·30/100, 60·65/120, 35·50/70; Var A = n_R n_F m_1 m_0 / (N²(N − 1)).
        let e = 15 + 32.5 + 25.0, a = 90.0
        let v1: Double = 50 * 50 * 30 * 70 / (1e4 * 99)
        let v2: Double = 60 * 60 * 65 * 55 / (14_400 * 119.0)
        let v3: Double = 35 * 35 * 50 * 20 / (4_900 * 69.0)
        let v = v1 + v2 + v3
        #expect(abs(mh.chiSquare - pow(abs(a - e) - 0.5, 2) / v) < 1e-10)
        // RBG: P = (A + D)/N, Q = (B + C)/N, R = AD/N, S = BC/N per stratum.
        let terms = strata.map { t -> (Double, Double, Double, Double, Double, Double) in
            let n = t.0 + t.1 + t.2 + t.3
            return ((t.0 + t.3) / n, (t.1 + t.2) / n, t.0 * t.3 / n, t.1 * t.2 / n, 0, 0)
        }
        let variance =
            terms.reduce(0) { $0 + $1.0 * $1.2 } / (2 * r * r) + terms.reduce(0) { $0 + $1.0 * $1.3 + $1.1 * $1.2 } / (2 * r * s)
            + terms.reduce(0) { $0 + $1.1 * $1.3 } / (2 * s * s)
        let delta = try #require(mh.delta), deltaSE = try #require(mh.deltaStandardError)
        #expect(abs(delta - -2.35 * log(r / s)) < 1e-12)
        #expect(abs(deltaSE - 2.35 * variance.squareRoot()) < 1e-12)
        // D = −2.35 ln 3.38 ≈ −2.86, SE ≈ 0.52: |D| ≥ 1.5 and (|D| − 1)/SE ≈ 3.6 > 1.645 → C−.
        #expect(mh.etsClass == "C-")
        #expect(MantelHaenszelDIF.etsClass(delta: 1.2, standardError: 0.3, p: 0.001) == "B+")
        #expect(MantelHaenszelDIF.etsClass(delta: -1.6, standardError: 0.5, p: 0.001) == "B-", "|D| ≥ 1.5 but not significantly above 1")
        #expect(MantelHaenszelDIF.etsClass(delta: -2.5, standardError: 2, p: 0.2) == "A", "not significant")
        #expect(MantelHaenszelDIF.etsClass(delta: 0.9, standardError: 0.1, p: 1e-9) == "A")
    }

    @Test("Benjamini–Hochberg as R's p.adjust")
    func benjaminiHochberg() {
        let adjusted = BenjaminiHochberg.adjusted([0.01, 0.04, nil, 0.03, 0.2, 0.001])
        let r: [Double?] = [0.025, 0.05, nil, 0.05, 0.2, 0.005]
        for (x, y) in zip(adjusted, r) { #expect(x == nil && y == nil || abs(x! - y!) < 1e-12) }
    }

    @Test("MH and logistic regression on the fixture's total score as R's mantelhaen.test and glm")
    func observedScoreAgainstR() throws {
        let (data, groups) = try MultipleGroupCalibratorTests.twoGroups()
        var options = DIFOptions()
        options.methods = [.mantelHaenszel, .logisticRegression]
        options.dtfDraws = 0
        let report = try DIFAnalysis.run(data, groups: groups, reference: "ref", options: options)
        #expect(report.matching == .totalScore)
        // R: mantelhaen.test(table(y, group, total), correct = TRUE); glm nested models; Nagelkerke ΔR² (M3 − M1).
        let expected: [(String, Double, Double, Double, Double, Double, Double)] = [
            ("i1", 65.12127134, 2.71637712, 69.78837828, 0.55498849, 0.0323056830, -1.02201423),
            ("i2", 19.08470722, 0.61172484, 18.54482768, 5.70653984, 0.0132227936, 0.48224420),
            ("i3", 3.53919574, 0.79272992, 3.56256644, 0.12656192, 0.0017299550, 0.22465307)
        ]
        for (id, chi, alpha, uniform, nonUniform, deltaR2, _) in expected {
            let row = try #require(report.rows.first { $0.itemID == id })
            let mh = try #require(row.mantelHaenszel), lr = try #require(row.logisticRegression)
            let odds = try #require(mh.commonOddsRatio)
            #expect(abs(mh.chiSquare - chi) < 1e-6 && abs(odds - alpha) < 1e-7, "\(id) MH \(mh)")
            #expect(abs(lr.uniformChiSquare - uniform) < 1e-5 && abs(lr.nonUniformChiSquare - nonUniform) < 1e-5, "\(id) LR \(lr)")
            #expect(abs(lr.deltaR2 - deltaR2) < 1e-7, "\(id) ΔR² \(lr.deltaR2)")
        }
        let flagged = report.rows.filter { $0.flaggedBy.contains(.mantelHaenszel) }.map(\.itemID)
        #expect(flagged.starts(with: ["i1", "i2"]))
    }

    @Test("IRT likelihood-ratio and Wald tests as mirt's DIF(); DTF from the freed items")
    func irtAgainstMirt() throws {
        let (data, groups) = try MultipleGroupCalibratorTests.twoGroups()
        var options = DIFOptions()
        options.methods = [.likelihoodRatio]
        options.calibration = MultipleGroupCalibratorTests.options()
        options.dtfDraws = 200
        let report = try DIFAnalysis.run(data, groups: groups, reference: "ref", options: options)
        // mirt: DIF(mod, c("a1", "d"), scheme = "drop", TOL = 1e-6) from the invariant model.
        let mirt = [57.059, 32.435, 6.858, 0.636, 0.841, 2.084, 0.252, 4.84, 0.754, 0.361, 0.769, 5.729]
        for (j, x2) in mirt.enumerated() {
            let test = try #require(report.rows[j].likelihoodRatio)
            #expect(abs(test.chiSquare - x2) < 2e-3 + 1e-4 * x2, "i\(j + 1): \(test.chiSquare) vs mirt \(x2)")
            #expect(test.degreesOfFreedom == 2)
        }
        #expect(report.rows.filter { $0.flaggedBy.contains(.likelihoodRatio) }.map(\.itemID) == ["i1", "i2"])
        #expect(report.multipleGroupFits == 1 + 12 + 1)
        let dtf = try #require(report.dtf.first)
        #expect(Set(dtf.freedItems) == ["i1", "i2"])
        #expect(dtf.signed > 0, "i1 is harder for the focal group: sDTF \(dtf.signed)")
        #expect(dtf.unsigned >= abs(dtf.signed))
        let interval = try #require(dtf.signedInterval)
        #expect(interval.contains(dtf.signed))

        // Wald: mirt's DIF(Wald = TRUE) in the model with i1 and i2 free: W(i1) = 48.626, W(i2) = 22.400.
        var fits = IRTDIFFits(
            data: data, groups: groups, reference: "ref", calibrator: MultipleGroupCalibrator(options: MultipleGroupCalibratorTests.options()),
            names: ["ref", "foc"])
        let w1 = try fits.wald(item: 0, focal: "foc", free: [1]).get(), w2 = try fits.wald(item: 1, focal: "foc", free: [0]).get()
        #expect(abs(w1.chiSquare - 48.626) < 0.05, "W(i1) \(w1.chiSquare)")
        #expect(abs(w2.chiSquare - 22.400) < 0.05, "W(i2) \(w2.chiSquare)")
    }

    /// Not bit for bit: the base fit's E-step adds its two workers' sums, in another order than one worker.
    @Test("the IRT scan's fits run side by side on two threads with the statistics of one thread (to 1e-8)")
    func parallelScan() throws {
        let (data, groups) = try MultipleGroupCalibratorTests.twoGroups()
        var options = DIFOptions()
        options.methods = [.likelihoodRatio]
        options.dtfDraws = 0
        options.purify = true
        options.calibration.workers = 1
        let one = try DIFAnalysis.run(data, groups: groups, reference: "ref", options: options)
        options.calibration.workers = 2
        let two = try DIFAnalysis.run(data, groups: groups, reference: "ref", options: options)
        for (a, b) in zip(one.rows, two.rows) {
            let x = try #require(a.likelihoodRatio?.chiSquare), y = try #require(b.likelihoodRatio?.chiSquare)
            #expect(abs(x - y) < 1e-8, "\(a.itemID): \(x) vs \(y)")
        }
        #expect(one.purification == two.purification && one.multipleGroupFits == two.multipleGroupFits)
    }
}
