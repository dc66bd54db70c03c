import Foundation
import Psychometrics

extension FormAssembler {
    /// Assembles one form: feasibility checks, exact allocation, random draw within cells, then a swap search
    /// when enemies, anchors, information targets or overlap limits apply.
    func assembleOne(
        eligible: [Bool], exclusionSummary: [String: Int], earlier: [[Int]], maxShared: Int,
        rng: inout SeededGenerator, options: AssemblyOptions
    ) throws -> AssembledForm {
        let L = blueprint.length
        let D = bank.domains.count
        let hasClasses = !classes.isEmpty
        let C = hasClasses ? classes.count : 1
        func cls(_ k: Int) -> Int { hasClasses ? itemClass[k] : 0 }

        // Supply per cell, domain, class.
        var cells = [[Int]](repeating: [], count: D * C)
        for k in 0..<bank.items.count where eligible[k] && cls(k) >= 0 {
            cells[bank.domainIndex[k] * C + cls(k)].append(k)
        }
        let domainSupply = (0..<D).map { d in (0..<C).reduce(0) { $0 + cells[d * C + $1].count } }
        let classSupply = (0..<C).map { c in (0..<D).reduce(0) { $0 + cells[$1 * C + c].count } }
        let domainDemand: [Int]? = domainCounts.map { counts in bank.domains.map { counts[$0] ?? 0 } }
        let classDemand: [Int] = hasClasses ? classes.map { blueprint.difficultyCounts![$0]! } : [L]

        // Marginal feasibility, each shortfall named.
        var problems: [String] = []
        let totalEligible = domainSupply.reduce(0, +)
        if totalEligible < L {
            let why = exclusionSummary.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            problems.append(
                "the form needs \(L) items; the bank has \(totalEligible) eligible" + (hasClasses ? " in the difficulty classes" : "")
                    + (why.isEmpty ? "" : " (left out: \(why))"))
        }
        if let demand = domainDemand {
            for d in 0..<D where demand[d] > domainSupply[d] {
                // Why the domain's other items are out: status, exclusion, exposure, difficulty class.
                let inDomain = (0..<bank.items.count).filter { bank.domainIndex[$0] == d }
                let ineligible = inDomain.filter { !eligible[$0] }.count
                let outsideClasses = hasClasses ? inDomain.filter { eligible[$0] && cls($0) < 0 }.count : 0
                var detail = "\(inDomain.count) in the domain"
                if ineligible > 0 { detail += ", \(ineligible) of them excluded, retired, pretest or over-exposed" }
                if outsideClasses > 0 { detail += ", \(outsideClasses) outside the difficulty classes" }
                problems.append(
                    "\(bank.domains[d]) needs \(demand[d]) eligible items" + (hasClasses ? " in the difficulty classes" : "")
                        + "; the bank has \(domainSupply[d]) (\(detail))")
            }
        }
        if hasClasses {
            for c in 0..<C where classDemand[c] > classSupply[c] {
                problems.append("\(describe(class: c)) needs \(classDemand[c]) eligible items; the bank has \(classSupply[c])")
            }
        }
        let anchorsNeeded = blueprint.anchorsPerDomain ?? 0
        if anchorsNeeded > 0 {
            for d in 0..<D where (domainDemand?[d] ?? 1) > 0 {
                let supply = (0..<bank.items.count).filter { eligible[$0] && bank.domainIndex[$0] == d && bank.items[$0].isAnchor }.count
                if supply < anchorsNeeded {
                    problems.append(
                        "\(bank.domains[d]) needs \(anchorsNeeded) anchor item\(anchorsNeeded == 1 ? "" : "s"); the bank has \(supply) eligible")
                }
                if let demand = domainDemand, demand[d] < anchorsNeeded {
                    problems.append("\(bank.domains[d]) has a count of \(demand[d]) but needs \(anchorsNeeded) anchors")
                }
            }
        }
        guard problems.isEmpty else { throw AssemblyError.infeasibleBlueprint(problems) }

        // Exact allocation by maximum flow; a shortfall is explained by the minimum cut.
        let flow = allocate(cells: cells, D: D, C: C, domainDemand: domainDemand, classDemand: classDemand, rng: &rng)
        if flow.total < L {
            throw AssemblyError.infeasibleBlueprint([
                cutExplanation(flow: flow, cells: cells, D: D, C: C, domainDemand: domainDemand!, classDemand: classDemand)
            ])
        }

        // Draw within cells: shuffled; per domain, anchors first until the domain has its anchors; items unused
        // by earlier forms before reused ones; enemies of an item already drawn are skipped; the overlap limit
        // is kept when the cell allows. What cannot be kept is left to the swap search below.
        let earlierSets = earlier.map { Set($0) }
        var shared = [Int](repeating: 0, count: earlier.count)
        var setUsed = [Bool](repeating: false, count: enemySets.count)
        var selection: [Int] = []
        for d in 0..<D {
            var anchorsLeft = anchorsNeeded
            var domainCells = (0..<C).filter { flow.allocation[d * C + $0] > 0 }
            domainCells.shuffle(using: &rng)
            for c in domainCells {
                let cell = d * C + c
                var pool = cells[cell]
                pool.shuffle(using: &rng)
                func rank(_ k: Int) -> Int {
                    let reused = earlierSets.contains { $0.contains(k) } ? 1 : 0
                    let anchor = anchorsLeft > 0 && bank.items[k].isAnchor ? 0 : 2
                    return anchor + reused
                }
                let ranks = pool.map(rank)
                pool = pool.indices.sorted { (ranks[$0], $0) < (ranks[$1], $1) }.map { pool[$0] }
                var taken = 0
                var deferred: [Int] = []
                for k in pool where taken < flow.allocation[cell] {
                    let hits = earlierSets.indices.filter { earlierSets[$0].contains(k) }
                    if hits.contains(where: { shared[$0] >= maxShared }) || enemySetsOfItem[k].contains(where: { setUsed[$0] }) {
                        deferred.append(k)
                        continue
                    }
                    for f in hits { shared[f] += 1 }
                    for g in enemySetsOfItem[k] { setUsed[g] = true }
                    if bank.items[k].isAnchor { anchorsLeft -= 1 }
                    selection.append(k)
                    taken += 1
                }
                for k in deferred where taken < flow.allocation[cell] {
                    for f in earlierSets.indices where earlierSets[f].contains(k) { shared[f] += 1 }
                    for g in enemySetsOfItem[k] { setUsed[g] = true }
                    selection.append(k)
                    taken += 1
                }
            }
        }

        let targets = blueprint.targetInformation ?? []
        var search = SwapSearch(
            assembler: self, eligible: eligible, selection: selection, earlier: earlierSets, maxShared: maxShared,
            domainDemand: domainDemand, classDemand: hasClasses ? classDemand : nil, anchors: anchorsNeeded, targets: targets)
        var method = "exact"
        if search.needsSearch {
            method = "heuristic"
            search.run(rng: &rng)
        }
        return search.form(method: method, reportThetas: options.reportThetas)
    }

