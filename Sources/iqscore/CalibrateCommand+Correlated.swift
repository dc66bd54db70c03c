import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

extension CalibrateCommand {
    /// The correlated-factors fit: each item's factor from `--factor-column` of `--items`,
    /// `CorrelatedFactorsCalibrator`, the bank (`CorrelatedFactorsResult.bankCSV`) and the summary as one output set.
    func runCorrelated(bankWriter: AtomicFileWriter, manifestWriter: AtomicFileWriter?) throws -> Int32 {
        let options = try calibrationOptions()
        let (metadata, data, report, readSeconds, _) = try readFactorData()
        // A fixed item's factor is the fixed bank's; the other items' come from --factor-column.
        let fixedBank = try fixedBankPath.map { path in
            guard CorrelatedFactorsBank.isCorrelated(csv: path) else {
                throw InputError(
                    file: path, line: 1,
                    message:
                        "--fixed with --model correlated takes a correlated-factors bank (calibrate --model correlated writes one: a factor column and r_<factor> columns)"
                )
            }
            return try CorrelatedFactorsBank.load(csv: path)
        }
        var fixedFactor: [String: String] = [:]
        if let fixedBank { for item in fixedBank.items { fixedFactor[item.itemID] = fixedBank.factors[item.factor] } }
        let structure = try FactorStructure(items: data.itemIDs.map { id in (id, fixedFactor[id] ?? metadata.values[id]?[factorColumn]) })
        var fixedItems: [String: CorrelatedFactorsResult.Item] = [:]
        if let fixedBank {
            for item in fixedBank.items {
                guard let factor = structure.specificFactorOfItem[item.itemID] else { continue }
                var held = item
                held.factor = factor
                fixedItems[item.itemID] = held
            }
        }
        let status = TerminalStatusLine()
        let result = try CorrelatedFactorsCalibrator(
            options: options, quadraturePoints: quadraturePoints, integration: integration, monteCarloPoints: qmcPoints, starts: starts
        )
        .calibrate(data, structure: structure, fixed: fixedItems, progress: Self.progress(on: status))
        status.clear()
        try bankWriter.write(result.bankCSV(metadata: metadata))
        try OutputSet.commit([("bank", bankWriter, result.items.count)], manifest: manifestWriter) { entries in
            var summary = FitSummary(
                common: summaryCommon(
                    model: "correlated", fit: result, options: options, report: report, readSeconds: readSeconds, starts: result.starts),
                fit: CorrelatedCalibrationSummary(result: result, options: options, factorColumn: factorColumn))
            summary.common.outputs = entries
            summary.common.setFixed(bank: fixedBankPath, items: result.items.filter(\.isFixed).map(\.itemID), notInData: result.fixedItemsNotInData)
            return try summary.json()
        }
        var lines = [
            "iqscore calibrate: correlated factors \(result.model.rawValue.uppercased()) on \(responses) (\(report.layout.rawValue) layout, \(formatCount(report.dataRows)) data rows)"
        ]
        lines.append("data: \(formatCount(result.personCount)) persons × \(result.items.count) items, \(formatCount(data.cellCount)) responses")
        lines.append(
            "factors: "
                + result.factors.indices.map { f in "\(result.factors[f]) (\(result.items.filter { $0.factor == f }.count))" }.joined(separator: ", ")
        )
        if let fixedBankPath {
            let held = result.items.filter(\.isFixed).count
            lines.append(
                "fixed: \(held) items held at their values in \(fixedBankPath), \(result.items.count - held) free items estimated on its factors (the correlations estimated on this sample)"
                    + (result.fixedItemsNotInData.isEmpty
                        ? ""
                        : "; \(result.fixedItemsNotInData.count) bank item\(result.fixedItemsNotInData.count == 1 ? "" : "s") not in the data (not written)")
            )
        }
        let state = result.convergenceText
        let integrationText =
            result.integration == .productGrid
            ? "product grid \(result.quadraturePoints)^\(result.factors.count) = \(formatCount(result.nodes)) nodes"
            : "adaptive quasi-Monte Carlo, \(formatCount(result.nodes)) Sobol nodes per person"
        lines.append(
            "\(state) (\(result.eSteps) E-steps, \(options.acceleration.rawValue), \(integrationText)); read \(fixed(readSeconds, 2)) s, fit \(fixed(result.elapsedSeconds, 2)) s"
        )
        lines.append(result.fitLine(logLikelihoodDecimals: 3))
        let k = result.factors.count
        lines.append("factor correlations" + (result.correlationStandardErrors == nil ? ":" : " (SE):"))
        for f in 1..<k {
            let cells = (0..<f).map { g in
                "\(result.factors[g]) \(fixed(result.correlations[f * k + g], 3))"
                    + (result.correlationStandardErrors.map { " (\(fixed($0[f * k + g], 3)))" } ?? "")
            }
            lines.append("  \(result.factors[f]): " + cells.joined(separator: ", "))
        }
        if let line = startsLine(result.starts) { lines.append(line) }
        lines += summaryTail(warnings: result.warnings, bankItems: result.items.count)
        printError(lines.joined(separator: "\n"))
        return result.converged ? ExitStatus.success : ExitStatus.notConverged
    }
}

