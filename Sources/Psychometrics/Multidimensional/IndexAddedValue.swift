import Foundation

/// Whether a domain index adds value over the full-scale score (Haberman 2008, "When can subscores have value?",
/// *Journal of Educational and Behavioral Statistics* 33; the model-based form of Haberman & Sinharay 2010,
/// "Reporting of subscores using multidimensional item response theory", *Psychometrika* 75): by the proportional
/// reduction in mean squared error (PRMSE) with which the true index τ_s (`IndexComposite`) is predicted
/// ```
/// PRMSE_sub   = 1 − E Var(τ_s | the domain's answers) / Var τ_s      (from the domain's items alone: the subscore)
/// PRMSE_total = Corr²(τ_s, E[θ_g | all answers])                     (linearly from the full-scale score)
/// PRMSE_aug   = 1 − E Var(τ_s | all answers) / Var τ_s                (the augmented index iqscore reports)
/// ```
/// (each on the test a simulee takes: the whole pool as a fixed form, or a random test of `formLength` items)
/// the index has added value when PRMSE_sub > PRMSE_total (Haberman's criterion: the domain's own score predicts
/// the domain's true score better than the total does; Sinharay, Puhan & Haberman 2011 apply it to augmented
/// subscores). Var τ_s = 1 by construction. The expectations are over the model's population: `simulees` persons
/// drawn θ ~ N(0, I) (a correlated-factors bank: N(0, R), its indexes the factors themselves and the full-scale
/// score their composite, `CorrelatedFactorsScorer`) answering every item of the form (common random numbers for the three PRMSEs), so each is
/// a Monte Carlo estimate with standard error about (1 − PRMSE)·√(2/simulees) for the posterior-variance ones and
/// 2·√PRMSE·(1 − PRMSE)/√simulees for the correlation; they are reported with the latter, the larger. Seeded:
/// the same form, seed and count give the same numbers.
public struct IndexAddedValue: Sendable, Hashable, Codable {
    public var factor: String
    /// The domain's items in the pool tests are drawn from.
    public var items: Int
    /// Items per test (the pool's size for a fixed form).
    public var formLength: Int
    public var subscore: Double
    public var total: Double
    public var augmented: Double
    /// The Monte Carlo standard error of `total` (the largest of the three).
    public var monteCarloError: Double
    /// Haberman's criterion: PRMSE_sub > PRMSE_total.
    public var hasAddedValue: Bool { subscore > total }

    /// The simulees drawn by default.
    public static let defaultSimulees = 4000

    /// The three PRMSEs of every index whose domain has items in `pool` (indices into `scorer.items`; nil: every
    /// item), in the order of `composites`: every simulee answers the whole pool (a fixed form), or, with
    /// `formLength`, a test of that many items drawn at random from it (as tests drawn from a large bank are; a
    /// simulee whose test has none of a domain's items predicts its index from the other items alone).
    /// - Parameters:
    ///   - factorNames: the specific factors' names, indexed by `IndexComposite.factor`.
    ///   - pool: the items tests are made of (repeats count once).
    ///   - formLength: items per test, 1…pool size; nil: the whole pool.
    /// - Throws: `PsychometricsError(.unknownItem)` for a pool index outside the items, `.invalidOptions` for a
    ///   composite whose factor has no name, a form length outside the pool or fewer than 2 simulees.
    package static func evaluate(
        scorer: BifactorScorer, composites: [IndexComposite], factorNames: [String], pool: [Int]? = nil, formLength: Int? = nil,
        simulees: Int = defaultSimulees, seed: UInt64 = 20080601
    ) throws(PsychometricsError) -> [IndexAddedValue] {
        try evaluate(
            model: scorer, composites: composites, factorNames: factorNames, pool: pool, formLength: formLength, simulees: simulees, seed: seed)
    }

