import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

@Suite("Item analysis and model fit: known values")
struct ItemAnalysisTests {
    @Test("χ² upper tail at tabled critical values")
    func chiSquare() {
        // 95th percentiles of χ²(1), χ²(2), χ²(10), χ²(30) (standard tables, 15 digits).
        #expect(ChiSquare.upperTail(3.841458820694124, degreesOfFreedom: 1).isApproximatelyEqual(to: 0.05, absoluteTolerance: 1e-12))
        #expect(ChiSquare.upperTail(5.991464547107979, degreesOfFreedom: 2).isApproximatelyEqual(to: 0.05, absoluteTolerance: 1e-12))
        #expect(ChiSquare.upperTail(18.307038053275146, degreesOfFreedom: 10).isApproximatelyEqual(to: 0.05, absoluteTolerance: 1e-12))
        // The finite sums (whole df ≤ 200) against the series and continued fraction, from the far lower tail
        // to p ≈ 1e-30.
        for df in 1...200 {
            for q in stride(from: 0.01, through: 8.0, by: 0.37) {
                let x = Double(df) * q + q
                let exact = ChiSquare.upperTail(x, degreesOfFreedom: Double(df)),
                    general = ChiSquare.incompleteGammaUpperTail(x, degreesOfFreedom: Double(df))
                #expect(abs(exact - general) <= 1e-10 * general + 1e-15, "df \(df), x \(x)")
            }
        }
        #expect(ChiSquare.upperTail(43.77297182574219, degreesOfFreedom: 30).isApproximatelyEqual(to: 0.05, absoluteTolerance: 1e-12))
        // χ²(2) has the closed form e^(−x/2).
        #expect(ChiSquare.upperTail(14.451071, degreesOfFreedom: 2).isApproximatelyEqual(to: exp(-14.451071 / 2), relativeTolerance: 1e-12))
        #expect(ChiSquare.upperTail(0, degreesOfFreedom: 3) == 1)
    }

    @Test("α, SEM, α-if-deleted and corrected point-biserials equal the textbook formulas on complete data")
    func classical() throws {
        let data = LSAT7.matrix
        let analysis = ClassicalItemAnalysis(data)
        // Independent computation: column and total-score sample variances.
        let N = data.personCount, J = data.itemCount
        var x = [[Double]](repeating: [Double](repeating: 0, count: J), count: N)
        for i in 0..<N { for k in data.cells(ofPerson: i) { x[i][Int(data.itemIndices[k])] = Double(data.responses[k]) } }
        func variance(_ v: [Double]) -> Double {
            let m = v.reduce(0, +) / Double(v.count)
            return v.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(v.count - 1)
        }
        func alpha(_ items: [Int]) -> Double {
            let k = Double(items.count)
            let sumVar = items.map { j in variance(x.map { $0[j] }) }.reduce(0, +)
            let total = variance(x.map { row in items.reduce(0) { $0 + row[$1] } })
            return k / (k - 1) * (1 - sumVar / total)
        }
        let expected = alpha(Array(0..<J))
        #expect(try #require(analysis.alpha).isApproximatelyEqual(to: expected, absoluteTolerance: 1e-12))
        let totalSD = variance(x.map { $0.reduce(0, +) }).squareRoot()
        #expect(try #require(analysis.sem).isApproximatelyEqual(to: totalSD * (1 - expected).squareRoot(), absoluteTolerance: 1e-12))
        #expect(analysis.completePersons == 1000)
        for j in 0..<J {
            #expect(
                try #require(analysis.items[j].alphaIfDeleted).isApproximatelyEqual(to: alpha((0..<J).filter { $0 != j }), absoluteTolerance: 1e-12))
            let item = x.map { $0[j] }, rest = x.map { $0.reduce(0, +) - $0[j] }
            let r = pearson(item, rest)
            #expect(try #require(analysis.items[j].pointBiserial).isApproximatelyEqual(to: r, absoluteTolerance: 1e-12))
        }
        // LSAT7 proportions correct as printed by mirt's itemstats: .828 .658 .772 .606 .843.
        #expect(analysis.items.map { ($0.pValue * 1000).rounded() / 1000 } == [0.828, 0.658, 0.772, 0.606, 0.843])
    }