/// The correlated-factors fit's own keys of its `--summary-json` document (`FitSummary`, beside
/// `FitSummaryCommon`'s).
struct CorrelatedCalibrationSummary: Encodable {
    var item_type: String
    var factor_column: String
    var factors: [String]
    /// Per factor, its items (in the data's order).
    var factor_items: [String: [String]]
    /// The factor correlation matrix, row by row, and its standard errors (absent without them).
    var correlations: [[Double]]
    var correlation_ses: [[Double]]?
    var n_items: Int
    var excluded_items: [String]
    /// "grid" or "qmc"; the product grid's points per factor and its nodes, or for qmc the fine grid's points per
    /// factor and the Sobol nodes per person.
    var integration: String
    var quadrature_points: Int
    var nodes: Int
    var theta_bound: Double
    var standard_errors: String
    var priors: [String: String]

    init(result: CorrelatedFactorsResult, options: CalibrationOptions, factorColumn: String) {
        let k = result.factors.count
        item_type = result.model.rawValue
        factor_column = factorColumn
        factors = result.factors
        factor_items = Dictionary(
            uniqueKeysWithValues: result.factors.indices.map { f in (result.factors[f], result.items.filter { $0.factor == f }.map(\.itemID)) })
        correlations = (0..<k).map { f in Array(result.correlations[(f * k)..<((f + 1) * k)]) }
        correlation_ses = result.correlationStandardErrors.map { se in (0..<k).map { f in Array(se[(f * k)..<((f + 1) * k)]) } }
        n_items = result.items.count
        excluded_items = result.excludedItems
        integration = result.integration.rawValue
        quadrature_points = result.quadraturePoints
        nodes = result.nodes
        theta_bound = options.thetaBound
        standard_errors =
            options.standardErrors
            ? "observed information (Oakes 1999, central differences of the gradient); correlations by the delta method" : "not computed (--no-se)"
        var p: [String: String] = ["slope": options.slopePrior?.description ?? "none"]
        if result.model == .threePL { p["guessing"] = options.guessingPrior?.description ?? "none" }
        priors = p
    }
}

extension CalibrateCommand {
    /// The stderr line of a fit from several starts: each run's log-likelihood, the kept one marked, and how many
    /// reached it (within 0.01); nil for one start.
    func startsLine(_ starts: [StartRecord]) -> String? {
        guard starts.count > 1, let best = starts.first(where: \.kept)?.logLikelihood else { return nil }
        let reached = starts.filter { ($0.logLikelihood ?? -.infinity) > best - 0.01 }.count
        let runs = starts.map { r in
            (r.logLikelihood.map { fixed($0, 3) } ?? "diverged") + (r.kept ? " (kept)" : "")
                + (r.converged || r.logLikelihood == nil ? "" : " (not converged)")
        }
        return "starts: \(starts.count) runs, \(reached) reached the best log-likelihood within 0.01: " + runs.joined(separator: ", ")
    }
}
