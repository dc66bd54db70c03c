import Foundation
import Testing
@testable import Psychometrics

// Issue 28: a bifactor bank scored as a battery — the full-scale θ, the domain indexes (reference composites),
// their added value (Haberman's PRMSE) and the general-factor marginal items.

@Suite("Battery scoring")
struct BatteryScoringTests {
    /// Two domains of three items and a general-only item; domain 1 leans on its specific factor.
    static let items: [BifactorItem] = [
        BifactorItem(generalSlope: 1.4, specificSlope: 0.5, specific: 0, intercept: 0.4),
        BifactorItem(generalSlope: 1.1, specificSlope: 0.7, specific: 0, intercept: -0.6),
        BifactorItem(generalSlope: 1.6, specificSlope: 0.3, specific: 0, intercept: 0.9),
        BifactorItem(generalSlope: 0.6, specificSlope: 1.6, specific: 1, intercept: 0.2),
        BifactorItem(generalSlope: 0.5, specificSlope: 1.9, specific: 1, intercept: -0.8),
        BifactorItem(generalSlope: 0.7, specificSlope: 1.4, specific: 1, intercept: 0.5),
        BifactorItem(generalSlope: 1.2, intercept: 0.1, guessing: 0.2, estimatesGuessing: true)
    ]
    static let structure = try! FactorStructure(items: (0..<7).map { ("i\($0)", $0 < 3 ? "logic" : $0 < 6 ? "spatial" : nil) })

