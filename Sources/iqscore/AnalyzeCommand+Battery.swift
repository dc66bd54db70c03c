import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

extension AnalyzeCommand {
    /// `analyze` on a battery bank (bifactor, testlet or correlated factors): the bank's model against the
    /// unidimensional model on the same responses (`BatteryModelComparison`): log-likelihoods, AIC, BIC, the
    /// likelihood-ratio test, M2 of each, and Q3 at each model's EAPs; the items' loadings.
    func runBatteryAnalysis() throws -> Int32 {
        var refused: [String] = []
        if options != nil { refused.append("--options/--distractors-out (distractor analysis reads a unidimensional bank)") }
        if personsOut != nil { refused.append("--persons-out (iqscore score --bank writes every factor's score)") }
        if bankModel.bankModel != nil { refused.append("--bank-model (a battery bank's items are 2pl or 3pl)") }
        if !refused.isEmpty {
            throw ValidationError(
                "\(bank) is a multidimensional bank; analyze compares its model with one factor and does not take " + refused.joined(separator: "; "))
        }
        let r = try rules()
        var q3 = LocalDependenceQ3.Options()
        q3.minimumPairCount = r.q3MinimumPersons
        q3.threshold = r.q3Threshold
        func num(_ v: Double?, _ digits: Int = 4) -> String { v.map { $0.isFinite ? fixed($0, digits) : "" } ?? "" }
        let started = Date()
        let data: ResponseMatrix, notInBank: [String], comparison: BatteryModelComparison
        var itemHeader: [String], itemCells: [[String]], extraJSON: [String: Any], structureLine: String
        if CorrelatedFactorsBank.isCorrelated(csv: bank) {
            let file: CorrelatedFactorsBank, items: [CorrelatedFactorsResult.Item]
            (file, data, items, notInBank) = try Self.correlatedData(bank: bank, responses: responses, fileOptions: columns.fileOptions)
            comparison = try BatteryModelComparison.compare(data, correlatedItems: items, correlations: file.correlations, q3: q3)
            let k = file.factors.count
            itemHeader = ["factor", "a", "d", "c", "loading"]
            itemCells = items.map { item in
                [
                    csvField(file.factors[item.factor]), num(item.slope), num(item.intercept), num(item.guessing),
                    num(BifactorReliability.loadings(BifactorItem(generalSlope: item.slope, intercept: item.intercept)).general)
                ]
            }
            extraJSON = [
                "factors": file.factors,
                "factor_correlations": (0..<k).map { f in (0..<k).map { file.correlations[f * k + $0] } }
            ]
            structureLine = "factors \(file.factors.joined(separator: ", ")) (correlations \(Self.correlationSummary(file.correlations, k: k)))"
        } else {
            let file: BifactorBank, items: [BifactorItem], testletFactors: [Int]
            (file, data, items, notInBank, testletFactors) = try Self.batteryData(bank: bank, responses: responses, fileOptions: columns.fileOptions)
            let structure = file.structure
            comparison = try BatteryModelComparison.compare(data, items: items, specificFactorCount: structure.specificFactors.count, q3: q3)
            itemHeader = ["factor", "a_general", "a_specific", "d", "c", "loading_general", "loading_specific", "communality"]
            itemCells = items.map { item in
                let loadings = BifactorReliability.loadings(item)
                return [
                    csvField(item.specific.map { structure.specificFactors[$0] } ?? ""), num(item.generalSlope), num(item.specificSlope),
                    num(item.intercept), num(item.guessing), num(loadings.general), num(loadings.specific),
                    num(loadings.general * loadings.general + loadings.specific * loadings.specific)
                ]
            }
            extraJSON = ["factors": structure.specificFactors, "testlet_factors": testletFactors.map { structure.specificFactors[$0] }]
            structureLine =
                "factors \(structure.generalFactor) + \(structure.specificFactors.joined(separator: ", "))"
                + (testletFactors.isEmpty ? "" : " (testlet: a_s/a_g constant within each factor)")
        }
        let seconds = Date().timeIntervalSince(started)
        let uni = comparison.unidimensional, multi = comparison.multidimensional

        // Items: the bank's parameters and loadings, the unidimensional fit, each item's largest Q3 under both models.
        var largest = [(Double?, Double?)](repeating: (nil, nil), count: data.itemCount)
        for pair in comparison.pairs {
            for j in [pair.first, pair.second] {
                largest[j].0 = max(largest[j].0 ?? -1, pair.q3Unidimensional)
                if let m = pair.q3Multidimensional { largest[j].1 = max(largest[j].1 ?? -1, m) }
            }
        }
        let totals = data.itemTotals()
        var text =
            (["item_id"] + itemHeader.prefix(1) + ["n", "p_value"] + itemHeader.dropFirst()
            + ["a_unidimensional", "b_unidimensional", "c_unidimensional", "q3_max_unidimensional", "q3_max_\(multi.name)"]).joined(separator: ",")
            + "\n"
        for j in 0..<data.itemCount {
            let u = comparison.unidimensionalItems[j]
            text +=
                ([csvField(data.itemIDs[j])] + itemCells[j].prefix(1) + [
                    String(totals.responses[j]), num(Double(totals.correct[j]) / Double(max(1, totals.responses[j])))
                ]
                + itemCells[j].dropFirst() + [num(u.discrimination), num(u.difficulty), num(u.guessing), num(largest[j].0), num(largest[j].1)])
                .joined(separator: ",") + "\n"
        }
        try writeAtomically(text, to: out)
        if let q3Out {
            var q = "item_a,item_b,same_factor,n,q3_unidimensional,q3_\(multi.name)\n"
            for p in comparison.pairs {
                q +=
                    "\(csvField(data.itemIDs[p.first])),\(csvField(data.itemIDs[p.second])),\(p.sameFactor ? 1 : 0),\(p.persons),\(num(p.q3Unidimensional)),\(num(p.q3Multidimensional))\n"
            }
            try writeAtomically(q, to: q3Out)
        }
        if let summaryJSON {
            func value(_ v: Double?) -> Any { v.flatMap { $0.isFinite ? $0 : nil } ?? NSNull() }
            func fit(_ f: BatteryModelComparison.Fit) -> [String: Any] {
                var m2: Any = NSNull()
                if let s = f.m2 {
                    m2 =
                        [
                            "m2": s.m2, "df": s.degreesOfFreedom, "p": s.pValue, "rmsea": s.rmsea, "rmsea_5": s.rmseaLower, "rmsea_95": s.rmseaUpper,
                            "srmsr": s.srmsr, "persons": s.persons
                        ] as [String: Any]
                }
                return [
                    "model": f.name, "log_likelihood": f.logLikelihood, "parameters": f.parameters, "aic": f.aic, "bic": f.bic, "m2": m2,
                    "m2_undefined": f.m2Unavailable.map { $0 as Any } ?? NSNull(),
                    "q3": [
                        "pairs": f.q3.pairs, "mean": value(f.q3.mean), "mean_within_factors": value(f.q3.meanWithinFactors),
                        "mean_between_factors": value(f.q3.meanBetweenFactors), "max_abs_q3_star": value(f.q3.maxAbsStar),
                        "pairs_q3_star_above_threshold": f.q3.aboveThreshold
                    ] as [String: Any]
                ]
            }
            var json: [String: Any] = [
                "bank": bank, "responses": responses, "n_persons": comparison.persons, "n_items": data.itemCount,
                "items_not_in_bank": notInBank, "model": multi.name,
                "unidimensional": fit(uni), "multidimensional": fit(multi),
                "likelihood_ratio": ["g2": comparison.likelihoodRatio, "df": comparison.degreesOfFreedom, "p": comparison.pValue] as [String: Any],
                "q3_threshold": comparison.q3Threshold, "q3_min_persons": r.q3MinimumPersons, "seconds": seconds
            ]
            json.merge(extraJSON) { $1 }
            let encoded = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            try writeAtomically(String(decoding: encoded, as: UTF8.self) + "\n", to: summaryJSON)
        }

        var lines = [
            "iqscore analyze: \(formatCount(comparison.persons)) persons × \(data.itemCount) items; \(bank): \(multi.name) model, " + structureLine
        ]
        if !notInBank.isEmpty {
            lines.append(
                "warning: \(notInBank.count) item\(notInBank.count == 1 ? "" : "s") not in the bank left out: \(notInBank.prefix(5).joined(separator: ", "))\(notInBank.count > 5 ? ", …" : "")"
            )
        }
        lines.append(
            "model comparison (\(uni.name) fitted here to the same responses; \(multi.name) = the bank; N = \(formatCount(comparison.persons))):")
        lines.append("  model       logLik          p     AIC         BIC         M2 (df, p)                 RMSEA [90%]              SRMSR")
        for f in [uni, multi] {
            let m2 = f.m2.map { "\(fixed($0.m2, 2)) (\($0.degreesOfFreedom), \($0.pValue < 1e-4 ? "<1e-4" : fixed($0.pValue, 4)))" } ?? "undefined"
            let rmsea = f.m2.map { "\(fixed($0.rmsea, 4)) [\(fixed($0.rmseaLower, 4)), \(fixed($0.rmseaUpper, 4))]" } ?? ""
            lines.append(
                "  "
                    + [
                        f.name.padding(toLength: 10, withPad: " ", startingAt: 0),
                        fixed(f.logLikelihood, 3).padding(toLength: 15, withPad: " ", startingAt: 0),
                        String(f.parameters).padding(toLength: 5, withPad: " ", startingAt: 0),
                        fixed(f.aic, 2).padding(toLength: 11, withPad: " ", startingAt: 0),
                        fixed(f.bic, 2).padding(toLength: 11, withPad: " ", startingAt: 0), m2.padding(toLength: 26, withPad: " ", startingAt: 0),
                        rmsea.padding(toLength: 24, withPad: " ", startingAt: 0), f.m2.map { fixed($0.srmsr, 4) } ?? ""
                    ].joined(separator: " "))
        }
        for f in [uni, multi] { if let why = f.m2Unavailable { lines.append("  note: M2 of \(f.name) undefined: \(why)") } }
        if let s = multi.m2 ?? uni.m2, s.persons < comparison.persons {
            lines.append("  note: M2 uses the \(formatCount(s.persons)) persons who answered every item (of \(formatCount(comparison.persons)))")
        }
        let p = comparison.pValue < 1e-10 ? "< 1e-10" : String(format: "%.3g", comparison.pValue)
        let boundary =
            multi.name == "correlated"
            ? "one factor is every correlation at 1, on the boundary" : "the specific slopes' signs are not identified under one factor"
        lines.append(
            "likelihood ratio: G² = \(fixed(comparison.likelihoodRatio, 2)) on \(comparison.degreesOfFreedom) df, p \(p) (χ² reference approximate: \(boundary)); "
                + "ΔAIC \(fixed(multi.aic - uni.aic, 2)), ΔBIC \(fixed(multi.bic - uni.bic, 2)) (negative favours \(multi.name))")
        func q3Line(_ f: BatteryModelComparison.Fit) -> String {
            "  \(f.name.padding(toLength: 10, withPad: " ", startingAt: 0)) within factors \(num(f.q3.meanWithinFactors, 3)), between \(num(f.q3.meanBetweenFactors, 3)), max |Q3*| \(num(f.q3.maxAbsStar, 3)), \(f.q3.aboveThreshold) of \(f.q3.pairs) pairs with Q3* > \(comparison.q3Threshold.formatted6)"
        }
        let factorKind = multi.name == "correlated" ? "factor" : "specific factor"
        lines.append(
            "Q3 at each model's EAPs (mean over pairs of items on the same \(factorKind) / on different ones; within a factor the \(multi.name)'s Q3 is biased below 0, that factor being estimated from those items):"
        )
        lines.append(q3Line(uni))
        lines.append(q3Line(multi))
        lines.append("wrote \(out)" + ([summaryJSON, q3Out].compactMap { $0 }.map { ", \($0)" }.joined()) + " (\(fixed(seconds, 2)) s)")
        printError(lines.joined(separator: "\n"))
        return ExitStatus.success
    }

