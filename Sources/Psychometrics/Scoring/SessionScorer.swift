import Foundation

/// Why a session could not be scored. `description` is a sentence a person understands.

/// A scored session: ability estimate, IQ score and per-domain counts.
public struct SessionScore: Sendable, Hashable {
    public var estimate: AbilityEstimate
    public var score: IQScore
    /// Per domain of `SessionScorer.domains`: answered items and their raw score (the number correct of 0/1
    /// items plus the scores of graded and partial-credit items; `AbilityEstimate.correctCount`).
    public var domainAnswered: [Int]
    public var domainCorrect: [Int]
    /// Answered items the bank does not score (status pretest or retired): left out of θ, the IQ and the
    /// domain counts.
    public var unscoredCount: Int
    /// On a battery (`SessionScorer.battery`): the reported domain indexes; empty otherwise.
    public var indexes: [IndexScore] = []

    package init(
        estimate: AbilityEstimate, score: IQScore, domainAnswered: [Int], domainCorrect: [Int], unscoredCount: Int, indexes: [IndexScore] = []
    ) {
        self.estimate = estimate
        self.score = score
        self.domainAnswered = domainAnswered
        self.domainCorrect = domainCorrect
        self.unscoredCount = unscoredCount
        self.indexes = indexes
    }
}

/// Scores sessions against one bank: validation, ability estimation, IQ mapping and per-domain counts.
///
/// Built once and reused; an immutable `Sendable` value, safe to call concurrently from a server.
public struct SessionScorer: Sendable {
    public let bank: ItemBank
    package private(set) var estimator: AbilityEstimator
    public let scale: IQScale
    /// Domains in order of first appearance in the bank (empty when the bank has no `domain` column).
    package let domains: [String]
    /// Per item: index into `domains`, or −1.
    package let itemDomain: [Int]
    package let itemTable: ByteKeyTable
    /// Per item: whether it counts towards θ (`BankItem.isScored`).
    package let itemScored: [Bool]
    /// Whether the bank marks any item not scored (then scores carry an `n_unscored` count).
    package let hasUnscoredItems: Bool
    /// Per item: its number of response categories K (2 for a 0/1 item); responses are 0 ..< K.
    package let itemCategories: [Int]
    /// A battery (a bifactor or testlet bank, items in `bank` order): θ is then the general factor's EAP from the
    /// battery's posterior, and every score carries the battery's reported indexes (`Battery`). Nil: the bank's
    /// unidimensional model.
    public let battery: Battery?
    /// The indexes' scale (`Battery.indexScale` of `scale`), with a battery.
    package let indexScale: IQScale?

    /// Scores on `bank` honour its latent scale (`ItemBank.latentScale`): a prior not given in `ability` is the
    /// bank's latent distribution, and `scale` is `scale.expressed(on:)` the bank (the calibration population's
    /// norms and the low-precision threshold in population SDs).
    /// - Throws: `PsychometricsError` as `AbilityEstimator.init(parameters:options:latentScale:)`: `.invalidOptions`
    ///   for ability options out of range, `.invalidParameters` for an item it cannot score.
    public init(bank: ItemBank, ability: AbilityOptions = AbilityOptions(), scale: IQScale) throws {
        try self.init(bank: bank, battery: nil, ability: ability, scale: scale)
    }

    /// Scores on a battery: `bank` is its unidimensional view (item ids, metadata and each item's general-factor
    /// marginal, `BifactorItem.generalMarginal`, in the battery's item order), θ and its SE are the general
    /// factor's posterior mean and SD (EAP) or mode with its normal-approximation SD (MAP), as `ability.method`
    /// asks, and the reported indexes come with every score.
    /// - Throws: `PsychometricsError(.invalidOptions)` for ML or WLE, a bank whose items are not the battery's, or
    ///   items in more than two categories.
    public init(battery: Battery, bank: ItemBank, ability: AbilityOptions = AbilityOptions(), scale: IQScale) throws {
        guard Battery.methods.contains(ability.method) else {
            throw PsychometricsError(.invalidOptions, "a battery is scored by EAP or MAP, not \(ability.method.rawValue.uppercased())")
        }
        guard bank.items.count == battery.itemCount, !bank.hasCategoryItems else {
            throw PsychometricsError(.invalidOptions, "the bank's \(bank.items.count) items are not the battery's \(battery.itemCount) 0/1 items")
        }
        try self.init(bank: bank, battery: battery, ability: ability, scale: scale)
    }

