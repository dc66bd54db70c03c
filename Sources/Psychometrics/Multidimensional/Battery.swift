import Foundation

/// A domain index of one session: the composite's estimate (`IndexComposite`) and its IQ.
public struct IndexScore: Sendable, Hashable {
    /// The specific factor's name (the domain).
    public var factor: String
    /// The posterior mean of the composite τ_s and its posterior SD.
    public var theta: Double
    public var standardError: Double
    /// The domain's answered items and their number correct.
    public var answered: Int
    public var correct: Int
    /// 100 + 15 τ_s on the calibration population, with the interval, percentile and flags of `IQScale.score`.
    public var score: IQScore
}

/// Which domain indexes a battery's scores carry.
public enum IndexReporting: Sendable, Hashable {
    /// Those that add value over the full-scale score (`IndexAddedValue.hasAddedValue`, Haberman's criterion).
    case addingValue
    case all
    case none
    /// The domains named, in this order.
    case named([String])
}

/// The full-scale and index scores of one session on a battery.
public struct BatteryScore: Sendable, Hashable {
    /// Every factor's estimate (EAP or MAP, `Battery.methods`) with its covariance.
    public var factors: BifactorEstimate
    /// The reported indexes, in `Battery.reportedIndexes` order.
    public var indexes: [IndexScore]
}

/// A battery: a bifactor (or testlet) bank scored to a full-scale θ, the general factor's EAP, and one index
/// per domain, the general-plus-specific composite the domain's items measure (`IndexComposite`), all from one
/// posterior (`BifactorScorer`); or a correlated-factors bank, whose indexes are its factors and whose
/// full-scale θ is their equally weighted composite (`CorrelatedFactorsScorer`). The full-scale θ goes through the caller's IQ scale and norms as a
/// unidimensional θ does; an index's IQ is 100 + 15 τ_s on the calibration population (τ_s is N(0, 1) there by
/// construction) with the same interval level, clamping and low-precision threshold, and is flagged
/// `few_items` only when the session answered none of the domain's items (the index is then the general
/// factor's prediction alone), `perfect_score` / `zero_score` by the domain's items.
public struct Battery: Sendable {
    /// The model a battery scores with.
    package enum Model: Sendable {
        case bifactor(BifactorScorer)
        case correlated(CorrelatedFactorsScorer)
    }

    /// The factors: `generalFactor` names the full-scale score (a bifactor bank's general factor; a correlated
    /// bank's composite), `specificFactors` the index factors.
    public let structure: FactorStructure
    package let model: Model
    /// Per specific factor with items, its composite (in the structure's order).
    public let composites: [IndexComposite]
    /// Which of `composites` a score reports (indices into `composites`).
    public let reportedIndexes: [Int]

    /// - Parameters:
    ///   - items: the bank's items in bank order, their `specific` indexing `structure.specificFactors`.
    ///   - reportedIndexes: the specific factors to report by name; nil: every factor with items.
    ///   - quadraturePoints: points per dimension, `BifactorScorer.allowedPointCounts`.
    /// - Throws: `PsychometricsError` from `BifactorScorer`, or `.invalidOptions` for a reported factor that is not
    ///   one of the structure's factors with items.
    public init(
        items: [BifactorItem], structure: FactorStructure, reportedIndexes: [String]? = nil,
        quadraturePoints: Int = 31, bound: Double = 6
    ) throws(PsychometricsError) {
        let composites = structure.specificFactors.indices.compactMap { IndexComposite(factor: $0, items: items) }
        let scorer = try BifactorScorer(
            items: items, specificFactorCount: structure.specificFactors.count, quadraturePoints: quadraturePoints, bound: bound)
        try self.init(model: .bifactor(scorer), structure: structure, composites: composites, reportedIndexes: reportedIndexes)
    }

