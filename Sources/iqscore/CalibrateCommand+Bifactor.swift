import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

extension CalibrateCommand {
    /// `--model bifactor|testlet`'s own rules: the factor structure comes from a column of --items; the items are 2PL or 3PL.
    func validateBifactor() throws {
        guard items != nil else {
            throw ValidationError(
                "--model \(model.description) reads each item's \(model.isBifactor ? "specific factor" : "factor") from the \(factorColumn) column of --items ITEMS.csv (--factor-column names another); give --items"
            )
        }
        if let itemType, itemType != .twoPL && itemType != .threePL {
            throw ValidationError("--item-type must be 2pl or 3pl for --model \(model.description), got \(itemType.rawValue)")
        }
        if fixedBankPath != nil && model == .testlet {
            throw ValidationError(
                "--fixed (online calibration) goes with the unidimensional models, --model bifactor and --model correlated; --model testlet estimates every item (a factor's ratio λ is shared by its items)"
            )
        }
        if eStep != .automatic {
            throw ValidationError("--e-step applies to the unidimensional 0/1 models; --model \(model.description) has its own E-step")
        }
    }

    /// The items file (which must have `--factor-column`) and the responses of a multidimensional fit, and the
    /// seconds they took to read.
    /// With `--group-column` or `--group-file`, each person's group (`PersonGroups`, the column left out of the responses) as well.
    func readFactorData() throws -> (ItemMetadata, ResponseMatrix, ResponseFileReport, Double, groups: [String]?) {
        let readStart = Date()
        let itemsPath = items!
        let metadata = try ItemMetadata.load(csv: itemsPath)
        guard metadata.columns.contains(factorColumn) else {
            throw InputError(
                file: itemsPath, line: 1,
                message:
                    "--factor-column \(TextFidelity.quoted(factorColumn)) is not a column of the items file; its columns: \(metadata.columns.joined(separator: ","))"
            )
        }
        if let groupSource {
            let (data, report, labels) = try groupSource.load(
                options: columns.fileOptions, maxMemoryBytes: maxMemory.bytes, threads: threads ?? WorkerThreads.all)
            return (metadata, data, report, Date().timeIntervalSince(readStart), labels)
        }
        let (data, report) = try ResponseMatrix.load(
            csv: responses, options: columns.fileOptions, maxMemoryBytes: maxMemory.bytes,
            threads: threads ?? WorkerThreads.all)
        noteUnnamedIDColumn(report)
        return (metadata, data, report, Date().timeIntervalSince(readStart), nil)
    }

