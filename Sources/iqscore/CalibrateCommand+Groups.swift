import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

/// `calibrate --group-column`: the multiple-group fit (`MultipleGroupCalibrator`; the bifactor model's in
/// `runBifactor`).
extension CalibrateCommand {
    /// --group-column needs --reference and a 2pl/3pl model; --reference and --free-items need --group-column.
    func validateGroups() throws {
        guard groupColumn != nil || !groupFiles.isEmpty else {
            if fixedGroupSpecifics { throw ValidationError("--fixed-group-specifics goes with --group-column or --group-file and --model bifactor") }
            if reference != nil || freeItems != nil {
                throw ValidationError("--reference and --free-items go with --group-column or --group-file (a multiple-group calibration)")
            }
            return
        }
        if let groupColumn, groupColumn.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--group-column must name a column, got '\(groupColumn)'")
        }
        guard reference != nil else {
            throw ValidationError("\(groupColumn != nil ? "--group-column" : "--group-file") needs --reference GROUP: the group whose θ is N(0, 1)")
        }
        _ = try groupSource?.files()
        guard model == .dichotomous(.twoPL) || model == .dichotomous(.threePL) || model == .bifactor else {
            throw ValidationError("a multiple-group calibration fits --model 2pl, 3pl or bifactor, not \(model)")
        }
        if fixedGroupSpecifics && model != .bifactor { throw ValidationError("--fixed-group-specifics goes with --model bifactor") }
        if model == .bifactor && freeItems != nil {
            throw ValidationError(
                "--free-items goes with --model 2pl or 3pl; a multiple-group bifactor fit holds every item invariant (each group its own general-factor mean and SD)"
            )
        }
        if fixedBankPath != nil {
            throw ValidationError("a multiple-group calibration and --fixed do not go together: the reference group's N(0, 1) sets the scale")
        }
        _ = try parsedFreeItems()
    }

    /// The groups' source, nil without --group-column or --group-file.
    var groupSource: GroupSource? {
        guard groupColumn != nil || !groupFiles.isEmpty else { return nil }
        return GroupSource(responses: responses, groupColumn: groupColumn, groupFiles: groupFiles, reference: reference ?? "")
    }

    /// --free-items as item → groups ("*" for every group, resolved once the groups are known).
    func parsedFreeItems() throws -> [String: Set<String>] {
        guard let freeItems else { return [:] }
        var out: [String: Set<String>] = [:]
        for entry in freeItems.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let item = parts.first, !item.isEmpty else {
                throw ValidationError(
                    "--free-items: an empty item in \(TextFidelity.quoted(freeItems)); write ITEM or ITEM:GROUP|GROUP, comma-separated")
            }
            let groups =
                parts.count > 1
                ? parts[1].split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } : ["*"]
            if groups.contains(where: \.isEmpty) { throw ValidationError("--free-items: an empty group name in \(TextFidelity.quoted(entry))") }
            out[item, default: []].formUnion(groups)
        }
        return out
    }

    /// "in column 'g'" or "from N files", for the stderr summaries.
    var groupsOrigin: String {
        groupColumn.map { "in column \(TextFidelity.quoted($0))" } ?? "from \(groupFiles.count + 1) files (one per group)"
    }

    func runMultipleGroup(bankWriter: AtomicFileWriter, manifestWriter: AtomicFileWriter?) throws -> Int32 {
        let options = try calibrationOptions()
        let readStart = Date()
        let metadata = try items.map { try ItemMetadata.load(csv: $0) }
        let (data, report, labels) = try groupSource!.load(
            options: columns.fileOptions, maxMemoryBytes: maxMemory.bytes, threads: threads ?? WorkerThreads.all)
        let readSeconds = Date().timeIntervalSince(readStart)
        let allGroups = Set(labels)
        let free = try parsedFreeItems().mapValues { $0.contains("*") ? allGroups : $0 }
        let status = TerminalStatusLine()
        let fit = try MultipleGroupCalibrator(options: options).calibrate(
            data, groups: labels, reference: reference!, freeItems: free, progress: Self.progress(on: status))
        status.clear()
        let referenceItems = fit.items.filter { $0.groups.contains(reference!) }
        let bankItems = referenceItems.map { entry in
            BankItem(
                itemID: entry.item.itemID, model: fit.model, parameters: entry.item.parameters, standardErrors: entry.item.standardErrors,
                responses: entry.item.responses, pValue: entry.item.pValue,
                flags: entry.item.flags + (fit.freedItemIDs.contains(entry.item.itemID) ? ["freed by group"] : []),
                metadata: metadata?.values[entry.item.itemID] ?? [:])
        }
        let bank = ItemBank(items: bankItems, metadataColumns: (metadata?.columns ?? []).filter { !ItemBank.coreColumns.contains($0) })
        try bankWriter.write(bank.csv())
        try OutputSet.commit([("bank", bankWriter, bank.items.count)], manifest: manifestWriter) { entries in
            var common = summaryCommon(model: fit.model.rawValue, fit: fit, options: fit.options, report: report, readSeconds: readSeconds)
            // A multiple-group summary has never had these keys.
            common.max_cycles = nil
            common.acceleration = nil
            common.outputs = entries
            return try FitSummary(common: common, fit: MultipleGroupSummary(fit, groupColumn: groupColumn, groupFiles: groupSource!.filesByGroup))
                .json()
        }
        var lines = [
            "iqscore calibrate: multiple-group \(fit.model.rawValue.uppercased()) on \(responses), \(fit.groups.count) groups " + groupsOrigin
        ]
        lines.append("data: \(formatCount(fit.personCount)) persons × \(bank.items.count) items, \(formatCount(fit.cellCount)) responses")
        lines += fit.groups.map(MultipleGroupSummary.Group.line)
        if !fit.freedItemIDs.isEmpty {
            lines.append(
                "freed by group: \(fit.freedItemIDs.prefix(8).joined(separator: ", "))\(fit.freedItemIDs.count > 8 ? ", …" : "") (their other groups' parameters: the summary JSON)"
            )
        }
        lines.append(
            fit.convergenceText + " (\(fit.eSteps) E-steps); read \(fixed(readSeconds, 2)) s, fit \(fixed(fit.elapsedSeconds, 2)) s")
        lines.append(fit.fitLine(logLikelihoodDecimals: 2) + "; standard errors: \(fit.standardErrorMethod)")
        lines += summaryTail(warnings: fit.warnings, bankItems: bank.items.count)
        printError(lines.joined(separator: "\n"))
        return fit.converged ? ExitStatus.success : ExitStatus.notConverged
    }
}