    /// The correlations of a K × K matrix R as "lowest…highest".
    static func correlationSummary(_ r: [Double], k: Int) -> String {
        let values = (0..<k).flatMap { f in (0..<f).map { r[f * k + $0] } }
        guard let low = values.min(), let high = values.max() else { return "none" }
        return low == high ? fixed(low, 3) : "\(fixed(low, 3))…\(fixed(high, 3))"
    }

    /// The correlated-factors bank at `bank` and the responses restricted to its items, with each data item's
    /// bank item and the data items not in the bank; at least 3 shared 0/1 items.
    static func correlatedData(bank: String, responses: String, fileOptions: ResponseFileOptions)
        throws -> (bank: CorrelatedFactorsBank, data: ResponseMatrix, items: [CorrelatedFactorsResult.Item], notInBank: [String])
    {
        let file = try CorrelatedFactorsBank.load(csv: bank)
        let (data, notInBank, position) = try bankItemsOfResponses(
            bankItemIDs: file.items.map(\.itemID), bank: bank, responses: responses, fileOptions: fileOptions)
        return (file, data, data.itemIDs.map { file.items[position[$0]!] }, notInBank)
    }

    /// The responses at `responses` restricted to the items of a battery bank (`bankItemIDs`), the data items not
    /// in the bank, and each bank item's position; at least 3 shared 0/1 items.
    static func bankItemsOfResponses(bankItemIDs: [String], bank: String, responses: String, fileOptions: ResponseFileOptions)
        throws -> (data: ResponseMatrix, notInBank: [String], position: [String: Int])
    {
        let (input, report) = try ResponseMatrix.load(csv: responses, options: fileOptions)
        noteUnnamedIDColumn(report)
        let position = Dictionary(uniqueKeysWithValues: bankItemIDs.enumerated().map { ($1, $0) })
        let keep = input.itemIDs.map { position[$0] != nil }
        let data = keep.allSatisfy({ $0 }) ? input : input.keepingItems(keep).matrix
        guard data.itemCount >= 3 else {
            throw ValidationError("\(responses) shares \(data.itemCount) items with \(bank); the comparison needs at least 3")
        }
        guard data.isDichotomous else {
            throw ValidationError("\(responses): the items of a battery bank are scored 0/1; found items with more categories")
        }
        return (data, input.itemIDs.filter { position[$0] == nil }, position)
    }

