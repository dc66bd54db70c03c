import Foundation
@testable import Psychometrics
import Testing

/// Fixed-parameter ("online") calibration of items in several categories: fixed items of any model (0/1 items of
/// the 3PL, graded items) put the free items on their scale, with the latent mean and SD estimated.
@Suite("PolytomousCalibrator with fixed items: online calibration on the bank's scale")
struct PolytomousOnlineCalibrationTests {
    @Test("graded on Science with items 1–2 fixed at the full fit's values: μ = 0, σ = 1, items 3–4 and the log-likelihood of the full fit")
    func fixingFittedItemsKeepsTheMaximum() throws {
        // The full fit's maximum is a stationary point of the restricted likelihood too (moving μ, σ with every
        // item held is a change of all items' parameters, along which the full fit is stationary), so fixing
        // items at their estimates must return μ = 0, σ = 1 and the other items unchanged.
        let data = try PolytomousCalibratorTests.science()
        let options = PolytomousCalibratorTests.options()
        let full = try PolytomousCalibrator(options: options).calibrate(data, model: .graded)
        let fixed: [String: any ItemResponseModel] = [full.items[0].itemID: full.items[0].item, full.items[1].itemID: full.items[1].item]
        let online = try PolytomousCalibrator(options: options).calibrate(data, model: .graded, fixedItems: fixed)
        #expect(online.converged)
        #expect(abs(online.latentMean) < 1e-3, "μ = \(online.latentMean)")
        #expect(abs(online.latentSD - 1) < 1e-3, "σ = \(online.latentSD)")
        #expect(abs(online.logLikelihood - full.logLikelihood) < 1e-4, "\(online.logLikelihood) vs \(full.logLikelihood)")
        #expect(online.fixedItemIDs == [full.items[0].itemID, full.items[1].itemID])
        #expect(online.items[0].isFixed && online.items[1].isFixed && !online.items[2].isFixed)
        #expect(online.items[0].parameters == full.items[0].parameters)
        for j in 2..<4 {
            for (x, y) in zip(online.items[j].parameters, full.items[j].parameters) { #expect(abs(x - y) < 2e-3, "item \(j + 1): \(x) vs \(y)") }
        }
        // Free parameters: 2 items × 4, then μ and σ.
        #expect(online.parameterCount == 10)
        let meanSE = try #require(online.latentMeanStandardError), sdSE = try #require(online.latentSDStandardError)
        #expect(meanSE > 0.01 && meanSE < 0.3 && sdSE > 0.01 && sdSE < 0.3, "SEs \(meanSE), \(sdSE)")
    }

    /// Items 1–2 of Science (Comfort, Work) fixed at graded values off the full fit, so that μ and σ move.
    static let shiftedAnchors: [String: any ItemResponseModel] = [
        "Comfort": GradedResponseItem(discrimination: 1.2, thresholds: [-4.2, -2.3, 1.2]),
        "Work": GradedResponseItem(discrimination: 1.4, thresholds: [-2.2, -0.5, 1.9])
    ]

    /// mirt 1.47 on `Science` with `pars = 'values'`: Comfort and Work at `shiftedAnchors` (d = −a b, est =
    /// FALSE), MEAN_1 and COV_11 estimated, `TOL = 1e-6, SE = TRUE` (script in the test's note): log-likelihood,
    /// Future's and Benefit's (a1, d1, d2, d3) and SEs, then (MEAN_1, COV_11) and SEs.
    static let mirtFixed: (logLikelihood: Double, items: [[Double]], itemSEs: [[Double]], latent: [Double], latentSEs: [Double]) = (
        -1612.254536,
        [[2.29319785, 4.90964567, 1.96366557, -2.08139914], [1.15036335, 3.25934080, 0.90058603, -1.77847898]],
        [[0.47275706, 0.59456886, 0.29025456, 0.31306700], [0.19426040, 0.26718674, 0.13988196, 0.17639103]],
        [0.077861803, 0.906392125], [0.074955385, 0.147743626]
    )

    // The mirt script: sv <- mirt(Science, 1, 'graded', pars = 'values'); Comfort's a1, d1…d3 set to 1.2, 5.04,
    // 2.76, −1.44 and Work's to 1.4, 3.08, 0.70, −2.66 with est = FALSE; sv$est[MEAN_1, COV_11] <- TRUE;
    // mirt(Science, 1, 'graded', pars = sv, TOL = 1e-6, SE = TRUE); coef(fit, printSE = TRUE).
    @Test(
        "graded on Science with items 1–2 fixed against mirt 1.47 (MEAN_1, COV_11 free): log-likelihood within 1e-3, parameters within 2e-3, SEs within 2%"
    )
    func fixedItemsAgainstMirt() throws {
        let fit = try PolytomousCalibrator(options: PolytomousCalibratorTests.options())
            .calibrate(PolytomousCalibratorTests.science(), model: .graded, fixedItems: Self.shiftedAnchors)
        #expect(fit.converged)
        #expect(abs(fit.logLikelihood - Self.mirtFixed.logLikelihood) < 1e-3, "\(fit.logLikelihood)")
        for (j, id) in ["Future", "Benefit"].enumerated() {
            let item = try #require(fit.items.first { $0.itemID == id })
            for a in 0..<4 {
                #expect(abs(item.workingParameters[a] - Self.mirtFixed.items[j][a]) < 2e-3, "\(id) \(a): \(item.workingParameters[a])")
                let se = try #require(item.workingStandardErrors[a])
                #expect(abs(se / Self.mirtFixed.itemSEs[j][a] - 1) < 0.02, "\(id) SE \(a): \(se)")
            }
        }
        #expect(abs(fit.latentMean - Self.mirtFixed.latent[0]) < 2e-3, "μ \(fit.latentMean)")
        #expect(abs(fit.latentSD * fit.latentSD - Self.mirtFixed.latent[1]) < 2e-3, "σ² \(fit.latentSD * fit.latentSD)")
        // SE(σ) = SE(σ²) / (2σ) by the delta method.
        let meanSE = try #require(fit.latentMeanStandardError), sdSE = try #require(fit.latentSDStandardError)
        #expect(abs(meanSE / Self.mirtFixed.latentSEs[0] - 1) < 0.02, "SE(μ) \(meanSE)")
        #expect(abs(sdSE / (Self.mirtFixed.latentSEs[1] / (2 * fit.latentSD)) - 1) < 0.02, "SE(σ) \(sdSE)")
    }

    /// The Louis information of the fixed-item fit against the Hessian of the marginal log-likelihood by central
    /// differences over the free working parameters and (μ, log σ→σ).
    @Test("the standard errors of a fixed-item fit equal the numerical Hessian's to 1%, μ and σ included")
    func standardErrorsMatchTheNumericalHessian() throws {
        let data = try PolytomousCalibratorTests.science()
        let options = PolytomousCalibratorTests.options()
        let shifted = Self.shiftedAnchors
        let online = try PolytomousCalibrator(options: options).calibrate(data, model: .graded, fixedItems: shifted)
        #expect(online.converged)
        #expect(abs(online.latentMean) > 0.05 || abs(online.latentSD - 1) > 0.05, "μ \(online.latentMean), σ \(online.latentSD)")
        // The engine at the optimum, parameters (items 3–4 working, μ, σ) perturbed by central differences.
        let start: [any CalibratableItemModel] = data.itemIDs.map { id in
            if let held = shifted[id] { return FixedItemModel(model: held) }
            return online.items.first { $0.itemID == id }!.item
        }
        var engine = ItemModelEngine(
            items: start, data: data, grid: QuadratureGrid(validatedCount: options.quadraturePoints, bound: options.thetaBound),
            workers: 1, maximumSlope: options.maximumSlope, shared: [0, 0, 0, 0], estimatesLatent: true)
        engine.setLatentDistribution(mean: online.latentMean, sd: online.latentSD)
        let x0 = engine.items.flatMap(\.workingParameters) + [online.latentMean, online.latentSD]
        let P = x0.count
        func value(_ x: [Double]) -> Double {
            var e = engine
            e.setWorkingParameters(Array(x[0..<(P - 1)]) + [log(x[P - 1])])
            return e.eStep().logLikelihood
        }
        var hessian = [Double](repeating: 0, count: P * P)
        for a in 0..<P {
            for b in a..<P {
                let h = 1e-4
                func at(_ da: Double, _ db: Double) -> Double { var x = x0; x[a] += da; x[b] += db; return value(x) }
                let v = (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
                hessian[a * P + b] = -v
                hessian[b * P + a] = -v
            }
        }
        let covariance = try #require(CholeskyInverse(upperTriangleOf: &hessian, n: P, workers: 1))
        let ours =
            online.items[2].workingStandardErrors + online.items[3].workingStandardErrors
            + [online.latentMeanStandardError, online.latentSDStandardError]
        for a in 0..<P {
            let numeric = covariance.entry(a, a).squareRoot(), analytic = try #require(ours[a])
            #expect(abs(analytic / numeric - 1) < 0.01, "parameter \(a): \(analytic) vs \(numeric)")
        }
    }

    @Test(
        "seeded recovery: 3PL 0/1 items fixed, graded, gpcm, partial-credit and rating-scale items free, θ ~ N(0.5, 1.3²): μ, σ within 0.08, items within 0.3"
    )
    func recoveryWithFixedThreePLItems() throws {
        var rng = SeededGenerator(seed: 2_026_112_801)
        var items: [any ItemResponseModel] = [], ids: [String] = []
        for r in 0..<10 {
            items.append(ItemParameters(discrimination: 1.0 + 0.1 * Double(r % 4), difficulty: -1.5 + 0.35 * Double(r), guessing: 0.15))
            ids.append("anchor\(r + 1)")
        }
        let graded = GradedResponseItem(discrimination: 1.3, thresholds: [-0.6, 0.5, 1.6])
        let gpcm = GeneralizedPartialCreditItem(discrimination: 0.8, steps: [-0.2, 1.1])
        let pcm = GeneralizedPartialCreditItem(discrimination: 1, steps: [-0.4, 0.3, 1.4])
        // Two rating-scale items: steps location + τ, τ shared (σ is the latent SD, so only τ is estimated jointly).
        let rsm1 = RatingScaleItem(discrimination: 1, location: 0.2, thresholds: [-0.8, 0.1, 0.7])
        let rsm2 = RatingScaleItem(discrimination: 1, location: 0.9, thresholds: [-0.8, 0.1, 0.7])
        items += [graded, gpcm, pcm, rsm1, rsm2]
        ids += ["new_graded", "new_gpcm", "new_pcm", "new_rsm1", "new_rsm2"]
        let (data, _) = CategoryResponseSimulator.matrix(items: items, itemIDs: ids, persons: 5_000, mean: 0.5, sd: 1.3, using: &rng)
        var fixed: [String: any ItemResponseModel] = [:]
        for j in 0..<10 { fixed[ids[j]] = items[j] }
        // An anchor nobody answered is listed, not an error.
        fixed["anchor_unseen"] = ItemParameters(discrimination: 1, difficulty: 0)
        var options = CalibrationOptions(model: .twoPL)
        options.tolerance = 1e-5
        let fit = try PolytomousCalibrator(options: options).calibrate(
            data, model: .graded,
            itemModels: ["new_gpcm": .generalizedPartialCredit, "new_pcm": .partialCredit, "new_rsm1": .ratingScale, "new_rsm2": .ratingScale],
            fixedItems: fixed)
        #expect(fit.converged)
        #expect(abs(fit.latentMean - 0.5) < 0.08, "μ \(fit.latentMean)")
        #expect(abs(fit.latentSD - 1.3) < 0.08, "σ \(fit.latentSD)")
        #expect(fit.fixedItemsNotInData == ["anchor_unseen"])
        let byID = Dictionary(uniqueKeysWithValues: fit.items.map { ($0.itemID, $0) })
        for (id, truth) in [
            ("new_graded", graded as any ItemResponseModel), ("new_gpcm", gpcm), ("new_pcm", pcm), ("new_rsm1", rsm1), ("new_rsm2", rsm2)
        ] {
            let estimate = try #require(byID[id])
            #expect(estimate.parameters.count == truth.parameterValues.count)
            for (x, y) in zip(estimate.parameters, truth.parameterValues) {
                #expect(abs(x - y) < 0.3, "\(id): \(estimate.parameters) vs \(truth.parameterValues)")
            }
        }
        // The partial-credit item keeps a = 1 on the bank's scale (σ is the latent SD), with no SE for a.
        #expect(byID["new_pcm"]!.parameters[0] == 1 && byID["new_pcm"]!.standardErrors[0] == nil)
        // μ and σ within 3 SEs of the truth.
        let meanSE = try #require(fit.latentMeanStandardError), sdSE = try #require(fit.latentSDStandardError)
        #expect(abs(fit.latentMean - 0.5) < 3 * meanSE && abs(fit.latentSD - 1.3) < 3 * sdSE, "SEs \(meanSE), \(sdSE)")
    }

    @Test("a fixed item's response outside its categories is refused naming the item; no fixed item answered is refused")
    func refusals() throws {
        let data = try ResponseMatrix(itemIDs: ["a", "b", "c"], rows: [[0, 2, 1], [1, 1, 0], [1, 0, 1], [0, 2, 0]], categoryCounts: [2, 3, 2])
        let calibrator = PolytomousCalibrator()
        #expect {
            _ = try calibrator.calibrate(data, model: .graded, fixedItems: ["b": ItemParameters(discrimination: 1, difficulty: 0)])
        } throws: { error in
            let e = error as? PsychometricsError
            return e?.code == .invalidResponse && e!.message.contains("fixed item b") && e!.message.contains("category 2")
                && e!.message.contains("0…1")
        }
        #expect {
            _ = try calibrator.calibrate(data, model: .graded, fixedItems: ["z": ItemParameters(discrimination: 1, difficulty: 0)])
        } throws: { error in
            let e = error as? PsychometricsError
            return e?.code == .insufficientData && e!.message.contains("none of the 1 fixed item is answered") && e!.message.contains("z")
        }
    }
}