    /// `evaluate` on any battery model: a bifactor bank's (`BifactorScorer`) or a correlated-factors bank's
    /// (`CorrelatedFactorsScorer`, whose indexes are its factors and whose full-scale score is their composite).
    package static func evaluate(
        model scorer: some FactorScoring, composites: [IndexComposite], factorNames: [String], pool: [Int]? = nil,
        formLength: Int? = nil, simulees: Int = defaultSimulees, seed: UInt64 = 20080601
    ) throws(PsychometricsError) -> [IndexAddedValue] {
        let itemCount = scorer.itemCount
        if let bad = pool?.first(where: { !(0..<itemCount).contains($0) }) {
            throw PsychometricsError(.unknownItem, "pool item index \(bad) is outside 0…\(itemCount - 1)")
        }
        if let c = composites.first(where: { !factorNames.indices.contains($0.factor) || $0.factor >= scorer.indexFactorCount }) {
            throw PsychometricsError(.invalidOptions, "composite of factor \(c.factor): no such specific factor")
        }
        guard simulees >= 2 else { throw PsychometricsError(.invalidOptions, "at least 2 simulees are needed, got \(simulees)") }
        let pool = Array(Set(pool ?? Array(0..<itemCount))).sorted()
        let length = formLength ?? pool.count
        guard (1...max(1, pool.count)).contains(length) else {
            throw PsychometricsError(.invalidOptions, "a test of \(length) items cannot be drawn from \(pool.count)")
        }
        let used = composites.indices.filter { c in pool.contains { scorer.indexFactor(ofItem: $0) == composites[c].factor } }
        guard !used.isEmpty else { return [] }
        var rng = SeededGenerator(seed: seed)
        var subVariance = [Double](repeating: 0, count: composites.count), augVariance = subVariance
        var sumT = subVariance, sumTT = subVariance, sumTG = subVariance, sumG = 0.0, sumGG = 0.0
        var order = pool, form = [Int](), answers = [UInt8](), domainItems = [Int](), domainAnswers = [UInt8]()
        for _ in 0..<simulees {
            let theta = scorer.drawPerson(using: &rng)
            if length < pool.count {
                // Partial Fisher–Yates: the first `length` slots become a uniform sample without replacement.
                for slot in 0..<length { order.swapAt(slot, slot + Int(rng.next(upperBound: UInt64(pool.count - slot)))) }
                form = order.prefix(length).sorted()
            } else {
                form = pool
            }
            answers.removeAll(keepingCapacity: true)
            for j in form {
                answers.append(RandomVariate.uniform(using: &rng) < scorer.probability(item: j, person: theta) ? 1 : 0)
            }
            let all = form.withUnsafeBufferPointer { i in answers.withUnsafeBufferPointer { u in scorer.eap(validated: i, u) } }
            let g = all.means[0]
            sumG += g; sumGG += g * g
            for c in used {
                let composite = composites[c]
                let truth = composite.generalWeight * theta[0] + composite.specificWeight * theta[composite.factor + 1]
                augVariance[c] += pow(composite.estimate(all).sd, 2)
                sumT[c] += truth; sumTT[c] += truth * truth; sumTG[c] += truth * g
                domainItems.removeAll(keepingCapacity: true)
                domainAnswers.removeAll(keepingCapacity: true)
                for (k, j) in form.enumerated() where scorer.indexFactor(ofItem: j) == composite.factor {
                    domainItems.append(j)
                    domainAnswers.append(answers[k])
                }
                let sub = domainItems.withUnsafeBufferPointer { i in domainAnswers.withUnsafeBufferPointer { u in scorer.eap(validated: i, u) } }
                subVariance[c] += pow(composite.estimate(sub).sd, 2)
            }
        }
        let n = Double(simulees)
        return used.map { c in
            let covariance = sumTG[c] / n - sumT[c] / n * sumG / n
            let varT = sumTT[c] / n - pow(sumT[c] / n, 2), varG = sumGG / n - pow(sumG / n, 2)
            let total = varT > 0 && varG > 0 ? covariance * covariance / (varT * varG) : 0
            return IndexAddedValue(
                factor: factorNames[composites[c].factor], items: pool.filter { scorer.indexFactor(ofItem: $0) == composites[c].factor }.count,
                formLength: length, subscore: 1 - subVariance[c] / n, total: total, augmented: 1 - augVariance[c] / n,
                monteCarloError: 2 * total.squareRoot() * (1 - total) / n.squareRoot())
        }
    }
}