    @Test("S-X² on LSAT7 matches mirt's itemfit (2PL, df 2)")
    func sx2() throws {
        // mirt 1.4x test-01-mirtOne.R: itemfit(mod) S_X2 for the LSAT7 2PL, df = 2 for every item.
        let mirt = [4.749440, 14.451071, 1.270381, 5.237400, 0.941125]
        var options = CalibrationOptions(model: .twoPL)
        options.tolerance = 1e-6
        let fit = try EMCalibrator(options: options).calibrate(LSAT7.matrix)
        let model = try ModelFit(data: LSAT7.matrix, parameters: fit.parameters, freeParameters: 2)
        // Everyone but the 12 persons with score 0 and the 308 with score 5 (mirt's S-X² leaves them out too).
        #expect(model.sx2Persons == 680)
        for (j, item) in model.items.enumerated() {
            #expect(item.sx2DegreesOfFreedom == 2)
            // Tolerance 0.02: our estimates agree with mirt's to ~1e-3, which moves S-X² in the second decimal.
            #expect(try #require(item.sx2).isApproximatelyEqual(to: mirt[j], absoluteTolerance: 0.02), "item \(j): \(item.sx2 ?? .nan) vs \(mirt[j])")
            #expect(try #require(item.sx2P).isApproximatelyEqual(to: exp(-item.sx2! / 2), relativeTolerance: 1e-9))
        }
    }

    @Test("l_z and Q3 equal direct computations at the WLE estimates")
    func residualStatistics() throws {
        let sim = Simulated(model: .twoPL, items: 20, persons: 400, seed: 31)
        let model = try ModelFit(data: sim.data, parameters: sim.truth, freeParameters: 2)
        let wle = try AbilityEstimator(parameters: sim.truth, options: AbilityOptions(method: .wle))
        let data = sim.data
        var thetas: [Double] = []
        for i in 0..<data.personCount {
            let cells = data.cells(ofPerson: i)
            thetas.append(try wle.estimate(items: cells.map { Int(data.itemIndices[$0]) }, responses: cells.map { data.responses[$0] }).theta)
        }
        func u(_ i: Int, _ j: Int) -> Double? {
            data.cells(ofPerson: i).first { Int(data.itemIndices[$0]) == j }.map { Double(data.responses[$0]) }
        }
        // l_z of person 3.
        var l0 = 0.0, e = 0.0, v = 0.0
        for j in 0..<data.itemCount {
            guard let x = u(3, j) else { continue }
            let p = sim.truth[j].probability(at: thetas[3])
            let logP = log(p), logQ = log(1 - p), logit = log(p / (1 - p))
            l0 += x * logP + (1 - x) * logQ
            e += p * logP + (1 - p) * logQ
            v += p * (1 - p) * logit * logit
        }
        #expect(try #require(model.persons[3].lz).isApproximatelyEqual(to: (l0 - e) / v.squareRoot(), relativeTolerance: 1e-9))
        // Q3 of items 1 and 2: Pearson correlation of residuals.
        var a: [Double] = [], b: [Double] = []
        for i in 0..<data.personCount {
            guard let x = u(i, 1), let y = u(i, 2) else { continue }
            a.append(x - sim.truth[1].probability(at: thetas[i])); b.append(y - sim.truth[2].probability(at: thetas[i]))
        }
        let r = pearson(a, b)
        #expect(try #require(model.q3(1, 2)).isApproximatelyEqual(to: r, absoluteTolerance: 1e-12))
        #expect(model.q3(1, 2) == model.q3(2, 1))
        // Data simulated from the model fit it: mean squares near 1, reliability sensible.
        for item in model.items { #expect(abs(item.infit! - 1) < 0.2) }
        #expect(try #require(model.meanErrorVarianceReliability) > 0.5)
    }

    @Test("α, SEM and α-if-deleted are undefined, with the reason, when the data are missing by design")
    func missingByDesign() throws {
        let sim = Simulated(model: .twoPL, items: 60, persons: 2000, perSession: 10, seed: 4)
        let classical = ClassicalItemAnalysis(sim.data)
        #expect(classical.alpha == nil && classical.sem == nil && classical.items.allSatisfy { $0.alphaIfDeleted == nil })
        #expect(
            classical.undefined["alpha"]?.hasPrefix("missing by design: persons answered 10.0 of the 60 items on average (16.7% of the cells") == true
        )
        #expect(classical.undefined["sem"] != nil && classical.undefined["alpha_if_deleted"] != nil)
        #expect(classical.undefined["mean_score"] == "no person answered every item")
        // Point-biserials stay defined (rest score on the other answered items).
        #expect(classical.items.allSatisfy { $0.pointBiserial != nil })
        let fit = try ModelFit(data: sim.data, parameters: sim.truth, freeParameters: 2)
        #expect(fit.items.allSatisfy { $0.sx2P != nil && $0.infitZ != nil && $0.rmsd != nil })
        #expect(try #require(fit.meanErrorVarianceReliability) > 0.5)
    }
}