/// 3PL items (a lower asymptote) inside a calibration of items in several categories.
@Suite("PolytomousCalibrator with 3PL items")
struct PolytomousThreePLTests {
    /// 12 3PL items, seeded, 3,000 persons.
    static func threePLData() -> (items: [ItemParameters], data: ResponseMatrix) {
        var rng = SeededGenerator(seed: 2_026_112_703)
        let items = (0..<12).map { j in
            ItemParameters(discrimination: 0.9 + 0.15 * Double(j % 5), difficulty: -1.6 + 0.3 * Double(j), guessing: 0.12 + 0.02 * Double(j % 4))
        }
        let (data, _) = CategoryResponseSimulator.matrix(items: items, itemIDs: (1...12).map { "m\($0)" }, persons: 3_000, using: &rng)
        return (items, data)
    }

    @Test(
        "on 0/1 data every item fitted as 3pl reaches the 0/1 engine's 3PL maximum (same priors): parameters within 2e-3, log-likelihood within 1e-3, SEs within 2%"
    )
    func equalsTheDichotomousEngine() throws {
        let (_, data) = Self.threePLData()
        var options = CalibrationOptions(model: .threePL)
        options.tolerance = 1e-7
        options.maxCycles = 20_000
        let reference = try EMCalibrator(options: options).calibrate(data)
        var polytomousOptions = CalibrationOptions(model: .twoPL)
        polytomousOptions.tolerance = 1e-7
        polytomousOptions.maxCycles = 20_000
        let fit = try PolytomousCalibrator(options: polytomousOptions).calibrate(data, model: .threePL)
        #expect(fit.converged && reference.converged)
        #expect(abs(fit.logLikelihood - reference.logLikelihood) < 1e-3, "\(fit.logLikelihood) vs \(reference.logLikelihood)")
        for (ours, theirs) in zip(fit.items, reference.items) {
            let p = theirs.parameters
            for (x, y) in zip(ours.parameters, [p.discrimination, p.difficulty, p.guessing]) {
                #expect(abs(x - y) < 2e-3, "\(ours.itemID): \(ours.parameters) vs \(p)")
            }
            let se = theirs.standardErrors
            for (x, y) in zip(ours.standardErrors, [se.discrimination, se.difficulty, se.guessing]) {
                let a = try #require(x), b = try #require(y)
                #expect(abs(a / b - 1) < 0.02, "\(ours.itemID) SE: \(ours.standardErrors) vs \(se)")
            }
        }
    }