    /// A correlated-factors battery: an index per factor with items (the factor itself, composite weights (0, 1)),
    /// the full-scale score the factors' composite (`CorrelatedFactorsScorer`).
    /// - Parameters:
    ///   - factors: the factors' names, in the scorer's order.
    ///   - fullScale: the full-scale composite's name.
    /// - Throws: `.invalidOptions` for names that are not one per factor or repeat, or a reported factor that is
    ///   not one of them with items.
    package init(
        correlated scorer: CorrelatedFactorsScorer, factors: [String], fullScale: String = "full_scale",
        reportedIndexes: [String]? = nil
    ) throws(PsychometricsError) {
        guard factors.count == scorer.factorCount, Set(factors).count == factors.count, !factors.contains(fullScale) else {
            throw PsychometricsError(
                .invalidOptions,
                "the \(scorer.factorCount) factors need distinct names other than \(fullScale), got \(factors.joined(separator: ", ").prefix(200))")
        }
        var structure = try FactorStructure(generalFactor: fullScale, items: [])
        structure.specificFactors = factors
        let used = Set(scorer.itemFactor)
        let composites = factors.indices.filter { used.contains($0) }.map { IndexComposite(factor: $0, generalWeight: 0, specificWeight: 1) }
        try self.init(model: .correlated(scorer), structure: structure, composites: composites, reportedIndexes: reportedIndexes)
    }

    private init(model: Model, structure: FactorStructure, composites: [IndexComposite], reportedIndexes names: [String]?) throws(PsychometricsError)
    {
        self.model = model
        self.structure = structure
        self.composites = composites
        if let names {
            self.reportedIndexes = try Self.resolve(names, composites, structure)
        } else {
            self.reportedIndexes = Array(composites.indices)
        }
    }

    /// The scorer behind `model`.
    package var scoring: any FactorScoring {
        switch model {
        case .bifactor(let s): s
        case .correlated(let s): s
        }
    }

    /// The bank's items.
    public var itemCount: Int { scoring.itemCount }

    /// The grid's points per factor (nil: a correlated bank integrated by quasi–Monte Carlo).
    public var quadraturePoints: Int? {
        switch model {
        case .bifactor(let s): s.grid.count
        case .correlated(let s): s.integration == .productGrid ? s.grid.count : nil
        }
    }

    /// How the posterior is integrated, for summaries: "31×31 points per domain", "21^3 product grid", "4096
    /// quasi–Monte Carlo nodes".
    package var integrationDescription: String {
        switch model {
        case .bifactor(let s): "\(s.grid.count)×\(s.grid.count) points per domain"
        case .correlated(let s) where s.integration == .productGrid: "\(s.grid.count)^\(s.factorCount) product grid"
        case .correlated(let s): "\(s.sampler?.nodeCount ?? 0) adaptive quasi–Monte Carlo nodes per session"
        }
    }

    /// This battery reporting other indexes (names as in `init`).
    /// - Throws: `.invalidOptions` for a name that is not one of the battery's domains.
    public func reporting(_ names: [String]) throws(PsychometricsError) -> Battery {
        try Battery(model: model, structure: structure, composites: composites, reportedIndexes: Self.resolve(names, composites, structure))
    }

    /// This battery reporting the indexes `choice` selects; `.addingValue` decides by `addedValue` (this
    /// battery's `addedValue()`).
    /// - Throws: `.invalidOptions` for a name that is not one of the battery's domains.
    public func reporting(_ choice: IndexReporting, addedValue: [IndexAddedValue]) throws(PsychometricsError) -> Battery {
        switch choice {
        case .addingValue: try reporting(addedValue.filter(\.hasAddedValue).map(\.factor))
        case .all: try reporting(composites.map { structure.specificFactors[$0.factor] })
        case .none: try reporting([])
        case .named(let names): try reporting(names)
        }
    }

    private init(model: Model, structure: FactorStructure, composites: [IndexComposite], reportedIndexes: [Int]) {
        self.model = model
        self.structure = structure
        self.composites = composites
        self.reportedIndexes = reportedIndexes
    }

