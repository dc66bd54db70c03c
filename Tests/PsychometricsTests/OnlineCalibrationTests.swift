import Numerics
import Psychometrics
import PsychometricsIO
import Testing

/// A simulated pretest study: operational items with known (bank) parameters, every person answers all of
/// them plus a random subset of new (pretest) items, and abilities come from N(0.5, 1.2²) — not the N(0, 1)
/// a free calibration assumes, so the latent distribution has to be estimated from the fixed items.
struct PretestStudy {
    var operational: [ItemParameters]
    var pretest: [ItemParameters]
    var data: ResponseMatrix
    var thetas: [Double]

    static let operationalIDs = (1...40).map { "op\($0)" }
    static let pretestIDs = (1...10).map { "new\($0)" }

    init(
        persons: Int = 6000, operationalCount: Int = 40, pretestCount: Int = 10, pretestPerPerson: Int = 5,
        thetaMean: Double = 0.5, thetaSD: Double = 1.2, seed: UInt64
    ) {
        var rng = SeededGenerator(seed: seed)
        var spec = BankSpecification(model: .twoPL, itemCount: operationalCount)
        spec.slopeSDLog = 0.25
        spec.difficultyMean = 0.3
        operational = spec.draw(using: &rng).items.map(\.parameters)
        var newSpec = BankSpecification(model: .twoPL, itemCount: pretestCount)
        newSpec.slopeSDLog = 0.25
        newSpec.difficultyMean = 0.5
        pretest = newSpec.draw(using: &rng).items.map(\.parameters)
        let all = operational + pretest
        let ids = Array(Self.operationalIDs.prefix(operationalCount)) + Array(Self.pretestIDs.prefix(pretestCount))
        var offsets = [0], items: [Int32] = [], values: [UInt8] = [], thetas: [Double] = []
        var order = Array(0..<pretestCount)
        for _ in 0..<persons {
            let theta = RandomVariate.normal(mean: thetaMean, sd: thetaSD, using: &rng)
            thetas.append(theta)
            // A uniform subset of the pretest items (partial Fisher–Yates), answered after the operational ones.
            for slot in 0..<pretestPerPerson {
                order.swapAt(slot, slot + Int(rng.next(upperBound: UInt64(pretestCount - slot))))
            }
            let chosen = order.prefix(pretestPerPerson).sorted().map { operationalCount + $0 }
            for j in Array(0..<operationalCount) + chosen {
                items.append(Int32(j))
                values.append(RandomVariate.uniform(using: &rng) < all[j].probability(at: theta) ? 1 : 0)
            }
            offsets.append(items.count)
        }
        self.thetas = thetas
        data = try! ResponseMatrix(
            personIDs: (1...persons).map { "p\($0)" }, itemIDs: ids, rowOffsets: offsets,
            itemIndices: items, responses: values)
    }

    /// The operational items as `CalibrationOptions.fixedItems`.
    var fixedItems: [String: ItemParameters] {
        Dictionary(uniqueKeysWithValues: zip(Self.operationalIDs, operational))
    }
}

@Suite("Online (fixed-parameter) calibration")
struct OnlineCalibrationTests {
    static let study = PretestStudy(seed: 2025)

