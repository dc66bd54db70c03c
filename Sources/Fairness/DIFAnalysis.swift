import Foundation
import Psychometrics

/// A DIF method.
package enum DIFMethod: String, Sendable, Hashable, Codable, CaseIterable {
    /// Mantel–Haenszel with the ETS delta and A/B/C class (`MantelHaenszelDIF`).
    case mantelHaenszel = "mh"
    /// Logistic regression, uniform and non-uniform (`LogisticRegressionDIF`).
    case logisticRegression = "lr"
    /// The IRT likelihood-ratio test through the multiple-group model (`IRTDIFFits`).
    case likelihoodRatio = "irt"
    /// Lord's Wald test with the multiple-group fit's covariance (`IRTDIFFits`).
    case wald
}

/// Options of `DIFAnalysis`.
package struct DIFOptions: Sendable, Hashable {
    package var methods: [DIFMethod] = [.mantelHaenszel, .logisticRegression, .likelihoodRatio]
    package var matching = DIFMatching.automatic
    /// θ matching: equal-count strata of the two groups' persons who answered the studied item (MH): 20.
    package var thetaStrata = 20
    /// Iterative purification (see `DIFAnalysis`); off by default, as in mirt's `DIF()` and difR.
    package var purify = false
    package var maximumPurificationRounds = 10
    /// After purification, test every item against this many anchor items (the unflagged ones with the smallest
    /// statistics) instead of all unflagged items; nil: all unflagged items.
    package var anchorCount: Int?
    /// The false discovery rate of the Benjamini–Hochberg adjustment; a test is flagged when its adjusted p is
    /// below it: 0.05.
    package var falseDiscoveryRate = 0.05
    /// The item model and EM settings of the multiple-group fits (2PL by default; 2PL or 3PL).
    package var calibration = CalibrationOptions(model: .twoPL)
    package var minimumGroupPersons = 20
    /// An item is tested for a focal group only when each of the two groups gave it at least this many responses: 10.
    package var minimumResponsesPerGroup = 10
    /// Parameter draws for the DTF intervals (0: none): 1,000.
    package var dtfDraws = 1_000

    package init() {}

    /// Problems with the options, each naming its setting as `naming` says (`--theta-strata` for the CLI): 1…100
    /// strata, 1…50 rounds, a rate in (0, 1), an anchor of at least 1 item, at least 1 response per group, at least 2
    /// persons per group, 0…100,000 draws, a 2PL or 3PL model.
    package func validationProblems(naming: SettingNaming = .words) -> [String] {
        var problems: [String] = []
        if methods.isEmpty { problems.append("\(naming.name("methods", words: "DIF methods")): none chosen (mh, lr, irt, wald)") }
        if !(1...100).contains(thetaStrata) { problems.append("\(naming.name("theta_strata")) must be in 1…100, got \(thetaStrata)") }
        if !(1...50).contains(maximumPurificationRounds) {
            problems.append("\(naming.name("purification_rounds")) must be in 1…50, got \(maximumPurificationRounds)")
        }
        if !(falseDiscoveryRate > 0 && falseDiscoveryRate < 1) {
            problems.append("\(naming.name("fdr", words: "false discovery rate")) must be in (0, 1), got \(falseDiscoveryRate.formatted6)")
        }
        if let anchorCount, anchorCount < 1 { problems.append("\(naming.name("anchor_count")) must be at least 1, got \(anchorCount)") }
        if minimumResponsesPerGroup < 1 {
            problems.append(
                "\(naming.name("min_item_responses", words: "minimum responses per group")) must be at least 1, got \(minimumResponsesPerGroup)")
        }
        if minimumGroupPersons < 2 {
            problems.append("\(naming.name("min_group_persons", words: "minimum group size")) must be at least 2, got \(minimumGroupPersons)")
        }
        if !(0...100_000).contains(dtfDraws) {
            problems.append("\(naming.name("dtf_draws", words: "DTF draws")) must be in 0…100000, got \(dtfDraws)")
        }
        if calibration.model != .twoPL && calibration.model != .threePL {
            problems.append("\(naming.name("model")): the IRT DIF tests fit the 2PL or 3PL, not \(calibration.model.rawValue)")
        }
        if anchorCount != nil && !purify { problems.append("\(naming.name("anchor_count")) applies after purification (purify)") }
        return problems + calibration.validationProblems(naming: naming)
    }
}