    struct Flow {
        var total: Int
        /// Items per (domain, class) cell.
        var allocation: [Int]
        /// Nodes reachable from the source in the final residual graph (for the min cut).
        var reachable: [Bool]
    }

    /// Edmonds–Karp on source → domains → classes → sink, exploring edges in a seeded random order.
    func allocate(cells: [[Int]], D: Int, C: Int, domainDemand: [Int]?, classDemand: [Int], rng: inout SeededGenerator) -> Flow {
        let n = D + C + 2, s = 0, t = n - 1
        var cap = [[Int]](repeating: [Int](repeating: 0, count: n), count: n)
        for d in 0..<D {
            cap[s][1 + d] = domainDemand?[d] ?? cells[(d * C)..<(d * C + C)].reduce(0) { $0 + $1.count }
            for c in 0..<C { cap[1 + d][1 + D + c] = cells[d * C + c].count }
        }
        for c in 0..<C { cap[1 + D + c][t] = classDemand[c] }
        let original = cap
        var total = 0
        var reachable = [Bool](repeating: false, count: n)
        while true {
            var parent = [Int](repeating: -1, count: n)
            parent[s] = s
            var queue = [s], head = 0
            while head < queue.count && parent[t] < 0 {
                let u = queue[head]; head += 1
                var next = Array(0..<n)
                next.shuffle(using: &rng)
                for v in next where parent[v] < 0 && cap[u][v] > 0 {
                    parent[v] = u
                    queue.append(v)
                }
            }
            if parent[t] < 0 {
                for v in 0..<n { reachable[v] = parent[v] >= 0 }
                break
            }
            var bottleneck = Int.max, v = t
            while v != s { bottleneck = min(bottleneck, cap[parent[v]][v]); v = parent[v] }
            v = t
            while v != s { cap[parent[v]][v] -= bottleneck; cap[v][parent[v]] += bottleneck; v = parent[v] }
            total += bottleneck
        }
        var allocation = [Int](repeating: 0, count: D * C)
        for d in 0..<D { for c in 0..<C { allocation[d * C + c] = original[1 + d][1 + D + c] - cap[1 + d][1 + D + c] } }
        return Flow(total: total, allocation: allocation, reachable: reachable)
    }

