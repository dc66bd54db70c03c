import Foundation

/// How to draw a simulated item bank. Slopes are log-normal, difficulties normal, guessing Beta; the model
/// decides which apply (Rasch/1PL: a = `commonSlope`, c = 0; 2PL: c = 0).
public struct BankSpecification: Sendable, Hashable, Codable {
    public var model: IRTModel
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
    public static let allowedItemCounts = 1...100_000

    /// Means of log a: [−3, 3] (median slopes e⁻³ ≈ 0.05 to e³ ≈ 20, the calibrator's slope bound).
    public static let allowedSlopeMeanLogs = NumberRange.closed(-3, 3)
    /// SDs of log a: [0, 2]. With SD 2 one slope in a thousand is e^6.6 ≈ 700 times the median already.
    public static let allowedSlopeSDLogs = NumberRange.closed(0, 2)
    /// Common slopes (1PL): (0, 20], the calibrator's slope bound.
    public static let allowedCommonSlopes = NumberRange.aboveUpTo(0, 20)
    /// Mean difficulties: [−10, 10], and their SD [0, 10] (θ-scale units, like the examinees they target).
    public static let allowedDifficultyMeans = NumberRange.closed(-10, 10)
    public static let allowedDifficultySDs = NumberRange.closed(0, 10)
    /// Beta shapes of c: [0.5, 1000]. Below 0.5 the Gamma draws underflow to 0 often enough to give 0/0; 1000
    /// pins c to its mean α/(α + β) already.
    public static let allowedGuessingShapes = NumberRange.closed(0.5, 1000)

    /// Problems with the specification, naming each setting as `naming` says (`--slope-sd-log`).
    package func validationProblems(naming: SettingNaming = .words) -> [String] {
        [Self.allowedItemCounts.problem(itemCount, naming.name("items", words: "the number of items")),
         Self.allowedSlopeMeanLogs.problem(slopeMeanLog, naming.name("slope_mean_log")),
         Self.allowedSlopeSDLogs.problem(slopeSDLog, naming.name("slope_sd_log")),
         Self.allowedCommonSlopes.problem(commonSlope, naming.name("common_slope")),
         Self.allowedDifficultyMeans.problem(difficultyMean, naming.name("difficulty_mean")),
         Self.allowedDifficultySDs.problem(difficultySD, naming.name("difficulty_sd", words: "difficulty SD")),
         Self.allowedGuessingShapes.problem(guessingAlpha, naming.name("guessing_alpha")),
         Self.allowedGuessingShapes.problem(guessingBeta, naming.name("guessing_beta"))].compactMap { $0 }
    }

    /// Item ids `i0001`, `i0002`, … (width grows with the count).
    public func itemID(_ k: Int) -> String {
        let width = max(4, String(itemCount).count)
        let digits = String(k + 1)
        return "i" + String(repeating: "0", count: width - digits.count) + digits
    }

    /// Draws the bank. Deterministic for a given generator state.
    public func draw(using rng: inout some RandomNumberGenerator) -> ItemBank {
        var items: [BankItem] = []
        items.reserveCapacity(itemCount)
        for k in 0..<itemCount {
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
            items.append(BankItem(itemID: itemID(k), model: model, parameters: ItemParameters(discrimination: a, difficulty: b, guessing: c), metadata: metadata))
        }
        return ItemBank(items: items, metadataColumns: domains.isEmpty ? [] : ["domain"])
    }
}

/// Simulates response sessions from a bank: θ ~ N(mean, sd²), then each administered item is answered
/// correctly with probability P(θ). With `itemsPerSession` below the bank size, each session gets that many
/// distinct items drawn uniformly without replacement (missing by design), in random order.
public struct ResponseSimulator: Sendable {
    public var parameters: [ItemParameters]
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

    /// Means of simulated θ: [−10, 10]. θ is in SDs of the calibration population; 10 SDs is IQ 250.
    public static let allowedThetaMeans = NumberRange.closed(-10, 10)
    /// SDs of simulated θ: (0, 10].
    public static let allowedThetaSDs = NumberRange.aboveUpTo(0, 10)
    /// Sessions one run may generate: 1…100,000,000. They are streamed, but each is written out; 10⁸ sessions of
    /// 25 items are about 40 GB of long-layout CSV.
    public static let allowedSessionCounts = 1...100_000_000

    /// Problems with a simulation of `sessions` sessions of `itemsPerSession` items (nil: all) from a bank of
    /// `itemCount` items with θ ~ N(thetaMean, thetaSD²) — checked before `init`, which traps on a bad count.
    package static func validationProblems(itemCount: Int, itemsPerSession: Int?, sessions: Int, thetaMean: Double, thetaSD: Double,
                                          naming: SettingNaming = .words) -> [String] {
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
        /// (item index, 0/1 response) in administration order.
        public var responses: [(item: Int, response: UInt8)]
    }

    /// Generates `count` sessions, calling `body` for each in order (streaming: nothing is kept).
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
        RandomVariate.uniform(using: &rng) < parameters[j].probability(at: theta) ? 1 : 0
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
        return (ResponseMatrix(validatedPersonIDs: ids, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: items, responses: values), thetas)
    }
}