    /// The bifactor fit: structure from `--factor-column` of `--items`, `BifactorCalibrator`, the bank
    /// (`BifactorCalibrationResult.bankCSV`) and the summary as one output set.
    func runBifactor(bankWriter: AtomicFileWriter, manifestWriter: AtomicFileWriter?) throws -> Int32 {
        let options = try calibrationOptions()
        let (metadata, data, report, readSeconds, labels) = try readFactorData()
        // A fixed item's specific factor is the fixed bank's; the other items' come from --factor-column.
        let fixedBank = try fixedBankPath.map { try BifactorBank.load(csv: $0) }
        var fixedFactor: [String: String?] = [:]
        if let fixedBank {
            for (id, item) in zip(fixedBank.itemIDs, fixedBank.items) {
                fixedFactor[id] = item.specific.map { fixedBank.structure.specificFactors[$0] }
            }
        }
        // Specific factors in the order their first item comes in the data.
        let structure = try FactorStructure(items: data.itemIDs.map { id in (id, fixedFactor[id] ?? metadata.values[id]?[factorColumn]) })
        var fixedItems: [String: BifactorItem] = [:]
        if let fixedBank {
            for (id, item) in zip(fixedBank.itemIDs, fixedBank.items) {
                var held = item
                held.specific = structure.specificFactorOfItem[id]
                if held.specific == nil { held.specificSlope = 0 }
                fixedItems[id] = held
            }
        }
        let status = TerminalStatusLine()
        let calibrator = BifactorCalibrator(options: options, testlet: model == .testlet, starts: starts)
        let result =
            try labels.map {
                try calibrator.calibrate(
                    data, structure: structure, groups: $0, reference: reference!, specificFactorsByGroup: !fixedGroupSpecifics,
                    progress: Self.progress(on: status))
            }
            ?? calibrator.calibrate(data, structure: structure, fixed: fixedItems, progress: Self.progress(on: status))
        status.clear()
        try bankWriter.write(result.bankCSV(metadata: metadata))
        try OutputSet.commit([("bank", bankWriter, result.items.count)], manifest: manifestWriter) { entries in
            var summary = FitSummary(
                common: summaryCommon(
                    model: model.description, fit: result, options: options, report: report, readSeconds: readSeconds, starts: result.starts),
                fit: BifactorCalibrationSummary(result: result, options: options, factorColumn: factorColumn))
            summary.common.outputs = entries
            summary.common.setFixed(bank: fixedBankPath, items: result.items.filter(\.isFixed).map(\.itemID), notInData: result.fixedItemsNotInData)
            if !result.groups.isEmpty {
                summary.fit.group_column = groupColumn
                summary.fit.group_files = groupSource?.filesByGroup
                summary.fit.reference = reference
                summary.fit.groups = zip(result.groups, result.groupSpecificFactors).map { MultipleGroupSummary.Group($0, specificFactors: $1) }
            }
            return try summary.json()
        }
        var lines = [
            "iqscore calibrate: \(model.description) \(result.model.rawValue.uppercased()) on \(responses) (\(report.layout.rawValue) layout, \(formatCount(report.dataRows)) data rows)"
        ]
        lines.append("data: \(formatCount(result.personCount)) persons × \(result.items.count) items, \(formatCount(data.cellCount)) responses")
        let perFactor = result.structure.specificFactors.indices.map { f in
            "\(result.structure.specificFactors[f]) (\(result.items.filter { $0.item.specific == f }.count))"
        }
        let generalOnly = result.items.filter { $0.item.specific == nil }.count
        lines.append(
            "factors: \(result.structure.generalFactor) (all items), specific: \(perFactor.joined(separator: ", "))"
                + (generalOnly > 0 ? "; \(generalOnly) items on the general factor only" : ""))
        if result.testlet {
            let ratios = result.structure.specificFactors.indices.compactMap { f -> String? in
                guard let ratio = result.testletRatios[f] else { return nil }
                return "\(result.structure.specificFactors[f]) \(fixed(ratio, 3))"
                    + (result.testletRatioStandardErrors[f].map { " (SE \(fixed($0, 3)))" } ?? "")
            }
            lines.append("testlet ratios λ (a_specific = λ · a_\(result.structure.generalFactor)): \(ratios.joined(separator: ", "))")
        }
        if !result.groups.isEmpty {
            lines.append(
                "groups \(groupsOrigin) (general factor"
                    + (fixedGroupSpecifics ? "; specific factors N(0, 1) in every group" : ", then each specific factor") + "; every item invariant):"
            )
            for (g, specifics) in zip(result.groups, result.groupSpecificFactors) {
                lines.append(MultipleGroupSummary.Group.line(g))
                if !specifics.isEmpty {
                    lines.append(
                        "    "
                            + specifics.map {
                                "\($0.factor) "
                                    + MultipleGroupSummary.Group.moments(
                                        mean: $0.mean, meanSE: $0.meanStandardError, sd: $0.sd, sdSE: $0.sdStandardError)
                            }.joined(separator: "; "))
                }
            }
        }
        if let fixedBankPath {
            let held = result.items.filter(\.isFixed).count
            lines.append(
                "fixed: \(held) items held at their values in \(fixedBankPath), \(result.items.count - held) free items estimated on its factors (N(0, 1), its calibration population)"
                    + (result.fixedItemsNotInData.isEmpty
                        ? ""
                        : "; \(result.fixedItemsNotInData.count) bank item\(result.fixedItemsNotInData.count == 1 ? "" : "s") not in the data (not written)")
            )
        }
        let state = result.convergenceText
        lines.append(
            "\(state) (\(result.eSteps) E-steps, \(options.acceleration.rawValue), \(result.quadraturePoints)² nodes per specific factor); read \(fixed(readSeconds, 2)) s, fit \(fixed(result.elapsedSeconds, 2)) s"
        )
        lines.append(result.fitLine(logLikelihoodDecimals: 3))
        let reliability = BifactorReliability(items: result.items.map(\.item), structure: result.structure)
        lines.append(
            "reliability (Rodriguez, Reise & Haviland 2016): ω \(fixed(reliability.omega, 3)), ω_H \(fixed(reliability.omegaHierarchical, 3)), ECV \(fixed(reliability.explainedCommonVariance, 3)), H \(fixed(reliability.construct, 3))"
        )
        lines.append(
            "per domain ω_S / ω_HS / H: "
                + reliability.domains.map { "\($0.factor) \(fixed($0.omega, 3)) / \(fixed($0.omegaHierarchical, 3)) / \(fixed($0.construct, 3))" }
                .joined(separator: ", "))
        if result.model == .threePL {
            lines.append(
                "priors: c ~ \(options.guessingPrior.map(String.init(describing:)) ?? "none"), a_\(result.structure.generalFactor) ~ \(options.slopePrior.map(String.init(describing:)) ?? "none")"
            )
        } else if let prior = options.slopePrior {
            lines.append("priors: a_\(result.structure.generalFactor) ~ \(prior)")
        }
        if let line = startsLine(result.starts) { lines.append(line) }
        lines += summaryTail(warnings: result.warnings, bankItems: result.items.count)
        printError(lines.joined(separator: "\n"))
        return result.converged ? ExitStatus.success : ExitStatus.notConverged
    }
}

