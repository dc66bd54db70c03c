import Foundation
import Psychometrics

/// One adaptive test in progress: the responses so far, the current θ estimate, and the choice of the next item.
///
/// A `Sendable` value for a process that keeps one per test taker, all sharing one `CATItemPool`. A step is
/// `record(itemID:response:)` (re-estimates θ, by EAP by default, with `AbilityEstimator`) followed by
/// `nextItem(using:)`. A stateless server uses `CATItemPool.nextStep(administered:excluding:exposure:seed:)`
/// instead, which rebuilds the session from the request's history. Caller mistakes (an unknown or repeated
/// item, a response other than 0/1) throw `AssemblyError`; nothing a caller passes traps.
///
/// **Stopping** (checked at the start of `nextItem`, in this order):
/// 1. `se_reached`: length ≥ `min_items`, SE(θ̂) ≤ `se_target`, and every domain has its `min_per_domain`
///    (or no selectable item left);
/// 2. `max_items`: length ≥ `max_items`;
/// 3. `bank_exhausted`: no selectable item is left.
///
/// **Content balancing.** Let n be the length so far, mₐ the items given in domain d, D = Σ max(0, minₐ − mₐ)
/// over domains that still have selectable items, and H the earliest length at which the test could stop:
/// max(`min_items`, n) when the SE target is already met, otherwise `max_items`. While D > 0 and D ≥ H − n (the
/// slots left before the test could stop are all needed for the minima) selection is restricted to the domains
/// below their minimum. Otherwise, with `domain_weights`, the Kingsbury & Zara (1989) rule restricts it to the
/// domain furthest below its target share, argmaxₐ (wₐ − mₐ/n) (n = 0: the largest weight). Otherwise every
/// domain is open.
///
/// **Item criterion.** Maximum Fisher information at θ̂ (Lord 1980), read from the pool's interpolated table;
/// with `a_stratification` = K the test is cut into K stages by length (stage ⌊n·K / max_items⌋, capped at
/// K − 1) and stage s selects from a-stratum s the item with b closest to θ̂ (Chang & Ying 1999).
///
/// **Randomesque** (Kingsbury & Zara 1989): the item is drawn uniformly among the best k by the criterion
/// (`randomesque` = k; fewer when fewer are eligible).
///
/// **Sympson–Hetter** (Sympson & Hetter 1985): a drawn item i is administered with probability Kᵢ (its
/// exposure parameter); otherwise it is barred for the rest of this test and the selection is repeated.
///
/// When the rules leave nothing to choose they are relaxed in this order: drop the stratum, admit items barred
/// by the exposure lottery, drop the domain restriction.
public struct AdaptiveSession: Sendable {
    /// Why a test ended.
    public enum StopReason: String, Sendable, Hashable, Codable, CaseIterable {
        case seReached = "se_reached"
        case maxItems = "max_items"
        case bankExhausted = "bank_exhausted"
    }

    /// The result of `nextItem`: an item to administer (bank position) or the end of the test.
    public enum Step: Sendable, Hashable {
        case administer(Int)
        case stop(StopReason)
    }

    public let pool: CATItemPool
    public let exposure: ExposureParameters?
    /// Administered items (bank positions) and responses, in order.
    public private(set) var items: [Int] = []
    public private(set) var responses: [UInt8] = []
    /// θ̂ and its SE after the responses so far (the prior before any).
    public private(set) var estimate: AbilityEstimate
    /// Items administered per domain (indexed like `pool.bank.domains`).
    public private(set) var domainCounts: [Int]
    /// Set when `nextItem` returned `.stop`; cleared by `record`.
    public private(set) var stopReason: StopReason?

    /// Per item: 0 selectable, 1 barred by the exposure lottery, 2 administered, 3 excluded or not active.
    private var state: [UInt8]
    /// Per domain: items not administered, not excluded and active (lottery-barred ones included).
    private var selectable: [Int]
    /// Scratch: open domains of the current step.
    private var open: [Bool]

    /// A new session on a prepared pool. `exposure` holds Sympson–Hetter parameters (e.g. from
    /// `SympsonHetter.calibrate` or `ExposureParameters.load(csv:bank:)`); nil = no exposure control. Ids in
    /// `excluded` (items the person has seen) are never selected; ids the bank lacks are ignored (a person may
    /// have seen items since retired from the bank).
    /// - Throws: `AssemblyError.invalidExposure` when `exposure` does not hold one parameter per bank item.
    public init(pool: CATItemPool, exposure: ExposureParameters? = nil, excluding excluded: some Sequence<String> = [String]()) throws(AssemblyError)
    {
        if let exposure, exposure.probabilities.count != pool.itemCount {
            throw AssemblyError(
                .invalidExposure, "one exposure parameter per bank item is needed: \(exposure.probabilities.count) given for \(pool.itemCount) items")
        }
        self.init(validatedPool: pool, exposure: exposure, excluding: excluded)
    }