/// Pearson correlation, written out independently of the code under test.
func pearson(_ x: [Double], _ y: [Double]) -> Double {
    let n = Double(x.count)
    let mx = x.reduce(0, +) / n, my = y.reduce(0, +) / n
    var sxy = 0.0, sxx = 0.0, syy = 0.0
    for (a, b) in zip(x, y) {
        sxy += (a - mx) * (b - my)
        sxx += (a - mx) * (a - mx)
        syy += (b - my) * (b - my)
    }
    return sxy / (sxx * syy).squareRoot()
}

@Suite("Distractor analysis")
struct DistractorAnalysisTests {
    @Test("rates, top/bottom groups and flags on a hand-computed example")
    func handExample() {
        // 10 persons, item A keyed "2", item B keyed "1" (B gives the rest score for A).
        // Rest score for A = B correct: persons 0–4 answered B = 1 (correct), 5–9 answered B = 3.
        let a: [String?] = ["2", "2", "2", "2", "3", "1", "1", "3", "2", nil]
        let b: [String?] = ["1", "1", "1", "1", "1", "3", "3", "3", "3", "3"]
        let choices = zip(a, b).map { [$0, $1] }
        let d = DistractorAnalysis(personCount: 10, itemIDs: ["A", "B"], choices: choices, keys: ["2", "1"], groupShare: 0.3)
        let optionsA = d.options.filter { $0.itemID == "A" }
        #expect(optionsA.map(\.option) == ["1", "2", "3"])
        // 9 answered A: key 2 chosen by 5 (5/9), option 1 by 2, option 3 by 2. Groups of round(9·0.3) = 3:
        // bottom = the three lowest rest scores (persons 5, 6, 7: rest 0), top = persons 2, 3, 4 (rest 1, last
        // three in person order among ties).
        let key = optionsA[1]
        #expect(key.isKey && key.count == 5 && abs(key.rate - 5.0 / 9) < 1e-12)
        #expect(abs(key.rateTop - 2.0 / 3) < 1e-12 && key.rateBottom == 0 && abs(key.discrimination - 2.0 / 3) < 1e-12)
        #expect(key.flags.isEmpty)
        let one = optionsA[0]
        #expect(one.rateTop == 0 && abs(one.rateBottom - 2.0 / 3) < 1e-12 && one.flags.isEmpty)
        let three = optionsA[2]
        // Person 4 (top) chose 3 and person 7 (bottom) chose 3: D = 1/3 − 1/3 = 0.
        #expect(abs(three.discrimination) < 1e-12)
    }

    @Test("ICAR16 options scored with the keys reproduce ability.csv (real data)")
    func icar16() throws {
        let root = Repository.root
        let keys = [
            "reason.4": "4", "reason.16": "4", "reason.17": "4", "reason.19": "6", "letter.7": "6", "letter.33": "3",
            "letter.34": "4", "letter.58": "4", "matrix.45": "5", "matrix.46": "2", "matrix.47": "2", "matrix.55": "4",
            "rotate.3": "3", "rotate.4": "2", "rotate.6": "6", "rotate.8": "7"
        ]
        let scored = try DistractorAnalysis.load(csv: root.appendingPathComponent("Data/icar16_options.csv").path, keys: keys).scored
        let (ability, _) = try ResponseMatrix.load(csv: root.appendingPathComponent("Data/icar16.csv").path)
        // ability.csv drops the 16 empty rows; compare person by person (ids are row numbers in both files).
        var byID: [String: Int] = [:]
        for (i, id) in scored.personIDs.enumerated() { byID[id] = i }
        var compared = 0
        for i in 0..<ability.personCount {
            let s = try #require(byID[ability.personIDs[i]])
            let x = ability.cells(ofPerson: i).map { (ability.itemIndices[$0], ability.responses[$0]) }
            let y = scored.cells(ofPerson: s).map { (scored.itemIndices[$0], scored.responses[$0]) }
            #expect(x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1))
            compared += 1
        }
        #expect(compared == 1509)
    }
}