    /// Explains a flow shortfall from its minimum cut. With Dr, Cr the domains and classes still reachable:
    /// the domains Dr need Σ count(Dr) items, the classes Cr take at most Σ count(Cr), so at least the difference
    /// must come from the other classes — which hold fewer eligible items of those domains.
    func cutExplanation(flow: Flow, cells: [[Int]], D: Int, C: Int, domainDemand: [Int], classDemand: [Int]) -> String {
        let dr = (0..<D).filter { flow.reachable[1 + $0] }
        let cr = (0..<C).filter { flow.reachable[1 + D + $0] }
        let cn = (0..<C).filter { !flow.reachable[1 + D + $0] }
        let need = dr.reduce(0) { $0 + domainDemand[$1] }
        let classRoom = cr.reduce(0) { $0 + classDemand[$1] }
        let supply = dr.reduce(0) { acc, d in acc + cn.reduce(0) { $0 + cells[d * C + $1].count } }
        let domains = dr.map { bank.domains[$0] }.joined(separator: " + ")
        let others = cn.map { describe(class: $0) }.joined(separator: " or ")
        let mustCome = need - classRoom
        var text = "\(domains) need\(dr.count == 1 ? "s" : "") \(need) items"
        if !cr.isEmpty {
            text +=
                ", of which at least \(mustCome) must be \(others) because the counts of \(cr.map { classes[$0] }.joined(separator: " + ")) total \(classRoom)"
        } else {
            text += " that are \(others)"
        }
        return text + "; the bank has \(supply) eligible such items"
    }
}

/// Penalty-driven first-improvement swap search over one form (see `FormAssembler`).
struct SwapSearch {
    let assembler: FormAssembler
    let eligible: [Bool]
    var selection: [Int]
    var selected: [Bool]
    let earlier: [Set<Int>]
    let maxShared: Int
    let domainDemand: [Int]?
    let classDemand: [Int]?
    let anchors: Int
    let targets: [Blueprint.InformationTarget]
    /// Enemy sets (bank groups and blueprint sets) and, per item, the sets it belongs to.
    let enemySets: [[Int]]
    let itemSets: [[Int]]
    /// Item information at the target θs.
    let targetInfo: [[Double]]

    var domainCount: [Int]
    var classCount: [Int]
    var anchorCount: [Int]
    var setCount: [Int]
    var sharedCount: [Int]
    var information: [Double]

    init(
        assembler: FormAssembler, eligible: [Bool], selection: [Int], earlier: [Set<Int>], maxShared: Int,
        domainDemand: [Int]?, classDemand: [Int]?, anchors: Int, targets: [Blueprint.InformationTarget]
    ) {
        self.assembler = assembler
        self.eligible = eligible
        self.selection = selection
        self.earlier = earlier
        self.maxShared = maxShared
        self.domainDemand = domainDemand
        self.classDemand = classDemand
        self.anchors = anchors
        self.targets = targets
        let bank = assembler.bank
        var selected = [Bool](repeating: false, count: bank.items.count)
        for k in selection { selected[k] = true }
        self.selected = selected
        enemySets = assembler.enemySets
        itemSets = assembler.enemySetsOfItem
        targetInfo = assembler.targetInformation
        let sets = enemySets
        domainCount = [Int](repeating: 0, count: bank.domains.count)
        classCount = [Int](repeating: 0, count: max(assembler.classes.count, 1))
        anchorCount = domainCount
        setCount = [Int](repeating: 0, count: sets.count)
        sharedCount = [Int](repeating: 0, count: earlier.count)
        information = [Double](repeating: 0, count: targets.count)
        for k in selection { add(k, 1) }
    }

    /// The exact draw stands unless it breaks a rule (enemies together, missing anchors, overlap) or the
    /// blueprint has information targets to improve.
    var needsSearch: Bool { !targets.isEmpty || penalty().hard > 0 }