    /// Tolerances: the latent mean and SD of 6,000 draws have sampling SDs of about 0.016 and 0.011; the bounds
    /// are about 3 of those. The pretest RMSEs (about 3,000 responses per item) are bounded at about 1.5× what
    /// this seed gives.
    @Test("pretest items recover their true parameters on the bank's scale; μ and σ are estimated")
    func recoversBankScale() throws {
        let study = Self.study
        var options = CalibrationOptions(model: .twoPL)
        options.fixedItems = study.fixedItems
        let result = try EMCalibrator(options: options).calibrate(study.data)
        #expect(result.converged)
        #expect(result.latentMean.isApproximatelyEqual(to: 0.5, absoluteTolerance: 0.05), "latent mean \(result.latentMean)")
        #expect(result.latentSD.isApproximatelyEqual(to: 1.2, absoluteTolerance: 0.04), "latent SD \(result.latentSD)")
        // The latent mean and SD SEs are near those of a sample mean and SD (θ is well measured by 40 items).
        let seMean = try #require(result.latentMeanStandardError), seSD = try #require(result.latentSDStandardError)
        #expect(seMean > 0.012 && seMean < 0.025, "SE(μ) = \(seMean)")
        #expect(seSD > 0.008 && seSD < 0.02, "SE(σ) = \(seSD)")

        // Fixed items: exactly the bank values, flagged, no SEs.
        #expect(result.fixedItemIDs == PretestStudy.operationalIDs)
        #expect(result.freeItemIDs == PretestStudy.pretestIDs)
        #expect(result.fixedItemsNotInData.isEmpty)
        for (item, truth) in zip(result.items.prefix(40), study.operational) {
            #expect(item.isFixed && item.flags == ["fixed"])
            #expect(item.parameters == truth)
            #expect(item.standardErrors == ItemStandardErrors())
        }
        // 10 free 2PL items + μ + σ.
        #expect(result.parameterCount == 22)
        #expect(result.aic.isApproximatelyEqual(to: -2 * result.logLikelihood + 44, absoluteTolerance: 1e-6))

        let free = result.items.suffix(10)
        let a = free.map(\.parameters.discrimination), b = free.map(\.parameters.difficulty)
        let rmseA = rmse(a, study.pretest.map(\.discrimination)), rmseB = rmse(b, study.pretest.map(\.difficulty))
        #expect(rmseA <= 0.065, "RMSE(a) = \(rmseA)") // seed 2025: 0.041
        #expect(rmseB <= 0.075, "RMSE(b) = \(rmseB)") // seed 2025: 0.051
        // The SEs are of the right size: standardised errors have a root mean square near 1.
        let z = zip(free, study.pretest).flatMap { item, truth in
            [
                (item.parameters.discrimination - truth.discrimination) / (item.standardErrors.discrimination ?? .nan),
                (item.parameters.difficulty - truth.difficulty) / (item.standardErrors.difficulty ?? .nan)
            ]
        }
        let rmsZ = (z.map { $0 * $0 }.reduce(0, +) / Double(z.count)).squareRoot()
        #expect(rmsZ > 0.5 && rmsZ < 1.6, "RMS of standardised errors = \(rmsZ)")
    }

    @Test("without fixing, the same items land on the standardised N(0, 1) scale, far from the bank's")
    func freeCalibrationIsOnAnotherScale() throws {
        let study = Self.study
        let fixedOptions: CalibrationOptions = {
            var o = CalibrationOptions(model: .twoPL)
            o.fixedItems = study.fixedItems
            return o
        }()
        let anchored = try EMCalibrator(options: fixedOptions).calibrate(study.data)
        let free = try EMCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(study.data)
        #expect(free.latentMean == 0 && free.latentSD == 1 && free.fixedItemIDs.isEmpty)
        let trueB = study.pretest.map(\.difficulty), trueA = study.pretest.map(\.discrimination)
        let freeB = free.items.suffix(10).map(\.parameters.difficulty), freeA = free.items.suffix(10).map(\.parameters.discrimination)
        let anchoredB = anchored.items.suffix(10).map(\.parameters.difficulty)
        // On the free scale b* = (b − 0.5)/1.2 and a* = 1.2a: the error against the bank's truth is large.
        #expect(rmse(freeB, trueB) > 0.3, "free RMSE(b) = \(rmse(freeB, trueB))")
        #expect(rmse(freeB, trueB) > 5 * rmse(anchoredB, trueB))
        #expect(rmse(freeA, trueA) > 0.15, "free RMSE(a) = \(rmse(freeA, trueA))")
        // …and the free estimates are the anchored ones moved by the latent scale: b* ≈ (b − μ)/σ.
        let rescaled = anchoredB.map { ($0 - anchored.latentMean) / anchored.latentSD }
        #expect(rmse(freeB, rescaled) < 0.01, "RMSE(free b, rescaled anchored b) = \(rmse(freeB, rescaled))")
    }