/// One item × focal group of a DIF analysis.
package struct DIFRow: Sendable, Hashable, Codable {
    package var itemID: String
    package var focal: String
    /// Responses to the item and proportions correct in the reference and the focal group.
    package var referenceResponses: Int
    package var focalResponses: Int
    package var referenceProportion: Double?
    package var focalProportion: Double?
    package var mantelHaenszel: MantelHaenszelDIF?
    package var logisticRegression: LogisticRegressionDIF?
    package var likelihoodRatio: IRTItemTest?
    package var wald: IRTItemTest?
    /// Benjamini–Hochberg adjusted p-values of each method over all its tests (item × focal group).
    package var adjustedP: [DIFMethod: Double] = [:]
    /// The methods whose adjusted p is below the false discovery rate.
    package var flaggedBy: [DIFMethod] = []
    /// Per method, why it could not test this item for this group.
    package var untestable: [DIFMethod: String] = [:]
    /// Per method, whether the item was in the final matching criterion / anchor.
    package var anchor: [DIFMethod: Bool] = [:]
}

/// One method's purification record.
package struct DIFPurification: Sendable, Hashable, Codable {
    package var method: DIFMethod
    /// The items flagged in each round (round 1: all other items as the matching criterion / anchor).
    package var flaggedPerRound: [[String]]
    package var converged: Bool
    /// The items of the final matching criterion or anchor.
    package var anchorItems: [String]
}

/// The outcome of `DIFAnalysis.run`.
package struct DIFReport: Sendable {
    package var reference: String
    package var focalGroups: [String]
    /// Persons per group (reference first).
    package var groupSizes: [(group: String, persons: Int)]
    package var matching: DIFMatching
    package var matchingDescription: String
    package var options: DIFOptions
    package var rows: [DIFRow]
    package var purification: [DIFPurification]
    /// DTF of each focal group in the multiple-group model with the flagged items free (`flaggedModel`).
    package var dtf: [DifferentialTestFunctioning]
    /// The multiple-group fit with every IRT-flagged item (else every flagged item) free in all groups; nil when no
    /// IRT fit was possible.
    package var flaggedModel: MultipleGroupResult?
    /// The invariant multiple-group fit (every item's parameters shared).
    package var invariantModel: MultipleGroupResult?
    package var multipleGroupFits: Int
    package var warnings: [String]
    /// Seconds per method, and for the DTF fit.
    package var seconds: [String: Double]
}

