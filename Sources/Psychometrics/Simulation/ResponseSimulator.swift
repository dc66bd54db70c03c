import Foundation

/// How to draw a simulated item bank. Slopes are log-normal, difficulties normal, guessing Beta; the model
/// decides which apply (Rasch/1PL: a = `commonSlope`, c = 0; 2PL: c = 0).
///
/// With `categoryModel`, items are scored in `categories` (K) categories; per item a (log-normal; 1 for pcm) and a
/// location β ~ N(difficultyMean, difficultySD²) are drawn as for 0/1 items, then K − 1 offsets δ ~ N(0, 1),
/// sorted:
/// - graded, gpcm, pcm: thresholds (steps) b_k = β + δ_(k);
/// - rsm: a = 1 and steps b_k = β + τ_k, the thresholds τ (K − 1 standard normals, sorted and centred) drawn once
///   for the bank, before its items;
/// - nominal: slopes a_k = a·k/(K − 1) + N(0, 0.2²) for 0 < k < K − 1 (a_0 = 0, a_(K−1) = a) and intercepts
///   c_k = −a·Σ_{v≤k} b_v/(K − 1) (c_0 = 0): the gpcm with scoring k/(K − 1) and its middle slopes shaken.
public struct BankSpecification: Sendable, Hashable, Codable {
    public var model: IRTModel
    /// Items in more than two categories under this model (nil: 0/1 items under `model`).
    public var categoryModel: ItemModelKind?
    /// Categories per item with `categoryModel`, in `allowedCategoryCounts`.
    public var categories = 4
    public var itemCount: Int
    /// Domains assigned in turn (item k gets domains[k % count]); empty = no domain column.
    public var domains: [String]
    public var slopeMeanLog = 0.0
    public var slopeSDLog = 0.3
    public var commonSlope = 1.0
    public var difficultyMean = 0.0
    public var difficultySD = 1.0
    public var guessingAlpha = 5.0
    public var guessingBeta = 17.0

    public init(model: IRTModel, itemCount: Int, domains: [String] = []) {
        self.model = model
        self.itemCount = itemCount
        self.domains = domains
    }

    /// Bank sizes a specification may ask for: 1…100,000 items. The bank is drawn and written whole, and a
    /// wide response file has a column per item; operational banks have hundreds to a few thousand items.
    package static let allowedItemCounts = 1...100_000

    /// Means of log a: [−3, 3] (median slopes e⁻³ ≈ 0.05 to e³ ≈ 20, the calibrator's slope bound).
    package static let allowedSlopeMeanLogs = NumberRange.closed(-3, 3)
    /// SDs of log a: [0, 2]. With SD 2 one slope in a thousand is e^6.6 ≈ 700 times the median already.
    package static let allowedSlopeSDLogs = NumberRange.closed(0, 2)
    /// Common slopes (1PL): (0, 20], the calibrator's slope bound.
    package static let allowedCommonSlopes = NumberRange.aboveUpTo(0, 20)
    /// Mean difficulties: [−10, 10], and their SD [0, 10] (θ-scale units, like the examinees they target).
    package static let allowedDifficultyMeans = NumberRange.closed(-10, 10)
    package static let allowedDifficultySDs = NumberRange.closed(0, 10)
    /// Beta shapes of c: [0.5, 1000]. Below 0.5 the Gamma draws underflow to 0 often enough to give 0/0; 1000
    /// pins c to its mean α/(α + β) already.
    package static let allowedGuessingShapes = NumberRange.closed(0.5, 1000)
    /// Categories per item: 2…10 (rating scales and partial-credit tasks rarely have more).
    package static let allowedCategoryCounts = 2...10

    /// Problems with the specification, naming each setting as `naming` says (`--slope-sd-log`).
    package func validationProblems(naming: SettingNaming = .words) -> [String] {
        [
            Self.allowedItemCounts.problem(itemCount, naming.name("items", words: "the number of items")),
            Self.allowedSlopeMeanLogs.problem(slopeMeanLog, naming.name("slope_mean_log")),
            Self.allowedSlopeSDLogs.problem(slopeSDLog, naming.name("slope_sd_log")),
            Self.allowedCommonSlopes.problem(commonSlope, naming.name("common_slope")),
            Self.allowedDifficultyMeans.problem(difficultyMean, naming.name("difficulty_mean")),
            Self.allowedDifficultySDs.problem(difficultySD, naming.name("difficulty_sd", words: "difficulty SD")),
            Self.allowedGuessingShapes.problem(guessingAlpha, naming.name("guessing_alpha")),
            Self.allowedGuessingShapes.problem(guessingBeta, naming.name("guessing_beta")),
            categoryModel == nil ? nil : Self.allowedCategoryCounts.problem(categories, naming.name("categories"))
        ].compactMap { $0 }
    }

