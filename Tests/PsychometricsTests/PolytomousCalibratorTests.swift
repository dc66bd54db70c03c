import Foundation
import Numerics
@testable import Psychometrics
import Testing
import TestSupport

/// The item-model calibrator against mirt 1.47 on real polytomous data (mirt's `Science`: 392 persons × 4
/// items, 4 categories; `Data/science.csv`), and on seeded simulations.
@Suite("PolytomousCalibrator: graded, partial credit, nominal against mirt and in recovery")
struct PolytomousCalibratorTests {
    static let root = Repository.root

    /// `Data/science.csv`: a header, then 0…3 per cell.
    static func science() throws -> ResponseMatrix {
        let text = try String(contentsOf: root.appendingPathComponent("Data/science.csv"), encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        let items = lines[0].split(separator: ",").map(String.init)
        let rows = lines.dropFirst().map { $0.split(separator: ",").map { UInt8($0)! as UInt8? } }
        return try ResponseMatrix(itemIDs: items, rows: Array(rows), categoryCounts: [Int](repeating: 4, count: items.count))
    }

    static func options() -> CalibrationOptions {
        var options = CalibrationOptions(model: .twoPL)
        options.tolerance = 1e-6
        options.maxCycles = 20_000
        return options
    }

    /// mirt 1.47, `mirt(Science - 1, 1, itemtype = "graded", SE = TRUE, TOL = 1e-6)`: log-likelihood, then per item
    /// (a, d1, d2, d3) and their standard errors (`coef(printSE = TRUE)`; SE.type Oakes, the observed information).
    static let mirtGraded: (logLikelihood: Double, parameters: [[Double]], standardErrors: [[Double]]) = (
        -1608.869413,
        [
            [1.040651, 4.862734, 2.639171, -1.465462], [1.225834, 2.924000, 0.901131, -2.266431],
            [2.300530, 5.245075, 2.218599, -1.967463], [1.093810, 3.346893, 0.991422, -1.687537]
        ],
        [
            [0.188195, 0.490462, 0.222467, 0.158552], [0.181697, 0.239198, 0.142880, 0.202986],
            [0.488132, 0.736274, 0.359947, 0.324994], [0.183180, 0.276365, 0.140427, 0.168505]
        ]
    )

    @Test("graded on Science: log-likelihood within 1e-3 of mirt's, parameters within 2e-3, SEs within 1%")
    func gradedAgainstMirt() throws {
        let fit = try PolytomousCalibrator(options: Self.options()).calibrate(Self.science(), model: .graded)
        #expect(fit.converged)
        #expect(abs(fit.logLikelihood - Self.mirtGraded.logLikelihood) < 1e-3, "\(fit.logLikelihood)")
        for (j, item) in fit.items.enumerated() {
            for (k, value) in item.workingParameters.enumerated() {
                #expect(abs(value - Self.mirtGraded.parameters[j][k]) < 2e-3, "item \(j + 1) parameter \(k): \(value)")
                let se = try #require(item.workingStandardErrors[k])
                #expect(abs(se / Self.mirtGraded.standardErrors[j][k] - 1) < 0.01, "item \(j + 1) SE \(k): \(se)")
            }
        }
        #expect(fit.parameterCount == 16)
    }

    /// mirt 1.47, `itemtype = "Rasch"` (the partial credit model, latent variance estimated): log-likelihood,
    /// intercepts d1…d3 per item with SEs, and the latent variance 1.002533 (SE 0.164476).
    @Test("partial credit (Rasch) on Science: log-likelihood within 1e-3 of mirt's, intercepts within 2e-3, latent variance")
    func partialCreditAgainstMirt() throws {
        let fit = try PolytomousCalibrator(options: Self.options()).calibrate(Self.science(), model: .partialCredit)
        #expect(abs(fit.logLikelihood - -1619.274101) < 1e-3, "\(fit.logLikelihood)")
        let intercepts: [[Double]] = [
            [3.087971, 5.683288, 4.294496], [1.896369, 2.807291, 0.948535],
            [2.647602, 4.068819, 2.933608], [2.449169, 3.348926, 1.990893]
        ]
        let ses: [[Double]] = [
            [0.522143, 0.531088, 0.544452], [0.233146, 0.256815, 0.299746],
            [0.326699, 0.349302, 0.369857], [0.272299, 0.297861, 0.325548]
        ]
        for (j, item) in fit.items.enumerated() {
            #expect(item.parameters[0] == 1)
            // θ-scale steps b_v = −(d_v − d_{v−1}) from mirt's intercepts.
            for v in 0..<3 {
                let b = -(intercepts[j][v] - (v == 0 ? 0 : intercepts[j][v - 1]))
                #expect(abs(item.parameters[v + 1] - b) < 2e-3, "item \(j + 1) b\(v + 1): \(item.parameters[v + 1]) vs \(b)")
            }
            // The intercepts on the N(0, 1) grid are mirt's d (kσz + d_k = kθ + d_k), and so are their SEs.
            for v in 0..<3 {
                #expect(abs(item.workingParameters[v + 1] - intercepts[j][v]) < 2e-3)
                let se = try #require(item.workingStandardErrors[v + 1])
                #expect(abs(se / ses[j][v] - 1) < 0.01, "item \(j + 1) SE(d\(v + 1)) = \(se) vs \(ses[j][v])")
            }
        }
        #expect(abs(fit.latentSD * fit.latentSD - 1.002533) < 2e-3, "σ² = \(fit.latentSD * fit.latentSD)")
        let se = try #require(fit.latentSDStandardError)
        #expect(abs(2 * fit.latentSD * se / 0.164476 - 1) < 0.01, "SE(σ²) = \(2 * fit.latentSD * se)")
    }

    /// mirt 1.47, `mirt(Science, mirt.model("F = 1-4\nPRIOR = (1-4, a1, lnorm, 0, 0.5)"), "graded", TOL = 1e-7,
    /// SE = TRUE)`: the MAP item estimates under a log-normal(0, 0.5) prior on each slope (mirt's density in a, as
    /// ours): log-likelihood −1609.147598 at them, (a, d1, d2, d3) per item. mirt's SEs are not the reference here:
    /// its `DerivativePriors` gives the log-normal's second derivative as 1/a² − 1/(a²σ²) − (log a − μ)/(a²σ²),
    /// the last term's sign flipped (d²/da² [−log a − (log a − μ)²/(2σ²)] = (1 − 1/σ² + (log a − μ)/σ²)/a²), so its
    /// slope SEs are too small wherever log a ≠ μ (item 3: 0.336 against 0.366). Ours are checked against the
    /// inverse of the log posterior's Hessian by central differences of the marginal log-likelihood.
    @Test(
        "graded with a log-normal slope prior on Science: mirt's MAP estimates within 2e-3, log-likelihood within 1e-3; SEs = the numerical Hessian's to 1%"
    )
    func gradedSlopePriorAgainstMirt() throws {
        var options = Self.options()
        options.slopePrior = try LogNormalPrior(meanLog: 0, sdLog: 0.5)
        let fit = try PolytomousCalibrator(options: options).calibrate(Self.science(), model: .graded)
        #expect(fit.converged)
        #expect(abs(fit.logLikelihood - -1609.147598) < 1e-3, "\(fit.logLikelihood)")
        let parameters: [[Double]] = [
            [1.03843670, 4.87438812, 2.6472211, -1.4699846], [1.18074863, 2.90318099, 0.89352588, -2.24645174],
            [2.0189996, 4.90386763, 2.05905184, -1.83077713], [1.0949261, 3.36199162, 0.99528145, -1.69609059]
        ]
        for (j, item) in fit.items.enumerated() {
            for k in 0..<4 {
                #expect(abs(item.workingParameters[k] - parameters[j][k]) < 2e-3, "item \(j + 1) parameter \(k): \(item.workingParameters[k])")
            }
        }
        // −∂²(log-likelihood + log prior) by central differences (step 1e-4) at the estimates, inverted.
        let data = try Self.science()
        var engine = ItemModelEngine(
            items: fit.items.map(\.item), data: data, grid: QuadratureGrid(validatedCount: 61, bound: 6), workers: 1,
            maximumSlope: 20, shared: [0, 0, 0, 0], slopePriors: [LogNormalPrior?](repeating: options.slopePrior, count: 4))
        let x0 = engine.workingParameters(), P = x0.count, h = 1e-4
        func value(_ x: [Double]) -> Double { engine.setWorkingParameters(x); return engine.eStep().logLikelihood + engine.logPrior() }
        let center = value(x0)
        var hessian = [Double](repeating: 0, count: P * P)
        for a in 0..<P {
            for b in a..<P {
                var pp = x0, pm = x0, mp = x0, mm = x0
                pp[a] += h; pp[b] += h; pm[a] += h; pm[b] -= h; mp[a] -= h; mp[b] += h; mm[a] -= h; mm[b] -= h
                let v = a == b ? (value(pp) - 2 * center + value(mm)) / (4 * h * h) : (value(pp) - value(pm) - value(mp) + value(mm)) / (4 * h * h)
                hessian[a * P + b] = -v; hessian[b * P + a] = -v
            }
        }
        let inverse = try #require(CholeskyInverse(upperTriangleOf: &hessian, n: P, workers: 1))
        for (j, item) in fit.items.enumerated() {
            for k in 0..<4 {
                let se = try #require(item.workingStandardErrors[k]), numerical = inverse.entry(4 * j + k, 4 * j + k).squareRoot()
                #expect(abs(se / numerical - 1) < 0.01, "item \(j + 1) SE \(k): \(se) vs the numerical Hessian's \(numerical)")
            }
        }
        // The prior pulls item 3's slope (2.30 without it) toward the prior's median 1.
        #expect(fit.items[2].workingParameters[0] < 2.1)
    }

    /// mirt 1.47, `mirt(Science, 1, "rsm", TOL = 1e-6, SE = TRUE)` (49 cycles): log-likelihood −1636.908447, shared
    /// b = (−2.98827, −1.923242, 0.936387) with SEs (0.2093722, 0.1296866, 0.1128489), item c = (0, −1.0062135,
    /// −0.3522368, −0.7363181) (the first fixed at 0), latent variance 0.9827448 (SE 0.1621733). mirt's item steps
    /// are b_v − c_j, which the rating-scale item's location + τ_v must equal whatever the identification.
    @Test("rating scale (Andrich) on Science: log-likelihood within 1e-3 of mirt's rsm, steps within 2e-4, SEs within 1%")
    func ratingScaleAgainstMirt() throws {
        let fit = try PolytomousCalibrator(options: Self.options()).calibrate(Self.science(), model: .ratingScale)
        #expect(fit.converged)
        #expect(abs(fit.logLikelihood - -1636.908447) < 1e-3, "\(fit.logLikelihood)")
        // 3 shared (σ, τ1, τ2) + 4 locations.
        #expect(fit.parameterCount == 7)
        let b = [-2.98827, -1.923242, 0.936387], c = [0, -1.0062135, -0.3522368, -0.7363181]
        let scale = try #require(fit.items[0].item as? RatingScaleItem)
        for (j, item) in fit.items.enumerated() {
            #expect(item.model == .ratingScale && item.parameters[0] == 1)
            let rating = try #require(item.item as? RatingScaleItem)
            #expect(rating.thresholds == scale.thresholds, "the thresholds are shared")
            for v in 0..<3 {
                #expect(abs(item.parameters[v + 1] - (b[v] - c[j])) < 2e-4, "item \(j + 1) b\(v + 1): \(item.parameters[v + 1]) vs \(b[v] - c[j])")
            }
        }
        // The first item's steps are mirt's b (its c is 0), and so are their SEs.
        for (v, reference) in [0.2093722, 0.1296866, 0.1128489].enumerated() {
            let se = try #require(fit.items[0].standardErrors[v + 1])
            #expect(abs(se / reference - 1) < 0.01, "SE(b\(v + 1)) = \(se) vs \(reference)")
        }
        #expect(abs(fit.latentSD * fit.latentSD - 0.9827448) < 1e-3, "σ² = \(fit.latentSD * fit.latentSD)")
        let se = try #require(fit.latentSDStandardError)
        #expect(abs(2 * fit.latentSD * se / 0.1621733 - 1) < 0.01, "SE(σ²) = \(2 * fit.latentSD * se)")
    }

    @Test("seeded recovery, rating scale beside graded items (3,000 × 10, σ = 1.3): τ within 0.08, locations within 0.15, σ within 0.08")
    func ratingScaleRecovery() throws {
        let tau = [-1.1, -0.2, 1.3], sigma = 1.3
        // On the N(0, 1) grid the rsm items' common slope is σ (θ = σz); the graded items are on z.
        var items: [any CalibratableItemModel] = (0..<7).map { j in
            RatingScaleItem(discrimination: sigma, location: -0.9 + 0.3 * Double(j), thresholds: tau)
        }
        items += [
            GradedResponseItem(discrimination: 1.2, thresholds: [-1, 0.2, 1.1]), GradedResponseItem(discrimination: 0.8, thresholds: [-0.4, 0.9]),
            GradedResponseItem(discrimination: 1.6, thresholds: [0.3])
        ]
        let kinds = [ItemModelKind](repeating: .ratingScale, count: 7) + [.graded, .graded, .graded]
        var rng = SeededGenerator(seed: 2_026_112_703)
        let ids = (1...items.count).map { "i\($0)" }
        let (data, _) = CategoryResponseSimulator.matrix(items: items, itemIDs: ids, persons: 3_000, using: &rng)
        let fit = try PolytomousCalibrator(options: Self.options()).calibrate(
            data, model: .graded, itemModels: Dictionary(uniqueKeysWithValues: zip(ids, kinds)))
        #expect(fit.converged)
        #expect(abs(fit.latentSD - sigma) < 0.08, "σ \(fit.latentSD)")
        for j in 0..<7 {
            let rating = try #require(fit.items[j].item as? RatingScaleItem)
            #expect(abs(rating.location - (-0.9 + 0.3 * Double(j))) < 0.15, "item \(j + 1) location \(rating.location)")
            for v in 0..<3 { #expect(abs(rating.thresholds[v] - tau[v]) < 0.08, "τ\(v + 1) \(rating.thresholds[v])") }
            #expect(abs(rating.thresholds.reduce(0, +)) < 1e-9)
        }
        #expect(fit.parameterCount == 3 + 7 + 4 + 3 + 2)
    }

    @Test("rating-scale items with different categories in use are refused, naming both items")
    func ratingScaleNeedsOneScale() throws {
        var rows: [[UInt8?]] = []
        for i in 0..<200 { rows.append([UInt8(i % 4), UInt8((i / 2) % 3), UInt8((i / 3) % 4)]) }
        let data = try ResponseMatrix(itemIDs: ["a", "b", "c"], rows: rows, categoryCounts: [4, 3, 4])
        #expect { try PolytomousCalibrator().calibrate(data, model: .ratingScale) } throws: { error in
            "\(error)".contains("item a has 4 (0, 1, 2, 3), item b has 3 (0, 1, 2)")
        }
    }

    /// mirt 1.47, `itemtype = "gpcm"`, TOL 1e-6 (1,639 EM cycles): (a, d1, d2, d3) and SEs per item.
    @Test("generalized partial credit on Science: log-likelihood within 1e-3 of mirt's, parameters within 1e-2, SEs within 2%")
    func generalizedPartialCreditAgainstMirt() throws {
        let fit = try PolytomousCalibrator(options: Self.options()).calibrate(Self.science(), model: .generalizedPartialCredit)
        #expect(fit.converged)
        #expect(abs(fit.logLikelihood - -1612.681600) < 1e-3, "\(fit.logLikelihood)")
        let parameters: [[Double]] = [
            [0.861183, 2.822441, 5.313291, 3.989012], [0.839982, 1.709929, 2.577703, 0.848249],
            [2.237028, 4.660112, 6.840855, 4.980822], [0.720408, 2.094858, 2.893956, 1.718642]
        ]
        let ses: [[Double]] = [
            [0.174057, 0.588608, 0.653776, 0.622513], [0.145284, 0.267024, 0.297360, 0.290928],
            [0.671138, 1.174309, 1.608925, 1.256249], [0.143228, 0.299648, 0.331974, 0.314594]
        ]
        for (j, item) in fit.items.enumerated() {
            for k in 0..<4 {
                // Item 3's likelihood is flat along a ridge (mirt needed 1,639 cycles): parameters agree to 1e-2.
                #expect(abs(item.workingParameters[k] - parameters[j][k]) < 1e-2, "item \(j + 1) parameter \(k): \(item.workingParameters[k])")
                let se = try #require(item.workingStandardErrors[k])
                #expect(abs(se / ses[j][k] - 1) < 0.02, "item \(j + 1) SE \(k): \(se) vs \(ses[j][k])")
            }
        }
    }

    /// A mixed bank: graded (4 categories), generalized partial credit (3), 0/1 items as two-category graded items
    /// (the 2PL), and nominal items (4 options).
    static func mixedBank(copies: Int) -> (items: [any CalibratableItemModel], kinds: [ItemModelKind]) {
        var items: [any CalibratableItemModel] = [], kinds: [ItemModelKind] = []
        for r in 0..<copies {
            let shift = Double(r % 5) * 0.3 - 0.6
            items.append(GradedResponseItem(discrimination: 1.4 + 0.1 * Double(r % 3), thresholds: [-1.2 + shift, 0 + shift, 1.1 + shift]));
            kinds.append(.graded)
            items.append(GradedResponseItem(discrimination: 0.9, thresholds: [-0.5 + shift, 0.9 + shift, 2.0 + shift])); kinds.append(.graded)
            items.append(GeneralizedPartialCreditItem(discrimination: 1.1, steps: [-0.8 + shift, 0.6 + shift]));
            kinds.append(.generalizedPartialCredit)
            items.append(GradedResponseItem(discrimination: 1.7, thresholds: [0.3 + shift])); kinds.append(.graded)
            items.append(GradedResponseItem(discrimination: 1.0, thresholds: [-0.7 + shift])); kinds.append(.graded)
            items.append(NominalResponseItem(slopes: [0, -0.4, 0.3, 1.5], intercepts: [0, 0.2, -0.3, 0.4 + shift])); kinds.append(.nominal)
        }
        return (items, kinds)
    }

    /// The largest |estimate − truth| over the working parameters of every item.
    static func largestError(_ fit: PolytomousCalibrationResult, _ truth: [any CalibratableItemModel]) -> Double {
        var largest = 0.0
        for (item, true_) in zip(fit.items, truth) {
            for (x, y) in zip(item.workingParameters, true_.workingParameters) { largest = max(largest, abs(x - y)) }
        }
        return largest
    }

    @Test("seeded recovery, mixed bank (graded, gpcm, 0/1, nominal), dense 4,000 × 12: every parameter within 0.35, RMSE ≤ 0.12")
    func recoveryDense() throws {
        let bank = Self.mixedBank(copies: 2)
        var rng = SeededGenerator(seed: 2_026_112_701)
        let ids = (1...bank.items.count).map { "i\($0)" }
        let (data, _) = CategoryResponseSimulator.matrix(items: bank.items, itemIDs: ids, persons: 4_000, using: &rng)
        var options = CalibrationOptions(model: .twoPL)
        options.standardErrors = false
        let fit = try PolytomousCalibrator(options: options).calibrate(
            data, model: .graded,
            itemModels: Dictionary(uniqueKeysWithValues: zip(ids, bank.kinds)))
        #expect(fit.converged)
        #expect(Self.largestError(fit, bank.items) < 0.35, "largest error \(Self.largestError(fit, bank.items))")
        var squares = 0.0, count = 0
        for (item, truth) in zip(fit.items, bank.items) {
            for (x, y) in zip(item.workingParameters, truth.workingParameters) { squares += (x - y) * (x - y); count += 1 }
        }
        #expect((squares / Double(count)).squareRoot() <= 0.12, "RMSE \((squares / Double(count)).squareRoot())")
    }

    @Test("seeded recovery, missing by design (36 items, 10 per person, 9,000 persons): every parameter within 0.5; SEs cover")
    func recoverySparse() throws {
        let bank = Self.mixedBank(copies: 6)
        var rng = SeededGenerator(seed: 2_026_112_702)
        let ids = (1...bank.items.count).map { "i\($0)" }
        let (data, _) = CategoryResponseSimulator.matrix(items: bank.items, itemIDs: ids, persons: 9_000, itemsPerPerson: 10, using: &rng)
        let fit = try PolytomousCalibrator().calibrate(data, model: .graded, itemModels: Dictionary(uniqueKeysWithValues: zip(ids, bank.kinds)))
        #expect(fit.converged)
        #expect(Self.largestError(fit, bank.items) < 0.5, "largest error \(Self.largestError(fit, bank.items))")
        // Standardised errors (estimate − truth)/SE: about N(0, 1), so their mean square near 1.
        var squares = 0.0, count = 0
        for (item, truth) in zip(fit.items, bank.items) {
            for (k, (x, y)) in zip(item.workingParameters, truth.workingParameters).enumerated() {
                let se = try #require(item.workingStandardErrors[k])
                squares += (x - y) * (x - y) / (se * se)
                count += 1
            }
        }
        let meanSquare = squares / Double(count)
        #expect(meanSquare > 0.6 && meanSquare < 1.5, "mean squared standardised error \(meanSquare) over \(count) parameters")
    }

    @Test("an unused category is collapsed with a warning naming the item; one category left excludes the item")
    func unusedCategories() throws {
        // Item "b" (4 categories declared) never gets a 2; item "c" is always 1.
        var rng = SeededGenerator(seed: 7)
        var rows: [[UInt8?]] = []
        for _ in 0..<300 {
            let x = RandomVariate.uniform(using: &rng)
            rows.append([x < 0.5 ? 0 : 1, x < 0.3 ? 0 : x < 0.7 ? 1 : 3, 1, x < 0.6 ? 0 : 1])
        }
        let data = try ResponseMatrix(itemIDs: ["a", "b", "c", "d"], rows: rows, categoryCounts: [2, 4, 2, 2])
        var options = CalibrationOptions(model: .twoPL)
        options.standardErrors = false
        let fit = try PolytomousCalibrator(options: options).calibrate(data, model: .graded)
        let b = try #require(fit.items.first { $0.itemID == "b" })
        #expect(b.categoryMap == [0, 1, 3])
        #expect(b.parameters.count == 3)
        #expect(fit.warnings.contains { $0.contains("item b") && $0.contains("category 2 of 0…3 has no responses and is collapsed") })
        #expect(fit.excludedItems == ["c"])
        #expect(fit.warnings.contains { $0 == "item c excluded: every response is in category 1" })
    }

    /// mirt's EAP and SE per person (`fscores(method = "EAP", full.scores.SE = TRUE)`, 61 nodes on ±6) for the
    /// graded, gpcm and Rasch fits, from `Fixtures/science_mirt_eap.csv`.
    static func mirtScores() throws -> [[Double]] {
        let text = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures/science_mirt_eap.csv"), encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map { $0.split(separator: ",").map { Double($0)! } }
    }

    @Test("EAP with mirt's parameters equals mirt's EAP and SE to 1e-4 for all 392 persons (graded, gpcm, Rasch)")
    func eapAgainstMirt() throws {
        let data = try Self.science(), reference = try Self.mirtScores()
        // mirt's coef() to 15 digits: graded (a, d1…d3), gpcm (a, d1…d3), Rasch (d1…d3; latent variance 1.00253269280562).
        let graded: [any ItemResponseModel] = [
            [1.040651367710552, 4.862733812293132, 2.639170908571699, -1.465461504645502],
            [1.225833974224834, 2.924000347943395, 0.901131029108304, -2.266430994359650],
            [2.300530277260760, 5.245075469483100, 2.218599252233290, -1.967462522019665],
            [1.093809776429659, 3.346893382079263, 0.991421882646159, -1.687537110109526]
        ]
        .map { x in GradedResponseItem(discrimination: x[0], thresholds: x[1...].map { -$0 / x[0] }) }
        func partialCredit(_ a: Double, _ d: [Double]) -> GeneralizedPartialCreditItem {
            GeneralizedPartialCreditItem(discrimination: a, steps: (0..<3).map { -(d[$0] - ($0 == 0 ? 0 : d[$0 - 1])) / a })
        }
        let gpcm: [any ItemResponseModel] = [
            partialCredit(0.861182729844133, [2.822440763156809, 5.313290946740796, 3.989012125113970]),
            partialCredit(0.839982260827830, [1.709929409518219, 2.577703448467974, 0.848248762730584]),
            partialCredit(2.237028023644522, [4.660112145992052, 6.840854805428171, 4.980821670300659]),
            partialCredit(0.720407893674897, [2.094857501993928, 2.893956262929396, 1.718641688759656])
        ]
        let rasch: [any ItemResponseModel] = [
            partialCredit(1, [3.087970816904123, 5.683288478324941, 4.294496327392428]),
            partialCredit(1, [1.896369450209420, 2.807291102806174, 0.948534795433275]),
            partialCredit(1, [2.647601991111588, 4.068819042206237, 2.933607827160749]),
            partialCredit(1, [2.449169070529070, 3.348926351904569, 1.990893160921476])
        ]
        let latent = try LatentScale(mean: 0, sd: 1.00253269280562.squareRoot())
        for (column, (items, scale)) in [(graded, LatentScale.standard), (gpcm, .standard), (rasch, latent)].enumerated() {
            let estimator = try AbilityEstimator(items: items, latentScale: scale)
            var largest = 0.0
            for i in 0..<data.personCount {
                let cells = data.cells(ofPerson: i)
                let estimate = try estimator.estimate(items: cells.map { Int(data.itemIndices[$0]) }, responses: cells.map { data.responses[$0] })
                largest = max(largest, abs(estimate.theta - reference[i][2 * column]), abs(estimate.standardError - reference[i][2 * column + 1]))
            }
            #expect(largest < 1e-4, "model \(column): largest difference \(largest)")
        }
    }

    @Test("ML, MAP and WLE on graded items: the estimating equation is 0 at the estimate, WLE between ML and 0")
    func rootFindingEstimators() throws {
        let items: [any ItemResponseModel] = Self.mixedBank(copies: 1).items
        let pattern: [UInt8] = [2, 1, 1, 1, 0, 3]
        for method in [AbilityMethod.ml, .map, .wle] {
            var options = AbilityOptions(method: method)
            options.tolerance = 1e-10
            let estimate = try AbilityEstimator(items: items, options: options).estimate(items: Array(0..<6), responses: pattern)
            // g(θ̂) = Σ P′_u/P_u (+ prior or Warm term) by differences of the log-likelihood.
            let h = 1e-6
            func logLikelihood(_ theta: Double) -> Double {
                zip(items, pattern).reduce(0) { $0 + log($1.0.categoryProbabilities(at: theta)[Int($1.1)]) }
            }
            let score = (logLikelihood(estimate.theta + h) - logLikelihood(estimate.theta - h)) / (2 * h)
            let information = items.reduce(0) { $0 + $1.information(at: estimate.theta) }
            switch method {
            case .ml: #expect(abs(score) < 1e-5, "ML score \(score)")
            case .map: #expect(abs(score - estimate.theta) < 1e-5, "MAP: score = θ/σ² at the mode, got \(score) at \(estimate.theta)")
            default: #expect(estimate.standardError.isApproximatelyEqual(to: 1 / information.squareRoot(), relativeTolerance: 1e-6))
            }
        }
    }

    /// mirt's `SAT12` as options chosen (`Fixtures/sat12.csv`: 600 × 32, 0…4, empty = omitted).
    static func sat12() throws -> ResponseMatrix {
        let text = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures/sat12.csv"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
        let items = lines[0].split(separator: ",").map(String.init)
        let rows = lines.dropFirst().map { line in
            line.split(separator: ",", omittingEmptySubsequences: false).map { $0.isEmpty ? nil : UInt8($0)! }
        }
        return try ResponseMatrix(itemIDs: items, rows: Array(rows), categoryCounts: [Int](repeating: 5, count: items.count))
    }

    /// mirt 1.47 `mirt(SAT12 options, 1, itemtype = "nominal")`: log-likelihood −18947.583216 at its default
    /// tolerance (10⁻⁴, 69 cycles, converged); −18947.578981 at 10⁻⁵ (299 cycles); at 10⁻⁶ it stops unconverged
    /// after 20,000 cycles at −18947.490535. mirt fixes the last option's scoring slope (a_K = (K − 1)·a1), so a
    /// maximum with a_K near 0 lies at infinity for it (item 2's ak's run to 9 and −13); iqscore fixes option 0's
    /// (a_0 = c_0 = 0) and converges at −18928.368644, 19.1 above — and mirt's own `logLik` at iqscore's
    /// parameters (`mirt(..., pars = values, TOL = NaN)`) is −18928.368644, the same to 10⁻⁶.
    @Test("nominal on SAT12's options: above mirt's best (−18947.4905), at the maximum mirt itself evaluates as −18928.3686")
    func nominalOnSAT12() throws {
        var options = CalibrationOptions(model: .twoPL)
        options.standardErrors = false
        let fit = try PolytomousCalibrator(options: options).calibrate(Self.sat12(), model: .nominal)
        #expect(fit.converged)
        #expect(fit.logLikelihood > -18947.490535, "\(fit.logLikelihood)")
        #expect(abs(fit.logLikelihood - -18928.368644) < 1e-3, "\(fit.logLikelihood)")
        #expect(fit.items.count == 32)
        #expect(fit.parameterCount == 32 * 8 - fit.items.reduce(0) { $0 + 2 * (5 - $1.categoryResponses.count) })
    }
}