    /// The session of `init(pool:exposure:excluding:)` for an exposure already checked against the pool.
    package init(validatedPool pool: CATItemPool, exposure: ExposureParameters?, excluding excluded: some Sequence<String> = [String]()) {
        self.pool = pool
        self.exposure = exposure
        var state = pool.eligible.map { $0 ? UInt8(0) : 3 }
        var selectable = pool.eligiblePerDomain
        for id in excluded {
            if let j = pool.bank.index(of: id), state[j] == 0 {
                state[j] = 3
                selectable[Int(pool.domainOfItem[j])] -= 1
            }
        }
        self.state = state
        self.selectable = selectable
        domainCounts = [Int](repeating: 0, count: pool.bank.domains.count)
        open = [Bool](repeating: true, count: pool.bank.domains.count)
        estimate = pool.estimator.estimate(UnsafeBufferPointer(start: nil, count: 0), UnsafeBufferPointer(start: nil, count: 0))
        items.reserveCapacity(pool.configuration.maxItems)
        responses.reserveCapacity(pool.configuration.maxItems)
    }

    /// Builds the pool and a session in one call (costly: prefer one `CATItemPool` shared by all sessions).
    /// - Throws: `AssemblyError`: `.invalidConfiguration` as `CATItemPool.init(bank:configuration:)`,
    ///   `.invalidExposure` for exposure parameters not one per bank item.
    public init(
        bank: AssemblyBank, configuration: CATConfiguration, exposure: ExposureParameters? = nil,
        excluding excluded: some Sequence<String> = [String]()
    ) throws {
        try self.init(pool: try CATItemPool(bank: bank, configuration: configuration), exposure: exposure, excluding: excluded)
    }

    /// Records the response (0 or 1; 0 ..< K for an item in K categories) to the item `itemID` and re-estimates θ.
    /// - Throws: `AssemblyError` `.unknownItem` for an id the bank lacks, `.repeatedItem` for an item already
    ///   administered in this session, `.invalidResponse` for a response other than 0 or 1; the session is
    ///   unchanged.
    public mutating func record(itemID: String, response: Int) throws(AssemblyError) {
        guard let item = pool.bank.index(of: itemID) else {
            throw AssemblyError(.unknownItem, "unknown item id \(TextFidelity.quoted(itemID)): the bank has no such item")
        }
        try record(item: item, response: response)
    }

    /// Records the response (0 or 1; 0 ..< K for an item in K categories) to the item at bank position `item` and
    /// re-estimates θ.
    /// - Throws: `AssemblyError` `.unknownItem` for a position outside 0..<itemCount, `.repeatedItem`,
    ///   `.invalidResponse`; the session is unchanged.
    public mutating func record(item: Int, response: Int) throws(AssemblyError) {
        guard item >= 0 && item < pool.itemCount else {
            throw AssemblyError(.unknownItem, "item position \(item) is out of range 0..<\(pool.itemCount)")
        }
        guard state[item] != 2 else {
            throw AssemblyError(
                .repeatedItem,
                "item \(TextFidelity.quoted(pool.bank.items[item].id)) was already administered in this session (position \(items.firstIndex(of: item)! + 1) of \(items.count))"
            )
        }
        let categories = pool.bank.items[item].categoryCount
        guard response >= 0 && response < categories else {
            throw AssemblyError(
                .invalidResponse,
                "the response to item \(TextFidelity.quoted(pool.bank.items[item].id)) is \(response); allowed "
                    + (categories == 2 ? "0 (incorrect) or 1 (correct)" : "0…\(categories - 1) (its categories)"))
        }
        recordUnchecked(item: item, response: UInt8(response))
    }

    /// `record` without the checks, for callers that produced `item` themselves (simulation hot loops).
    /// - Precondition: `item` is a bank position not yet administered; `response` is one of its categories.
    package mutating func recordUnchecked(item: Int, response: UInt8) {
        assert(item >= 0 && item < pool.itemCount && state[item] != 2 && Int(response) < pool.bank.items[item].categoryCount)
        let d = Int(pool.domainOfItem[item])
        if state[item] <= 1 { selectable[d] -= 1 }
        state[item] = 2
        domainCounts[d] += 1
        items.append(item)
        responses.append(response)
        // Positions and responses were checked by `record` (or produced by the simulation).
        estimate = items.withUnsafeBufferPointer { i in responses.withUnsafeBufferPointer { r in pool.estimator.estimate(i, r) } }
        stopReason = nil
    }