    private init(bank: ItemBank, battery: Battery?, ability: AbilityOptions, scale: IQScale) throws {
        // Everything that can throw first, then the stored properties.
        // Items in more than two categories (`BankItem.categoryModel`) go through the models; a 0/1 bank keeps the
        // dichotomous path.
        let estimator =
            bank.hasCategoryItems
            ? try AbilityEstimator(items: bank.items.map(\.responseModel), options: ability, latentScale: bank.latentScale)
            : try AbilityEstimator(parameters: bank.items.map(\.parameters), options: ability, latentScale: bank.latentScale)
        let expressed = scale.expressed(on: bank.latentScale)
        let indexScale: IQScale? = battery == nil ? nil : try Battery.indexScale(expressed)
        self.bank = bank
        self.battery = battery
        self.estimator = estimator
        self.itemCategories = bank.items.map(\.categoryCount)
        self.scale = expressed
        self.indexScale = indexScale
        var domains: [String] = [], domainIndex: [String: Int] = [:], itemDomain: [Int] = []
        let hasDomain = bank.metadataColumns.contains("domain")
        for item in bank.items {
            guard hasDomain, let d = item.metadata["domain"]?.trimmingCharacters(in: .whitespaces), !d.isEmpty else {
                itemDomain.append(-1)
                continue
            }
            if domainIndex[d] == nil { domainIndex[d] = domains.count; domains.append(d) }
            itemDomain.append(domainIndex[d]!)
        }
        self.domains = domains
        self.itemDomain = itemDomain
        self.itemTable = ByteKeyTable(bank.items.map(\.itemID))
        self.itemScored = bank.items.map(\.isScored)
        self.hasUnscoredItems = itemScored.contains(false)
    }