    /// Item ids `i0001`, `i0002`, … (width grows with the count).
    package func itemID(_ k: Int) -> String {
        let width = max(4, String(itemCount).count)
        let digits = String(k + 1)
        return "i" + String(repeating: "0", count: width - digits.count) + digits
    }

    /// Draws the bank. Deterministic for a given generator state.
    public func draw(using rng: inout some RandomNumberGenerator) -> ItemBank {
        var items: [BankItem] = []
        items.reserveCapacity(itemCount)
        // A rating scale's thresholds are the scale's: drawn once (standard normals, sorted and centred).
        var scale: [Double] = []
        if categoryModel == .ratingScale {
            scale = (1..<categories).map { _ in RandomVariate.normal(mean: 0, sd: 1, using: &rng) }.sorted()
            let mean = scale.reduce(0, +) / Double(scale.count)
            scale = scale.map { $0 - mean }
        }
        for k in 0..<itemCount {
            if let kind = categoryModel {
                var item = BankItem(
                    itemID: itemID(k), model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0),
                    metadata: domains.isEmpty ? [:] : ["domain": domains[k % domains.count]])
                item.categoryModel = drawCategoryItem(kind, scale: scale, using: &rng)
                items.append(item)
                continue
            }
            let a: Double
            switch model {
            case .rasch: a = 1
            case .onePL: a = commonSlope
            case .twoPL, .threePL: a = exp(RandomVariate.normal(mean: slopeMeanLog, sd: slopeSDLog, using: &rng))
            }
            let b = RandomVariate.normal(mean: difficultyMean, sd: difficultySD, using: &rng)
            let c = model == .threePL ? RandomVariate.beta(guessingAlpha, guessingBeta, using: &rng) : 0
            var metadata: [String: String] = [:]
            if !domains.isEmpty { metadata["domain"] = domains[k % domains.count] }
            items.append(
                BankItem(
                    itemID: itemID(k), model: model, parameters: ItemParameters(discrimination: a, difficulty: b, guessing: c), metadata: metadata))
        }
        return ItemBank(items: items, metadataColumns: domains.isEmpty ? [] : ["domain"])
    }

    /// One item of `kind` in `categories` categories, as the type's documentation says.
    private func drawCategoryItem(_ kind: ItemModelKind, scale: [Double], using rng: inout some RandomNumberGenerator) -> CategoryBankItem {
        if kind == .ratingScale {
            let location = RandomVariate.normal(mean: difficultyMean, sd: difficultySD, using: &rng)
            return try! CategoryBankItem(kind: kind, values: [1] + scale.map { location + $0 })
        }
        let a = kind == .partialCredit ? 1 : exp(RandomVariate.normal(mean: slopeMeanLog, sd: slopeSDLog, using: &rng))
        let beta = RandomVariate.normal(mean: difficultyMean, sd: difficultySD, using: &rng)
        let k = categories
        let b = (1..<k).map { _ in beta + RandomVariate.normal(mean: 0, sd: 1, using: &rng) }.sorted()
        let values: [Double]
        if kind == .nominal {
            var slopes = (0..<k).map { a * Double($0) / Double(k - 1) }
            for c in 1..<max(1, k - 1) { slopes[c] += RandomVariate.normal(mean: 0, sd: 0.2, using: &rng) }
            var intercepts = [0.0], total = 0.0
            for v in 0..<(k - 1) { total += b[v]; intercepts.append(-a * total / Double(k - 1)) }
            values = slopes + intercepts
        } else {
            values = [a] + b
        }
        // The draws are finite and the thresholds sorted (ties have probability 0), so the item is valid.
        return try! CategoryBankItem(kind: kind, values: values)
    }
}

/// Simulates response sessions from a bank: θ ~ N(mean, sd²), then each administered item is answered
/// correctly with probability P(θ). With `itemsPerSession` below the bank size, each session gets that many
/// distinct items drawn uniformly without replacement (missing by design), in random order.
public struct ResponseSimulator: Sendable {
    public var parameters: [ItemParameters]
    /// Per item, its model when it is scored in more than two categories (empty: every item is 0/1): such an
    /// item's response is drawn from its category probabilities (`CategoryResponseSimulator`).
    public var categoryModels: [(any ItemResponseModel)?] = []
    public var itemsPerSession: Int
    public var thetaMean = 0.0
    public var thetaSD = 1.0

    public init(parameters: [ItemParameters], itemsPerSession: Int? = nil) {
        precondition(!parameters.isEmpty, "the bank is empty")
        let k = itemsPerSession ?? parameters.count
        precondition(k >= 1 && k <= parameters.count, "items per session must be 1…\(parameters.count), got \(k)")
        self.parameters = parameters
        self.itemsPerSession = k
    }

