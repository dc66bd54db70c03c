import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("Scale linking: mean-mean, mean-sigma, Haebara, Stocking-Lord")
struct ScaleLinkingTests {
    // MARK: exact recovery

    /// An "old" bank of 3PL items (logistic metric, D = 1).
    static let oldItems: [ItemParameters] = [
        ItemParameters(discrimination: 0.8, difficulty: -1.6, guessing: 0.20),
        ItemParameters(discrimination: 1.4, difficulty: -0.9, guessing: 0.15),
        ItemParameters(discrimination: 1.1, difficulty: -0.2, guessing: 0.25),
        ItemParameters(discrimination: 2.0, difficulty: 0.3, guessing: 0.10),
        ItemParameters(discrimination: 0.6, difficulty: 0.9, guessing: 0.22),
        ItemParameters(discrimination: 1.7, difficulty: 1.5, guessing: 0.05),
        ItemParameters(discrimination: 1.2, difficulty: 2.2, guessing: 0.18)
    ]

    static func bank(_ items: [ItemParameters], ids: [String], model: IRTModel = .threePL) -> ItemBank {
        ItemBank(items: zip(ids, items).map { BankItem(itemID: $0, model: model, parameters: $1) })
    }

    /// The same items calibrated on a scale where θ_old = slope·θ_new + intercept: the new-scale parameters are
    /// a·slope and (b − intercept)/slope, so that every probability is unchanged.
    static func newScale(_ items: [ItemParameters], slope: Double, intercept: Double) -> [ItemParameters] {
        items.map {
            ItemParameters(discrimination: $0.discrimination * slope, difficulty: ($0.difficulty - intercept) / slope, guessing: $0.guessing)
        }
    }

