import ArgumentParser
import Foundation
import Psychometrics

struct AnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Item analysis: classical statistics, IRT item and person fit, local dependence, distractors.",
        discussion: """
            ITEMS.csv: item_id,n,p_value,point_biserial,alpha_if_deleted,a,b,c,infit,outfit,sx2,sx2_df,sx2_p,flags \
            for the items in both the responses and the bank. Classical statistics use each person's answered \
            items (α from pairwise-complete covariances; point-biserial against the rest score). S-X² \
            (Orlando–Thissen) uses the persons who answered every item; infit/outfit, l_z and Q3 use WLE \
            abilities; marginal reliability uses EAP. Flags: negative slope, low slope (a < --min-slope), \
            extreme p-value (outside --p-range), low point-biserial (< --min-point-biserial), misfit (S-X² p < \
            --misfit-p), infit/outfit outside --mnsq-range, and the calibration's own flags.

            With --options OPTIONS.csv (wide: chosen option codes; empty, 0 or NA = omitted) and keys from the \
            key column of --items ITEMS.csv (or of the bank), --distractors-out writes per option: choice rates \
            overall and in the top and bottom 27% by rest score, discrimination, and flags.
            """
    )

    @Argument(help: "Responses CSV (wide or long, as calibrate reads it).")
    var responses: String

    @Option(help: "Calibrated bank CSV.")
    var bank: String

    @Option(help: "Item table CSV (written atomically).")
    var out: String

    @Option(name: .customLong("summary-json"), help: "Test-level summary JSON (alpha, sem, marginal_reliability, n_persons, …).")
    var summaryJSON: String?

    @Option(name: .customLong("persons-out"), help: "Person fit CSV: person_id,theta_wle,se,lz.")
    var personsOut: String?

    @Option(name: .customLong("q3-out"), help: "Yen's Q3 for every item pair: item_a,item_b,q3.")
    var q3Out: String?

    @Option(help: "Raw option choices (wide CSV) for distractor analysis.")
    var options: String?

    @Option(help: "Item metadata CSV with a key column (for --options).")
    var items: String?

    @Option(name: .customLong("distractors-out"), help: "Distractor table CSV (with --options).")
    var distractorsOut: String?

    @OptionGroup var columns: ResponseColumnOptions

    @Option(name: .customLong("min-slope"), help: "Flag slopes below this, in \(FlagRules.allowedMinSlopes).") var minSlope = 0.5
    @Option(name: .customLong("min-point-biserial"), help: "Flag point-biserials below this, in \(FlagRules.allowedPointBiserials).") var minPointBiserial = 0.15
    @Option(name: .customLong("misfit-p"), help: "Flag S-X² p-values below this, in \(FlagRules.allowedProbabilities).") var misfitP = 0.01
    @Option(name: .customLong("p-range"), help: "Acceptable p-values, LOW,HIGH within \(FlagRules.allowedProbabilities).") var pRange = "0.05,0.95"
    @Option(name: .customLong("mnsq-range"), help: "Acceptable infit/outfit, LOW,HIGH within \(FlagRules.allowedMeanSquares).") var mnsqRange = "0.7,1.3"

    /// LOW,HIGH as two plain decimal numbers (`DecimalNumber`).
    func range(_ text: String, _ name: String) throws -> (Double, Double) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { DecimalNumber.parse($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let low = parts[0], let high = parts[1] else { throw ValidationError("--\(name) must be LOW,HIGH (two numbers), got '\(text)'") }
        return (low, high)
    }

    /// The flag thresholds; their ranges are checked by `FlagRules.validationProblems()`.
    func rules() throws -> FlagRules {
        FlagRules(minSlope: minSlope, minPointBiserial: minPointBiserial, misfitP: misfitP,
                  pRange: try range(pRange, "p-range"), mnsqRange: try range(mnsqRange, "mnsq-range"))
    }

    func validate() throws {
        try throwIfAny(try rules().validationProblems())
        if (options == nil) != (distractorsOut == nil) { throw ValidationError("--options and --distractors-out go together") }
    }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(inputs: [("input", responses), ("--bank", bank)] + given("--options", options) + given("--items", items),
                               outputs: [("--out", out)] + given("--summary-json", summaryJSON) + given("--persons-out", personsOut) + given("--q3-out", q3Out) + given("--distractors-out", distractorsOut))
            let itemBank = try loadBank(bank, requirePositiveSlopes: false)
            let table = try ItemAnalysisTable(responses: responses, fileOptions: columns.fileOptions, bank: itemBank, rules: try rules())
            let data = table.data, classical = table.classical, fit = table.fit, unknown = table.itemsNotInBank
            let parameters = table.parameters

            func num(_ v: Double?, _ digits: Int = 4) -> String { v.map { $0.isFinite ? fixed($0, digits) : "" } ?? "" }
            var text = "item_id,n,p_value,point_biserial,alpha_if_deleted,a,b,c,infit,outfit,sx2,sx2_df,sx2_p,flags\n"
            let flaggedItems = table.flaggedCount
            for row in table.rows {
                let c = row.classical, f = row.fit, p = row.parameters
                text += [csvField(c.itemID), String(c.responses), num(c.pValue), num(c.pointBiserial), num(c.alphaIfDeleted),
                         num(p.discrimination), num(p.difficulty), num(p.guessing), num(f.infit), num(f.outfit), num(f.sx2),
                         f.sx2DegreesOfFreedom.map(String.init) ?? "", num(f.sx2P, 6), csvField(row.flags.joined(separator: ";"))].joined(separator: ",") + "\n"
            }
            try writeAtomically(text, to: out)
            if let personsOut {
                var p = "person_id,theta_wle,se,lz\n"
                for person in fit.persons { p += "\(csvField(person.personID)),\(num(person.theta)),\(num(person.standardError)),\(num(person.lz))\n" }
                try writeAtomically(p, to: personsOut)
            }
            if let q3Out {
                var q = "item_a,item_b,q3\n"
                for j in 0..<data.itemCount { for k in (j + 1)..<data.itemCount { if let r = fit.q3[j][k] { q += "\(csvField(data.itemIDs[j])),\(csvField(data.itemIDs[k])),\(num(r))\n" } } }
                try writeAtomically(q, to: q3Out)
            }
            var distractorFlags = 0
            if let options, let distractorsOut {
                let metadata = try items.map { try ItemMetadata.load(csv: $0) }
                var keys: [String: String] = [:]
                for item in itemBank.items { if let k = item.metadata["key"], !k.isEmpty { keys[item.itemID] = k } }
                for (id, row) in metadata?.values ?? [:] { if let k = row["key"], !k.isEmpty { keys[id] = k.trimmingCharacters(in: .whitespaces) } }
                let analysis = try DistractorAnalysis.load(csv: options, keys: keys).analysis
                var d = "item_id,option,is_key,n,rate,rate_top,rate_bottom,discrimination,flags\n"
                for o in analysis.options {
                    if !o.flags.isEmpty { distractorFlags += 1 }
                    d += "\(csvField(o.itemID)),\(csvField(o.option)),\(o.isKey ? 1 : 0),\(o.count),\(num(o.rate)),\(num(o.rateTop)),\(num(o.rateBottom)),\(num(o.discrimination)),\(csvField(o.flags.joined(separator: ";")))\n"
                }
                try writeAtomically(d, to: distractorsOut)
            }
            let lz = fit.persons.compactMap(\.lz)
            let misfitting = lz.filter { $0 < -1.96 }.count
            let info = ModelFit.testInformation(parameters, at: stride(from: -4.0, through: 4.0, by: 0.5).map { $0 })
            if let summaryJSON {
                var json: [String: Any] = [
                    "n_persons": data.personCount, "n_items": data.itemCount, "complete_persons": classical.completePersons,
                    "sx2_persons": fit.sx2Persons, "flagged_items": flaggedItems, "persons_lz_below_minus_1_96": misfitting,
                    "items_not_in_bank": unknown, "persons_without_responses": table.personsWithoutResponses,
                    "test_information": info.map { ["theta": $0.theta, "information": $0.information, "se": $0.standardError] },
                    "q3_flagged_pairs": fit.q3Flagged.map { ["item_a": $0.first, "item_b": $0.second, "q3": $0.q3] as [String: Any] },
                ]
                json["alpha"] = classical.alpha ?? NSNull()
                json["sem"] = classical.sem ?? NSNull()
                json["marginal_reliability"] = fit.marginalReliability ?? NSNull()
                json["q3_mean"] = fit.q3Mean ?? NSNull()
                json["q3_max_abs"] = fit.q3MaxAbs ?? NSNull()
                json["mean_score"] = classical.meanScore ?? NSNull()
                json["sd_score"] = classical.sdScore ?? NSNull()
                let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
                try writeAtomically(String(decoding: data, as: UTF8.self) + "\n", to: summaryJSON)
            }
            var lines = ["iqscore analyze: \(formatCount(data.personCount)) persons × \(data.itemCount) items (\(formatCount(classical.completePersons)) answered every item)"]
            if !unknown.isEmpty { lines.append("warning: \(unknown.count) item\(unknown.count == 1 ? "" : "s") not in the bank left out: \(unknown.prefix(5).joined(separator: ", "))\(unknown.count > 5 ? ", …" : "")") }
            lines.append("alpha \(num(classical.alpha, 3)), SEM \(num(classical.sem, 3)), marginal reliability \(num(fit.marginalReliability, 3))")
            lines.append("flagged items: \(flaggedItems) of \(data.itemCount); Q3 mean \(num(fit.q3Mean, 3)), max |Q3| \(num(fit.q3MaxAbs, 3)), \(fit.q3Flagged.count) pair\(fit.q3Flagged.count == 1 ? "" : "s") more than 0.2 above the mean")
            lines.append("person fit: \(misfitting) of \(lz.count) persons with l_z < -1.96")
            if distractorsOut != nil { lines.append("distractors: \(distractorFlags) options flagged") }
            lines.append("wrote \(out)" + ([summaryJSON, personsOut, q3Out, distractorsOut].compactMap { $0 }.map { ", \($0)" }.joined()))
            printError(lines.joined(separator: "\n"))
            return ExitStatus.success
        }
    }
}