/// Differential item functioning of every item for every focal group against the reference, by the chosen
/// methods, with multiple-comparison control and optional purification, and the resulting DTF.
///
/// **Procedure, per method.** Round 1 tests every item with all items in the matching criterion (MH, LR: the
/// total or rest score over all items, or θ from all of them) or as the anchor (IRT: every other item
/// invariant). Each method's p-values over all its tests (items × focal groups) are adjusted by
/// Benjamini–Hochberg and an item is flagged when any of its adjusted p-values is below the false discovery rate.
/// With `purify`, the flagged items leave the matching criterion (MH, LR) or become free in every group (IRT) and
/// every item is tested again, until the flagged set repeats (Holland & Thayer 1988's two-step refinement,
/// iterated as in difR's `purify`; for IRT, Candell & Drasgow 1988), at most `maximumPurificationRounds` rounds.
/// Then, with `anchorCount`, a constant anchor: that many unflagged items with the smallest statistics are the
/// anchor and every other item is tested against it (Woods 2009). An item studied in a round keeps its own
/// response in the matching criterion (total score and θ matching), as MH requires (Zwick 1990).
///
/// The multiple-group fits start from the invariant fit and are cached, so a scan of J items for F focal
/// groups runs 1 + J·F fits per round (plus J compact fits per round with purification).
package enum DIFAnalysis {
    /// - Parameters:
    ///   - groups: the group of each person.
    ///   - parameters: per item of `data`, the bank's parameters for θ matching; nil calibrates a pooled 2PL for it.
    /// - Throws: `PsychometricsError` for invalid options, labels, a missing reference, a small group, or a
    ///   multiple-group fit that cannot run.
    package static func run(
        _ data: ResponseMatrix, groups: [String], reference: String, parameters: [ItemParameters?]? = nil,
        options: DIFOptions = DIFOptions()
    ) throws(PsychometricsError) -> DIFReport {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid DIF options: " + problems.joined(separator: "; ")) }
        guard groups.count == data.personCount else {
            throw PsychometricsError(.lengthMismatch, "one group label per person: \(groups.count) labels for \(data.personCount) persons")
        }
        guard data.isDichotomous else { throw PsychometricsError(.invalidResponse, "DIF analysis takes 0/1 items") }
        var names = [reference], index = [reference: 0]
        for label in groups where index[label] == nil { index[label] = names.count; names.append(label) }
        let groupOf = groups.map { index[$0]! }
        var sizes = [Int](repeating: 0, count: names.count)
        for i in 0..<data.personCount where !data.cells(ofPerson: i).isEmpty { sizes[groupOf[i]] += 1 }
        guard sizes[0] > 0 else {
            throw PsychometricsError(.insufficientData, "the reference group \(TextFidelity.quoted(reference)) has no persons with responses")
        }
        guard names.count >= 2 else {
            throw PsychometricsError(.insufficientData, "only one group (\(TextFidelity.quoted(reference))) in the data; DIF compares at least two")
        }
        if let k = sizes.firstIndex(where: { $0 < options.minimumGroupPersons }) {
            throw PsychometricsError(
                .insufficientData,
                "group \(TextFidelity.quoted(names[k])) has \(sizes[k]) person\(sizes[k] == 1 ? "" : "s") with responses; each group needs at least \(options.minimumGroupPersons)"
            )
        }
        let focalGroups = Array(names.dropFirst())
        let J = data.itemCount
        var warnings: [String] = []
        var seconds: [String: Double] = [:]

        // Columns: per item, its respondents and responses.
        var column = [[(person: Int, response: UInt8)]](repeating: [], count: J)
        for i in 0..<data.personCount { for c in data.cells(ofPerson: i) { column[Int(data.itemIndices[c])].append((i, data.responses[c])) } }

        // Rows and their counts.
        var rows: [DIFRow] = []
        for j in 0..<J {
            for (f, focal) in focalGroups.enumerated() {
                var nR = 0, rR = 0, nF = 0, rF = 0
                for (i, u) in column[j] {
                    if groupOf[i] == 0 { nR += 1; rR += Int(u) } else if groupOf[i] == f + 1 { nF += 1; rF += Int(u) }
                }
                rows.append(
                    DIFRow(
                        itemID: data.itemIDs[j], focal: focal, referenceResponses: nR, focalResponses: nF,
                        referenceProportion: nR > 0 ? Double(rR) / Double(nR) : nil, focalProportion: nF > 0 ? Double(rF) / Double(nF) : nil))
            }
        }
        let F = focalGroups.count
        func row(_ j: Int, _ f: Int) -> Int { j * F + f }
        /// Why item j cannot be tested for focal f at all, nil when it can.
        func untestable(_ j: Int, _ f: Int) -> String? {
            let r = rows[row(j, f)]
            if r.focalResponses == 0 { return "group \(r.focal) has no responses to this item" }
            if r.referenceResponses == 0 { return "the reference group has no responses to this item" }
            if r.focalResponses < options.minimumResponsesPerGroup {
                return "only \(r.focalResponses) responses from group \(r.focal) (minimum \(options.minimumResponsesPerGroup))"
            }
            if r.referenceResponses < options.minimumResponsesPerGroup {
                return "only \(r.referenceResponses) responses from the reference group (minimum \(options.minimumResponsesPerGroup))"
            }
            return nil
        }

        // Matching.
        let matching: DIFMatching = options.matching == .automatic ? (data.isComplete ? .totalScore : .theta) : options.matching
        let grid = try QuadratureGrid(count: 41, bound: 5)
        var matchingParameters = [ItemParameters](repeating: ItemParameters(difficulty: 0), count: J)
        var hasParameters = [Bool](repeating: true, count: J)
        var matchingDescription: String
        switch matching {
        case .theta:
            if let parameters {
                guard parameters.count == J else {
                    throw PsychometricsError(.lengthMismatch, "one parameter set per item: \(parameters.count) for \(J) items")
                }
                for j in 0..<J { if let p = parameters[j] { matchingParameters[j] = p } else { hasParameters[j] = false } }
                matchingDescription =
                    "theta: EAP over the matching items and the studied item under the bank's parameters (41 points on ±5); MH in \(options.thetaStrata) equal-count strata"
            } else {
                var calibration = CalibrationOptions(model: .twoPL)
                calibration.standardErrors = false
                calibration.workers = options.calibration.workers
                let pooled = try? EMCalibrator(options: calibration).calibrate(data)
                let byID = Dictionary(uniqueKeysWithValues: (pooled?.items ?? []).map { ($0.itemID, $0.parameters) })
                for j in 0..<J { if let p = byID[data.itemIDs[j]] { matchingParameters[j] = p } else { hasParameters[j] = false } }
                matchingDescription =
                    "theta: EAP over the matching items and the studied item under a pooled 2PL calibration of these data (41 points on ±5); MH in \(options.thetaStrata) equal-count strata"
            }
        case .restScore: matchingDescription = "rest score: number correct over the matching items without the studied item"
        default: matchingDescription = "total score: number correct over the matching items including the studied item"
        }

        var purification: [DIFPurification] = []
        var irt = IRTDIFFits(
            data: data, groups: groups, reference: reference,
            calibrator: {
                var c = MultipleGroupCalibrator(options: options.calibration); c.minimumGroupPersons = options.minimumGroupPersons; return c
            }(),
            names: names)
        var finalFlags: [DIFMethod: Set<Int>] = [:]
        var invariantModel: MultipleGroupResult?

        for method in options.methods {
            let started = DispatchTime.now().uptimeNanoseconds
            /// One round: every testable (j, f) with the items `excluded` out of the matching criterion / anchor;
            /// returns each test's statistic and p (nil: untestable, with the reason stored).
            func round(excluded: Set<Int>) throws(PsychometricsError) -> [(statistic: Double, p: Double)?] {
                var out = [(statistic: Double, p: Double)?](repeating: nil, count: rows.count)
                var criterion: MatchingCriterion?
                if method == .likelihoodRatio || method == .wald {
                    let tests = (0..<J).flatMap { j in (0..<F).filter { untestable(j, $0) == nil }.map { (item: j, focal: focalGroups[$0]) } }
                    try irt.prefetch(tests: tests, free: excluded, standardErrors: method == .wald)
                }
                if method == .mantelHaenszel || method == .logisticRegression {
                    let anchor = (0..<J).map { !excluded.contains($0) && hasParameters[$0] }
                    criterion = MatchingCriterion(data: data, matching: matching, anchor: anchor, parameters: matchingParameters, grid: grid)
                }
                for j in 0..<J {
                    for f in 0..<F {
                        let k = row(j, f)
                        if let reason = untestable(j, f) { rows[k].untestable[method] = reason; continue }
                        rows[k].untestable[method] = nil
                        switch method {
                        case .mantelHaenszel, .logisticRegression:
                            let members = column[j].filter { groupOf[$0.person] == 0 || groupOf[$0.person] == f + 1 }
                            let values = members.map { criterion!.value(person: $0.person, item: j, response: $0.response) }
                            let isFocal = members.map { groupOf[$0.person] != 0 }
                            if method == .mantelHaenszel {
                                let strata = Self.strata(values, matching: matching, count: options.thetaStrata)
                                var tables = [MantelHaenszelDIF.Table](repeating: .init(), count: (strata.max() ?? 0) + 1)
                                for (m, member) in members.enumerated() {
                                    let s = strata[m], correct = member.response == 1
                                    if isFocal[m] {
                                        if correct { tables[s].focalCorrect += 1 } else { tables[s].focalIncorrect += 1 }
                                    } else {
                                        if correct { tables[s].referenceCorrect += 1 } else { tables[s].referenceIncorrect += 1 }
                                    }
                                }
                                if let mh = MantelHaenszelDIF(tables: tables) {
                                    rows[k].mantelHaenszel = mh
                                    out[k] = (mh.chiSquare, mh.p)
                                } else {
                                    rows[k].untestable[method] = "no matching stratum holds both groups"
                                }
                            } else if let lr = LogisticRegressionDIF(responses: members.map(\.response), score: values, focal: isFocal) {
                                rows[k].logisticRegression = lr
                                out[k] = (lr.chiSquare, lr.p)
                            } else {
                                rows[k].untestable[method] = "the responses do not vary"
                            }
                        case .likelihoodRatio, .wald:
                            let test =
                                method == .wald
                                ? try irt.wald(item: j, focal: focalGroups[f], free: excluded)
                                : try irt.likelihoodRatio(item: j, focal: focalGroups[f], free: excluded)
                            switch test {
                            case .success(let t):
                                if method == .wald { rows[k].wald = t } else { rows[k].likelihoodRatio = t }
                                out[k] = (t.chiSquare, t.p)
                            case .failure(let why): rows[k].untestable[method] = why.reason
                            }
                        }
                    }
                }
                return out
            }
            func flags(_ results: [(statistic: Double, p: Double)?]) -> (Set<Int>, [Double?]) {
                let adjusted = BenjaminiHochberg.adjusted(results.map { $0?.p })
                var flagged = Set<Int>()
                for j in 0..<J { for f in 0..<F where (adjusted[row(j, f)] ?? 1) < options.falseDiscoveryRate { flagged.insert(j) } }
                return (flagged, adjusted)
            }

            var excluded = Set<Int>(), perRound: [[String]] = []
            var results = try round(excluded: excluded)
            if invariantModel == nil, method == .likelihoodRatio || method == .wald { invariantModel = irt.base }
            var (flagged, adjusted) = flags(results)
            perRound.append(flagged.sorted().map { data.itemIDs[$0] })
            var converged = true
            if options.purify {
                converged = false
                while perRound.count < options.maximumPurificationRounds {
                    if flagged == excluded { converged = true; break }
                    if flagged.count >= J - 1 {
                        warnings.append(
                            "\(method.rawValue): \(flagged.count) of \(J) items flagged; purification stopped (fewer than 2 items would be left to match on)"
                        )
                        break
                    }
                    excluded = flagged
                    results = try round(excluded: excluded)
                    (flagged, adjusted) = flags(results)
                    perRound.append(flagged.sorted().map { data.itemIDs[$0] })
                }
                if flagged == excluded { converged = true }
                if !converged {
                    warnings.append(
                        "\(method.rawValue): purification did not settle in \(options.maximumPurificationRounds) rounds; the last round is reported")
                }
                if let anchorCount = options.anchorCount {
                    let statistic = (0..<J).map { j in (0..<F).compactMap { results[row(j, $0)]?.statistic }.max() ?? .infinity }
                    let anchor = (0..<J).filter { !flagged.contains($0) }.sorted { statistic[$0] < statistic[$1] }.prefix(anchorCount)
                    if anchor.count < anchorCount {
                        warnings.append("\(method.rawValue): only \(anchor.count) unflagged items for a constant anchor of \(anchorCount)")
                    }
                    excluded = Set(0..<J).subtracting(anchor)
                    results = try round(excluded: excluded)
                    (flagged, adjusted) = flags(results)
                    perRound.append(flagged.sorted().map { data.itemIDs[$0] })
                }
            }
            for j in 0..<J {
                for f in 0..<F {
                    let k = row(j, f)
                    rows[k].adjustedP[method] = adjusted[k]
                    if let a = adjusted[k], a < options.falseDiscoveryRate { rows[k].flaggedBy.append(method) }
                    rows[k].anchor[method] = !excluded.contains(j)
                }
            }
            finalFlags[method] = flagged
            purification.append(
                DIFPurification(
                    method: method, flaggedPerRound: perRound, converged: converged,
                    anchorItems: (0..<J).filter { !excluded.contains($0) }.map { data.itemIDs[$0] }))
            seconds[method.rawValue] = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        }

        // DTF in the model with the flagged items free everywhere.
        let started = DispatchTime.now().uptimeNanoseconds
        let dtfFlags = finalFlags[.likelihoodRatio] ?? finalFlags[.wald] ?? finalFlags.values.reduce(into: Set<Int>()) { $0.formUnion($1) }
        var flaggedModel: MultipleGroupResult?, dtf: [DifferentialTestFunctioning] = []
        do {
            if invariantModel == nil { invariantModel = try irt.fit(free: []) }
            flaggedModel = try irt.fit(free: dtfFlags, standardErrors: options.dtfDraws > 0)
            dtf = focalGroups.map { DifferentialTestFunctioning(fit: flaggedModel!, focal: $0, draws: options.dtfDraws) }
        } catch {
            warnings.append("no DTF: the multiple-group model could not be fitted (\(error.message))")
        }
        seconds["dtf"] = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return DIFReport(
            reference: reference, focalGroups: focalGroups, groupSizes: zip(names, sizes).map { ($0, $1) }, matching: matching,
            matchingDescription: matchingDescription, options: options, rows: rows, purification: purification, dtf: dtf,
            flaggedModel: flaggedModel, invariantModel: invariantModel, multipleGroupFits: irt.fitsRun, warnings: warnings, seconds: seconds)
    }

    /// Stratum of each value: the score itself (score matching) or one of `count` equal-count strata by rank (θ).
    static func strata(_ values: [Double], matching: DIFMatching, count: Int) -> [Int] {
        guard matching == .theta else { return values.map { max(0, Int($0.rounded())) } }
        let order = values.indices.sorted { values[$0] < values[$1] }
        var out = [Int](repeating: 0, count: values.count)
        for (rank, i) in order.enumerated() { out[i] = rank * count / max(1, values.count) }
        return out
    }
}