    @Test("every method recovers a known (slope, intercept) exactly; curve criteria ≈ 0", arguments: LinkingMethod.allCases)
    func exactRecovery(method: LinkingMethod) throws {
        let slope = 1.35, intercept = -0.42
        let ids = (1...7).map { "q\($0)" }
        let old = Self.bank(Self.oldItems, ids: ids)
        // The new bank has extra items and a different order; only q2…q7 are common.
        var newItems = Self.newScale(Self.oldItems, slope: slope, intercept: intercept)
        newItems[0] = ItemParameters(discrimination: 0.9, difficulty: 0.1, guessing: 0.2)
        let new = Self.bank(
            newItems.reversed() + [ItemParameters(discrimination: 1, difficulty: 0)],
            ids: ["q7", "q6", "q5", "q4", "q3", "q2", "n1", "n2"])
        for direction in LinkingDirection.allCases {
            var options = ScaleLinkingOptions(method: method)
            options.direction = direction
            let result = try ScaleLinking.link(old: old, new: new, options: options)
            #expect(result.commonItemIDs == ["q7", "q6", "q5", "q4", "q3", "q2"])
            #expect(result.slope.isApproximatelyEqual(to: slope, absoluteTolerance: 1e-6), "\(method) \(direction): slope \(result.slope)")
            #expect(
                result.intercept.isApproximatelyEqual(to: intercept, absoluteTolerance: 1e-6), "\(method) \(direction): intercept \(result.intercept)"
            )
            #expect(result.converged)
            if method.isCharacteristicCurve {
                let criterion = try #require(result.criterion)
                #expect(criterion < 1e-20, "\(method) \(direction): criterion \(criterion)")
                #expect(result.direction == direction)
            } else {
                #expect(result.criterion == nil)
                #expect(result.iterations == 0)
            }
        }
    }

    @Test("1PL and 2PL banks: the curve methods recover the constants too")
    func recoveryWithoutGuessing() throws {
        for model in [IRTModel.onePL, .twoPL] {
            let items = Self.oldItems.map {
                ItemParameters(discrimination: model == .onePL ? 1.3 : $0.discrimination, difficulty: $0.difficulty)
            }
            let ids = (1...7).map { "q\($0)" }
            let newItems = Self.newScale(items, slope: 0.7, intercept: 0.9)
            for method in LinkingMethod.allCases {
                let result = try ScaleLinking.link(
                    old: Self.bank(items, ids: ids, model: model), new: Self.bank(newItems, ids: ids, model: model),
                    options: ScaleLinkingOptions(method: method))
                #expect(result.slope.isApproximatelyEqual(to: 0.7, absoluteTolerance: 1e-6), "\(model) \(method)")
                #expect(result.intercept.isApproximatelyEqual(to: 0.9, absoluteTolerance: 1e-6), "\(model) \(method)")
            }
        }
    }

    // MARK: published example

    /// Kolen & Brennan (2004, Table 6.5; 2014, Table 6.5): the 12 common items (items 3, 6, …, 36) of Form X (new)
    /// and Form Y (old), 3PL, normal metric (BILOG, D = 1.7), as in Kolen's STUIRT example 1 and plink's `KB04`.
    static let formX: [(Double, Double, Double)] = [
        (0.4551, -0.7101, 0.2087), (0.5839, -0.8567, 0.2038), (0.7544, 0.0212, 0.1600), (0.6633, 0.0506, 0.1240),
        (1.0690, 0.9610, 0.2986), (0.9672, 0.1950, 0.0535), (0.3479, 2.2768, 0.1489), (1.4579, 1.0241, 0.2453),
        (1.8811, 1.4062, 0.1992), (0.7020, 2.2401, 0.0853), (1.4080, 1.5556, 0.0789), (1.2993, 2.1589, 0.1075)
    ]
    static let formY: [(Double, Double, Double)] = [
        (0.4416, -1.3349, 0.1559), (0.5730, -1.3210, 0.1913), (0.5987, -0.7098, 0.1177), (0.6041, -0.3539, 0.0818),
        (0.9902, 0.5320, 0.3024), (0.8081, -0.1156, 0.0648), (0.4140, 2.5538, 0.2410), (1.3554, 0.5811, 0.2243),
        (1.0417, 0.9392, 0.1651), (0.6336, 1.8960, 0.0794), (1.1347, 1.0790, 0.0630), (0.9255, 2.1337, 0.1259)
    ]
    /// STUIRT example 1 quadrature: 10 points on [−4, 4] with each group's estimated ability distribution.
    static let stuirtPoints = [-4.0000, -3.1110, -2.2220, -1.3330, -0.4444, 0.4444, 1.3330, 2.2220, 3.1110, 4.0000]
    static let stuirtWeightsX = [0.0001008, 0.002760, 0.03021, 0.1420, 0.3149, 0.3158, 0.1542, 0.03596, 0.003925, 0.0001862]
    static let stuirtWeightsY = [0.0001173, 0.003242, 0.03449, 0.1471, 0.3148, 0.3110, 0.1526, 0.03406, 0.002510, 0.0001116]

    /// D = 1.7 parameters in iqscore's logistic metric (D = 1): the slope becomes 1.7·a; b and c are unchanged. The
    /// linking constants do not depend on D (a* = a/A either way), so they compare directly.
    static func logisticMetric(_ rows: [(Double, Double, Double)]) -> [ItemParameters] {
        rows.map { ItemParameters(discrimination: 1.7 * $0.0, difficulty: $0.1, guessing: $0.2) }
    }

    /// Published constants: Kolen's STUIRT, example 1 (the Table 6.5 common items above; symmetric criteria —
    /// STUIRT `SY BI BI` — with the Form Y weights on the old scale and the Form X weights on the new scale; criteria
    /// standardised: Haebara divided by Σw·n, Stocking–Lord by Σw). The STUIRT output values are quoted, to the
    /// 6 decimals STUIRT prints, in the regression tests of J. P. Meyer's `psychometrics` library (jMetrik),
    /// `src/test/java/com/itemanalysis/psychometrics/irt/equating/IrtScaleLinkingTest.java`, `linkingTest3PL`:
    /// ```
    /// mean/sigma      A = 1.168891  B = −0.515543
    /// mean/mean       A = 1.217266  B = −0.557156
    /// Haebara         A = 1.067800  B = −0.471281  criterion 0.001506
    /// Stocking–Lord   A = 1.083417  B = −0.487619  criterion 0.009666
    /// ```
    /// plink's `KB04` holds the same 36 + 36 items (its defaults — uniform weights, one direction — give other
    /// characteristic-curve constants, so STUIRT's settings are used here). Tolerance: 1e-6 (the printed precision)
    /// for everything except Haebara's A and B, which STUIRT's optimiser stops within 2e-6 of the minimum (ours:
    /// A = 1.0678015, B = −0.4712819, criterion 0.00150636), so 5e-6 there.
    @Test("Kolen & Brennan Table 6.5 common items: STUIRT example 1 constants")
    func kolenBrennanSTUIRT() throws {
        let ids = (1...12).map { "i\(3 * $0)" }
        let old = Self.logisticMetric(Self.formY), new = Self.logisticMetric(Self.formX)
        func run(_ method: LinkingMethod) throws -> ScaleLinkingResult {
            var options = ScaleLinkingOptions(method: method)
            options.direction = .symmetric
            options.oldScaleQuadrature = try LinkingQuadrature(points: Self.stuirtPoints, weights: Self.stuirtWeightsY)
            options.newScaleQuadrature = try LinkingQuadrature(points: Self.stuirtPoints, weights: Self.stuirtWeightsX)
            return try ScaleLinking.link(commonItemIDs: ids, old: old, new: new, options: options)
        }
        let ms = try run(.meanSigma), mm = try run(.meanMean), hb = try run(.haebara), sl = try run(.stockingLord)
        #expect(ms.slope.isApproximatelyEqual(to: 1.168891, absoluteTolerance: 1e-6))
        #expect(ms.intercept.isApproximatelyEqual(to: -0.515543, absoluteTolerance: 1e-6))
        #expect(mm.slope.isApproximatelyEqual(to: 1.217266, absoluteTolerance: 1e-6))
        #expect(mm.intercept.isApproximatelyEqual(to: -0.557156, absoluteTolerance: 1e-6))
        #expect(hb.slope.isApproximatelyEqual(to: 1.067800, absoluteTolerance: 5e-6), "Haebara A \(hb.slope)")
        #expect(hb.intercept.isApproximatelyEqual(to: -0.471281, absoluteTolerance: 5e-6), "Haebara B \(hb.intercept)")
        #expect(try #require(hb.criterion).isApproximatelyEqual(to: 0.001506, absoluteTolerance: 1e-6))
        #expect(sl.slope.isApproximatelyEqual(to: 1.083417, absoluteTolerance: 1e-6), "Stocking-Lord A \(sl.slope)")
        #expect(sl.intercept.isApproximatelyEqual(to: -0.487619, absoluteTolerance: 1e-6), "Stocking-Lord B \(sl.intercept)")
        #expect(try #require(sl.criterion).isApproximatelyEqual(to: 0.009666, absoluteTolerance: 1e-6))
        for result in [hb, sl] {
            #expect(result.converged)
            #expect(result.iterations >= 2, "Newton had to move from the mean-sigma start")
            #expect(result.start == ms.transformation)
        }
    }

    /// A second source for the one-directional criterion: the same example without item 27 (11 items, 6-decimal
    /// parameters, used with D = 1), Meyer's `psychometrics` library, `HaebaraMethodTest.haebaraTest4` (criterion
    /// `Q1`: curves compared on the old scale with the Form Y weights — our `newToOld`) A = 1.0798, B = −0.4710,
    /// and `StockingLordMethodTest.stockingLordTest1` (symmetric) A = 1.0911, B = −0.4788; 4 decimals, so 1e-4.
    @Test("11 common items (item 27 dropped): one-directional Haebara and symmetric Stocking-Lord")
    func elevenItems() throws {
        let x: [(Double, Double, Double)] = [
            (0.455118, -0.710086, 0.208748), (0.583871, -0.856669, 0.203834), (0.754398, 0.021221, 0.159961),
            (0.663274, 0.050618, 0.123961), (1.068977, 0.961047, 0.298628), (0.967194, 0.194976, 0.053538),
            (0.347868, 2.276794, 0.148927), (1.457918, 1.024128, 0.24527), (0.701952, 2.240131, 0.08529),
            (1.407967, 1.555634, 0.078897), (1.299285, 2.158933, 0.10753)
        ]
        let y: [(Double, Double, Double)] = [
            (0.441595, -1.334933, 0.155883), (0.572995, -1.321004, 0.191298), (0.598719, -0.709831, 0.117663),
            (0.604125, -0.353942, 0.081759), (0.990164, 0.531956, 0.302443), (0.808079, -0.115649, 0.064791),
            (0.413973, 2.553812, 0.240967), (1.355437, 0.581109, 0.224322), (0.633562, 1.896027, 0.079396),
            (1.134661, 1.079013, 0.063009), (0.925521, 2.133706, 0.125873)
        ]
        let new = x.map { ItemParameters(discrimination: $0.0, difficulty: $0.1, guessing: $0.2) }
        let old = y.map { ItemParameters(discrimination: $0.0, difficulty: $0.1, guessing: $0.2) }
        func run(_ method: LinkingMethod, _ direction: LinkingDirection) throws -> ScaleLinkingResult {
            var options = ScaleLinkingOptions(method: method)
            options.direction = direction
            options.oldScaleQuadrature = try LinkingQuadrature(points: Self.stuirtPoints, weights: Self.stuirtWeightsY)
            options.newScaleQuadrature = try LinkingQuadrature(points: Self.stuirtPoints, weights: Self.stuirtWeightsX)
            return try ScaleLinking.link(commonItemIDs: (1...11).map { "c\($0)" }, old: old, new: new, options: options)
        }
        let hb = try run(.haebara, .newToOld), sl = try run(.stockingLord, .symmetric)
        #expect(hb.slope.isApproximatelyEqual(to: 1.0798, absoluteTolerance: 1e-4))
        #expect(hb.intercept.isApproximatelyEqual(to: -0.4710, absoluteTolerance: 1e-4))
        #expect(sl.slope.isApproximatelyEqual(to: 1.0911, absoluteTolerance: 1e-4))
        #expect(sl.intercept.isApproximatelyEqual(to: -0.4788, absoluteTolerance: 1e-4))
    }

    // MARK: independent reference for the default settings

    /// With the defaults (new→old, 61 points on [−6, 6], N(0, 1) weights) there is no published number, so the
    /// minimum is checked against a brute-force search of an independently written criterion: a 41 × 41 grid
    /// around the current best point, shrunk tenfold 7 times (final spacing 2e-8·span).
    @Test("default settings: Newton's minimum equals a brute-force grid search", arguments: [LinkingMethod.haebara, .stockingLord])
    func bruteForce(method: LinkingMethod) throws {
        let old = Self.logisticMetric(Self.formY), new = Self.logisticMetric(Self.formX)
        let result = try ScaleLinking.link(commonItemIDs: (1...12).map { "i\($0)" }, old: old, new: new, options: ScaleLinkingOptions(method: method))
        #expect(result.converged)
        #expect(result.direction == .newToOld)

        let points = (0..<61).map { -6 + Double($0) * 0.2 }
        let density = points.map { exp(-$0 * $0 / 2) }
        let weights = density.map { $0 / density.reduce(0, +) }
        func criterion(_ A: Double, _ B: Double) -> Double {
            var total = 0.0
            for (theta, w) in zip(points, weights) {
                var tccOld = 0.0, tccNew = 0.0, icc = 0.0
                for (o, n) in zip(old, new) {
                    let pOld = o.probability(at: theta)
                    let moved = ItemParameters(discrimination: n.discrimination / A, difficulty: A * n.difficulty + B, guessing: n.guessing)
                    let pNew = moved.probability(at: theta)
                    tccOld += pOld; tccNew += pNew; icc += (pOld - pNew) * (pOld - pNew)
                }
                total += method == .haebara ? w * icc / Double(old.count) : w * (tccOld - tccNew) * (tccOld - tccNew)
            }
            return total
        }
        var best = (A: 1.0, B: 0.0, value: criterion(1, 0)), span = 1.0
        for _ in 0..<8 {
            let center = best
            for i in -20...20 {
                for j in -20...20 {
                    let A = center.A + span * Double(i) / 20, B = center.B + span * Double(j) / 20
                    guard A > 0 else { continue }
                    let v = criterion(A, B)
                    if v < best.value { best = (A, B, v) }
                }
            }
            span /= 10
        }
        #expect(result.slope.isApproximatelyEqual(to: best.A, absoluteTolerance: 1e-6), "\(method): Newton A \(result.slope), grid \(best.A)")
        #expect(result.intercept.isApproximatelyEqual(to: best.B, absoluteTolerance: 1e-6), "\(method): Newton B \(result.intercept), grid \(best.B)")
        let value = try #require(result.criterion)
        #expect(value <= best.value * (1 + 1e-9), "Newton's criterion \(value) vs grid \(best.value)")
        #expect(value.isApproximatelyEqual(to: criterion(result.slope, result.intercept), relativeTolerance: 1e-10))
    }

    // MARK: degenerate input

    @Test("no common item, or only one, is an error naming the counts and ids")
    func tooFewCommonItems() throws {
        let old = Self.bank(Array(Self.oldItems.prefix(3)), ids: ["a", "b", "c"])
        let none = Self.bank(Array(Self.oldItems.prefix(2)), ids: ["x", "y"])
        #expect(
            throws: PsychometricsError(
                .insufficientData,
                "no common items: none of the 2 item ids of the new bank is in the old bank (3 items); items are matched by item_id")
        ) {
            try ScaleLinking.link(old: old, new: none)
        }
        let one = Self.bank(Array(Self.oldItems.prefix(2)), ids: ["x", "b"])
        for method in LinkingMethod.allCases {
            #expect(throws: PsychometricsError(.insufficientData, "only 1 common item (b); linking needs at least 2")) {
                try ScaleLinking.link(old: old, new: one, options: ScaleLinkingOptions(method: method))
            }
        }
    }

    @Test("mean-sigma with difficulties that do not vary is an error; the curve methods start from mean-mean instead")
    func zeroSpread() throws {
        let ids = ["p", "q", "r"]
        let old = [
            ItemParameters(discrimination: 1.0, difficulty: 0.5), ItemParameters(discrimination: 1.6, difficulty: 0.5),
            ItemParameters(discrimination: 0.8, difficulty: 0.5)
        ]
        let new = Self.newScale(old, slope: 1.2, intercept: 0.3)
        // The new difficulties are equal only up to rounding ((0.5 − 0.3)/1.2 three times): still "do not vary".
        #expect(
            throws: PsychometricsError(
                .insufficientData,
                "mean-sigma: the difficulties of the 3 common items do not vary in the new bank (SD 2.78e-17); the slope σ(b_old)/σ(b_new) is undefined"
            )
        ) {
            try ScaleLinking.link(commonItemIDs: ids, old: old, new: new, options: ScaleLinkingOptions(method: .meanSigma))
        }
        let hb = try ScaleLinking.link(commonItemIDs: ids, old: old, new: new, options: ScaleLinkingOptions(method: .haebara))
        #expect(hb.slope.isApproximatelyEqual(to: 1.2, absoluteTolerance: 1e-6))
        #expect(hb.intercept.isApproximatelyEqual(to: 0.3, absoluteTolerance: 1e-6))
        #expect(hb.warnings.count == 1 && hb.warnings[0].hasPrefix("mean-sigma start unavailable"))
    }

    @Test("non-positive slopes are errors")
    func badSlopes() throws {
        let good = [ItemParameters(discrimination: 1, difficulty: 0), ItemParameters(discrimination: 1, difficulty: 1)]
        let bad = [ItemParameters(discrimination: -1, difficulty: 0), ItemParameters(discrimination: 0.5, difficulty: 1)]
        #expect(
            throws: PsychometricsError(
                .insufficientData, "mean-mean: the mean slope of the common items must be positive and finite in both banks (old 1.0, new -0.25)")
        ) {
            try ScaleLinking.meanMean(old: good, new: bad)
        }
        #expect(
            throws: PsychometricsError(
                .invalidParameters,
                "common item 'u' has unusable parameters in the new bank: a = -1, b = 0, c = 0; linking needs a > 0, finite b and 0 ≤ c < 1")
        ) {
            try ScaleLinking.link(commonItemIDs: ["u", "v"], old: good, new: bad)
        }
    }

    // MARK: the transformed bank

    @Test("the linked bank: every new item on the old scale, SEs transformed, metadata and counts kept")
    func linkedBank() throws {
        let t = try ScaleTransformation(slope: 1.25, intercept: 0.5)
        var item = BankItem(
            itemID: "n1", model: .threePL, parameters: ItemParameters(discrimination: 1.5, difficulty: -0.4, guessing: 0.2),
            standardErrors: ItemStandardErrors(discrimination: 0.1, difficulty: 0.08, guessing: 0.03),
            responses: 900, pValue: 0.61, flags: ["low_info"], metadata: ["domain": "logic"])
        var bank = ItemBank(items: [item], metadataColumns: ["domain"])
        item.itemID = "r1"
        item.model = .rasch
        item.parameters = ItemParameters(discrimination: 1, difficulty: 0.4)
        item.standardErrors = ItemStandardErrors(difficulty: 0.05)
        bank.items.append(item)

        let linked = t.bank(bank)
        #expect(linked.metadataColumns == ["domain"])
        #expect(linked.items.map(\.itemID) == ["n1", "r1"])
        let n1 = linked.items[0], r1 = linked.items[1]
        #expect(n1.parameters.discrimination.isApproximatelyEqual(to: 1.2, absoluteTolerance: 1e-15))
        #expect(n1.parameters.difficulty.isApproximatelyEqual(to: 0.0, absoluteTolerance: 1e-15))
        #expect(n1.parameters.guessing == 0.2)
        #expect(try #require(n1.standardErrors.discrimination).isApproximatelyEqual(to: 0.08, absoluteTolerance: 1e-15))
        #expect(try #require(n1.standardErrors.difficulty).isApproximatelyEqual(to: 0.1, absoluteTolerance: 1e-15))
        #expect(n1.standardErrors.guessing == 0.03)
        #expect(n1.responses == 900 && n1.pValue == 0.61 && n1.flags == ["low_info"] && n1.metadata == ["domain": "logic"])
        #expect(r1.model == .onePL, "a Rasch item with slope 1/1.25 is a 1PL item")
        #expect(r1.parameters.discrimination == 0.8)
        #expect(r1.standardErrors.discrimination == nil)
        // Probabilities are invariant: P_new(θ_new) = P_linked(slope·θ_new + intercept).
        for theta in stride(from: -3.0, through: 3.0, by: 0.5) {
            #expect(
                bank.items[0].parameters.probability(at: theta).isApproximatelyEqual(
                    to: n1.parameters.probability(at: t.theta(theta)), absoluteTolerance: 1e-14))
        }
        let back = t.inverse
        #expect(back.parameters(n1.parameters).discrimination.isApproximatelyEqual(to: 1.5, absoluteTolerance: 1e-14))
        #expect(back.parameters(n1.parameters).difficulty.isApproximatelyEqual(to: -0.4, absoluteTolerance: 1e-14))
    }
}