    @Test("dense (BLAS) and sparse E-steps give the same fixed-item fit")
    func denseEqualsSparse() throws {
        let study = PretestStudy(persons: 1500, operationalCount: 12, pretestCount: 6, pretestPerPerson: 3, seed: 7)
        var options = CalibrationOptions(model: .twoPL)
        options.fixedItems = Dictionary(uniqueKeysWithValues: zip(PretestStudy.operationalIDs.prefix(12), study.operational))
        options.eStep = .dense
        let dense = try EMCalibrator(options: options).calibrate(study.data)
        options.eStep = .sparse
        let sparse = try EMCalibrator(options: options).calibrate(study.data)
        #expect(dense.cycles == sparse.cycles)
        #expect(dense.latentMean.isApproximatelyEqual(to: sparse.latentMean, absoluteTolerance: 1e-9))
        #expect(dense.latentSD.isApproximatelyEqual(to: sparse.latentSD, absoluteTolerance: 1e-9))
        #expect(dense.logLikelihood.isApproximatelyEqual(to: sparse.logLikelihood, absoluteTolerance: 1e-6))
        for (x, y) in zip(dense.items, sparse.items) {
            #expect(x.parameters.discrimination.isApproximatelyEqual(to: y.parameters.discrimination, absoluteTolerance: 1e-8))
            #expect(x.parameters.difficulty.isApproximatelyEqual(to: y.parameters.difficulty, absoluteTolerance: 1e-8))
        }
    }