    /// The composites' positions of the factors `names`, in order, repeats once.
    private static func resolve(_ names: [String], _ composites: [IndexComposite], _ structure: FactorStructure) throws(PsychometricsError) -> [Int] {
        var chosen: [Int] = []
        for name in names {
            guard let c = composites.firstIndex(where: { structure.specificFactors[$0.factor] == name }) else {
                let known = composites.map { structure.specificFactors[$0.factor] }
                throw PsychometricsError(
                    .invalidOptions, "no index \"\(name.prefix(64))\": the battery's domains are \(known.joined(separator: ", "))")
            }
            if !chosen.contains(c) { chosen.append(c) }
        }
        return chosen
    }

    /// The methods a battery is scored by: EAP (the posterior means, `BifactorScorer.eap`) and MAP (the mode,
    /// `BifactorScorer.map`); ML and WLE are not (the factors need their prior on a battery's few items per domain).
    package static let methods: [AbilityMethod] = [.eap, .map]

    /// The names of the reported indexes, in order.
    public var reportedNames: [String] { reportedIndexes.map { structure.specificFactors[composites[$0].factor] } }

    /// Haberman's added value of every index (`IndexAddedValue`) for tests of `formLength` items drawn at random
    /// from the bank (nil: the whole bank as one fixed form).
    /// - Throws: `.invalidOptions` for a form length outside 1…the bank's items.
    public func addedValue(formLength: Int? = nil, simulees: Int = IndexAddedValue.defaultSimulees) throws(PsychometricsError) -> [IndexAddedValue] {
        try IndexAddedValue.evaluate(
            model: scoring, composites: composites, factorNames: structure.specificFactors, formLength: formLength, simulees: simulees)
    }

    /// The most items a bank may have for `--indexes auto` to take it as one fixed form without a form length: a
    /// larger bank is a pool tests are drawn from, and the added value depends on the tests' length.
    package static let maximumFixedFormItems = 200

    /// Scores validated answers (distinct item indices in range, responses 0/1) by `method` (one of `methods`):
    /// every factor's estimate and the
    /// reported indexes on `indexScale` (its norms are ignored: indexes are normed on the calibration population),
    /// or by `indexReport` (the reported index's position in `reportedIndexes` and its estimate: per-index norms,
    /// e.g. age-specific ones, which this module does not know).
    /// - Throws: `PsychometricsError` from `IQScale.score` (an estimate that is not finite), or what `indexReport`
    ///   throws.
    package func score(
        _ itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, method: AbilityMethod,
        indexScale: IQScale, indexReport: ((Int, AbilityEstimate) throws -> IQScore)? = nil
    ) throws -> BatteryScore {
        let scorer = scoring
        let factors = method == .map ? scorer.map(validated: itemIndices, responses) : scorer.eap(validated: itemIndices, responses)
        var indexes: [IndexScore] = []
        indexes.reserveCapacity(reportedIndexes.count)
        for (position, c) in reportedIndexes.enumerated() {
            let composite = composites[c]
            var answered = 0, correct = 0
            for k in 0..<itemIndices.count where scorer.indexFactor(ofItem: itemIndices[k]) == composite.factor {
                answered += 1
                correct += Int(responses[k])
            }
            let (mean, sd) = composite.estimate(factors)
            var estimate = AbilityEstimate(
                theta: mean, standardError: sd, method: method, itemCount: max(answered, 1), correctCount: correct, atBound: false)
            estimate.maximumScore = answered
            var iq = try indexReport.map { try $0(position, estimate) } ?? indexScale.score(estimate)
            if answered == 0 { iq.flags.append(.fewItems); iq.flags.sort() }
            indexes.append(
                IndexScore(
                    factor: structure.specificFactors[composite.factor], theta: mean, standardError: sd,
                    answered: answered, correct: correct, score: iq))
        }
        return BatteryScore(factors: factors, indexes: indexes)
    }

    /// The scale of the indexes: `scale`'s interval level, IQ range and low-precision threshold on the calibration
    /// population, every answered count enough (`few_items` is set by `score` for a domain not answered).
    package static func indexScale(_ scale: IQScale) throws -> IQScale {
        try IQScale(
            norms: .calibrationPopulation, confidenceLevel: scale.confidenceLevel, minimumIQ: scale.minimumIQ,
            maximumIQ: scale.maximumIQ, lowPrecisionSE: scale.lowPrecisionSE, minimumItems: 1)
    }
}
