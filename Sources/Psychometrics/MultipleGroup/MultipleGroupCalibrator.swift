import Foundation

/// Multiple-group marginal maximum-likelihood calibration (Bock & Zimowski 1997), as mirt's `multipleGroup()`
/// with `invariance = c(<items>, "free_means", "free_var")`.
///
/// Each person belongs to one group. The reference group's θ ~ N(0, 1) sets the scale; every other group g has
/// θ ~ N(μ_g, σ_g²) with μ_g and σ_g estimated. Item parameters are shared by all groups (invariant) unless
/// the item is listed in `freeItems`: then each group named there gets its own parameters and the remaining
/// groups share one set. Groups may see different items (missing by design): an item a group never answered
/// simply has no responses there. The 2PL and the 3PL (with `options`' priors) are fitted.
///
/// EM (`MultipleGroupEngine`, accelerated by SQUAREM as `EMCalibrator` is) stops when the largest change of any
/// a, d, c, μ_g or σ_g in a cycle is below `options.tolerance`. Standard errors: the observed information by
/// Oakes' (1999) identity (the Jacobian of the Fisher-identity gradient, two E-steps per parameter, as mirt's
/// default `SE.type = "Oakes"`), inverted, and the delta method to (a, b, c) and σ.
///
/// Input checks, each named: group labels one per person, the reference among them, at least two groups, each
/// with at least `minimumGroupPersons` persons with responses; freed items and groups known; every group tied
/// to the reference through shared item parameters (else its mean and SD are not identified). A parameter set
/// whose responses cannot estimate it (fewer than `options.minimumItemResponses`, all correct or all incorrect)
/// is reported and left out: the whole item when it is the item's only set (`excludedItems`), else that set's
/// groups' responses to it (`excludedGroupItems`).
///
/// Bock, R. D. & Zimowski, M. F. (1997). Multiple group IRT. In W. J. van der Linden & R. K. Hambleton (Eds.),
/// *Handbook of Modern Item Response Theory* (pp. 433–448). Springer.
package struct MultipleGroupCalibrator: Sendable {
    package var options: CalibrationOptions
    /// The fewest persons with responses a group may have: 20.
    package var minimumGroupPersons = 20
    /// Standard errors are formed for at most this many parameters (two E-steps each): 2,000.
    package static let maximumStandardErrorParameters = 2_000

    package init(options: CalibrationOptions) { self.options = options }

    /// Calibrates `data` with `groups[i]` the group of person i.
    /// - Parameters:
    ///   - reference: the group whose latent distribution is N(0, 1).
    ///   - freeItems: item id → the groups in which the item gets parameters of its own.
    ///   - start: a previous fit of the same data whose estimates start this one (a freed set starts from the
    ///     parameters its first group had there); nil starts from the proportions correct.
    /// - Throws: `PsychometricsError` — `.invalidOptions` (options, a model other than 2PL/3PL, fixed items),
    ///   `.lengthMismatch` (labels), `.invalidResponse` (a non-0/1 item, an empty label), `.unknownItem` (a freed id
    ///   not in the data), `.insufficientData` (a missing or small group, a group not tied to the reference, fewer
    ///   than 2 items), `.numericalFailure` (divergence).
    package func calibrate(
        _ data: ResponseMatrix, groups labels: [String], reference: String, freeItems: [String: Set<String>] = [:],
        start: MultipleGroupResult? = nil, progress: ((CalibrationProgress) -> Void)? = nil
    ) throws(PsychometricsError) -> MultipleGroupResult {
        try fit(try prepare(data, groups: labels, reference: reference), freeItems: freeItems, start: start, progress: progress)
    }

    /// The data of a multiple-group fit checked and split by group once, for several fits of one data set (a DIF
    /// scan): each group's response matrix and item-block patterns, the responses and correct answers per group and
    /// item, and the final E-steps of fits whose estimates will start others (its first E-step is then that
    /// one, not recomputed).
    package final class Prepared: @unchecked Sendable {
        let data: ResponseMatrix
        let names: [String]
        let groupOf: [Int]
        let n: [Int]
        let r: [Int]
        let groupData: [ResponseMatrix]
        let patterns: [PatternBlocks?]
        private let lock = NSLock()
        /// The final E-steps of the latest fits asked to remember theirs (newest first, at most `keptExpectations`),
        /// by their estimates.
        var finalExpectations: [(parameters: [Double], latent: [Double], expectation: MultipleGroupEngine.Expectation)] = []
        static let keptExpectations = 4

        func withLock<T>(_ body: () -> T) -> T { lock.lock(); defer { lock.unlock() }; return body() }

        init(data: ResponseMatrix, names: [String], groupOf: [Int], n: [Int], r: [Int], groupData: [ResponseMatrix], patterns: [PatternBlocks?]) {
            self.data = data
            self.names = names
            self.groupOf = groupOf
            self.n = n
            self.r = r
            self.groupData = groupData
            self.patterns = patterns
        }
    }

    /// Checks `data` and the labels (see `calibrate`) and splits the responses by group.
    package func prepare(_ data: ResponseMatrix, groups labels: [String], reference: String) throws(PsychometricsError) -> Prepared {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid options: " + problems.joined(separator: "; ")) }
        guard options.model == .twoPL || options.model == .threePL else {
            throw PsychometricsError(.invalidOptions, "multiple-group calibration fits the 2PL and 3PL models, not \(options.model.rawValue)")
        }
        guard options.fixedItems.isEmpty else {
            throw PsychometricsError(
                .invalidOptions, "multiple-group calibration does not hold items fixed: the reference group's N(0, 1) sets the scale")
        }
        if let j = data.categoryCounts.firstIndex(where: { $0 != 2 }) {
            throw PsychometricsError(
                .invalidResponse, "item \(data.itemIDs[j]) has \(data.categoryCounts[j]) categories; multiple-group calibration takes 0/1 items")
        }
        let (names, groupOf) = try Self.indexGroups(data, labels: labels, reference: reference, minimumPersons: minimumGroupPersons)
        let G = names.count, J = data.itemCount
        // Responses and correct answers per group and item.
        var n = [Int](repeating: 0, count: G * J), r = n
        for i in 0..<data.personCount {
            let k = groupOf[i]
            for c in data.cells(ofPerson: i) {
                let j = Int(data.itemIndices[c])
                n[k * J + j] += 1
                r[k * J + j] += Int(data.responses[c])
            }
        }

        var groupData: [ResponseMatrix] = []
        for k in 0..<G { groupData.append(try Self.groupMatrix(data, groupOf: groupOf, group: k, keep: { _ in true }).matrix) }
        let patterns = groupData.map { Self.usesDense($0, options.eStep) ? PatternBlocks($0) : nil }
        return Prepared(data: data, names: names, groupOf: groupOf, n: n, r: r, groupData: groupData, patterns: patterns)
    }

    /// The groups of `labels` (one per person of `data`): the reference first, then the others in order of first
    /// appearance, and each person's group index.
    /// - Throws: `PsychometricsError` — `.lengthMismatch` (not one label per person), `.invalidResponse` (an empty
    ///   label), `.insufficientData` (the reference without persons with responses, one group only, a group with
    ///   fewer than `minimumPersons` persons with responses).
    static func indexGroups(_ data: ResponseMatrix, labels: [String], reference: String, minimumPersons: Int) throws(PsychometricsError) -> (
        names: [String], groupOf: [Int]
    ) {
        guard labels.count == data.personCount else {
            throw PsychometricsError(.lengthMismatch, "one group label per person: \(labels.count) labels for \(data.personCount) persons")
        }
        if let i = labels.firstIndex(where: \.isEmpty) {
            throw PsychometricsError(.invalidResponse, "person \(data.personIDs[i]) has an empty group label")
        }

        // Groups: the reference first, then the others in order of first appearance.
        var names = [reference], index = [reference: 0]
        for label in labels where index[label] == nil { index[label] = names.count; names.append(label) }
        let G = names.count
        let groupOf = labels.map { index[$0]! }
        var personsIn = [Int](repeating: 0, count: G)
        for i in 0..<data.personCount where !data.cells(ofPerson: i).isEmpty { personsIn[groupOf[i]] += 1 }
        guard personsIn[0] > 0 else {
            throw PsychometricsError(
                .insufficientData,
                "the reference group \(TextFidelity.quoted(reference)) has no persons with responses (groups: \(Self.listed(names.dropFirst())))")
        }
        guard G >= 2 else {
            throw PsychometricsError(
                .insufficientData, "only one group (\(TextFidelity.quoted(reference))) in the data; a multiple-group fit needs at least two")
        }
        if let k = personsIn.firstIndex(where: { $0 < minimumPersons }) {
            throw PsychometricsError(
                .insufficientData,
                "group \(TextFidelity.quoted(names[k])) has \(personsIn[k]) person\(personsIn[k] == 1 ? "" : "s") with responses; each group needs at least \(minimumPersons)"
            )
        }
        return (names, groupOf)
    }

    /// Whether a group's E-step runs dense (`EStepStrategy`; automatic: at least 15% of the cells answered).
    static func usesDense(_ matrix: ResponseMatrix, _ strategy: EStepStrategy) -> Bool {
        switch strategy {
        case .dense: return true
        case .sparse: return false
        case .automatic: return matrix.density >= 0.15 && Double(matrix.personCount) * Double(matrix.itemCount) <= 4e8
        }
    }

    /// Group k's persons with the cells `keep` accepts (by item), and the persons left without a cell.
    static func groupMatrix(_ data: ResponseMatrix, groupOf: [Int], group k: Int, keep: (Int) -> Bool) throws(PsychometricsError) -> (
        matrix: ResponseMatrix, emptied: [String]
    ) {
        var ids: [String] = [], offsets = [0], items: [Int32] = [], values: [UInt8] = [], emptied: [String] = []
        for i in 0..<data.personCount where groupOf[i] == k {
            let before = items.count
            for c in data.cells(ofPerson: i) where keep(Int(data.itemIndices[c])) {
                items.append(data.itemIndices[c]); values.append(data.responses[c])
            }
            if items.count == before {
                if !data.cells(ofPerson: i).isEmpty { emptied.append(data.personIDs[i]) }
                continue
            }
            ids.append(data.personIDs[i]); offsets.append(items.count)
        }
        return (try ResponseMatrix(personIDs: ids, itemIDs: data.itemIDs, rowOffsets: offsets, itemIndices: items, responses: values), emptied)
    }

    /// One fit of prepared data (see `calibrate`). With `remember`, its final E-step is kept in `prepared` for the
    /// fits that will start from this one.
    package func fit(
        _ prepared: Prepared, freeItems: [String: Set<String>] = [:], start: MultipleGroupResult? = nil, remember: Bool = false,
        progress: ((CalibrationProgress) -> Void)? = nil
    ) throws(PsychometricsError) -> MultipleGroupResult {
        let started = DispatchTime.now().uptimeNanoseconds
        let data = prepared.data, names = prepared.names, n = prepared.n, r = prepared.r
        let G = names.count, J = data.itemCount
        let index = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
        let itemIndex = Dictionary(uniqueKeysWithValues: data.itemIDs.enumerated().map { ($1, $0) })
        var freedIn = [Set<Int>](repeating: [], count: J)
        for (id, groupNames) in freeItems.sorted(by: { $0.key < $1.key }) {
            guard let j = itemIndex[id] else { throw PsychometricsError(.unknownItem, "freed item \(TextFidelity.quoted(id)) is not in the data") }
            for name in groupNames.sorted() {
                guard let k = index[name] else {
                    throw PsychometricsError(
                        .invalidOptions,
                        "item \(TextFidelity.quoted(id)) is freed in group \(TextFidelity.quoted(name)), which is not in the data (groups: \(Self.listed(names)))"
                    )
                }
                freedIn[j].insert(k)
            }
        }

        // Parameter sets ("slots"), screened.
        var slots: [MultipleGroupEngine.Slot] = []
        var slotOf = [[Int]](repeating: [Int](repeating: -1, count: J), count: G)
        var excluded: [ExcludedItem] = [], excludedGroupItems: [GroupItemExclusion] = []
        var warnings: [String] = []
        for j in 0..<J {
            let answered = (0..<G).filter { n[$0 * J + j] > 0 }
            let own = answered.filter { freedIn[j].contains($0) }, shared = answered.filter { !freedIn[j].contains($0) }
            let candidates = (shared.isEmpty ? [] : [shared]) + own.map { [$0] }
            var kept: [[Int]] = []
            for members in candidates {
                let nj = members.reduce(0) { $0 + n[$1 * J + j] }, rj = members.reduce(0) { $0 + r[$1 * J + j] }
                if let reason = Self.unestimable(responses: nj, correct: rj, minimum: options.minimumItemResponses) {
                    if candidates.count == 1 {
                        excluded.append(ExcludedItem(itemID: data.itemIDs[j], responses: nj, correct: rj, reason: reason))
                    } else {
                        let exclusion = GroupItemExclusion(
                            itemID: data.itemIDs[j], groups: members.map { names[$0] }, responses: nj, correct: rj, reason: reason)
                        excludedGroupItems.append(exclusion)
                        warnings.append(
                            "item \(data.itemIDs[j]) in group\(members.count == 1 ? "" : "s") \(Self.listed(exclusion.groups)): \(reason); these responses are left out"
                        )
                    }
                } else {
                    kept.append(members)
                }
            }
            if candidates.isEmpty {
                excluded.append(ExcludedItem(itemID: data.itemIDs[j], responses: 0, correct: 0, reason: "no responses"))
            }
            for members in kept {
                for k in members { slotOf[k][j] = slots.count }
                slots.append(.init(item: j, groups: members))
            }
        }
        guard Set(slots.map(\.item)).count >= 2 else {
            throw PsychometricsError(
                .insufficientData,
                "only \(Set(slots.map(\.item)).count) of \(J) items can be calibrated (at least 2 needed)"
                    + (excluded.isEmpty ? "" : "; excluded: " + excluded.prefix(5).map { "\($0.itemID): \($0.reason)" }.joined(separator: "; ")))
        }
        try Self.checkIdentified(slots: slots, names: names)

        // One response matrix per group over the calibrated cells (the prepared one where no cell is left out).
        var groupData: [ResponseMatrix] = [], excludedPersons: [String] = [], filtered = [Bool](repeating: false, count: G)
        for k in 0..<G {
            if (0..<J).allSatisfy({ slotOf[k][$0] >= 0 || n[k * J + $0] == 0 }) {
                groupData.append(prepared.groupData[k])
                continue
            }
            filtered[k] = true
            let split = try Self.groupMatrix(data, groupOf: prepared.groupOf, group: k, keep: { slotOf[k][$0] >= 0 })
            groupData.append(split.matrix)
            excludedPersons += split.emptied
        }
        let cellsIn = groupData.map(\.cellCount)
        if let k = groupData.indices.first(where: { groupData[$0].personCount < minimumGroupPersons }) {
            throw PsychometricsError(
                .insufficientData,
                "group \(TextFidelity.quoted(names[k])) keeps \(groupData[k].personCount) persons with calibrated responses after the exclusions; each group needs at least \(minimumGroupPersons)"
            )
        }

        // Engines, start values, EM.
        var options = self.options
        options.workers = max(1, options.workers)
        let engines = groupData.indices.map { k in
            let dense = Self.usesDense(groupData[k], options.eStep)
            return EMEngine(
                model: options.model, options: options, data: groupData[k], useDense: dense, usePatterns: dense,
                patterns: filtered[k] ? nil : prepared.patterns[k])
        }
        let first = engines[0]
        var starts: [(s: Double, d: Double, g: Double)] = []
        for slot in slots {
            let j = slot.item
            if let start,
                let entry = start.items.firstIndex(where: { $0.item.itemID == data.itemIDs[j] && $0.groups.contains(names[slot.groups[0]]) })
            {
                let o = start.workingOffsets[entry], p = first.perItem
                starts.append((start.workingParameters[o], start.workingParameters[o + 1], p == 3 ? start.workingParameters[o + 2] : first.g[j]))
                continue
            }
            let nj = slot.groups.reduce(0) { $0 + n[$1 * J + j] }, rj = slot.groups.reduce(0) { $0 + r[$1 * J + j] }
            let c0 = options.model.hasGuessing ? (first.priors.guessing(j)?.mode ?? 0.1) : 0
            let p = min(max(((Double(rj) + 0.5) / (Double(nj) + 1) - c0) / (1 - c0), 0.02), 0.98)
            starts.append((first.logSlope ? 0 : 1, Logistic.logit(p) * 1.2, first.g[j]))
        }
        let latent = names.dropFirst().map { name in
            start?.distribution(of: name).map { (mean: $0.mean, sd: $0.sd) } ?? (mean: 0.0, sd: 1.0)
        }
        var run = EMRun(
            engine: MultipleGroupEngine(groups: engines, slots: slots, slotOf: slotOf, start: starts, latent: latent, workers: options.workers),
            options: options, started: started, progress: progress)
        // Started exactly where the last fit of these data ended, on the same cells: its final E-step is this
        // fit's first (the expected counts are per item and group, whatever the parameter sets).
        let startLatent = latent.flatMap { [$0.mean, $0.sd] }
        if !filtered.contains(true), let start,
            let last = prepared.withLock({ prepared.finalExpectations.first { $0.parameters == start.workingParameters && $0.latent == startLatent } }
            )
        {
            run.pending = last.expectation
        }
        do {
            switch options.acceleration {
            case .none: try run.runPlain()
            case .squarem: try run.runSQUAREM()
            }
        } catch let error as PsychometricsError { throw error } catch { throw PsychometricsError(.numericalFailure, "\(error)") }
        let engine = run.engine
        if let warning = run.nonConvergence { warnings.append(warning) }

        // Log-likelihood and standard errors at the estimates.
        let final = engine.eStep()
        if remember && !filtered.contains(true) {
            let key = (engine.workingParameters(), (1..<G).flatMap { [engine.latent($0).mean, engine.latent($0).sd] })
            prepared.withLock {
                prepared.finalExpectations.insert((key.0, key.1, final), at: 0)
                if prepared.finalExpectations.count > Prepared.keptExpectations { prepared.finalExpectations.removeLast() }
            }
        }
        let covariance = engine.oakesCovariance(
            standardErrors: options.standardErrors, maximumParameters: Self.maximumStandardErrorParameters,
            cycle: run.cycles, logLikelihood: final.logLikelihood, started: started, workers: options.workers,
            progress: progress, warnings: &warnings)
        let P = engine.parameterCount
        var dense: [Double]?
        if let covariance {
            var m = [Double](repeating: 0, count: P * P)
            for a in 0..<P { for b in 0..<P { m[a * P + b] = covariance.entry(a, b) } }
            dense = m
        }
        func variance(_ gradient: [(Int, Double)]) -> Double? {
            guard let dense else { return nil }
            var v = 0.0
            for (x, gx) in gradient { for (y, gy) in gradient { v += gx * gy * dense[x * P + y] } }
            return v > 0 && v.isFinite ? v : nil
        }

        var items: [GroupItem] = [], offsets: [Int] = []
        let p = engine.perItem
        for (index, slot) in slots.enumerated() {
            let j = slot.item, o = p * index
            let a = first.slope(working: engine.s[index]), aS = first.logSlope ? a : 1, c = first.asymptote(working: engine.g[index])
            let dj = engine.d[index]
            let parameters = ItemParameters(discrimination: a, difficulty: -dj / a, guessing: c)
            var errors = ItemStandardErrors()
            errors.discrimination = variance([(o, aS)])?.squareRoot()
            errors.difficulty = variance([(o, dj * aS / (a * a)), (o + 1, -1 / a)])?.squareRoot()
            if p == 3 { errors.guessing = variance([(o + 2, c * (1 - c))])?.squareRoot() }
            var flags: [String] = []
            if abs(a) >= options.maximumSlope * 0.999 { flags.append("slope at bound \(options.maximumSlope.formatted6)") }
            if a < 0 { flags.append("negative slope") }
            if first.logSlope && a <= 1.001e-3 { flags.append("slope at lower bound") }
            if options.model == .threePL && c < 1e-6 { flags.append("guessing at 0") }
            if abs(parameters.difficulty) > first.grid.points.last! { flags.append("difficulty outside the quadrature range") }
            if dense != nil && (errors.discrimination == nil || errors.difficulty == nil) { flags.append("standard error unavailable") }
            let groupNames = slot.groups.map { names[$0] }
            if !flags.isEmpty {
                warnings.append(
                    "item \(data.itemIDs[j])\(slot.groups.count < G ? " (" + Self.listed(groupNames) + ")" : ""): " + flags.joined(separator: ", "))
            }
            let nj = slot.groups.reduce(0) { $0 + n[$1 * J + j] }, rj = slot.groups.reduce(0) { $0 + r[$1 * J + j] }
            items.append(
                GroupItem(
                    groups: groupNames,
                    item: CalibratedItem(
                        itemID: data.itemIDs[j], parameters: parameters, standardErrors: errors,
                        responses: nj, pValue: Double(rj) / Double(nj), flags: flags)))
            offsets.append(o)
        }
        var distributions: [GroupDistribution] = []
        for k in 0..<G {
            let (mean, sd) = engine.latent(k)
            var distribution = GroupDistribution(
                group: names[k], isReference: k == 0, persons: groupData[k].personCount, responses: cellsIn[k],
                mean: mean, sd: sd, logLikelihood: final.groups[k].logLikelihood)
            if k > 0 {
                let i = engine.latentIndex(group: k)
                distribution.meanStandardError = variance([(i, 1)])?.squareRoot()
                distribution.sdStandardError = variance([(i + 1, sd)])?.squareRoot()
                if sd <= NormalLatentDistribution.sdRange.lowerBound * 1.001 || sd >= NormalLatentDistribution.sdRange.upperBound * 0.999 {
                    warnings.append("group '\(names[k])': latent SD at its bound (\(sd.formatted6)); its responses may not vary")
                }
            }
            distributions.append(distribution)
        }
        if !excludedPersons.isEmpty {
            warnings.append("\(excludedPersons.count) person\(excludedPersons.count == 1 ? "" : "s") excluded: no responses to any calibrated item")
        }
        for item in excluded { warnings.append("item \(item.itemID) excluded: \(item.reason)") }
        let ll = final.logLikelihood, persons = groupData.reduce(0) { $0 + $1.personCount }
        return MultipleGroupResult(
            model: options.model, groups: distributions, items: items, excludedItems: excluded, excludedGroupItems: excludedGroupItems,
            excludedPersons: excludedPersons, personCount: persons, cellCount: cellsIn.reduce(0, +), logLikelihood: ll, parameterCount: P,
            aic: -2 * ll + 2 * Double(P), bic: -2 * ll + Double(P) * log(Double(persons)), cycles: run.cycles, eSteps: run.eSteps,
            converged: run.converged, lastChange: run.change,
            standardErrorMethod: dense != nil
                ? "observed information (Oakes 1999), delta method to a, b, c and σ"
                : options.standardErrors ? "unavailable (see warnings)" : "not computed (disabled)",
            options: options, warnings: warnings, elapsedSeconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9,
            workingCovariance: dense, workingOffsets: offsets, workingParameters: engine.workingParameters())
    }

    /// Why a parameter set with these responses cannot be estimated, nil when it can.
    static func unestimable(responses n: Int, correct r: Int, minimum: Int) -> String? {
        if n < minimum { return "only \(n) response\(n == 1 ? "" : "s") (minimum \(minimum))" }
        if r == n { return "all \(n) responses correct: the difficulty has no finite estimate" }
        if r == 0 { return "all \(n) responses incorrect: the difficulty has no finite estimate" }
        return nil
    }

    /// Every group must reach the reference through parameter sets shared by two or more groups; otherwise its μ
    /// and σ could move with its own items' parameters.
    static func checkIdentified(slots: [MultipleGroupEngine.Slot], names: [String]) throws(PsychometricsError) {
        var parent = Array(names.indices)
        func root(_ x: Int) -> Int { var x = x; while parent[x] != x { x = parent[x] }; return x }
        for slot in slots where slot.groups.count > 1 {
            for k in slot.groups.dropFirst() { parent[root(k)] = root(slot.groups[0]) }
        }
        if let k = names.indices.first(where: { root($0) != root(0) }) {
            throw PsychometricsError(
                .insufficientData,
                "group \(TextFidelity.quoted(names[k])) shares no item parameters with the reference group \(TextFidelity.quoted(names[0])) (directly or through other groups): its mean and SD are not identified; keep at least one item invariant (an anchor) that both groups answered"
            )
        }
    }

    static func listed(_ names: some Collection<String>) -> String {
        names.prefix(5).map { "\(TextFidelity.quoted($0))" }.joined(separator: ", ") + (names.count > 5 ? ", … (\(names.count) in all)" : "")
    }
}