    @Test("Louis standard errors of the free items, μ and σ agree with the marginal log-likelihood's curvature")
    func standardErrorsMatchNumericalHessian() throws {
        // 4 fixed + 2 free 2PL items. Independent check: −Hessian of the marginal log-likelihood in
        // (a₁, d₁, a₂, d₂, μ, σ) by central differences (brute-force quadrature θ = μ + σz on the same z grid),
        // inverted. The Louis information uses the normal density's score for μ, σ, which equals the
        // quadrature model's up to quadrature error, hence 1% rather than 0.2%.
        let study = PretestStudy(persons: 2000, operationalCount: 4, pretestCount: 2, pretestPerPerson: 2, seed: 31)
        var options = CalibrationOptions(model: .twoPL)
        options.tolerance = 1e-8
        options.fixedItems = Dictionary(uniqueKeysWithValues: zip(PretestStudy.operationalIDs.prefix(4), study.operational))
        let result = try EMCalibrator(options: options).calibrate(study.data)
        #expect(result.converged)
        let data = study.data, grid = try QuadratureGrid(count: 61, bound: 6)
        let fixed = study.operational
        let base = result.items.suffix(2).flatMap { [$0.parameters.discrimination, $0.parameters.intercept] } + [result.latentMean, result.latentSD]
        func loglik(_ x: [Double]) -> Double {
            var total = 0.0
            for i in 0..<data.personCount {
                var lik = 0.0
                for q in 0..<grid.count {
                    let theta = x[4] + x[5] * grid.points[q]
                    var l = grid.weights[q]
                    for k in data.cells(ofPerson: i) {
                        let j = Int(data.itemIndices[k])
                        let p = j < 4 ? fixed[j].probability(at: theta) : 1 / (1 + .exp(-(x[2 * (j - 4)] * theta + x[2 * (j - 4) + 1])))
                        l *= data.responses[k] == 1 ? p : 1 - p
                    }
                    lik += l
                }
                total += .log(lik)
            }
            return total
        }
        let covariance = invert(negativeHessian(of: loglik, at: base))
        for (k, item) in result.items.suffix(2).enumerated() {
            let seA = covariance[2 * k][2 * k].squareRoot()
            let reported = try #require(item.standardErrors.discrimination)
            #expect(reported.isApproximatelyEqual(to: seA, relativeTolerance: 0.01), "item \(k): Louis \(reported) vs numerical \(seA)")
        }
        let seMean = try #require(result.latentMeanStandardError), seSD = try #require(result.latentSDStandardError)
        #expect(
            seMean.isApproximatelyEqual(to: covariance[4][4].squareRoot(), relativeTolerance: 0.01),
            "SE(μ) \(seMean) vs \(covariance[4][4].squareRoot())")
        #expect(
            seSD.isApproximatelyEqual(to: covariance[5][5].squareRoot(), relativeTolerance: 0.01), "SE(σ) \(seSD) vs \(covariance[5][5].squareRoot())"
        )
    }

    @Test("fixed ids missing from the data are reported; data items not in the bank are free")
    func partialOverlap() throws {
        let study = PretestStudy(persons: 1500, operationalCount: 15, pretestCount: 4, pretestPerPerson: 2, seed: 12)
        var options = CalibrationOptions(model: .twoPL)
        var fixed = Dictionary(uniqueKeysWithValues: zip(PretestStudy.operationalIDs.prefix(15), study.operational))
        fixed["op1"] = nil // in the data, not in the bank: free
        fixed["retired"] = ItemParameters(discrimination: 1.1, difficulty: 0.2) // in the bank, not in the data
        options.fixedItems = fixed
        let result = try EMCalibrator(options: options).calibrate(study.data)
        #expect(result.fixedItemsNotInData == ["retired"])
        #expect(result.fixedItemIDs == (2...15).map { "op\($0)" })
        #expect(result.freeItemIDs == ["op1"] + PretestStudy.pretestIDs.prefix(4))
        #expect(result.parameterCount == 2 * 5 + 2)
        #expect(result.items.allSatisfy { $0.standardErrors.difficulty != nil || $0.isFixed })
    }

    @Test("a bank none of whose items is answered is an error that says why")
    func noFixedItemAnswered() {
        var options = CalibrationOptions(model: .twoPL)
        options.fixedItems = ["x1": ItemParameters(discrimination: 1, difficulty: 0), "x2": ItemParameters(discrimination: 1.2, difficulty: 1)]
        #expect {
            try EMCalibrator(options: options).calibrate(LSAT7.matrix)
        } throws: { error in
            (error as? PsychometricsError)?.message
                == "none of the 2 fixed items is answered in the data (x1, x2); fixed-parameter calibration needs responses to at least one fixed item to put the other items on the bank's scale"
        }
    }

    @Test("1PL new items need a common slope among the fixed items; bad bank values are rejected")
    func invalidFixedItems() {
        var options = CalibrationOptions(model: .onePL)
        options.fixedItems = [
            "Item.1": ItemParameters(discrimination: 0.8, difficulty: 0), "Item.2": ItemParameters(discrimination: 1.4, difficulty: 1)
        ]
        #expect {
            try EMCalibrator(options: options).calibrate(LSAT7.matrix)
        } throws: { error in
            (error as? PsychometricsError)?.message
                == "invalid options: 1PL items calibrated onto fixed items take the fixed items' common slope, but the fixed slopes range from 0.8 to 1.4; use the 2PL or Rasch model for the new items"
        }
        var bad = CalibrationOptions(model: .twoPL)
        bad.fixedItems = ["Item.1": ItemParameters(discrimination: -1, difficulty: 0)]
        #expect {
            try EMCalibrator(options: bad).calibrate(LSAT7.matrix)
        } throws: { error in
            (error as? PsychometricsError)?.message == "invalid options: fixed item 'Item.1': a = -1 must be positive and finite"
        }
    }

    @Test("Rasch new items on a Rasch bank: a = 1, difficulties on the bank's scale, σ estimated")
    func raschOntoRaschBank() throws {
        // Rasch bank: a = 1 for all items; θ ~ N(0.5, 1.2²) as above.
        var rng = SeededGenerator(seed: 77)
        let bank = (0..<30).map { _ in ItemParameters(discrimination: 1, difficulty: RandomVariate.normal(mean: 0.3, sd: 1, using: &rng)) }
        let pretest = (0..<6).map { _ in ItemParameters(discrimination: 1, difficulty: RandomVariate.normal(mean: 0.5, sd: 1, using: &rng)) }
        var simulator = ResponseSimulator(parameters: bank + pretest)
        simulator.thetaMean = 0.5
        simulator.thetaSD = 1.2
        let ids = (1...30).map { "op\($0)" } + (1...6).map { "new\($0)" }
        let (data, _) = simulator.matrix(count: 4000, itemIDs: ids, using: &rng)
        var options = CalibrationOptions(model: .rasch)
        options.fixedItems = Dictionary(uniqueKeysWithValues: zip(ids, bank))
        let result = try EMCalibrator(options: options).calibrate(data)
        #expect(result.converged)
        #expect(result.latentMean.isApproximatelyEqual(to: 0.5, absoluteTolerance: 0.06))
        #expect(result.latentSD.isApproximatelyEqual(to: 1.2, absoluteTolerance: 0.05))
        #expect(result.parameterCount == 6 + 2)
        let free = result.items.suffix(6)
        #expect(free.allSatisfy { $0.parameters.discrimination == 1 && $0.standardErrors.discrimination == nil })
        let rmseB = rmse(free.map(\.parameters.difficulty), pretest.map(\.difficulty))
        #expect(rmseB <= 0.08, "RMSE(b) = \(rmseB)")
    }
}
