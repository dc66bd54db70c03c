import ArgumentParser
import Fairness
import Foundation
import Psychometrics
import PsychometricsIO

extension DIFMatching: ExpressibleByArgument {}

struct DIFCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dif",
        abstract:
            "Differential item functioning across groups (Mantel–Haenszel, logistic regression, IRT likelihood-ratio and Wald) and differential test functioning.",
        discussion: """
            Every item is tested for every focal group (each group other than --reference) against the reference \
            group. DIF.csv has one row per item × focal group: item_id,focal_group,n_reference,n_focal,p_reference, \
            p_focal, then per method its statistic, p, Benjamini–Hochberg adjusted p (over all of that method's \
            tests) and effect size, the item's parameters in both groups, the methods that flag it (adjusted p \
            below --fdr) and why a test could not run. Empty cells: a method not run or not possible.

            mh: Mantel–Haenszel χ² (continuity-corrected), common odds ratio, MH D-DIF = −2.35 ln α (negative: \
            harder for the focal group) with its Robins–Breslow–Greenland SE, and the ETS class (Zwick 2012): A \
            when |D| < 1 or χ² not significant at 0.05, C when |D| ≥ 1.5 and significantly above 1 (one-sided \
            0.05), else B; B and C carry the sign. lr: logistic regression (Swaminathan & Rogers 1990) of the \
            response on the matching criterion, group and their product: the uniform (1 df), non-uniform (1 df) and \
            combined (2 df) likelihood-ratio χ², Nagelkerke ΔR², and the Zumbo–Thomas (0.13/0.26) and \
            Jodoin–Gierl (0.035/0.070) classes. irt: the likelihood-ratio test of Thissen, Steinberg & Wainer \
            through the multiple-group model (the reference group N(0, 1), each other group's mean and SD \
            estimated): the item free in the focal group against the item invariant, every other item invariant \
            (the anchor), on 2 df (2PL) or 3 (3PL). wald: Lord's Wald χ² of the same item in the same augmented \
            model, with the covariance of the joint fit (Langer 2008). As mirt's DIF().

            Matching (mh, lr): --matching total (number correct over the items including the studied one, as \
            Holland & Thayer; the default for complete data), rest (without it), or theta (the EAP from the \
            matching items and the studied item under --bank's parameters, or a pooled 2PL fit of these data without \
            --bank; the default for missing-by-design or adaptive data); Mantel–Haenszel then stratifies θ into \
            --theta-strata equal-count strata of the persons who answered the item. --purify: flagged items leave the \
            matching criterion (mh, lr) or become free in every group (irt, wald) and every item is tested again, \
            until the flagged set repeats; --anchor-count N then tests every item against the N unflagged items \
            with the smallest statistics (a constant anchor).

            DTF (Chalmers, Counsell & Flora 2016), per focal group, in the multiple-group model with the flagged \
            items (irt's, else any method's) free: the signed and unsigned expected-score differences at equal θ \
            over the focal group's distribution, in points and percent of the items, with 95% intervals from \
            --dtf-draws parameter draws; --dtf-out writes, from θ = −3 to 3, both groups' expected scores and the \
            IQ gap 15(θ − θ*) a focal person at θ would get from a scoring that treats the groups alike. \
            Summary JSON (the manifest): groups, matching, per method the items flagged each round, the DTF, the \
            multiple-group fit.

            Refused with the reason: a group with fewer than --min-group-persons persons, a missing reference, an \
            empty group label, a session in two groups. An item a group never saw, or saw fewer than \
            --min-item-responses times, is reported untestable for that group; a freed item whose focal responses \
            are all correct or all incorrect likewise.
            """)

    @Argument(help: "Responses CSV (wide or long, as calibrate reads it) with a group column; with --group-file, the reference group's responses.")
    var responses: String

    @Option(name: .customLong("group-column"), help: "Column holding each person's group (every row of a session the same).")
    var groupColumn: String?

    @Option(
        name: .customLong("group-file"),
        help: ArgumentHelp(
            "One file per group instead of --group-column: a non-reference group's responses (repeat per group); the positional file holds the reference group's. Items are matched by id; groups may see different items.",
            valueName: "GROUP=PATH"))
    var groupFiles: [String] = []

    @Option(help: "The reference group: its label in --group-column (with --group-file, the positional file's group name).")
    var reference: String

    @Option(help: "DIF table CSV (written atomically): one row per item × focal group.")
    var out: String

    @Option(help: "Calibrated bank CSV: θ matching's parameters and the default --model (2pl or 3pl).")
    var bank: String?

    @Option(help: "Methods, comma-separated: mh, lr, irt, wald.")
    var methods = "mh,lr,irt"

    @Option(help: "Matching criterion of mh and lr: automatic, total, rest or theta.")
    var matching = DIFMatching.automatic

    @Option(name: .customLong("theta-strata"), help: "θ matching: Mantel–Haenszel strata, 1…100.")
    var strata = 20

    @Flag(help: "Purify the matching criterion / anchor iteratively.")
    var purify = false

    @Option(name: .customLong("anchor-count"), help: "After purification, test against this many anchor items (the least DIF among the unflagged).")
    var anchorCount: Int?

    @Option(help: "False discovery rate (Benjamini–Hochberg) for the flags, in (0, 1).")
    var fdr = 0.05

    @Option(help: "Item model of the IRT tests: 2pl or 3pl (default: --bank's, else 2pl).")
    var model: IRTModel?

    @Option(name: .customLong("min-group-persons"), help: "Refuse a group with fewer persons with responses, at least 2.")
    var minGroupPersons = 20

    @Option(
        name: .customLong("min-item-responses"),
        help: "Test an item for a focal group only with at least this many responses from each of the two groups.")
    var minItemResponses = 10

    @Option(name: .customLong("dtf-out"), help: "DTF table CSV: focal_group,theta,expected_score_reference,expected_score_focal,difference,iq_gap.")
    var dtfOut: String?

    @Option(name: .customLong("dtf-draws"), help: "Parameter draws for the DTF intervals, 0…100000 (0: none).")
    var dtfDraws = 1_000

    @Option(name: .customLong("summary-json"), help: "Summary JSON and run manifest, written last (default: OUT with .summary.json).")
    var summaryJSON: String?

    @Option(help: "Worker threads (default: all cores).")
    var threads: Int?

    @OptionGroup var columns: ResponseColumnOptions

    func validate() throws {
        try throwIfAny(try difOptions().validationProblems(naming: .option))
        guard groupSource.isGiven else {
            throw ValidationError("give the groups: --group-column COLUMN, or --group-file GROUP=PATH per non-reference group")
        }
        _ = try groupSource.files()
    }

    var groupSource: GroupSource { GroupSource(responses: responses, groupColumn: groupColumn, groupFiles: groupFiles, reference: reference) }

    /// A comma-separated list of methods (mh, lr, irt, wald), each once, in the order given.
    static func parsedMethods(_ text: String, option: String) throws -> [DIFMethod] {
        var chosen: [DIFMethod] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            guard let method = DIFMethod(rawValue: name) else {
                throw ValidationError("\(option): unknown method \(TextFidelity.quoted(name)); allowed: mh, lr, irt, wald")
            }
            if !chosen.contains(method) { chosen.append(method) }
        }
        return chosen
    }

    func difOptions(bankModel: IRTModel? = nil) throws -> DIFOptions {
        var options = DIFOptions()
        options.methods = try Self.parsedMethods(methods, option: "--methods")
        options.matching = matching
        options.thetaStrata = strata
        options.purify = purify
        options.anchorCount = anchorCount
        options.falseDiscoveryRate = fdr
        var calibration = CalibrationOptions(model: model ?? bankModel ?? .twoPL)
        calibration.naming = .option
        if let threads { calibration.workers = threads }
        options.calibration = calibration
        options.minimumGroupPersons = minGroupPersons
        options.minimumResponsesPerGroup = minItemResponses
        options.dtfDraws = dtfDraws
        return options
    }

    var manifestPath: String? { iqscore.manifestPath(summaryJSON: summaryJSON, out: out) }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(
                inputs: [("input", responses)] + (try groupSource.files() ?? []).dropFirst().map { ("--group-file", $0.path) }
                    + given("--bank", bank),
                outputs: [("--out", out)] + given("--dtf-out", dtfOut) + given("--summary-json", manifestPath))
            BLASConfiguration.setThreadCount(1)
            let started = Date()
            let itemBank = try bank.map { try loadBank($0, requirePositiveSlopes: false) }
            let (data, report, groups) = try groupSource.load(
                options: columns.fileOptions, maxMemoryBytes: nil, threads: threads ?? WorkerThreads.all)
            let bankModel = itemBank?.items.first.map(\.model).flatMap { $0 == .threePL ? IRTModel.threePL : .twoPL }
            let options = try difOptions(bankModel: bankModel)
            var parameters: [ItemParameters?]?
            if let itemBank {
                let byID = Dictionary(itemBank.items.map { ($0.itemID, $0.parameters) }, uniquingKeysWith: { first, _ in first })
                parameters = data.itemIDs.map { byID[$0] }
                let missing = data.itemIDs.filter { byID[$0] == nil }
                if !missing.isEmpty {
                    printError(
                        "note: \(missing.count) item\(missing.count == 1 ? "" : "s") not in \(bank!) (tested, but not in θ matching): \(missing.prefix(5).joined(separator: ", "))\(missing.count > 5 ? ", …" : "")"
                    )
                }
            }
            let dif = try DIFAnalysis.run(data, groups: groups, reference: reference, parameters: parameters, options: options)

            let outWriter = try AtomicFileWriter(path: out)
            try outWriter.write(Self.table(dif))
            var outputs: [(role: String, writer: AtomicFileWriter, rows: Int)] = [("dif", outWriter, dif.rows.count)]
            if let dtfOut {
                let writer = try AtomicFileWriter(path: dtfOut)
                try writer.write(Self.dtfTable(dif))
                outputs.append(("dtf", writer, dif.dtf.reduce(0) { $0 + $1.table.count }))
            }
            let manifestWriter = try manifestPath.map { try AtomicFileWriter(path: $0) }
            let elapsed = Date().timeIntervalSince(started)
            try OutputSet.commit(outputs, manifest: manifestWriter) { entries in
                try encodeJSON(
                    DIFSummary(
                        dif, responses: responses, groupColumn: groupColumn, groupFiles: groupSource.filesByGroup, bank: bank,
                        layout: report.layout.rawValue, outputs: entries, elapsed: elapsed))
            }
            printError(Self.humanSummary(dif, responses: responses, out: out, manifest: manifestPath, elapsed: elapsed))
            return ExitStatus.success
        }
    }

    static let columnsHeader = [
        "item_id", "focal_group", "n_reference", "n_focal", "p_reference", "p_focal",
        "mh_chi2", "mh_p", "mh_p_adj", "mh_odds_ratio", "mh_delta", "mh_delta_se", "ets_class",
        "lr_chi2", "lr_p", "lr_p_adj", "lr_uniform_chi2", "lr_uniform_p", "lr_nonuniform_chi2", "lr_nonuniform_p", "lr_delta_r2",
        "lr_zumbo_thomas", "lr_jodoin_gierl",
        "irt_chi2", "irt_df", "irt_p", "irt_p_adj", "wald_chi2", "wald_df", "wald_p", "wald_p_adj",
        "a_reference", "b_reference", "c_reference", "a_focal", "b_focal", "c_focal",
        "flagged_by", "untestable"
    ]

    /// DIF.csv.
    static func table(_ dif: DIFReport) -> String {
        func num(_ v: Double?, _ digits: Int = 4) -> String { v.map { $0.isFinite ? fixed($0, digits) : "" } ?? "" }
        func p(_ v: Double?) -> String { v.map { $0.isFinite ? String(format: "%.6g", $0) : "" } ?? "" }
        var text = columnsHeader.joined(separator: ",") + "\n"
        for row in dif.rows {
            let mh = row.mantelHaenszel, lr = row.logisticRegression, irt = row.likelihoodRatio, wald = row.wald
            let parameters = irt ?? wald
            let untestable = DIFMethod.allCases.compactMap { m in row.untestable[m].map { "\(m.rawValue): \($0)" } }.joined(separator: "; ")
            var fields = [
                csvField(row.itemID), csvField(row.focal), String(row.referenceResponses), String(row.focalResponses),
                num(row.referenceProportion), num(row.focalProportion)
            ]
            fields += [
                num(mh?.chiSquare), p(mh?.p), p(row.adjustedP[.mantelHaenszel]), num(mh?.commonOddsRatio), num(mh?.delta),
                num(mh?.deltaStandardError), mh?.etsClass ?? ""
            ]
            fields += [
                num(lr?.chiSquare), p(lr?.p), p(row.adjustedP[.logisticRegression]), num(lr?.uniformChiSquare), p(lr?.uniformP),
                num(lr?.nonUniformChiSquare), p(lr?.nonUniformP), num(lr?.deltaR2, 5), lr?.zumboThomasClass ?? "", lr?.jodoinGierlClass ?? ""
            ]
            fields += [
                num(irt?.chiSquare), irt.map { String($0.degreesOfFreedom) } ?? "", p(irt?.p), p(row.adjustedP[.likelihoodRatio]),
                num(wald?.chiSquare), wald.map { String($0.degreesOfFreedom) } ?? "", p(wald?.p), p(row.adjustedP[.wald])
            ]
            fields += [
                num(parameters?.reference.discrimination), num(parameters?.reference.difficulty), num(parameters?.reference.guessing),
                num(parameters?.focal.discrimination), num(parameters?.focal.difficulty), num(parameters?.focal.guessing)
            ]
            fields += [row.flaggedBy.map(\.rawValue).joined(separator: ";"), csvField(untestable)]
            text += fields.joined(separator: ",") + "\n"
        }
        return text
    }

    /// --dtf-out.
    static func dtfTable(_ dif: DIFReport) -> String {
        var text = "focal_group,theta,expected_score_reference,expected_score_focal,difference,iq_gap\n"
        for d in dif.dtf {
            for point in d.table {
                text +=
                    "\(csvField(d.focal)),\(fixed(point.theta, 2)),\(fixed(point.referenceExpectedScore, 4)),\(fixed(point.focalExpectedScore, 4)),\(fixed(point.referenceExpectedScore - point.focalExpectedScore, 4)),\(fixed(point.iqGap, 2))\n"
            }
        }
        return text
    }

    static func humanSummary(_ dif: DIFReport, responses: String, out: String, manifest: String?, elapsed: Double) -> String {
        var lines = [
            "iqscore dif: \(dif.rows.count / max(1, dif.focalGroups.count)) items, reference \(TextFidelity.quoted(dif.reference)) (\(formatCount(dif.groupSizes[0].persons)) persons), focal "
                + dif.groupSizes.dropFirst().map { "\(TextFidelity.quoted($0.group)) (\(formatCount($0.persons)))" }.joined(separator: ", ")
        ]
        lines.append("matching: \(dif.matchingDescription)")
        for purification in dif.purification {
            let method = purification.method
            let flagged = Set(dif.rows.filter { $0.flaggedBy.contains(method) }.map(\.itemID))
            let untestable = dif.rows.filter { $0.untestable[method] != nil }.count
            var line =
                "\(method.rawValue): \(flagged.count) item\(flagged.count == 1 ? "" : "s") flagged (BH-adjusted p < \(dif.options.falseDiscoveryRate.formatted6))"
            if !flagged.isEmpty { line += ": " + flagged.sorted().prefix(8).joined(separator: ", ") + (flagged.count > 8 ? ", …" : "") }
            if method == .mantelHaenszel {
                let classes = Dictionary(grouping: dif.rows.compactMap { $0.mantelHaenszel?.etsClass?.prefix(1) }, by: { $0 }).mapValues(\.count)
                line += "; ETS A \(classes["A"] ?? 0), B \(classes["B"] ?? 0), C \(classes["C"] ?? 0)"
            }
            if dif.options.purify {
                line +=
                    "; purification \(purification.flaggedPerRound.count) round\(purification.flaggedPerRound.count == 1 ? "" : "s")\(purification.converged ? "" : " (not settled)")"
            }
            if untestable > 0 { line += "; \(untestable) untestable" }
            if let s = dif.seconds[method.rawValue] { line += " (\(fixed(s, 2)) s)" }
            lines.append(line)
        }
        for d in dif.dtf {
            let maxGap = d.table.map { abs($0.iqGap) }.max() ?? 0
            lines.append(
                "DTF \(TextFidelity.quoted(d.focal)): signed \(fixed(d.signed, 3)) points (\(fixed(d.signedPercent, 2))%)"
                    + (d.signedInterval.map { " [\(fixed($0.lowerBound, 3)), \(fixed($0.upperBound, 3))]" } ?? "")
                    + ", unsigned \(fixed(d.unsigned, 3)) (\(fixed(d.unsignedPercent, 2))%)"
                    + (d.unsignedInterval.map { " [\(fixed($0.lowerBound, 3)), \(fixed($0.upperBound, 3))]" } ?? "")
                    + "; largest IQ gap at equal θ in −3…3: \(fixed(maxGap, 2)) points; \(d.freedItems.count) freed item\(d.freedItems.count == 1 ? "" : "s")"
            )
        }
        if let fit = dif.flaggedModel {
            lines.append(
                "multiple-group model: "
                    + fit.groups.dropFirst().map { "\(TextFidelity.quoted($0.group)) mean \(fixed($0.mean, 3)), SD \(fixed($0.sd, 3))" }.joined(
                        separator: "; ")
                    + "; \(dif.multipleGroupFits) fits")
        }
        for warning in dif.warnings.prefix(8) { lines.append("warning: \(warning)") }
        lines.append("wrote \(out)" + (manifest.map { " and \($0)" } ?? "") + " in \(fixed(elapsed, 2)) s")
        return lines.joined(separator: "\n")
    }
}