    /// Scores one session given item ids and responses: 0/1, or the category 0 ..< K of an item in more than two
    /// categories (a server's entry point).
    /// - Throws: `PsychometricsError` for an unknown item, a response outside the item's categories, an item
    ///   answered twice, or no responses.
    public func score(itemIDs: [String], responses: [Int]) throws -> SessionScore {
        try checkCounts(itemIDs: itemIDs, responses: responses)
        let n = itemIDs.count
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { indices in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: n) { values in
                try validate(itemIDs: itemIDs, responses: responses, into: indices)
                for k in 0..<n { values[k] = UInt8(responses[k]) }
                return try score(UnsafeBufferPointer(indices), UnsafeBufferPointer(values))
            }
        }
    }

    /// The bank indices of a session's items, checked as `score(itemIDs:responses:)` checks them: the one check of
    /// a session's items, which the server uses too (its problems point at `PsychometricsError.position`).
    /// - Throws: `PsychometricsError` for an unknown item, a response outside the item's categories, an item
    ///   answered twice (each with the item's `position`), ids and responses of different lengths, or no
    ///   responses.
    package func validatedIndices(itemIDs: [String], responses: [Int]) throws(PsychometricsError) -> [Int] {
        try checkCounts(itemIDs: itemIDs, responses: responses)
        var indices = [Int](repeating: 0, count: itemIDs.count)
        try indices.withUnsafeMutableBufferPointer { (buffer) throws(PsychometricsError) in
            try validate(itemIDs: itemIDs, responses: responses, into: buffer)
        }
        return indices
    }

    private func checkCounts(itemIDs: [String], responses: [Int]) throws(PsychometricsError) {
        guard itemIDs.count == responses.count else {
            throw PsychometricsError(.lengthMismatch, "\(itemIDs.count) item ids but \(responses.count) responses")
        }
        guard !itemIDs.isEmpty else { throw PsychometricsError(.noResponses, "the session has no responses") }
    }

    /// Each item's bank index into `indices` (room for one per item), checking ids, responses and repeats; no heap
    /// allocation for test-sized sessions (a set only beyond 64 items).
    private func validate(itemIDs: [String], responses: [Int], into indices: UnsafeMutableBufferPointer<Int>) throws(PsychometricsError) {
        let n = itemIDs.count
        // Repeats: a scan of the earlier indices for test-sized sessions, a set beyond.
        var seen = n > 64 ? Set<Int>(minimumCapacity: n) : []
        for k in 0..<n {
            let id = itemIDs[k], u = responses[k]
            guard let j = itemTable.index(of: id) else {
                throw PsychometricsError(.unknownItem, "unknown item id \(TextFidelity.quoted(id)) (not in the bank)", position: k)
            }
            guard u >= 0 && u < itemCategories[j] else {
                throw PsychometricsError(
                    .invalidResponse,
                    "a response to item \(TextFidelity.quoted(id)) must be "
                        + (itemCategories[j] == 2 ? "0 or 1" : "one of its categories 0…\(itemCategories[j] - 1)") + "; got \(u)", position: k)
            }
            let repeated = n > 64 ? !seen.insert(j).inserted : (0..<k).contains { indices[$0] == j }
            guard !repeated else {
                let first = (0..<k).first { indices[$0] == j }!
                throw PsychometricsError(
                    .repeatedItem, "item \(TextFidelity.quoted(id)) answered twice (items \(first + 1) and \(k + 1) of the session)", position: k)
            }
            indices[k] = j
        }
    }

    /// Scores validated bank indices (distinct, in range) and responses within their items' categories: the batch
    /// path, unchecked, for the
    /// package's own callers (public callers use `score(itemIDs:responses:)`).
    /// - Throws: `PsychometricsError` when no responses, or the estimate cannot be reported.
    package func score(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) throws -> SessionScore {
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: max(2 * domains.count, 1)) { counts in
            let (estimate, iq, unscored, indexes) = try score(items, responses, domainCounts: counts.baseAddress!)
            let n = domains.count
            return SessionScore(
                estimate: estimate, score: iq, domainAnswered: (0..<n).map { counts[2 * $0] },
                domainCorrect: (0..<n).map { counts[2 * $0 + 1] }, unscoredCount: unscored, indexes: indexes)
        }
    }

    /// `score` without allocating: per domain d, answered and correct counts go to `domainCounts[2d]` and
    /// `domainCounts[2d + 1]` (room for 2 × `domains.count`). Items the bank does not score are left out of
    /// everything but the returned count.
    package func score(
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>,
        domainCounts: UnsafeMutablePointer<Int>
    ) throws -> (AbilityEstimate, IQScore, unscored: Int, indexes: [IndexScore]) {
        try score(items, responses, domainCounts: domainCounts, report: nil)
    }

    /// `score(_:_:domainCounts:)` with the estimate reported by `report` instead of `scale` (e.g. age-specific
    /// norms, which this module does not know); nil: `scale.score`. On a battery, `indexReport` reports each
    /// reported index (its position in `Battery.reportedIndexes`) instead of `indexScale`. An error either throws is
    /// the session's `.unscorable` reason, as `scale`'s is.
    ///
    /// `prior`: the session's own prior for θ under EAP and MAP (`AbilityEstimator.estimate(_:_:prior:)`; nil: the
    /// estimator's). On a battery it is not used: the factors keep the battery's prior.
    package func score(
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>,
        domainCounts: UnsafeMutablePointer<Int>, report: ((AbilityEstimate) throws -> IQScore)?,
        indexReport: ((Int, AbilityEstimate) throws -> IQScore)? = nil,
        prior: (mean: Double, sd: Double)? = nil
    ) throws -> (AbilityEstimate, IQScore, unscored: Int, indexes: [IndexScore]) {
        guard items.count > 0 else { throw PsychometricsError(.noResponses, "the session has no responses") }
        guard hasUnscoredItems else {
            let (estimate, iq, indexes) = try scoreAll(
                items, responses, domainCounts: domainCounts, report: report, indexReport: indexReport, prior: prior)
            return (estimate, iq, 0, indexes)
        }
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: items.count) { kept in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: items.count) { keptResponses in
                var n = 0
                for k in 0..<items.count where itemScored[items[k]] {
                    kept[n] = items[k]
                    keptResponses[n] = responses[k]
                    n += 1
                }
                let unscored = items.count - n
                guard n > 0 else {
                    throw PsychometricsError(.unscorable, "the session answered only items the bank does not score (\(unscored) pretest or retired)")
                }
                let (estimate, iq, indexes) = try scoreAll(
                    UnsafeBufferPointer(rebasing: kept[0..<n]), UnsafeBufferPointer(rebasing: keptResponses[0..<n]),
                    domainCounts: domainCounts, report: report, indexReport: indexReport, prior: prior)
                return (estimate, iq, unscored, indexes)
            }
        }
    }

    /// θ, IQ and domain counts from items that are all scored.
    private func scoreAll(
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>,
        domainCounts: UnsafeMutablePointer<Int>,
        report: ((AbilityEstimate) throws -> IQScore)?,
        indexReport: ((Int, AbilityEstimate) throws -> IQScore)?,
        prior: (mean: Double, sd: Double)?
    ) throws -> (AbilityEstimate, IQScore, [IndexScore]) {
        let estimate: AbilityEstimate, iq: IQScore
        var indexes: [IndexScore] = []
        do {
            if let battery, let indexScale {
                let method = estimator.options.method
                let scores = try battery.score(items, responses, method: method, indexScale: indexScale, indexReport: indexReport)
                var correct = 0
                for k in 0..<responses.count { correct += Int(responses[k]) }
                estimate = AbilityEstimate(
                    theta: scores.factors.means[0], standardError: scores.factors.standardErrors[0], method: method,
                    itemCount: items.count, correctCount: correct, atBound: false)
                indexes = scores.indexes
            } else {
                estimate = estimator.estimate(items, responses, prior: prior)
            }
            iq = try report?(estimate) ?? scale.score(estimate)
        } catch let error as PsychometricsError {
            throw PsychometricsError(.unscorable, "cannot report a score: \(error.message)")
        }
        if !domains.isEmpty {
            domainCounts.initialize(repeating: 0, count: 2 * domains.count)
            itemDomain.withUnsafeBufferPointer { itemDomain in
                for k in 0..<items.count {
                    let d = itemDomain[items[k]]
                    if d >= 0 { domainCounts[2 * d] += 1; domainCounts[2 * d + 1] += estimator.points(item: items[k], response: Int(responses[k])) }
                }
            }
        }
        return (estimate, iq, indexes)
    }
}