/// The own keys of a multiple-group calibration's summary JSON (`FitSummary`, beside `FitSummaryCommon`'s).
struct MultipleGroupSummary: Encodable {
    /// Where the groups came from: a column of `responses`, or one file per group (the reference's is `responses`).
    var group_column: String?
    var group_files: [String: String]?
    var reference: String
    var groups: [Group]
    var group_items: [GroupItemRow]
    var excluded_items: [[String: String]]
    var excluded_group_items: [[String: String]]
    var excluded_persons: Int
    var n_responses: Int
    var last_change: Double
    var standard_errors: String

    struct Group: Encodable {
        var group: String
        var reference: Bool
        var persons: Int
        var responses: Int
        var mean: Double
        var sd: Double
        var mean_se: Double?
        var sd_se: Double?
        var log_likelihood: Double
        /// A bifactor fit's: the group's specific-factor distributions it estimated.
        var specific_factors: [Factor]?

        struct Factor: Encodable {
            var factor: String
            var mean: Double
            var sd: Double
            var mean_se: Double?
            var sd_se: Double?
        }

        init(_ g: GroupDistribution, specificFactors: [FactorDistribution]? = nil) {
            self.init(
                group: g.group, reference: g.isReference, persons: g.persons, responses: g.responses, mean: g.mean, sd: g.sd,
                mean_se: g.meanStandardError, sd_se: g.sdStandardError, log_likelihood: g.logLikelihood)
            specific_factors = specificFactors.map {
                $0.map { Factor(factor: $0.factor, mean: $0.mean, sd: $0.sd, mean_se: $0.meanStandardError, sd_se: $0.sdStandardError) }
            }
        }
        init(
            group: String, reference: Bool, persons: Int, responses: Int, mean: Double, sd: Double, mean_se: Double?, sd_se: Double?,
            log_likelihood: Double
        ) {
            self.group = group; self.reference = reference; self.persons = persons; self.responses = responses; self.mean = mean; self.sd = sd
            self.mean_se = mean_se; self.sd_se = sd_se; self.log_likelihood = log_likelihood
        }

        /// The stderr line of a group: persons, and the mean and SD with their standard errors (the reference's N(0, 1)).
        static func line(_ g: GroupDistribution) -> String {
            "  \(TextFidelity.quoted(g.group)): \(formatCount(g.persons)) persons, "
                + (g.isReference
                    ? "reference N(0, 1)"
                    : moments(mean: g.mean, meanSE: g.meanStandardError, sd: g.sd, sdSE: g.sdStandardError))
        }

        /// "mean m (SE s), SD d (SE e)".
        static func moments(mean: Double, meanSE: Double?, sd: Double, sdSE: Double?) -> String {
            "mean \(fixed(mean, 4))" + (meanSE.map { " (SE \(fixed($0, 4)))" } ?? "") + ", SD \(fixed(sd, 4))"
                + (sdSE.map { " (SE \(fixed($0, 4)))" } ?? "")
        }
    }
    /// One parameter set of an item freed by group (invariant items are the bank's rows).
    struct GroupItemRow: Encodable {
        var item_id: String
        var groups: [String]
        var a: Double
        var b: Double
        var c: Double
        var se_a: Double?
        var se_b: Double?
        var se_c: Double?
        var n_responses: Int
        var p_value: Double
    }

    init(_ fit: MultipleGroupResult, groupColumn: String?, groupFiles: [String: String]?) {
        group_files = groupFiles
        group_column = groupColumn
        reference = fit.groups[0].group
        groups = fit.groups.map { Group($0) }
        let freed = Set(fit.freedItemIDs)
        group_items = fit.items.filter { freed.contains($0.item.itemID) }.map { entry in
            let p = entry.item.parameters, se = entry.item.standardErrors
            return GroupItemRow(
                item_id: entry.item.itemID, groups: entry.groups, a: p.discrimination, b: p.difficulty, c: p.guessing,
                se_a: se.discrimination, se_b: se.difficulty, se_c: se.guessing, n_responses: entry.item.responses, p_value: entry.item.pValue)
        }
        excluded_items = fit.excludedItems.map { ["item_id": $0.itemID, "reason": $0.reason] }
        excluded_group_items = fit.excludedGroupItems.map { ["item_id": $0.itemID, "groups": $0.groups.joined(separator: "|"), "reason": $0.reason] }
        excluded_persons = fit.excludedPersons.count
        n_responses = fit.cellCount
        last_change = fit.lastChange
        standard_errors = fit.standardErrorMethod
    }
}