/// The bifactor fit's own keys of its `--summary-json` document (`FitSummary`, beside `FitSummaryCommon`'s).
struct BifactorCalibrationSummary: Encodable {
    var item_type: String
    var factor_column: String
    var general_factor: String
    var specific_factors: [String]
    /// Per specific factor, its items (in the data's order).
    var factor_items: [String: [String]]
    /// The testlet model's λ per specific factor (a_specific = λ · a_general) and its standard error.
    var testlet_ratios: [String: Double]?
    var testlet_ratio_ses: [String: Double]?
    var n_items: Int
    var excluded_items: [String]
    /// Model-based reliability from the standardized loadings (`BifactorReliability`).
    var reliability: ReliabilitySummary
    /// Points per dimension; the E-step integrates over quadrature_points² nodes per specific factor.
    var quadrature_points: Int
    var theta_bound: Double
    var standard_errors: String
    var priors: [String: String]
    /// A multiple-group fit (`--group-column`): the column, the reference and every group's general-factor
    /// distribution.
    var group_column: String?
    var group_files: [String: String]?
    var reference: String?
    var groups: [MultipleGroupSummary.Group]?

    init(result: BifactorCalibrationResult, options: CalibrationOptions, factorColumn: String) {
        item_type = result.model.rawValue
        if result.testlet {
            let names = result.structure.specificFactors
            testlet_ratios = Dictionary(uniqueKeysWithValues: names.indices.compactMap { f in result.testletRatios[f].map { (names[f], $0) } })
            testlet_ratio_ses = Dictionary(
                uniqueKeysWithValues: names.indices.compactMap { f in result.testletRatioStandardErrors[f].map { (names[f], $0) } })
        }
        factor_column = factorColumn
        general_factor = result.structure.generalFactor
        specific_factors = result.structure.specificFactors
        factor_items = Dictionary(
            uniqueKeysWithValues: result.structure.specificFactors.indices.map { f in
                (result.structure.specificFactors[f], result.items.filter { $0.item.specific == f }.map(\.itemID))
            })
        let r = BifactorReliability(items: result.items.map(\.item), structure: result.structure)
        reliability = ReliabilitySummary(
            omega: r.omega, omega_h: r.omegaHierarchical, ecv: r.explainedCommonVariance, h: r.construct,
            domains: r.domains.map { .init(factor: $0.factor, items: $0.items, omega_s: $0.omega, omega_hs: $0.omegaHierarchical, h: $0.construct) })
        n_items = result.items.count
        excluded_items = result.excludedItems
        quadrature_points = result.quadraturePoints
        theta_bound = options.thetaBound
        standard_errors = options.standardErrors ? "observed information (Oakes 1999, central differences of the gradient)" : "not computed (--no-se)"
        var p: [String: String] = ["general_slope": options.slopePrior?.description ?? "none"]
        if result.model == .threePL { p["guessing"] = options.guessingPrior?.description ?? "none" }
        priors = p
    }
}

/// `BifactorReliability` in the summary's names: ω, ω_H, ECV and H of the general factor, then per domain ω_S, ω_HS
/// and H of its specific factor.
struct ReliabilitySummary: Encodable {
    struct Domain: Encodable {
        var factor: String
        var items: Int
        var omega_s: Double
        var omega_hs: Double
        var h: Double
    }
    var omega: Double
    var omega_h: Double
    var ecv: Double
    var h: Double
    var domains: [Domain]
}