/// The `dif --summary-json` document.
struct DIFSummary: Encodable {
    var manifest_version = 1
    var command = "dif"
    var iqscore_version = iqscoreVersion
    var outputs: [ManifestEntry]
    var responses: String
    var layout: String
    /// Where the groups came from: a column of `responses`, or one file per group (the reference's is `responses`).
    var group_column: String?
    var group_files: [String: String]?
    var bank: String?
    var reference: String
    var groups: [[String: Int]]
    var matching: String
    var matching_description: String
    var methods: [String]
    var false_discovery_rate: Double
    var multiple_comparisons = "Benjamini-Hochberg over each method's tests (items x focal groups)"
    var purify: Bool
    var anchor_count: Int?
    var purification: [Purification]
    var flagged: [String: [String]]
    var dtf: [DTF]
    var multiple_group_model: Model?
    var multiple_group_fits: Int
    var seconds: [String: Double]
    var elapsed_seconds: Double
    var warnings: [String]

    struct Purification: Encodable {
        var method: String
        var flagged_per_round: [[String]]
        var converged: Bool
        var anchor_items: [String]
    }
    struct DTF: Encodable {
        var focal_group: String
        var freed_items: [String]
        var signed: Double
        var unsigned: Double
        var signed_percent: Double
        var unsigned_percent: Double
        var signed_interval: [Double]?
        var unsigned_interval: [Double]?
        var draws: Int
        var largest_iq_gap: Double
    }
    struct Model: Encodable {
        var model: String
        var log_likelihood: Double
        var n_parameters: Int
        var converged: Bool
        var groups: [Group]
        var freed_items: [String]
    }
    struct Group: Encodable {
        var group: String
        var persons: Int
        var mean: Double
        var sd: Double
        var mean_se: Double?
        var sd_se: Double?
    }