    @Test(
        "seeded recovery: 3pl items beside graded items in one fit (6,000 persons): every parameter within 3.5 SEs, standardised errors' mean square near 1"
    )
    func recoveryBesideGradedItems() throws {
        var rng = SeededGenerator(seed: 2_026_112_704)
        var items: [any ItemResponseModel] = (0..<10).map { j in
            ItemParameters(discrimination: 1.0 + 0.2 * Double(j % 4), difficulty: -1.2 + 0.3 * Double(j), guessing: 0.2)
        }
        items += (0..<5).map { j in
            GradedResponseItem(discrimination: 1.2 + 0.1 * Double(j), thresholds: [-1 + 0.2 * Double(j), 0.2 * Double(j), 1.1 + 0.2 * Double(j)])
        }
        let ids = (0..<15).map { $0 < 10 ? "mc\($0 + 1)" : "puzzle\($0 - 9)" }
        let (data, _) = CategoryResponseSimulator.matrix(items: items, itemIDs: ids, persons: 6_000, using: &rng)
        let models = Dictionary(uniqueKeysWithValues: ids.prefix(10).map { ($0, ItemModelKind.threePL) })
        let fit = try PolytomousCalibrator().calibrate(data, model: .graded, itemModels: models)
        #expect(fit.converged)
        // Each estimate within 3.5 SEs of the truth, and the standardised errors' mean square near 1 (the 3PL's a
        // and c trade off, so fixed tolerances would have to be loose).
        var squares = 0.0, count = 0
        for (estimate, truth) in zip(fit.items, items) {
            #expect(estimate.parameters.count == truth.parameterValues.count)
            for (k, (x, y)) in zip(estimate.parameters, truth.parameterValues).enumerated() {
                let se = try #require(estimate.standardErrors[k])
                #expect(
                    abs(x - y) < 3.5 * se, "\(estimate.itemID): \(estimate.parameters) vs \(truth.parameterValues), SEs \(estimate.standardErrors)")
                squares += (x - y) * (x - y) / (se * se)
                count += 1
            }
        }
        #expect(
            squares / Double(count) > 0.4 && squares / Double(count) < 1.8, "mean squared standardised error \(squares / Double(count)) over \(count)"
        )
        // The bank writes the 3pl items as 0/1 rows with their c.
        let bank = try ItemBank(calibration: fit)
        #expect(bank.items.prefix(10).allSatisfy { $0.model == .threePL && $0.categoryModel == nil && $0.parameters.guessing > 0.1 })
        #expect(bank.items.suffix(5).allSatisfy { $0.categoryModel?.kind == .graded })
    }

    @Test("an item fitted as 3pl must be answered 0/1")
    func threePLNeedsTwoCategories() throws {
        let data = try ResponseMatrix(itemIDs: ["a", "b"], rows: (0..<30).map { [UInt8($0 % 3), UInt8($0 % 2)] }, categoryCounts: [3, 2])
        #expect {
            _ = try PolytomousCalibrator().calibrate(data, model: .graded, itemModels: ["a": .threePL])
        } throws: { error in
            (error as? PsychometricsError)?.message.contains("item a is fitted as 3pl, a 0/1 item, but its responses in use are 0, 1, 2") == true
        }
    }
}