    mutating func add(_ k: Int, _ sign: Int) {
        let d = assembler.bank.domainIndex[k]
        domainCount[d] += sign
        if classDemand != nil, assembler.itemClass[k] >= 0 { classCount[assembler.itemClass[k]] += sign }
        if assembler.bank.items[k].isAnchor { anchorCount[d] += sign }
        for g in itemSets[k] { setCount[g] += sign }
        for f in earlier.indices where earlier[f].contains(k) { sharedCount[f] += sign }
        for t in targets.indices { information[t] += Double(sign) * targetInfo[k][t] }
    }

    /// Hard-constraint violations (integer) and the information-target shortfall in [0, T].
    func penalty() -> (hard: Int, soft: Double) {
        var hard = 0
        if let demand = domainDemand { for d in demand.indices { hard += abs(domainCount[d] - demand[d]) } }
        if let demand = classDemand { for c in demand.indices { hard += abs(classCount[c] - demand[c]) } }
        if anchors > 0 {
            for d in domainCount.indices where (domainDemand?[d] ?? 1) > 0 { hard += max(0, anchors - anchorCount[d]) }
        }
        for n in setCount { hard += max(0, n - 1) }
        for n in sharedCount { hard += max(0, n - maxShared) }
        var soft = 0.0
        for (t, target) in targets.enumerated() where target.information > 0 {
            soft += max(0, 1 - information[t] / target.information)
        }
        return (hard, soft)
    }

    /// The penalty after replacing `out` by `j`, from the terms the two items touch (equals `penalty()` after
    /// the swap, without changing any count).
    func penaltyAfterSwap(out: Int, in j: Int, current: (hard: Int, soft: Double)) -> (hard: Int, soft: Double) {
        var hard = current.hard
        let bank = assembler.bank
        let dOut = bank.domainIndex[out], dIn = bank.domainIndex[j]
        if let demand = domainDemand, dOut != dIn {
            hard += abs(domainCount[dOut] - 1 - demand[dOut]) - abs(domainCount[dOut] - demand[dOut])
            hard += abs(domainCount[dIn] + 1 - demand[dIn]) - abs(domainCount[dIn] - demand[dIn])
        }
        if let demand = classDemand {
            let cOut = assembler.itemClass[out], cIn = assembler.itemClass[j]
            if cOut != cIn {
                if cOut >= 0 { hard += abs(classCount[cOut] - 1 - demand[cOut]) - abs(classCount[cOut] - demand[cOut]) }
                if cIn >= 0 { hard += abs(classCount[cIn] + 1 - demand[cIn]) - abs(classCount[cIn] - demand[cIn]) }
            }
        }
        if anchors > 0 {
            let aOut = bank.items[out].isAnchor, aIn = bank.items[j].isAnchor
            if aOut != aIn || dOut != dIn {
                func term(_ d: Int, _ n: Int) -> Int { (domainDemand?[d] ?? 1) > 0 ? max(0, anchors - n) : 0 }
                var change = [(Int, Int)]()
                if aOut { change.append((dOut, -1)) }
                if aIn { change.append((dIn, 1)) }
                var seen = Set<Int>()
                for (d, _) in change where seen.insert(d).inserted {
                    let delta = change.filter { $0.0 == d }.reduce(0) { $0 + $1.1 }
                    hard += term(d, anchorCount[d] + delta) - term(d, anchorCount[d])
                }
            }
        }
        if !itemSets[out].isEmpty || !itemSets[j].isEmpty {
            for g in Set(itemSets[out] + itemSets[j]) {
                let delta = (itemSets[j].contains(g) ? 1 : 0) - (itemSets[out].contains(g) ? 1 : 0)
                hard += max(0, setCount[g] + delta - 1) - max(0, setCount[g] - 1)
            }
        }
        for f in earlier.indices {
            let delta = (earlier[f].contains(j) ? 1 : 0) - (earlier[f].contains(out) ? 1 : 0)
            if delta != 0 { hard += max(0, sharedCount[f] + delta - maxShared) - max(0, sharedCount[f] - maxShared) }
        }
        var soft = 0.0
        for (t, target) in targets.enumerated() where target.information > 0 {
            soft += max(0, 1 - (information[t] - targetInfo[out][t] + targetInfo[j][t]) / target.information)
        }
        return (hard, soft)
    }