    /// The bifactor bank at `bank` (testlet factors marked, `markTestletFactors`) and the responses restricted to
    /// its items, with each data item's bank item and the data items not in the bank; at least 3 shared 0/1 items.
    static func batteryData(bank: String, responses: String, fileOptions: ResponseFileOptions) throws
        -> (bank: BifactorBank, data: ResponseMatrix, items: [BifactorItem], notInBank: [String], testletFactors: [Int])
    {
        var file = try loadBifactorBank(bank)
        let testletFactors = markTestletFactors(&file.items)
        let (data, notInBank, position) = try bankItemsOfResponses(
            bankItemIDs: file.itemIDs, bank: bank, responses: responses, fileOptions: fileOptions)
        return (file, data, data.itemIDs.map { file.items[position[$0]!] }, notInBank, testletFactors)
    }

    /// A testlet bank as `calibrate --model testlet` writes it: in every factor of two or more items a_s = λ a_g
    /// for one ratio λ, to the bank's 6 decimals (|a_s − λ a_g| ≤ 2·10⁻⁶, λ from the factor's largest a_g). Those
    /// items get `testletRatio` (one parameter per factor, not one per item); returns the factors.
    static func markTestletFactors(_ items: inout [BifactorItem]) -> [Int] {
        let factors = Set(items.compactMap(\.specific)).sorted()
        let testlet = factors.filter { f in
            let members = items.filter { $0.specific == f }
            guard members.count >= 2, let anchor = members.max(by: { abs($0.generalSlope) < abs($1.generalSlope) }),
                anchor.generalSlope != 0, anchor.specificSlope != 0
            else { return false }
            let ratio = anchor.specificSlope / anchor.generalSlope
            return members.allSatisfy { abs($0.specificSlope - ratio * $0.generalSlope) <= 2e-6 }
        }
        // Only a bank whose every factor is a testlet is a testlet bank (a bifactor bank never has equal ratios).
        guard !factors.isEmpty, testlet.count == factors.count else { return [] }
        for j in items.indices {
            guard let f = items[j].specific, testlet.contains(f) else { continue }
            let anchor = items.filter { $0.specific == f }.max(by: { abs($0.generalSlope) < abs($1.generalSlope) })!
            let ratio = anchor.specificSlope / anchor.generalSlope
            items[j] = BifactorItem(
                generalSlope: items[j].generalSlope, specific: f, intercept: items[j].intercept, guessing: items[j].guessing,
                estimatesGuessing: items[j].estimatesGuessing, testletRatio: ratio)
        }
        return testlet
    }
}
