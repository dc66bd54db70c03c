import Foundation
import Testing
import TestSupport
@testable import Psychometrics
@testable import PsychometricsIO

@Suite("M2 and the battery model comparison")
struct LimitedInformationFitTests {
    /// ICAR16's 1,248 complete response patterns (persons × 16 items, row-major).
    static func icarPatterns() throws -> (patterns: [UInt8], persons: Int) {
        let root = Repository.root
        let data = try ResponseMatrix.load(csv: root.appendingPathComponent("Data/icar16.csv").path).matrix
        var patterns: [UInt8] = [], persons = 0
        for i in 0..<data.personCount where data.cells(ofPerson: i).count == data.itemCount {
            var row = [UInt8](repeating: 0, count: data.itemCount)
            for cell in data.cells(ofPerson: i) { row[Int(data.itemIndices[cell])] = data.responses[cell] }
            patterns += row
            persons += 1
        }
        return (patterns, persons)
    }

    /// mirt 1.47 `mirt(cc, 1, itemtype = "2PL", TOL = 1e-6)` on ICAR16's complete cases: (a1, d) per item.
    static let mirtTwoPL: [(Double, Double)] = [
        (1.8171702629, 1.1835043925), (1.2980895958, 1.3727051454), (1.8952231512, 1.6533859066), (1.3125993193, 0.9126555538),
        (1.4834943331, 0.8476389794), (1.2119769706, 0.5919511464), (1.5927953545, 0.9284852417), (1.4508348211, -0.1067031085),
        (0.9324247042, 0.2795866803), (1.0787551944, 0.4434250592), (1.2273018048, 0.7884445028), (0.7383954393, -0.4228742604),
        (1.8474645799, -2.0566343601), (2.0296608877, -1.9108575640), (1.5965790545, -1.0745378562), (1.6552782690, -2.0537442695)
    ]

    /// mirt 1.47 `bfactor(cc, domain, TOL = 1e-6)` on the same patterns (stopped at its 500 cycles): (a_g, a_s,
    /// specific factor, d); factors logic, pattern, spatial.
    static let mirtBifactor: [(Double, Double, Int, Double)] = [
        (1.7605100547, 0.8303778367, 0, 1.2325227865), (1.2499988165, 0.5938838991, 0, 1.4114894867),
        (2.1873873947, 1.5752485051, 0, 2.0836260768), (1.2999930569, 0.5378162901, 0, 0.9405620121),
        (1.7347792394, 0.8046211409, 1, 0.9673995979), (1.3627405341, 0.6389312228, 1, 0.6476528642),
        (2.1019242011, 1.1915225055, 1, 1.1879046246), (1.5310224481, 0.2848545588, 1, -0.1157986265),
        (1.2600098675, -0.6327968237, 1, 0.3294168197), (1.2913933230, -0.2803656249, 1, 0.4810161057),
        (1.3289685636, -0.0860979364, 1, 0.8160029451), (0.8296911927, -0.2884227452, 1, -0.4393739062),
        (1.7846878961, 2.0374741685, 2, -2.6266119546), (2.0008796725, 2.0858401949, 2, -2.4224531586),
        (1.4847210545, 1.5114007915, 2, -1.2548935683), (1.4772754509, 1.7349331072, 2, -2.4701952970)
    ]