    /// Sessions from a bank of any items (0/1 beside graded, partial-credit and nominal ones).
    public init(bank: ItemBank, itemsPerSession: Int? = nil) {
        self.init(parameters: bank.items.map(\.parameters), itemsPerSession: itemsPerSession)
        if bank.hasCategoryItems { categoryModels = bank.items.map { $0.categoryModel?.model } }
    }

    /// Means of simulated θ: [−10, 10]. θ is in SDs of the calibration population; 10 SDs is IQ 250.
    package static let allowedThetaMeans = NumberRange.closed(-10, 10)
    /// SDs of simulated θ: (0, 10].
    package static let allowedThetaSDs = NumberRange.aboveUpTo(0, 10)
    /// Sessions one run may generate: 1…100,000,000. They are streamed, but each is written out; 10⁸ sessions of
    /// 25 items are about 40 GB of long-layout CSV.
    package static let allowedSessionCounts = 1...100_000_000

    /// Problems with a simulation of `sessions` sessions of `itemsPerSession` items (nil: all) from a bank of
    /// `itemCount` items with θ ~ N(thetaMean, thetaSD²) — checked before `init`, which traps on a bad count.
    package static func validationProblems(
        itemCount: Int, itemsPerSession: Int?, sessions: Int, thetaMean: Double, thetaSD: Double,
        naming: SettingNaming = .words
    ) -> [String] {
        var problems: [String] = []
        if let k = itemsPerSession, let p = (1...max(itemCount, 1)).problem(k, naming.name("items_per_session")) { problems.append(p) }
        if let p = allowedSessionCounts.problem(sessions, naming.name("persons", words: "the number of sessions")) { problems.append(p) }
        if let p = allowedThetaMeans.problem(thetaMean, naming.name("theta_mean", words: "θ mean")) { problems.append(p) }
        if let p = allowedThetaSDs.problem(thetaSD, naming.name("theta_sd", words: "θ SD")) { problems.append(p) }
        return problems
    }

    /// One simulated session.
    public struct Session: Sendable {
        public var theta: Double
        /// (item index, response: 0/1, or the category) in administration order.
        public var responses: [(item: Int, response: UInt8)]
    }

    /// Generates `count` sessions, calling `body` for each in order (streaming: nothing is kept).
    /// - Throws: what `body` throws (rethrows); generation itself does not throw.
    public func generate(count: Int, using rng: inout some RandomNumberGenerator, _ body: (Session) throws -> Void) rethrows {
        let J = parameters.count
        var order = Array(0..<J)
        var session = Session(theta: 0, responses: [])
        session.responses.reserveCapacity(itemsPerSession)
        for _ in 0..<count {
            session.theta = RandomVariate.normal(mean: thetaMean, sd: thetaSD, using: &rng)
            session.responses.removeAll(keepingCapacity: true)
            if itemsPerSession == J {
                for j in 0..<J { session.responses.append((j, draw(j, session.theta, &rng))) }
            } else {
                // Partial Fisher–Yates: the first k slots become a uniform sample without replacement.
                for slot in 0..<itemsPerSession {
                    let pick = slot + Int(rng.next(upperBound: UInt64(J - slot)))
                    order.swapAt(slot, pick)
                    let j = order[slot]
                    session.responses.append((j, draw(j, session.theta, &rng)))
                }
            }
            try body(session)
        }
    }

    @inline(__always) private func draw(_ j: Int, _ theta: Double, _ rng: inout some RandomNumberGenerator) -> UInt8 {
        if !categoryModels.isEmpty, let model = categoryModels[j] {
            return CategoryResponseSimulator.response(to: model, at: theta, uniform: RandomVariate.uniform(using: &rng))
        }
        return RandomVariate.uniform(using: &rng) < parameters[j].probability(at: theta) ? 1 : 0
    }

    /// Convenience for tests: the sessions as a `ResponseMatrix` plus the true θs.
    public func matrix(count: Int, itemIDs: [String], using rng: inout some RandomNumberGenerator) -> (ResponseMatrix, [Double]) {
        var offsets = [0], items: [Int32] = [], values: [UInt8] = [], thetas: [Double] = []
        generate(count: count, using: &rng) { session in
            thetas.append(session.theta)
            for (j, u) in session.responses.sorted(by: { $0.item < $1.item }) {
                items.append(Int32(j))
                values.append(u)
            }
            offsets.append(items.count)
        }
        let ids = (1...max(count, 1)).prefix(count).map { "s\($0)" }
        let counts = categoryModels.isEmpty ? nil : categoryModels.map { $0?.categoryCount ?? 2 }
        return (
            ResponseMatrix(
                validatedPersonIDs: ids, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: items, responses: values,
                categoryCounts: counts), thetas
        )
    }
}