    init(
        _ dif: DIFReport, responses: String, groupColumn: String?, groupFiles: [String: String]?, bank: String?, layout: String,
        outputs: [ManifestEntry],
        elapsed: Double
    ) {
        self.outputs = outputs
        self.responses = responses
        self.layout = layout
        group_column = groupColumn
        group_files = groupFiles
        self.bank = bank
        reference = dif.reference
        groups = dif.groupSizes.map { [$0.group: $0.persons] }
        matching = dif.matching.rawValue
        matching_description = dif.matchingDescription
        methods = dif.options.methods.map(\.rawValue)
        false_discovery_rate = dif.options.falseDiscoveryRate
        purify = dif.options.purify
        anchor_count = dif.options.anchorCount
        purification = dif.purification.map {
            Purification(method: $0.method.rawValue, flagged_per_round: $0.flaggedPerRound, converged: $0.converged, anchor_items: $0.anchorItems)
        }
        var flagged: [String: [String]] = [:]
        for method in dif.options.methods {
            flagged[method.rawValue] = dif.rows.filter { $0.flaggedBy.contains(method) }.map { "\($0.itemID)@\($0.focal)" }
        }
        self.flagged = flagged
        dtf = dif.dtf.map { d in
            DTF(
                focal_group: d.focal, freed_items: d.freedItems, signed: d.signed, unsigned: d.unsigned, signed_percent: d.signedPercent,
                unsigned_percent: d.unsignedPercent, signed_interval: d.signedInterval.map { [$0.lowerBound, $0.upperBound] },
                unsigned_interval: d.unsignedInterval.map { [$0.lowerBound, $0.upperBound] }, draws: d.draws,
                largest_iq_gap: d.table.map { abs($0.iqGap) }.max() ?? 0)
        }
        multiple_group_model = dif.flaggedModel.map { fit in
            Model(
                model: fit.model.rawValue, log_likelihood: fit.logLikelihood, n_parameters: fit.parameterCount, converged: fit.converged,
                groups: fit.groups.map {
                    Group(group: $0.group, persons: $0.persons, mean: $0.mean, sd: $0.sd, mean_se: $0.meanStandardError, sd_se: $0.sdStandardError)
                },
                freed_items: fit.freedItemIDs)
        }
        multiple_group_fits = dif.multipleGroupFits
        seconds = dif.seconds
        elapsed_seconds = elapsed
        warnings = dif.warnings
    }
}