    @Test("the reference composite: the principal eigenvector of the domain's Σ a aᵀ, unit length, w_g ≥ 0")
    func compositeKnownValue() throws {
        // Equal slopes: the diagonal. A testlet domain (a_s = λ a_g): (1, λ)/√(1 + λ²).
        let equal = try #require(
            IndexComposite(
                factor: 0,
                items: [
                    BifactorItem(generalSlope: 1, specificSlope: 1, specific: 0, intercept: 0),
                    BifactorItem(generalSlope: 2, specificSlope: 2, specific: 0, intercept: 0)
                ]))
        #expect(abs(equal.generalWeight - 0.5.squareRoot()) < 1e-15 && abs(equal.specificWeight - 0.5.squareRoot()) < 1e-15)
        let testlet = try #require(
            IndexComposite(
                factor: 0,
                items: [
                    BifactorItem(generalSlope: 2, specificSlope: 1, specific: 0, intercept: 0),
                    BifactorItem(generalSlope: 1, specificSlope: 0.5, specific: 0, intercept: 0)
                ]))
        #expect(abs(testlet.generalWeight - 1 / 1.25.squareRoot()) < 1e-15 && abs(testlet.specificWeight - 0.5 / 1.25.squareRoot()) < 1e-15)
        // A negative specific slope sum keeps w_g ≥ 0; no specific slope: the general factor itself.
        let flat = try #require(IndexComposite(factor: 0, items: [BifactorItem(generalSlope: 1, specificSlope: 0, specific: 0, intercept: 0)]))
        #expect(flat.generalWeight == 1 && flat.specificWeight == 0)
        #expect(IndexComposite(factor: 3, items: Self.items) == nil)
        // In general: M w = λ_max w.
        for f in 0..<2 {
            let w = try #require(IndexComposite(factor: f, items: Self.items))
            let members = Self.items.filter { $0.specific == f }
            let gg = members.reduce(0) { $0 + $1.generalSlope * $1.generalSlope }, ss = members.reduce(0) { $0 + $1.specificSlope * $1.specificSlope }
            let gs = members.reduce(0) { $0 + $1.generalSlope * $1.specificSlope }
            let lambda = (gg + ss) / 2 + (((gg - ss) / 2) * ((gg - ss) / 2) + gs * gs).squareRoot()
            #expect(abs(gg * w.generalWeight + gs * w.specificWeight - lambda * w.generalWeight) < 1e-12)
            #expect(abs(gs * w.generalWeight + ss * w.specificWeight - lambda * w.specificWeight) < 1e-12)
            #expect(abs(w.generalWeight * w.generalWeight + w.specificWeight * w.specificWeight - 1) < 1e-15 && w.generalWeight > 0)
        }
        // Domain 0 leans on the general factor, domain 1 on its specific one.
        #expect(try #require(IndexComposite(factor: 0, items: Self.items)).generalWeight > 0.9)
        #expect(try #require(IndexComposite(factor: 1, items: Self.items)).specificWeight > 0.9)
    }

    @Test("an index's posterior mean and SD equal the full-grid integral of w·θ")
    func compositePosterior() throws {
        let scorer = try BifactorScorer(items: Self.items, specificFactorCount: 2, quadraturePoints: 11, bound: 5)
        let answers: [(item: Int, response: UInt8)] = [(0, 1), (2, 0), (3, 1), (4, 1), (6, 0)]
        let estimate = try scorer.eap(answers)
        let grid = scorer.grid, q = grid.count
        for f in 0..<2 {
            let w = try #require(IndexComposite(factor: f, items: Self.items))
            var total = 0.0, m1 = 0.0, m2 = 0.0
            for a in 0..<q {
                for b in 0..<q {
                    for c in 0..<q {
                        let theta = [grid.points[a], grid.points[b], grid.points[c]]
                        var p = grid.weights[a] * grid.weights[b] * grid.weights[c]
                        for (j, u) in answers {
                            let item = Self.items[j], prob = item.probability(general: theta[0], specific: item.specific.map { theta[$0 + 1] } ?? 0)
                            p *= u == 1 ? prob : 1 - prob
                        }
                        let tau = w.generalWeight * theta[0] + w.specificWeight * theta[f + 1]
                        total += p; m1 += p * tau; m2 += p * tau * tau
                    }
                }
            }
            let (mean, sd) = w.estimate(estimate)
            #expect(abs(mean - m1 / total) < 1e-10, "factor \(f): \(mean) against \(m1 / total)")
            #expect(abs(sd - (m2 / total - (m1 / total) * (m1 / total)).squareRoot()) < 1e-10)
        }
    }

    /// The exact PRMSEs by enumerating every response pattern of `form` (indices into `items`).
    static func exactPRMSE(_ scorer: BifactorScorer, _ w: IndexComposite, form: [Int]) throws -> (sub: Double, total: Double, augmented: Double) {
        let domain = form.filter { scorer.items[$0].specific == w.factor }
        func enumerate(_ items: [Int], _ body: (Double, BifactorEstimate) -> Void) throws {
            for pattern in 0..<(1 << items.count) {
                let answers = items.enumerated().map { (item: $1, response: UInt8((pattern >> $0) & 1)) }
                let e = try scorer.eap(answers)
                body(exp(e.logLikelihood), e)
            }
        }
        var augmented = 0.0, sub = 0.0, meanTau = 0.0, meanG = 0.0, tauG = 0.0, gg = 0.0
        try enumerate(form) { p, e in
            let (tau, sd) = w.estimate(e)
            augmented += p * sd * sd
            meanTau += p * tau; meanG += p * e.means[0]; tauG += p * tau * e.means[0]; gg += p * e.means[0] * e.means[0]
        }
        try enumerate(domain) { p, e in sub += p * pow(w.estimate(e).sd, 2) }
        let priorVariance = zip(scorer.grid.weights, scorer.grid.points).reduce(0) { $0 + $1.0 * $1.1 * $1.1 }
        let covariance = tauG - meanTau * meanG, varG = gg - meanG * meanG
        return (1 - sub / priorVariance, covariance * covariance / (priorVariance * varG), 1 - augmented / priorVariance)
    }

    @Test("added value: the Monte Carlo PRMSEs agree with exact enumeration of all 2⁷ patterns within their error")
    func addedValueAgainstEnumeration() throws {
        let scorer = try BifactorScorer(items: Self.items, specificFactorCount: 2, quadraturePoints: 21)
        let composites = (0..<2).compactMap { IndexComposite(factor: $0, items: Self.items) }
        let values = try IndexAddedValue.evaluate(scorer: scorer, composites: composites, factorNames: ["logic", "spatial"], simulees: 6000)
        #expect(values.map(\.factor) == ["logic", "spatial"] && values.map(\.items) == [3, 3])
        for (w, v) in zip(composites, values) {
            let exact = try Self.exactPRMSE(scorer, w, form: Array(0..<7))
            // Monte Carlo SEs at 6,000 simulees are below 0.012 for each PRMSE here: 4 SEs.
            #expect(abs(v.subscore - exact.sub) < 0.03, "\(v.factor) sub \(v.subscore) exact \(exact.sub)")
            #expect(abs(v.augmented - exact.augmented) < 0.03, "\(v.factor) augmented \(v.augmented) exact \(exact.augmented)")
            #expect(abs(v.total - exact.total) < 0.03, "\(v.factor) total \(v.total) exact \(exact.total)")
            #expect(exact.augmented >= exact.total - 1e-9 && exact.augmented >= exact.sub - 1e-9)
        }
        // Domain 0 mostly measures the general factor, which the whole test measures better: no added value.
        // Domain 1 mostly measures its own factor, which the rest of the test cannot: added value.
        #expect(!values[0].hasAddedValue && values[1].hasAddedValue)
        let exact0 = try Self.exactPRMSE(scorer, composites[0], form: Array(0..<7)),
            exact1 = try Self.exactPRMSE(scorer, composites[1], form: Array(0..<7))
        #expect(exact0.sub < exact0.total && exact1.sub > exact1.total)
        // Seeded: the same call gives the same numbers; a form without the domain leaves it out; bad input throws.
        #expect(try IndexAddedValue.evaluate(scorer: scorer, composites: composites, factorNames: ["logic", "spatial"], simulees: 6000) == values)
        #expect(
            try IndexAddedValue.evaluate(scorer: scorer, composites: composites, factorNames: ["logic", "spatial"], pool: [0, 1, 6], simulees: 50)
                .map(\.factor) == ["logic"])
        #expect(throws: PsychometricsError.self) {
            try IndexAddedValue.evaluate(scorer: scorer, composites: composites, factorNames: ["logic", "spatial"], pool: [7])
        }
        #expect(throws: PsychometricsError.self) { try IndexAddedValue.evaluate(scorer: scorer, composites: composites, factorNames: ["logic"]) }
    }

    @Test("added value of random tests drawn from a pool: the average of every form's exact PRMSEs, within their error")
    func addedValueOfDrawnTests() throws {
        let scorer = try BifactorScorer(items: Self.items, specificFactorCount: 2, quadraturePoints: 21)
        let composites = (0..<2).compactMap { IndexComposite(factor: $0, items: Self.items) }
        let values = try IndexAddedValue.evaluate(
            scorer: scorer, composites: composites, factorNames: ["logic", "spatial"], formLength: 4, simulees: 6000)
        #expect(values.map(\.formLength) == [4, 4] && values.map(\.items) == [3, 3])
        // Every 4-item test of the 7 is equally likely: the expected posterior variances average over the 35 forms.
        var forms: [[Int]] = []
        for mask in 0..<(1 << 7) where mask.nonzeroBitCount == 4 { forms.append((0..<7).filter { mask & (1 << $0) != 0 }) }
        for (w, v) in zip(composites, values) {
            let exact = try forms.map { try Self.exactPRMSE(scorer, w, form: $0) }
            let sub = exact.map(\.sub).reduce(0, +) / Double(forms.count), augmented = exact.map(\.augmented).reduce(0, +) / Double(forms.count)
            #expect(
                abs(v.subscore - sub) < 0.03 && abs(v.augmented - augmented) < 0.03,
                "\(v.factor): sub \(v.subscore) / \(sub), aug \(v.augmented) / \(augmented)")
        }
        // Shorter tests hold less of each domain.
        let whole = try IndexAddedValue.evaluate(scorer: scorer, composites: composites, factorNames: ["logic", "spatial"], simulees: 6000)
        #expect(zip(values, whole).allSatisfy { $0.subscore < $1.subscore && $0.augmented < $1.augmented })
        #expect(throws: PsychometricsError.self) {
            try IndexAddedValue.evaluate(scorer: scorer, composites: composites, factorNames: ["logic", "spatial"], formLength: 8)
        }
    }

    @Test(
        "MAP: the log posterior's gradient is 0 at the mode, the covariance inverts its Hessian; without specific slopes it is the unidimensional MAP"
    )
    func mapKnownValue() throws {
        let scorer = try BifactorScorer(items: Self.items, specificFactorCount: 2, quadraturePoints: 21)
        let answers: [(item: Int, response: UInt8)] = [(0, 1), (1, 0), (2, 1), (3, 1), (4, 1), (6, 0)]
        let mode = try scorer.map(answers)
        func logPosterior(_ t: [Double]) -> Double {
            answers.reduce(0) { total, answer in
                let item = Self.items[answer.item], p = item.probability(general: t[0], specific: item.specific.map { t[$0 + 1] } ?? 0)
                return total + log(answer.response == 1 ? p : 1 - p)
            } - t.reduce(0) { $0 + $1 * $1 } / 2
        }
        let h = 1e-4
        var hessian = [Double](repeating: 0, count: 9)
        for x in 0..<3 {
            var up = mode.means, down = mode.means
            up[x] += 1e-6; down[x] -= 1e-6
            #expect(abs((logPosterior(up) - logPosterior(down)) / 2e-6) < 1e-6, "∂ℓ/∂θ\(x) at the mode")
            for y in 0..<3 {
                var pp = mode.means, pm = mode.means, mp = mode.means, mm = mode.means
                pp[x] += h; pp[y] += h; pm[x] += h; pm[y] -= h; mp[x] -= h; mp[y] += h; mm[x] -= h; mm[y] -= h
                hessian[x * 3 + y] = (logPosterior(pp) - logPosterior(pm) - logPosterior(mp) + logPosterior(mm)) / (4 * h * h)
            }
        }
        // Covariance × (−Hessian) = I.
        for x in 0..<3 {
            for y in 0..<3 {
                let v = (0..<3).reduce(0.0) { $0 + mode.covariance[x * 3 + $1] * -hessian[$1 * 3 + y] }
                #expect(abs(v - (x == y ? 1 : 0)) < 1e-5, "(Σ·(−H))[\(x),\(y)] = \(v)")
            }
        }
        // 2PL items without specific slopes: θ_g's MAP and SE are the unidimensional estimator's with the N(0, 1) prior.
        let flat = Self.items.map { BifactorItem(generalSlope: $0.generalSlope, intercept: $0.intercept) }
        let flatMode = try BifactorScorer(items: flat, specificFactorCount: 2).map(answers)
        let oneFactor = try AbilityEstimator(parameters: flat.map(\.generalMarginal), options: AbilityOptions(method: .map))
            .estimate(items: answers.map(\.item), responses: answers.map(\.response))
        #expect(
            abs(flatMode.means[0] - oneFactor.theta) < 1e-6 && abs(flatMode.standardErrors[0] - oneFactor.standardError) < 1e-6,
            "\(flatMode.means[0]) ± \(flatMode.standardErrors[0]) against \(oneFactor.theta) ± \(oneFactor.standardError)")
        #expect(flatMode.means[1] == 0 && abs(flatMode.standardErrors[1] - 1) < 1e-12)
    }

    @Test("the general-factor marginal item is within 0.012 of the integral over the specific factor (|a_s| ≤ 3)")
    func generalMarginal() throws {
        let grid = QuadratureGrid(validatedCount: 101, bound: 8)
        for item in Self.items {
            let marginal = item.generalMarginal
            #expect(marginal.guessing == item.guessing)
            for theta in stride(from: -4.0, through: 4.0, by: 0.25) {
                let integral = zip(grid.points, grid.weights).reduce(0) { $0 + $1.1 * item.probability(general: theta, specific: $1.0) }
                let approximation = marginal.probability(at: theta)
                #expect(abs(integral - approximation) < 0.012, "θ \(theta): \(approximation) against \(integral)")
            }
        }
        // No specific slope: the item itself.
        let plain = BifactorItem(generalSlope: 1.3, intercept: -0.65).generalMarginal
        #expect(abs(plain.discrimination - 1.3) < 1e-15 && abs(plain.difficulty - 0.5) < 1e-15)
    }

    /// The battery's unidimensional view, as `BifactorBank.scoringBank` builds it.
    static func view(_ items: [BifactorItem]) -> ItemBank {
        ItemBank(
            items: items.enumerated().map { j, item in
                BankItem(
                    itemID: "i\(j)", model: item.estimatesGuessing ? .threePL : .twoPL, parameters: item.generalMarginal,
                    metadata: ["domain": j < 3 ? "logic" : j < 6 ? "spatial" : "general"])
            }, metadataColumns: ["domain"])
    }

    @Test("SessionScorer on a battery: θ is the general factor's EAP, the indexes their composites with IQs and flags")
    func sessionScorer() throws {
        let battery = try Battery(items: Self.items, structure: Self.structure, quadraturePoints: 21)
        let scorer = try SessionScorer(battery: battery, bank: Self.view(Self.items), scale: IQScale())
        let ids = ["i0", "i1", "i2", "i6"], responses = [1, 1, 1, 0]
        let score = try scorer.score(itemIDs: ids, responses: responses)
        let factors = try battery.scorer.eap([(0, 1), (1, 1), (2, 1), (6, 0)])
        #expect(abs(score.estimate.theta - factors.means[0]) < 1e-15 && abs(score.estimate.standardError - factors.standardErrors[0]) < 1e-15)
        #expect(score.estimate.itemCount == 4 && score.estimate.correctCount == 3 && score.estimate.method == .eap)
        #expect(score.score == (try IQScale().score(score.estimate)))
        #expect(score.indexes.map(\.factor) == ["logic", "spatial"])
        let logic = score.indexes[0], spatial = score.indexes[1]
        let w = battery.composites[0], (mean, sd) = w.estimate(factors)
        #expect(abs(logic.theta - mean) < 1e-15 && abs(logic.standardError - sd) < 1e-15)
        #expect(logic.score.iq == Int((100 + 15 * mean).rounded(.toNearestOrAwayFromZero)))
        #expect(logic.answered == 3 && logic.correct == 3 && logic.score.flags.contains(.perfectScore) && !logic.score.flags.contains(.fewItems))
        // Spatial was not answered: its index is the general factor's prediction, flagged few_items.
        #expect(spatial.answered == 0 && spatial.score.flags.contains(.fewItems) && spatial.standardError > 0.5)
        // The full-scale score has the domain counts of the bank's domain column.
        #expect(score.domainAnswered == [3, 0, 1] && score.domainCorrect == [3, 0, 0])
        // Reporting fewer indexes; unknown names, another method and a bank of other items refused.
        let one = try SessionScorer(battery: battery.reporting(["spatial"]), bank: Self.view(Self.items), scale: IQScale())
        #expect(try one.score(itemIDs: ids, responses: responses).indexes.map(\.factor) == ["spatial"])
        #expect(throws: PsychometricsError.self) { try battery.reporting(["memory"]) }
        #expect(throws: PsychometricsError.self) {
            try SessionScorer(battery: battery, bank: Self.view(Self.items), ability: AbilityOptions(method: .ml), scale: IQScale())
        }
        let modal = try SessionScorer(battery: battery, bank: Self.view(Self.items), ability: AbilityOptions(method: .map), scale: IQScale())
        let mapScore = try modal.score(itemIDs: ids, responses: responses), mode = try battery.scorer.map([(0, 1), (1, 1), (2, 1), (6, 0)])
        #expect(mapScore.estimate.method == .map && abs(mapScore.estimate.theta - mode.means[0]) < 1e-15 && mapScore.indexes.count == 2)
        #expect(throws: PsychometricsError.self) {
            try SessionScorer(battery: battery, bank: Self.view(Array(Self.items.prefix(3))), scale: IQScale())
        }
        #expect(throws: PsychometricsError.self) { try scorer.score(itemIDs: ["i0"], responses: [2]) }
    }

    @Test("a simulated battery: FSIQ and index scores track the true general factor and composites (seeded recovery)")
    func recovery() throws {
        var rng = SeededGenerator(seed: 28)
        // Six domains of five items, 800 simulees answering all.
        let items = (0..<30).map { (j: Int) -> BifactorItem in
            let x = Double(j), slope: Double = j / 5 < 3 ? 0.4 : 1.4
            return BifactorItem(generalSlope: 0.8 + 0.05 * Double(j % 7), specificSlope: slope, specific: j / 5, intercept: -1 + 0.07 * x)
        }
        let structure = try FactorStructure(items: (0..<30).map { ("i\($0)", "d\($0 / 5)") })
        let battery = try Battery(items: items, structure: structure, quadraturePoints: 21)
        var truthG: [Double] = [], estimateG: [Double] = [], truth: [[Double]] = Array(repeating: [], count: 6), estimates = truth
        var coverage = 0, count = 0
        BifactorSimulator(items: items, specificFactorCount: 6).generate(count: 800, using: &rng) { theta, answers in
            let e = try! battery.scorer.eap(answers)
            truthG.append(theta[0]); estimateG.append(e.means[0])
            for c in battery.composites {
                let tau = c.generalWeight * theta[0] + c.specificWeight * theta[c.factor + 1]
                let (mean, sd) = c.estimate(e)
                truth[c.factor].append(tau); estimates[c.factor].append(mean)
                if abs(tau - mean) < 1.96 * sd { coverage += 1 }
                count += 1
            }
        }
        func correlation(_ x: [Double], _ y: [Double]) -> Double {
            let n = Double(x.count), mx = x.reduce(0, +) / n, my = y.reduce(0, +) / n
            let sxy = zip(x, y).reduce(0) { $0 + ($1.0 - mx) * ($1.1 - my) }
            return sxy / (x.reduce(0) { $0 + ($1 - mx) * ($1 - mx) } * y.reduce(0) { $0 + ($1 - my) * ($1 - my) }).squareRoot()
        }
        #expect(correlation(truthG, estimateG) > 0.85)
        // The model's augmented PRMSE predicts the squared correlation of estimate and truth for each index.
        let predicted = try battery.addedValue(simulees: 2000)
        for (f, v) in predicted.enumerated() {
            let r2 = pow(correlation(truth[f], estimates[f]), 2)
            #expect(abs(r2 - v.augmented) < 0.06, "domain \(f): r² \(r2), PRMSE \(v.augmented)")
        }
        // The three domains led by their own factors add value; those led by the general factor do not.
        #expect(predicted.map { (v: IndexAddedValue) in v.hasAddedValue } == [false, false, false, true, true, true])
        // 95% posterior intervals cover the truth about 95% of the time.
        let rate = Double(coverage) / Double(count)
        #expect(rate > 0.93 && rate < 0.97, "coverage \(rate)")
    }
}

extension Battery {
    /// A bifactor battery's scorer (these tests build bifactor batteries only).
    var scorer: BifactorScorer {
        guard case .bifactor(let s) = model else { preconditionFailure("not a bifactor battery") }
        return s
    }
}