    static func better(_ a: (hard: Int, soft: Double), than b: (hard: Int, soft: Double)) -> Bool {
        a.hard < b.hard || (a.hard == b.hard && a.soft < b.soft - 1e-12)
    }

    mutating func run(rng: inout SeededGenerator) {
        var current = penalty()
        let n = assembler.bank.items.count
        var candidates = (0..<n).filter { eligible[$0] && (assembler.classes.isEmpty || assembler.itemClass[$0] >= 0) }
        for _ in 0..<100 {
            var improved = false
            var positions = Array(selection.indices)
            positions.shuffle(using: &rng)
            candidates.shuffle(using: &rng)
            for p in positions {
                let out = selection[p]
                for j in candidates where !selected[j] {
                    let trial = penaltyAfterSwap(out: out, in: j, current: current)
                    if Self.better(trial, than: current) {
                        add(out, -1); add(j, 1)
                        selection[p] = j
                        selected[out] = false
                        selected[j] = true
                        current = trial
                        assert(
                            penalty().hard == current.hard && abs(penalty().soft - current.soft) < 1e-9,
                            "incremental penalty \(current) differs from the full one \(penalty())")
                        improved = true
                        break
                    }
                }
            }
            if !improved || (current.hard == 0 && current.soft == 0) { break }
        }
    }

    func form(method: String, reportThetas: [Double]) -> AssembledForm {
        let bank = assembler.bank
        let ordered = selection.sorted { bank.items[$0].location < bank.items[$1].location }
        var domainCounts: [String: Int] = [:], anchorCounts: [String: Int] = [:], difficultyCounts: [String: Int] = [:]
        for k in ordered {
            domainCounts[bank.items[k].domain, default: 0] += 1
            if bank.items[k].isAnchor { anchorCounts[bank.items[k].domain, default: 0] += 1 }
            if !assembler.classes.isEmpty, assembler.itemClass[k] >= 0 {
                difficultyCounts[assembler.classes[assembler.itemClass[k]], default: 0] += 1
            }
        }
        var relaxed: [String] = []
        if let demand = domainDemand {
            for (d, name) in bank.domains.enumerated() where domainCount[d] != demand[d] {
                relaxed.append("domain \(name): \(domainCount[d]) items instead of \(demand[d])")
            }
        }
        if let demand = classDemand {
            for (c, name) in assembler.classes.enumerated() where classCount[c] != demand[c] {
                relaxed.append("difficulty \(name): \(classCount[c]) items instead of \(demand[c])")
            }
        }
        if anchors > 0 {
            for (d, name) in bank.domains.enumerated() where (domainDemand?[d] ?? 1) > 0 && anchorCount[d] < anchors {
                relaxed.append("anchors in \(name): \(anchorCount[d]) instead of \(anchors)")
            }
        }
        for (g, n) in setCount.enumerated() where n > 1 {
            relaxed.append("enemies together: " + enemySets[g].filter { selected[$0] }.map { bank.items[$0].id }.joined(separator: ", "))
        }
        for (f, n) in sharedCount.enumerated() where n > maxShared {
            relaxed.append("overlap with form \(f + 1): \(n) items, more than \(maxShared)")
        }
        let thetas = Array(Set(reportThetas + targets.map(\.theta))).sorted()
        let points = thetas.map { theta -> AssembledForm.InformationPoint in
            let info = bank.information(of: ordered, at: theta)
            return AssembledForm.InformationPoint(theta: theta, information: info, standardError: info > 0 ? 1 / info.squareRoot() : .infinity)
        }
        var score: Double?, bound: Double?
        if !targets.isEmpty {
            score = targets.indices.reduce(0.0) { $0 + min(information[$1] / targets[$1].information, 1) } / Double(targets.count)
            let L = assembler.blueprint.length
            bound =
                targets.indices.reduce(0.0) { acc, t in
                    let best = bank.items.indices.filter { eligible[$0] }.map { targetInfo[$0][t] }.sorted(by: >).prefix(L).reduce(0, +)
                    return acc + min(best / targets[t].information, 1)
                } / Double(targets.count)
        }
        return AssembledForm(
            items: ordered, domainCounts: domainCounts, difficultyCounts: difficultyCounts, anchorCounts: anchorCounts,
            information: points, relaxed: relaxed, overlapWithEarlier: [], method: method,
            targetScore: score, targetUpperBound: bound)
    }
}