    /// Every domain has at least its `min_per_domain` items.
    package var meetsDomainMinimums: Bool {
        for d in domainCounts.indices where domainCounts[d] < pool.minimumPerDomain[d] { return false }
        return true
    }

    /// The SE part of the stopping rule: length ≥ `min_items` and SE ≤ `se_target`.
    package var reachedSETarget: Bool {
        guard let target = pool.configuration.seTarget else { return false }
        return estimate.standardError <= target
    }

    /// The next item to administer, or the reason to stop. Draws from `rng` for the randomesque choice and
    /// the exposure lottery.
    public mutating func nextItem(using rng: inout some RandomNumberGenerator) -> Step {
        nextItem(using: &rng, onSelected: { _ in })
    }

    /// `nextItem`, calling `onSelected(i)` for every item that enters the exposure lottery (Sympson–Hetter
    /// "selected" events, counted by the calibration).
    @inline(__always)
    mutating func nextItem<R: RandomNumberGenerator>(using rng: inout R, onSelected: (Int) -> Void) -> Step {
        if let reason = stopCheck() {
            stopReason = reason
            return .stop(reason)
        }
        let restricted = openDomains()
        let n = items.count
        let stage: Int32 = pool.strata > 1 ? Int32(min(pool.strata - 1, n * pool.strata / pool.configuration.maxItems)) : -1
        while true {
            // Relaxation ladder: (domains restricted, stratum, lottery-barred items admitted).
            var pick: Int? = nil
            var barredAdmitted = false
            for level in 0..<6 {
                let useDomains: Bool, useStratum: Bool, admitBarred: Bool
                switch level {
                case 0: (useDomains, useStratum, admitBarred) = (restricted, stage >= 0, false)
                case 1: (useDomains, useStratum, admitBarred) = (restricted, false, false)
                case 2: (useDomains, useStratum, admitBarred) = (restricted, false, true)
                case 3: (useDomains, useStratum, admitBarred) = (false, stage >= 0, false)
                case 4: (useDomains, useStratum, admitBarred) = (false, false, false)
                default: (useDomains, useStratum, admitBarred) = (false, false, true)
                }
                // Skip rungs identical to an earlier one.
                if !restricted && level <= 2 { continue }
                if stage < 0 && (level == 0 || level == 3) { continue }
                if let j = scan(domains: useDomains, stratum: useStratum ? stage : -1, admitBarred: admitBarred, rng: &rng) {
                    pick = j
                    barredAdmitted = admitBarred
                    break
                }
            }
            guard let j = pick else {
                stopReason = .bankExhausted
                return .stop(.bankExhausted)
            }
            if barredAdmitted { return .administer(j) }
            onSelected(j)
            let k = exposure?.probabilities[j] ?? 1
            if k >= 1 || RandomVariate.uniform(using: &rng) < k { return .administer(j) }
            state[j] = 1
        }
    }

    // MARK: rules

    private func stopCheck() -> StopReason? {
        let n = items.count
        let config = pool.configuration
        if n >= config.minItems && reachedSETarget {
            var contentDone = true
            for d in domainCounts.indices where domainCounts[d] < pool.minimumPerDomain[d] && selectable[d] > 0 { contentDone = false; break }
            if contentDone { return .seReached }
        }
        if n >= config.maxItems { return .maxItems }
        var any = false
        for d in selectable.indices where selectable[d] > 0 { any = true; break }
        return any ? nil : .bankExhausted
    }

    /// Sets `open` for this step; false when every domain is open.
    private mutating func openDomains() -> Bool {
        let n = items.count
        let config = pool.configuration
        var deficit = 0
        for d in domainCounts.indices where selectable[d] > 0 { deficit += max(0, pool.minimumPerDomain[d] - domainCounts[d]) }
        let horizon = reachedSETarget ? max(config.minItems, n) : config.maxItems
        if deficit > 0 && deficit >= horizon - n {
            for d in open.indices { open[d] = selectable[d] > 0 && domainCounts[d] < pool.minimumPerDomain[d] }
            return true
        }
        guard !pool.targetShare.isEmpty else { return false }
        // Kingsbury–Zara: the domain furthest below its target share (ties: first domain).
        var best = -1, bestGap = -Double.infinity
        for d in domainCounts.indices where selectable[d] > 0 && pool.targetShare[d] > 0 {
            let gap = pool.targetShare[d] - (n == 0 ? 0 : Double(domainCounts[d]) / Double(n))
            if gap > bestGap { bestGap = gap; best = d }
        }
        guard best >= 0 else { return false }
        for d in open.indices { open[d] = d == best }
        return true
    }