    /// M2 of the 2PL equals mirt 1.47's `M2()` on ICAR16 (M2 553.17064691, df 104, RMSEA 0.05885126 with interval
    /// 0.05405565–0.06369756, SRMSR 0.05060540) at mirt's estimates, both on 61 points on [−6, 6]: to 1e-4
    /// relative (the estimates are printed to 10 digits).
    @Test func twoPLMatchesMirt() throws {
        let (patterns, persons) = try Self.icarPatterns()
        #expect(persons == 1_248)
        let items = Self.mirtTwoPL.map { ItemParameters(discrimination: $0.0, difficulty: -$0.1 / $0.0) }
        let grid = try QuadratureGrid(count: 61, bound: 6)
        let fit = try LimitedInformationFit.evaluate(
            responses: patterns, persons: persons, itemCount: 16, parameters: UnidimensionalJointProbabilities.parameters(items, model: .twoPL),
            model: { x, _ in UnidimensionalJointProbabilities(items: UnidimensionalJointProbabilities.items(x, count: 16, model: .twoPL), grid: grid)
            },
            workers: 2)
        #expect(fit.degreesOfFreedom == 104 && fit.parameters == 32)
        #expect(abs(fit.m2 / 553.17064691 - 1) < 1e-4, "M2 \(fit.m2)")
        #expect(abs(fit.rmsea - 0.05885126) < 1e-5, "RMSEA \(fit.rmsea)")
        #expect(abs(fit.rmseaLower - 0.05405565) < 1e-5 && abs(fit.rmseaUpper - 0.06369756) < 1e-5, "\(fit.rmseaLower) \(fit.rmseaUpper)")
        #expect(abs(fit.srmsr - 0.05060540) < 1e-6, "SRMSR \(fit.srmsr)")
    }

