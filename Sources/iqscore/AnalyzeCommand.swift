import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

struct AnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Item analysis: classical statistics, IRT item and person fit, local dependence, distractors.",
        discussion: """
            ITEMS.csv: item_id,n,p_value,point_biserial,alpha_if_deleted,a,b,c,infit,outfit,sx2,sx2_df,sx2_p,flags, \
            rmsd,rmsd_critical,infit_z,outfit_z for the items in both the responses and the bank. Every \
            statistic uses only the items each person answered, so all are defined for missing-by-design banks \
            (each person answers 25 of 1,500 items) as well as for complete data. A blank cell is undefined; the \
            summary JSON's "undefined" object, and a note on stderr, say which statistic is undefined and why.

            Classical: p-value, point-biserial against the rest score, and Cronbach's α (pairwise-complete \
            covariances) with SEM and α-if-deleted, these three only when at least 50% of the person × item \
            cells are answered (otherwise they describe a test nobody took). Model-based: S-X² (Orlando–Thissen, \
            persons grouped by their summed score on the items they answered, sparse groups pooled by --sx2-pooling); infit/outfit of the residuals \
            given that score, with Wilson–Hilferty ZSTD; RMSD between the posterior-weighted observed and the \
            model ICC (as in PISA), with the value the item's n reaches by chance (rmsd_critical, from 20 \
            posterior predictive replicates); Yen's Q3 at WLE θ and Q3* = Q3 − mean Q3 for pairs answered \
            together by at least --q3-min-persons; l_z and Snijders' l_z* at WLE θ; three reliabilities: \
            marginal_rxx, mirt's marginal reliability (the whole test's I/(I + 1) averaged over N(0, 1), every \
            item counted as in mirt); the reliability from the mean error variance, 1/(1 + mean 1/I(θ)) over \
            N(0, 1) and the persons' forms (Green et al. 1984); and the empirical reliability from EAP θ and its \
            posterior SD (mirt's empirical_rxx). All are defined for any design. Maydeu-Olivares & Joe's M2 \
            (with RMSEA, its 90% interval, and SRMSR, as mirt's M2()) on the persons who answered every item \
            (at least 50; at most 80 items), the bank's parameters taken as ML estimates from these responses.

            Flags: negative slope, low slope (a < --min-slope), extreme p-value (outside --p-range), low \
            point-biserial (< --min-point-biserial), misfit (S-X² p < --misfit-p), infit or outfit outside \
            --mnsq-range with |ZSTD| beyond the two-sided --misfit-p critical value (2.58 at 0.01), RMSD above \
            both --max-rmsd and rmsd_critical, and the calibration's own flags. Q3 pairs: Q3* above \
            --q3-threshold and a model-based z above the Bonferroni critical value for --misfit-p over the pairs \
            compared. On data simulated from the model each item statistic flags about --misfit-p of the items \
            or fewer (README, "False flags on data from the model").

            With --options OPTIONS.csv (wide: chosen option codes; empty, 0 or NA = omitted) and keys from the \
            key column of --items ITEMS.csv (or of the bank), --distractors-out writes per option: choice rates \
            overall and in the top and bottom 27% by rest score, discrimination, and flags.

            A bank with items scored in more than two categories (graded, gpcm, pcm, rsm, nominal; cells 0…K−1 or \
            the bank's labels) gets their analysis instead: ITEMS.csv item_id,model,categories,n,mean_score, \
            max_score,item_rest_r,category_n,category_mean_rest,sx2,sx2_df,sx2_p,infit,outfit,infit_z,outfit_z, \
            flags, with the generalised S-X² (Kang & Chen 2008, over each person's form, the exact covariance of \
            the category counts given the scores: Orlando–Thissen's for 0/1 items) and the conditional \
            infit/outfit of the scores; flags: misfit, infit/outfit, low item-rest correlation, a category chosen \
            by fewer than 10, category mean rest scores out of order. --persons-out writes each person's WLE with \
            l_z and l_z* for items in any number of categories (Drasgow, Levine & Williams 1985; Sinharay 2016); \
            --q3-out and --options are for 0/1 banks.

            A bifactor or testlet bank (calibrate --model bifactor|testlet) gets a model comparison instead: the \
            unidimensional model of the same item type fitted here to the same responses against the bank's model \
            — log-likelihoods, AIC, BIC, the likelihood-ratio test G² (its χ² reference approximate: the specific \
            slopes' signs are not identified under one factor), Maydeu-Olivares & Joe's M2 with RMSEA (90% \
            interval) and SRMSR on the persons who answered every item (at most 80 items; as mirt's M2()), and \
            Yen's Q3 at each model's EAPs averaged over pairs within and between specific factors (within a \
            factor the bifactor's Q3 is biased below 0, because θ_s is estimated from those same items). \
            ITEMS.csv: item_id,factor,n,p_value,a_general,a_specific,d,c,loading_general,loading_specific, \
            communality,a_unidimensional,b_unidimensional,c_unidimensional,q3_max_unidimensional,q3_max_<model>; \
            --q3-out: item_a,item_b,same_factor,n,q3_unidimensional,q3_<model>. A testlet bank is recognised by \
            a_s = λ·a_g within every factor (one λ per factor counted). A correlated-factors bank (calibrate \
            --model correlated) gets the same comparison (the one factor is every correlation at 1; its log-likelihood \
            integrated as calibrate integrates it, so it equals calibrate's on the same responses; M2 integrates each \
            set of items over its own factors only, Δ₂ over items and correlations); ITEMS.csv: item_id,factor,n, \
            p_value,a,d,c,loading,a_unidimensional,…; the summary adds factor_correlations.
            """
    )

    @Argument(help: "Responses CSV (wide or long, as calibrate reads it).")
    var responses: String

    @Option(help: "Calibrated bank CSV.")
    var bank: String

    @Option(help: "Item table CSV (written atomically).")
    var out: String

    @Option(
        name: .customLong("summary-json"),
        help:
            "Test-level summary JSON (alpha, sem, marginal_rxx, mean_error_variance_reliability, empirical_reliability, n_persons, fit_flags, undefined, …)."
    )
    var summaryJSON: String?

    @Option(name: .customLong("persons-out"), help: "Person fit CSV: person_id,theta_wle,se,lz,lz_star.")
    var personsOut: String?

    @Option(name: .customLong("q3-out"), help: "Yen's Q3 for every item pair compared: item_a,item_b,q3,n,q3_star,z.")
    var q3Out: String?

    @Option(help: "Raw option choices (wide CSV) for distractor analysis.")
    var options: String?

    @Option(help: "Item metadata CSV with a key column (for --options).")
    var items: String?

    @Option(name: .customLong("distractors-out"), help: "Distractor table CSV (with --options).")
    var distractorsOut: String?

    @OptionGroup var columns: ResponseColumnOptions

    @Option(name: .customLong("min-slope"), help: "Flag slopes a below this, in \(FlagRules.allowedMinSlopes).") var minSlope = 0.5
    @Option(name: .customLong("min-point-biserial"), help: "Flag point-biserials below this, in \(FlagRules.allowedPointBiserials).")
    var minPointBiserial = 0.15
    @Option(
        name: .customLong("misfit-p"),
        help:
            "Significance level of the fit tests, in \(FlagRules.allowedProbabilities): S-X² p below it, infit/outfit |ZSTD| beyond its two-sided critical value, RMSD above its 1 − p null quantile, Q3 family-wise over the pairs."
    ) var misfitP = 0.01
    @Option(name: .customLong("p-range"), help: "Acceptable p-values, LOW,HIGH within \(FlagRules.allowedProbabilities).") var pRange = "0.05,0.95"
    @Option(
        name: .customLong("mnsq-range"),
        help:
            "Acceptable infit/outfit mean squares, LOW,HIGH within \(FlagRules.allowedMeanSquares) (flagged outside it only when |ZSTD| is significant)."
    ) var mnsqRange = "0.7,1.3"
    @Option(name: .customLong("max-rmsd"), help: "Flag RMSD above this (and above the critical value of the item's n), in \(FlagRules.allowedRMSDs).")
    var maxRMSD = 0.1
    @Option(
        name: .customLong("q3-threshold"),
        help: "Flag item pairs whose Q3 exceeds the mean Q3 by more than this (and significantly), in \(FlagRules.allowedQ3Thresholds).")
    var q3Threshold = 0.2
    @Option(
        name: .customLong("sx2-pooling"),
        help:
            "How S-X² pools sparse score groups: forward (from the low score up until both expected counts reach 1; the default) or mirt (mirt's itemfit collapseCells rule: one-person groups first, then the first sparse group into its smaller neighbour)."
    ) var sx2Pooling = SX2Pooling.forward
    @Option(
        name: .customLong("q3-min-persons"),
        help: "Compare Q3 only for item pairs answered together by at least this many persons, \(FlagRules.allowedQ3MinimumPersons.text).")
    var q3MinPersons = 30

    /// LOW,HIGH as two plain decimal numbers (`DecimalNumber`).
    func range(_ text: String, _ name: String) throws -> (Double, Double) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { DecimalNumber.parse($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let low = parts[0], let high = parts[1] else {
            throw ValidationError("--\(name) must be LOW,HIGH (two numbers), got '\(text)'")
        }
        return (low, high)
    }

    /// The flag thresholds; their ranges are checked by `FlagRules.validationProblems()`.
    func rules() throws -> FlagRules {
        FlagRules(
            minSlope: minSlope, minPointBiserial: minPointBiserial, misfitP: misfitP,
            pRange: try range(pRange, "p-range"), mnsqRange: try range(mnsqRange, "mnsq-range"),
            maxRMSD: maxRMSD, q3Threshold: q3Threshold, q3MinimumPersons: q3MinPersons, sx2Pooling: sx2Pooling)
    }

    @OptionGroup var bankModel: BankModelOption

    func validate() throws {
        try throwIfAny(try rules().validationProblems())
        if (options == nil) != (distractorsOut == nil) { throw ValidationError("--options and --distractors-out go together") }
    }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(
                inputs: [("input", responses), ("--bank", bank)] + given("--options", options) + given("--items", items),
                outputs: [("--out", out)] + given("--summary-json", summaryJSON) + given("--persons-out", personsOut) + given("--q3-out", q3Out)
                    + given("--distractors-out", distractorsOut))
            if BifactorBank.isMultidimensional(csv: bank) { return try runBatteryAnalysis() }
            let itemBank = try loadBank(bank, requirePositiveSlopes: false, categoryItems: bankModel.reading)
            if itemBank.hasCategoryItems { return try runCategoryAnalysis(bank: itemBank, rules: try rules()) }
            let table = try ItemAnalysisTable(responses: responses, fileOptions: columns.fileOptions, bank: itemBank, rules: try rules())
            let data = table.data, classical = table.classical, fit = table.fit, unknown = table.itemsNotInBank
            let parameters = table.parameters

            func num(_ v: Double?, _ digits: Int = 4) -> String { v.map { $0.isFinite ? fixed($0, digits) : "" } ?? "" }
            var text =
                "item_id,n,p_value,point_biserial,alpha_if_deleted,a,b,c,infit,outfit,sx2,sx2_df,sx2_p,flags,rmsd,rmsd_critical,infit_z,outfit_z\n"
            let flaggedItems = table.flaggedCount
            for row in table.rows {
                let c = row.classical, f = row.fit, p = row.bankParameters
                text +=
                    [
                        csvField(c.itemID), String(c.responses), num(c.pValue), num(c.pointBiserial), num(c.alphaIfDeleted),
                        num(p.discrimination), num(p.difficulty), num(p.guessing), num(f.infit), num(f.outfit), num(f.sx2),
                        f.sx2DegreesOfFreedom.map(String.init) ?? "", num(f.sx2P, 6), csvField(row.flags.joined(separator: ";")),
                        num(f.rmsd), num(f.rmsdCritical), num(f.infitZ, 3), num(f.outfitZ, 3)
                    ].joined(separator: ",") + "\n"
            }
            try writeAtomically(text, to: out)
            if let personsOut {
                var p = "person_id,theta_wle,se,lz,lz_star\n"
                // θ on the bank's metric (the fit ran on the N(0, 1) one).
                let latent = table.latentScale
                for person in fit.persons {
                    p +=
                        "\(csvField(person.personID)),\(num(latent.theta(fromStandard: person.theta))),\(num(person.standardError * latent.sd)),\(num(person.lz)),\(num(person.lzStar))\n"
                }
                try writeAtomically(p, to: personsOut)
            }
            if let q3Out {
                var q = "item_a,item_b,q3,n,q3_star,z\n"
                for pair in fit.localDependence?.pairs ?? [] {
                    q +=
                        "\(csvField(data.itemIDs[pair.first])),\(csvField(data.itemIDs[pair.second])),\(num(pair.q3)),\(pair.persons),\(num(pair.q3Star)),\(num(pair.z, 3))\n"
                }
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
                    d +=
                        "\(csvField(o.itemID)),\(csvField(o.option)),\(o.isKey ? 1 : 0),\(o.count),\(num(o.rate)),\(num(o.rateTop)),\(num(o.rateBottom)),\(num(o.discrimination)),\(csvField(o.flags.joined(separator: ";")))\n"
                }
                try writeAtomically(d, to: distractorsOut)
            }
            let lz = fit.persons.compactMap(\.lz), lzStar = fit.persons.compactMap(\.lzStar)
            let misfitting = lz.filter { $0 < -1.96 }.count, misfittingStar = lzStar.filter { $0 < -1.96 }.count
            let info = ModelFit.testInformation(parameters, at: stride(from: -4.0, through: 4.0, by: 0.5).map { $0 })
            let undefined = table.undefined
            let q3 = fit.localDependence
            // Per fit statistic: units tested (items with the statistic, pairs compared, persons) and flagged.
            var fitFlags: [String: [String: Int]] = [:]
            for flag in ItemAnalysisTable.FitFlag.allCases {
                let tested = table.rows.filter { row in
                    switch flag {
                    case .sx2: return row.fit.sx2P != nil
                    case .infit: return row.fit.infitZ != nil
                    case .outfit: return row.fit.outfitZ != nil
                    case .rmsd: return row.fit.rmsd != nil
                    }
                }.count
                fitFlags[flag.rawValue] = ["tested": tested, "flagged": table.rows.filter { $0.fitFlags.contains(flag) }.count]
            }
            fitFlags["infit_or_outfit"] = [
                "tested": table.rows.filter { $0.fit.infitZ != nil || $0.fit.outfitZ != nil }.count,
                "flagged": table.rows.filter { $0.fitFlags.contains(.infit) || $0.fitFlags.contains(.outfit) }.count
            ]
            fitFlags["q3_pairs"] = ["tested": q3?.pairs.count ?? 0, "flagged": fit.q3Flagged.count]
            fitFlags["lz"] = ["tested": lz.count, "flagged": misfitting]
            fitFlags["lz_star"] = ["tested": lzStar.count, "flagged": misfittingStar]
            if let summaryJSON {
                var json: [String: Any] = [
                    "n_persons": data.personCount, "n_items": data.itemCount, "complete_persons": classical.completePersons,
                    "sx2_persons": fit.sx2Persons, "flagged_items": flaggedItems, "persons_lz_below_minus_1_96": misfitting,
                    "persons_lz_star_below_minus_1_96": misfittingStar,
                    "items_not_in_bank": unknown, "persons_without_responses": table.personsWithoutResponses,
                    "test_information": info.map { ["theta": $0.theta, "information": $0.information, "se": $0.standardError] },
                    "q3_flagged_pairs": fit.q3Flagged.map {
                        ["item_a": $0.first, "item_b": $0.second, "q3": $0.q3, "n": $0.persons, "q3_star": $0.q3Star, "z": $0.z] as [String: Any]
                    },
                    "q3_pairs_compared": q3?.pairs.count ?? 0, "q3_min_persons": table.rules.q3MinimumPersons,
                    "fit_flags": fitFlags, "undefined": undefined,
                    "mean_items_per_person": data.personCount > 0 ? Double(data.cellCount) / Double(data.personCount) : 0
                ]
                func value(_ v: Double?) -> Any { v.flatMap { $0.isFinite ? $0 : nil } ?? NSNull() }
                json["alpha"] = value(classical.alpha)
                json["sem"] = value(classical.sem)
                json["marginal_rxx"] = value(fit.marginalRXX)
                json["mean_error_variance_reliability"] = value(fit.meanErrorVarianceReliability)
                json["empirical_reliability"] = value(fit.empiricalReliability)
                json["q3_mean"] = value(fit.q3Mean)
                json["q3_max_abs"] = value(fit.q3MaxAbs)
                json["q3_critical_z"] = value(q3?.criticalZ)
                json["mean_score"] = value(classical.meanScore)
                if let m2 = table.m2 {
                    json["m2"] =
                        [
                            "m2": m2.m2, "df": m2.degreesOfFreedom, "p": m2.pValue, "rmsea": m2.rmsea, "rmsea_5": m2.rmseaLower,
                            "rmsea_95": m2.rmseaUpper, "srmsr": m2.srmsr, "persons": m2.persons, "parameters": m2.parameters
                        ] as [String: Any]
                } else {
                    json["m2"] = NSNull()
                    json["m2_undefined"] = table.m2Undefined ?? NSNull()
                }
                json["sd_score"] = value(classical.sdScore)
                let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                try writeAtomically(String(decoding: data, as: UTF8.self) + "\n", to: summaryJSON)
            }
            func count(_ k: Int, _ noun: String) -> String { "\(formatCount(k)) \(noun)\(k == 1 ? "" : "s")" }
            func shown(_ v: Double?) -> String { v.map { $0.isFinite ? fixed($0, 3) : "undefined" } ?? "undefined" }
            let perPerson = data.personCount > 0 ? Double(data.cellCount) / Double(data.personCount) : 0
            var lines = [
                "iqscore analyze: \(formatCount(data.personCount)) persons × \(data.itemCount) items (\(formatCount(classical.completePersons)) answered every item; \(fixed(perPerson, 1)) items per person)"
            ]
            if !unknown.isEmpty {
                lines.append(
                    "warning: \(unknown.count) item\(unknown.count == 1 ? "" : "s") not in the bank left out: \(unknown.prefix(5).joined(separator: ", "))\(unknown.count > 5 ? ", …" : "")"
                )
            }
            lines.append(
                "alpha \(shown(classical.alpha)), SEM \(shown(classical.sem)), marginal_rxx \(shown(fit.marginalRXX)), mean-error-variance reliability \(shown(fit.meanErrorVarianceReliability)), empirical reliability \(shown(fit.empiricalReliability))"
            )
            let flagged = fitFlags.mapValues { $0["flagged"] ?? 0 }
            lines.append(
                "flagged items: \(flaggedItems) of \(data.itemCount); fit: S-X² \(flagged["sx2"]!), infit/outfit \(flagged["infit_or_outfit"]!), RMSD \(flagged["rmsd"]!)"
            )
            if let q3, let mean = q3.mean {
                lines.append(
                    "Q3: \(count(q3.pairs.count, "pair")) answered together by ≥ \(table.rules.q3MinimumPersons) persons, mean \(fixed(mean, 3)), max |Q3| \(shown(q3.maxAbs)); \(count(fit.q3Flagged.count, "pair")) flagged (Q3* > \(table.rules.q3Threshold.formatted6), z > \(shown(q3.criticalZ)))"
                )
            } else {
                lines.append("Q3: no pair compared")
            }
            if let m2 = table.m2 {
                lines.append(
                    "M2 \(fixed(m2.m2, 2)) on \(m2.degreesOfFreedom) df (p \(m2.pValue < 1e-4 ? "< 1e-4" : fixed(m2.pValue, 4))), RMSEA \(fixed(m2.rmsea, 4)) [\(fixed(m2.rmseaLower, 4)), \(fixed(m2.rmseaUpper, 4))], SRMSR \(fixed(m2.srmsr, 4)) on the \(formatCount(m2.persons)) persons who answered every item (Maydeu-Olivares & Joe; the bank's parameters taken as ML estimates from these data)"
                )
            } else if let why = table.m2Undefined {
                lines.append("M2 undefined: \(why)")
            }
            lines.append("person fit: l_z < -1.96 for \(misfitting) of \(lz.count) persons, l_z* < -1.96 for \(misfittingStar) of \(lzStar.count)")
            if distractorsOut != nil { lines.append("distractors: \(distractorFlags) options flagged") }
            // Undefined statistics: α, SEM and α-if-deleted share one reason.
            if let reason = undefined["alpha"] { lines.append("note: alpha, SEM and alpha-if-deleted undefined: \(reason)") }
            for key in undefined.keys.sorted() where !["alpha", "sem", "alpha_if_deleted"].contains(key) {
                lines.append("note: \(key) undefined: \(undefined[key]!)")
            }
            lines.append("wrote \(out)" + ([summaryJSON, personsOut, q3Out, distractorsOut].compactMap { $0 }.map { ", \($0)" }.joined()))
            printError(lines.joined(separator: "\n"))
            return ExitStatus.success
        }
    }
}

extension SX2Pooling: ExpressibleByArgument {}