    /// W of the progressive rule (`CATConfiguration.Selection.progressive`); 1 for maximum information.
    private func progressiveWeight() -> Double {
        let config = pool.configuration
        guard config.selection == .progressive else { return 1 }
        let t = config.progressiveAcceleration
        if let target = config.seTarget {
            let prior = 1 / (pool.estimator.priorSD * pool.estimator.priorSD)
            let needed = 1 / (target * target) - prior
            guard needed > 0 else { return 1 }
            let se = estimate.standardError
            let gathered = se > 0 && se.isFinite ? max(0, 1 / (se * se) - prior) : needed
            return pow(min(1, gathered / needed), t)
        }
        let s = Double(items.count), q = Double(config.maxItems)
        var numerator = 0.0, denominator = 0.0
        for f in stride(from: 1.0, through: q, by: 1) { denominator += pow(f, t); if f <= s { numerator += pow(f, t) } }
        return denominator > 0 ? numerator / denominator : 1
    }

    /// Finds the best `randomesque` candidates under the given restrictions and draws one uniformly.
    private func scan<R: RandomNumberGenerator>(domains useDomains: Bool, stratum: Int32, admitBarred: Bool, rng: inout R) -> Int? {
        let k = pool.configuration.randomesque
        let J = pool.itemCount
        let theta = estimate.theta
        let maxState: UInt8 = admitBarred ? 1 : 0
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: k) { topIndex in
            withUnsafeTemporaryAllocation(of: Double.self, capacity: k) { topValue in
                var found = 0
                // Inserts (j, v) into the descending top-k list.
                @inline(__always) func offer(_ j: Int, _ v: Double) {
                    if found == k && !(v > topValue[k - 1]) { return }
                    var slot = found < k ? found : k - 1
                    if found < k { found += 1 }
                    while slot > 0 && v > topValue[slot - 1] {
                        topValue[slot] = topValue[slot - 1]
                        topIndex[slot] = topIndex[slot - 1]
                        slot -= 1
                    }
                    topValue[slot] = v
                    topIndex[slot] = j
                }
                state.withUnsafeBufferPointer { state in
                    pool.domainOfItem.withUnsafeBufferPointer { domainOf in
                        open.withUnsafeBufferPointer { open in
                            if stratum >= 0 {
                                pool.stratum.withUnsafeBufferPointer { strata in
                                    pool.difficulty.withUnsafeBufferPointer { b in
                                        for j in 0..<J where state[j] <= maxState && strata[j] == stratum && (!useDomains || open[Int(domainOf[j])]) {
                                            offer(j, -abs(b[j] - theta))
                                        }
                                    }
                                }
                            } else {
                                let x = min(max((theta - pool.gridLow) / pool.gridStep, 0), Double(pool.gridCount - 1))
                                let g = min(Int(x), pool.gridCount - 2)
                                let w = x - Double(g)
                                let weight = progressiveWeight()
                                pool.information.withUnsafeBufferPointer { table in
                                    let row0 = table.baseAddress! + g * J, row1 = row0 + J
                                    if weight >= 1 {
                                        for j in 0..<J where state[j] <= maxState && (!useDomains || open[Int(domainOf[j])]) {
                                            offer(j, row0[j] + w * (row1[j] - row0[j]))
                                        }
                                        return
                                    }
                                    // Progressive: H, the largest information among the eligible, then each item's
                                    // (1 − W)·U·H + W·I.
                                    var top = 0.0
                                    for j in 0..<J where state[j] <= maxState && (!useDomains || open[Int(domainOf[j])]) {
                                        top = max(top, row0[j] + w * (row1[j] - row0[j]))
                                    }
                                    for j in 0..<J where state[j] <= maxState && (!useDomains || open[Int(domainOf[j])]) {
                                        let u = Double(rng.next() >> 11) * 0x1p-53
                                        offer(j, (1 - weight) * u * top + weight * (row0[j] + w * (row1[j] - row0[j])))
                                    }
                                }
                            }
                        }
                    }
                }
                if found == 0 { return nil }
                if found == 1 { return topIndex[0] }
                return topIndex[Int(rng.next(upperBound: UInt64(found)))]
            }
        }
    }
}