    /// The bifactor model's M2 against mirt 1.47's `M2(mod, quadpts = 21)` of its `bfactor` fit: 134.52739172 on
    /// 88 df, RMSEA 0.02059111 [0.01320236, 0.02730290], SRMSR 0.02556864 (mirt integrates the moments on the
    /// full 4-D product grid; at its default for M2, 9 points per dimension, it reports 130.88 and SRMSR 0.0271,
    /// and 134.5066 at 15 points: its grid, not the model, moves those). Ours: the dimension reduction on 31
    /// points per dimension, to 1e-5 relative.
    @Test func bifactorMatchesMirt() throws {
        let (patterns, persons) = try Self.icarPatterns()
        let items = Self.mirtBifactor.map { BifactorItem(generalSlope: $0.0, specificSlope: $0.1, specific: $0.2, intercept: $0.3) }
        let grid = try QuadratureGrid(count: 31, bound: 6)
        let fit = try LimitedInformationFit.evaluate(
            responses: patterns, persons: persons, itemCount: 16, parameters: BifactorJointProbabilities.parameters(items),
            model: { x, _ in BifactorJointProbabilities(items: BifactorJointProbabilities.items(items, at: x), grid: grid) }, workers: 2)
        #expect(fit.degreesOfFreedom == 88 && fit.parameters == 48)
        #expect(abs(fit.m2 / 134.52739172 - 1) < 1e-5, "M2 \(fit.m2)")
        #expect(
            abs(fit.rmsea - 0.02059111) < 1e-6 && abs(fit.rmseaLower - 0.01320236) < 1e-6 && abs(fit.rmseaUpper - 0.02730290) < 1e-6,
            "RMSEA \(fit.rmsea) [\(fit.rmseaLower), \(fit.rmseaUpper)]")
        #expect(abs(fit.srmsr - 0.02556864) < 1e-6, "SRMSR \(fit.srmsr)")
    }

    /// mirt 1.47 `mirt(cc, model, TOL = 1e-7, quadpts = 21)` with three correlated factors (logic = items 1–4,
    /// pattern = 5–12, spatial = 13–16, `COV = logic*pattern*spatial`) on ICAR16's complete cases: (a, d) per item
    /// and R (log-likelihood −10656.0693831; /work/ref/m2cor.R).
    static let mirtCorrelated: [(Double, Double)] = [
        (2.04512877678647, 1.27132598892819), (1.42647016206219, 1.43025153031097), (2.2594416293616, 1.8480537422944),
        (1.4516384838775, 0.954308779610128), (1.7368533697281, 0.918607742230163), (1.38593858491758, 0.625039418511996),
        (1.91969333748389, 1.02923526981772), (1.58064404017752, -0.115845635421972), (1.03323453091393, 0.287343253333745),
        (1.19952506536392, 0.459568854612277), (1.30497459815328, 0.807289274132564), (0.775720917906762, -0.428329314118584),
        (2.59591595866479, -2.55192335675646), (2.92678894807241, -2.44863665263709), (2.19559932396223, -1.28467847879691),
        (2.20291552349034, -2.42008593611649)
    ]
    static let mirtCorrelations = [1, 0.856608660325, 0.707762085341, 0.856608660325, 1, 0.632085149449, 0.707762085341, 0.632085149449, 1.0]
    static let mirtCorrelatedFactor = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2]

    /// The correlated-factors model's M2 against mirt 1.47's `M2(mod, quadpts = 31)` of that fit: 192.37830783 on
    /// 101 df, SRMSR 0.02938081 (at `quadpts = 21`: 192.35297468, SRMSR 0.02937857: mirt's grid in θ is coarse
    /// across R's narrow axis; ours is in whitened coordinates). mirt's Δ₂ holds the item parameters only — the
    /// factor correlations are left out of the derivatives although its df counts them — so ours with R held fixed
    /// in Δ₂ reproduces its M2 (to 1e-5 relative), and ours with R's columns, the statistic Maydeu-Olivares & Joe
    /// (2006) define (Δ₂ over every estimated parameter), is 0.46 lower: 191.92 on 101 df.
    @Test func correlatedMatchesMirt() throws {
        let (patterns, persons) = try Self.icarPatterns()
        let items = Self.mirtCorrelated.map { BifactorItem(generalSlope: $0.0, intercept: $0.1) }
        let factor = Self.mirtCorrelatedFactor, r = Self.mirtCorrelations
        let parameters = try #require(CorrelatedJointProbabilities.parameters(items, correlations: r))
        let fit = try LimitedInformationFit.evaluate(
            responses: patterns, persons: persons, itemCount: 16, parameters: parameters,
            model: { (x, largest) throws(PsychometricsError) in
                try CorrelatedJointProbabilities.model(items, factor: factor, factors: 3, at: x, largestSet: largest)
            },
            workers: 2)
        #expect(fit.degreesOfFreedom == 101 && fit.parameters == 35)
        #expect(abs(fit.srmsr - 0.02938081) < 1e-6, "SRMSR \(fit.srmsr)")
        // R held fixed in Δ₂ (item parameters only), as mirt's M2() does.
        let itemsOnly = try LimitedInformationFit.evaluate(
            responses: patterns, persons: persons, itemCount: 16, parameters: items.flatMap(\.workingParameters),
            model: { (x, largest) throws(PsychometricsError) in
                try CorrelatedJointProbabilities.model(items, factor: factor, factors: 3, at: x + Array(parameters[32...]), largestSet: largest)
            }, workers: 2)
        #expect(abs(itemsOnly.m2 / 192.37830783 - 1) < 1e-5, "M2 with R fixed in Δ₂ \(itemsOnly.m2)")
        #expect(abs(fit.m2 - 191.92) < 0.01 && fit.m2 < itemsOnly.m2, "M2 \(fit.m2)")
        let rmsea = (max(0, fit.m2 - 101) / (Double(persons - 1) * 101)).squareRoot()
        #expect(abs(fit.rmsea - rmsea) < 1e-12)
    }

    /// The correlated model's joint probabilities of sets on 1…4 factors: with R = I, against the product of
    /// one-dimensional integrals on 401 points (the rules' own error: 1e-5 up to 3 factors, 5e-5 on 4); with
    /// correlations, against the 21⁴-node rule over all four factors at once (5e-5).
    @Test func correlatedJointProbabilitiesAreAccurate() throws {
        let items = [
            BifactorItem(generalSlope: 1.8, intercept: 0.4), BifactorItem(generalSlope: 0.9, intercept: -0.7),
            BifactorItem(generalSlope: 2.4, intercept: -1.5), BifactorItem(generalSlope: 1.2, intercept: 1.1),
            BifactorItem(generalSlope: 1.5, intercept: 0.2, guessing: 0.2, estimatesGuessing: true), BifactorItem(generalSlope: 2.0, intercept: 0.8)
        ]
        let factor = [0, 0, 1, 2, 3, 3]
        let sets = [[0], [2], [0, 1], [0, 2], [2, 3], [2, 5], [0, 2, 3], [0, 1, 4], [2, 3, 5], [1, 2, 3, 4], [0, 2, 3, 5], [0, 1, 2, 3], [4, 5, 0, 2]]
        func factors(_ set: [Int]) -> Int { Set(set.map { factor[$0] }).count }
        let identity: [Double] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
        let independent = try CorrelatedJointProbabilities(items: items, factor: factor, correlations: identity, largestSet: 4)
        let fine = try CorrelatedJointProbabilities(items: items, factor: factor, correlations: identity, largestSet: 1, rules: [(401, 8)])
        func p(_ model: CorrelatedJointProbabilities, _ set: [Int]) -> Double { set.withUnsafeBufferPointer { model.allCorrect($0) } }
        for set in sets {
            // Items on one factor integrate together; factors multiply.
            var exact = 1.0
            for f in Set(set.map { factor[$0] }) {
                let members = set.filter { factor[$0] == f }
                exact *= members.count == 1 ? p(fine, members) : p(independent, members)
            }
            if set.allSatisfy({ factor[$0] != 0 }) || set.filter({ factor[$0] == 0 }).count == 1 {
                #expect(abs(p(independent, set) - exact) < (factors(set) == 4 ? 5e-5 : 1e-5), "R = I, set \(set): \(p(independent, set)) vs \(exact)")
            }
        }
        let r: [Double] = [1, 0.7, 0.5, 0.3, 0.7, 1, 0.6, 0.4, 0.5, 0.6, 1, 0.2, 0.3, 0.4, 0.2, 1]
        let joint = try CorrelatedJointProbabilities(items: items, factor: factor, correlations: r, largestSet: 4)
        let grid = try QuadratureGrid(count: 21, bound: 6)
        var l = r
        #expect(choleskyInPlace(&l, n: 4))
        for set in sets {
            var total = 0.0
            for a in 0..<21 {
                for b in 0..<21 {
                    for c in 0..<21 {
                        for d in 0..<21 {
                            let z = [grid.points[a], grid.points[b], grid.points[c], grid.points[d]]
                            var value = grid.weights[a] * grid.weights[b] * grid.weights[c] * grid.weights[d]
                            for j in set {
                                let f = factor[j]
                                var theta = 0.0
                                for t in 0...f { theta += l[f * 4 + t] * z[t] }
                                value *= items[j].probability(general: theta, specific: 0)
                            }
                            total += value
                        }
                    }
                }
            }
            #expect(abs(p(joint, set) - total) < 5e-5, "set \(set): \(p(joint, set)) vs \(total)")
        }
    }

    /// The dimension-reduced joint probabilities equal brute-force integration over the full (θ_g, θ_1, θ_2)
    /// grid for every set of up to four items (1e-12), and with every specific slope 0 they equal the
    /// unidimensional model's.
    @Test func jointProbabilitiesAreExact() throws {
        let items = [
            BifactorItem(generalSlope: 1.2, specificSlope: 0.8, specific: 0, intercept: 0.3),
            BifactorItem(generalSlope: 0.9, specificSlope: -1.1, specific: 0, intercept: -0.5),
            BifactorItem(generalSlope: 1.5, specificSlope: 0.6, specific: 0, intercept: 1.0),
            BifactorItem(generalSlope: 1.0, specificSlope: 1.3, specific: 1, intercept: 0.0),
            BifactorItem(generalSlope: 1.4, specificSlope: 0.7, specific: 1, intercept: -1.1),
            BifactorItem(generalSlope: 0.7, intercept: -0.4, guessing: 0.2, estimatesGuessing: true)
        ]
        let grid = try QuadratureGrid(count: 15, bound: 5)
        let joint = BifactorJointProbabilities(items: items, grid: grid)
        func brute(_ set: [Int]) -> Double {
            var total = 0.0
            for g in 0..<15 {
                for s0 in 0..<15 {
                    for s1 in 0..<15 {
                        var p = grid.weights[g] * grid.weights[s0] * grid.weights[s1]
                        for j in set {
                            let s = items[j].specific == 0 ? grid.points[s0] : items[j].specific == 1 ? grid.points[s1] : 0
                            p *= items[j].probability(general: grid.points[g], specific: s)
                        }
                        total += p
                    }
                }
            }
            return total
        }
        let sets: [[Int]] = [[0], [5], [0, 1], [0, 3], [1, 5], [0, 1, 2], [0, 1, 3], [0, 3, 4, 5], [0, 1, 2, 3], [1, 2, 4, 5]]
        for set in sets {
            let value = set.withUnsafeBufferPointer { joint.allCorrect($0) }
            #expect(abs(value - brute(set)) < 1e-12, "\(set): \(value) vs \(brute(set))")
        }
        let flat = items.map {
            BifactorItem(generalSlope: $0.generalSlope, intercept: $0.intercept, guessing: $0.guessing, estimatesGuessing: $0.estimatesGuessing)
        }
        let uni = UnidimensionalJointProbabilities(
            items: flat.map { ItemParameters(discrimination: $0.generalSlope, difficulty: -$0.intercept / $0.generalSlope, guessing: $0.guessing) },
            grid: grid)
        let reduced = BifactorJointProbabilities(items: flat, grid: grid)
        for set in sets {
            let a = set.withUnsafeBufferPointer { reduced.allCorrect($0) }, b = set.withUnsafeBufferPointer { uni.allCorrect($0) }
            #expect(abs(a - b) < 1e-12)
        }
    }

    /// Under the model M2 is χ²(df): 60 seeded replications of 2,000 simulees × 8 2PL items, each refitted, give
    /// a mean M2 within 3 standard errors of df = 36 − 16 = 20 and reject at 5% no more than 3 SEs above 5%.
    @Test func nullDistribution() throws {
        var rng = SeededGenerator(seed: 2028)
        let truth = (0..<8).map { j in ItemParameters(discrimination: 0.8 + 0.15 * Double(j), difficulty: -1.4 + 0.4 * Double(j)) }
        var values: [Double] = [], rejections = 0
        let replications = 60
        for _ in 0..<replications {
            var rows: [[UInt8?]] = []
            for _ in 0..<2_000 {
                let theta = RandomVariate.normal(using: &rng)
                rows.append(truth.map { RandomVariate.uniform(using: &rng) < $0.probability(at: theta) ? 1 : 0 })
            }
            let data = try ResponseMatrix(itemIDs: (0..<8).map { "i\($0)" }, rows: rows)
            var options = CalibrationOptions(model: .twoPL)
            options.standardErrors = false
            options.tolerance = 1e-7
            let fitted = try EMCalibrator(options: options).calibrate(data).items.map(\.parameters)
            var patterns: [UInt8] = []
            for row in rows { patterns += row.map { $0! } }
            let grid = try QuadratureGrid(count: 61, bound: 6)
            let fit = try LimitedInformationFit.evaluate(
                responses: patterns, persons: 2_000, itemCount: 8, parameters: UnidimensionalJointProbabilities.parameters(fitted, model: .twoPL),
                model: { x, _ in
                    UnidimensionalJointProbabilities(items: UnidimensionalJointProbabilities.items(x, count: 8, model: .twoPL), grid: grid)
                },
                workers: 1)
            #expect(fit.degreesOfFreedom == 20)
            values.append(fit.m2)
            if fit.pValue < 0.05 { rejections += 1 }
        }
        let mean = values.reduce(0, +) / Double(replications)
        #expect(abs(mean - 20) < 3 * (40.0 / Double(replications)).squareRoot(), "mean M2 \(mean)")
        let se = (0.05 * 0.95 / Double(replications)).squareRoot()
        #expect(Double(rejections) / Double(replications) < 0.05 + 3 * se, "rejections \(rejections)")
    }

    /// The non-central χ² distribution function against R's `pchisq(x, df, ncp)` (1e-9).
    @Test func noncentralChiSquare() {
        // R 4.2.2: pchisq(10, 5), pchisq(10, 5, ncp = 3), pchisq(130, 88, ncp = 40).
        #expect(abs(ChiSquare.noncentralLowerTail(10, degreesOfFreedom: 5, noncentrality: 0) - 0.9247647538534878) < 1e-9)
        #expect(abs(ChiSquare.noncentralLowerTail(10, degreesOfFreedom: 5, noncentrality: 3) - 0.7172368464311434) < 1e-9)
        #expect(abs(ChiSquare.noncentralLowerTail(130, degreesOfFreedom: 88, noncentrality: 40) - 0.5610160172161107) < 1e-9)
    }

    /// The comparison on data with a known truth (seeded, 2,000 simulees, 12 items in 3 specific factors of 4).
    /// From a bifactor truth, after calibrating the bifactor model: the LR test and BIC favour it, its M2 does
    /// not reject at 0.1% while the 2PL's does, and the log-likelihood equals the calibrator's (1e-6). From a 2PL
    /// truth (every specific slope 0): G² stays below χ²₁₂'s 0.1% point (32.9) and BIC prefers the 2PL.
    @Test func comparisonOnKnownTruth() throws {
        func run(specificSlope: Double, seed: UInt64) throws -> (BatteryModelComparison, BifactorCalibrationResult) {
            let truth = (0..<12).map { j in
                BifactorItem(
                    generalSlope: 1 + 0.05 * Double(j), specificSlope: specificSlope * (0.8 + 0.1 * Double(j % 4)), specific: j / 4,
                    intercept: -1 + 0.2 * Double(j))
            }
            var rng = SeededGenerator(seed: seed)
            let (data, _) = BifactorSimulator(items: truth, specificFactorCount: 3).matrix(
                count: 2_000, itemIDs: (0..<12).map { "i\($0)" }, using: &rng)
            let structure = try FactorStructure(items: data.itemIDs.enumerated().map { ($1, "f\($0 / 4)") })
            var options = BifactorCalibrator.defaultOptions
            options.standardErrors = false
            options.tolerance = 1e-5
            let fitted = try BifactorCalibrator(options: options).calibrate(data, structure: structure)
            return (try BatteryModelComparison.compare(data, items: fitted.items.map(\.item), specificFactorCount: 3, workers: 2), fitted)
        }
        let (bifactor, fitted) = try run(specificSlope: 1.2, seed: 31)
        #expect(abs(bifactor.multidimensional.logLikelihood - fitted.logLikelihood) < 1e-6 * abs(fitted.logLikelihood))
        #expect(bifactor.degreesOfFreedom == 12 && bifactor.multidimensional.parameters == 36)
        #expect(bifactor.pValue < 1e-10 && bifactor.multidimensional.bic < bifactor.unidimensional.bic)
        #expect((bifactor.multidimensional.m2?.pValue ?? 0) > 0.001, "bifactor M2 \(String(describing: bifactor.multidimensional.m2))")
        #expect((bifactor.unidimensional.m2?.pValue ?? 1) < 0.001, "2PL M2 \(String(describing: bifactor.unidimensional.m2))")
        // Under one factor the residuals of a factor's items correlate; the bifactor removes that.
        let uniGap = bifactor.unidimensional.q3.meanWithinFactors! - bifactor.unidimensional.q3.meanBetweenFactors!
        #expect(uniGap > 0.1, "2PL within − between \(uniGap)")

        let (flat, _) = try run(specificSlope: 0, seed: 32)
        #expect(flat.likelihoodRatio >= -0.05 && flat.likelihoodRatio < 32.9, "G² \(flat.likelihoodRatio)")
        #expect(flat.unidimensional.bic < flat.multidimensional.bic)
    }
}
