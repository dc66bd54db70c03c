import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

extension CalibrateCommand {
    /// The options a fit of items in more than two categories does not take, refused by name.
    func validateCategoryModel() throws {
        if eStep == .dense {
            throw ValidationError("--e-step dense is the 0/1 engine's BLAS E-step; --model \(model) runs the sparse E-step over answered cells")
        }
    }

    /// Per-item models from the `model` column of `--items` (graded, gpcm, pcm, rsm or nominal; empty: `--model`).
    static func itemModels(_ metadata: ItemMetadata, file: String) throws -> [String: ItemModelKind] {
        guard metadata.columns.contains("model") else { return [:] }
        var models: [String: ItemModelKind] = [:], problems: [String] = []
        for (id, row) in metadata.values.sorted(by: { $0.key < $1.key }) {
            let text = (row["model"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            if text.isEmpty { continue }
            guard let kind = ItemModelKind(rawValue: text) else {
                problems.append(
                    "item '\(id)': model \(TextFidelity.quoted(text)) is not one of \(ItemModelKind.allCases.map(\.rawValue).joined(separator: ", ")) (0/1 items are fitted as 2PL by graded and gpcm, as Rasch by pcm, with a lower asymptote by 3pl)"
                )
                continue
            }
            models[id] = kind
        }
        if !problems.isEmpty { throw InputError(file: file, message: problems.prefix(5).joined(separator: "; ") + (problems.count > 5 ? "; …" : "")) }
        return models
    }

    /// Nominal items' options given as letters (read with `ResponseFileOptions.optionLetters`: A = 128, …) turned
    /// into categories per item: an item answered in letters gets categories 0… (A = 0) and the labels A, B, …
    /// for the bank's `categories` column; an item answered in numbers keeps them. The items file's `key`
    /// column (a letter, or an option number) names each nominal item's correct option: its start, and its point
    /// in the raw score.
    /// - Throws: `InputError` naming the items that mix letters and numbers, that are answered in letters but
    ///   fitted under an ordered model, or whose key is none of their options in the data.
    static func optionLetterCategories(
        _ data: ResponseMatrix, model: ItemModelKind, itemModels: [String: ItemModelKind], keys metadata: ItemMetadata?,
        fixed: Set<String> = [], file: String
    ) throws -> (data: ResponseMatrix, labels: [String: [String]], keys: [String: Int], notes: [String]) {
        let base = ResponseCell.optionLetterBase, J = data.itemCount
        var letters = [Bool](repeating: false, count: J), numbers = letters, largest = [Int](repeating: 0, count: J)
        var smallest = [Int](repeating: 26, count: J)
        for cell in 0..<data.cellCount {
            let j = Int(data.itemIndices[cell]), v = Int(data.responses[cell])
            if v >= base {
                letters[j] = true; largest[j] = max(largest[j], v - base); smallest[j] = min(smallest[j], v - base)
            } else {
                numbers[j] = true
            }
        }
        var problems: [String] = [], labels: [String: [String]] = [:], keys: [String: Int] = [:], notes: [String] = []
        for j in 0..<J {
            let id = data.itemIDs[j], kind = itemModels[id] ?? model
            if letters[j] && numbers[j] {
                problems.append(
                    "item \(TextFidelity.quoted(id)) is answered both in option letters and in numbers; give its options one way (A, B, … or 0, 1, …)"
                )
            } else if letters[j] && kind != .nominal && !fixed.contains(id) {
                problems.append(
                    "item \(TextFidelity.quoted(id)) is answered in option letters but fitted as \(kind.rawValue); letters are a nominal item's options (give it model nominal in the items file, or recode its cells to categories 0…K−1)"
                )
            } else if letters[j] {
                labels[id] = (0...largest[j]).map { ResponseCell.text(ofCategory: base + $0) }
                // Options before the first one chosen are options nobody chose (the calibration drops categories
                // below the lowest in use), so say so; gaps between chosen ones get the calibration's warning.
                if smallest[j] > 0 && !fixed.contains(id) {
                    let unchosen = labels[id]![0..<smallest[j]]
                    notes.append(
                        "item \(id): option\(unchosen.count == 1 ? "" : "s") \(unchosen.joined(separator: ", ")) \(unchosen.count == 1 ? "was" : "were") never chosen and \(unchosen.count == 1 ? "is" : "are") left out of its categories (the bank's categories column lists those fitted; score refuses the others)"
                    )
                }
            }
            guard kind == .nominal, let text = metadata?.values[id]?["key"]?.trimmingCharacters(in: .whitespaces).uppercased(), !text.isEmpty else {
                continue
            }
            let category = letters[j] ? labels[id]!.firstIndex(of: text) : Int(text)
            if let category, letters[j] || category < data.categoryCounts[j] {
                keys[id] = category
            } else {
                problems.append(
                    "item \(TextFidelity.quoted(id)): key \(TextFidelity.quoted(text)) in the items file is none of its options in the data (\(letters[j] ? labels[id]!.joined(separator: ", ") : "0…\(data.categoryCounts[j] - 1)")); the key counts in the raw score, so correct it or leave it empty"
                )
            }
        }
        if !problems.isEmpty {
            throw InputError(
                file: file, message: problems.prefix(5).joined(separator: "; ") + (problems.count > 5 ? "; … (\(problems.count) items)" : ""))
        }
        guard letters.contains(true) else { return (data, labels, keys, notes) }
        let responses = (0..<data.cellCount).map { cell -> UInt8 in
            let v = data.responses[cell]
            return Int(v) >= base ? v - UInt8(base) : v
        }
        let counts = (0..<J).map { letters[$0] ? max(2, largest[$0] + 1) : data.categoryCounts[$0] }
        return (
            ResponseMatrix(
                validatedPersonIDs: data.personIDs, itemIDs: data.itemIDs, rowOffsets: data.rowOffsets, itemIndices: data.itemIndices,
                responses: responses, categoryCounts: counts), labels, keys, notes
        )
    }

    /// The cells of the `--fixed` bank's items read as their bank categories: a cell's text (its option letter,
    /// `labels`, or its number) is the category the bank row's categories column gives it (0…K−1 without one; 0/1
    /// for a 0/1 item).
    /// - Throws: `InputError` naming each fixed item with a cell that is none of its categories, the cell, how
    ///   many there are and what the item allows.
    static func fixedItemCategories(_ data: ResponseMatrix, labels: [String: [String]], fixed: [String: BankItem], file: String) throws
        -> ResponseMatrix
    {
        let J = data.itemCount
        // The cell text data category v of an item stands for: its option letter, or the number.
        func cellText(_ id: String, _ v: Int) -> String { labels[id].map { v < $0.count ? $0[v] : String(v) } ?? String(v) }
        // Per item and data category: the bank category (−1: none; nil: not a fixed item).
        let tables: [[Int]?] = (0..<J).map { j in
            guard let item = fixed[data.itemIDs[j]] else { return nil }
            return (0..<data.categoryCounts[j]).map { v in
                let text = cellText(data.itemIDs[j], v)
                if let model = item.categoryModel { return model.category(of: text) ?? -1 }
                return text == "0" ? 0 : text == "1" ? 1 : -1
            }
        }
        var bad: [Int: (value: Int, count: Int)] = [:]
        var responses = data.responses
        for cell in 0..<data.cellCount {
            let j = Int(data.itemIndices[cell])
            guard let table = tables[j] else { continue }
            let category = table[Int(responses[cell])]
            if category < 0 { bad[j, default: (Int(responses[cell]), 0)].count += 1 } else { responses[cell] = UInt8(category) }
        }
        if !bad.isEmpty {
            let named = bad.keys.sorted().prefix(5).map { j -> String in
                let id = data.itemIDs[j], item = fixed[id]!
                return
                    "fixed item \(TextFidelity.quoted(id)) has \(bad[j]!.count) response\(bad[j]!.count == 1 ? "" : "s") such as \(TextFidelity.quoted(cellText(id, bad[j]!.value))) that \(bad[j]!.count == 1 ? "is" : "are") none of its bank categories (allowed: \(item.categoryModel?.allowedResponses ?? "0, 1"))"
            }
            throw InputError(file: file, message: named.joined(separator: "; ") + (bad.count > 5 ? "; … (\(bad.count) items)" : ""))
        }
        let counts = (0..<J).map { j in fixed[data.itemIDs[j]]?.categoryCount ?? data.categoryCounts[j] }
        return ResponseMatrix(
            validatedPersonIDs: data.personIDs, itemIDs: data.itemIDs, rowOffsets: data.rowOffsets, itemIndices: data.itemIndices,
            responses: responses, categoryCounts: counts)
    }

    /// `calibrate --model graded|gpcm|pcm|rsm|nominal`: responses read as categories, `PolytomousCalibrator`, the bank
    /// (`ItemBank(calibration:metadata:)`) and its summary written as one set.
    func runCategoryModel(_ kind: ItemModelKind, bankWriter: AtomicFileWriter, manifestWriter: AtomicFileWriter?) throws -> Int32 {
        let options = try calibrationOptions()
        let readStart = Date()
        let metadata = try items.map { try ItemMetadata.load(csv: $0) }
        let perItem = try metadata.map { try Self.itemModels($0, file: items!) } ?? [:]
        let fixedBank = try fixedBankPath.map { try loadBank($0, categoryItems: .read()) }
        let fixedItems = Dictionary((fixedBank?.items ?? []).map { ($0.itemID, $0) }, uniquingKeysWith: { first, _ in first })
        var fileOptions = columns.fileOptions
        fileOptions.categoryResponses = true
        // Nominal items (fitted, or fixed with option letters) may give the options chosen as letters (A–Z).
        fileOptions.optionLetters =
            kind == .nominal || perItem.values.contains(.nominal)
            || fixedItems.values.contains { $0.categoryModel?.responseLabels.contains { $0.count == 1 && ("A"..."Z").contains($0) } ?? false }
        let (read, report) = try ResponseMatrix.load(
            csv: responses, options: fileOptions, maxMemoryBytes: maxMemory.bytes,
            threads: threads ?? WorkerThreads.all)
        noteUnnamedIDColumn(report)
        let coded =
            fileOptions.optionLetters
            ? try Self.optionLetterCategories(read, model: kind, itemModels: perItem, keys: metadata, fixed: Set(fixedItems.keys), file: responses)
            : (data: read, labels: [:], keys: [:], notes: [])
        let data =
            fixedItems.isEmpty ? coded.data : try Self.fixedItemCategories(coded.data, labels: coded.labels, fixed: fixedItems, file: responses)
        let readSeconds = Date().timeIntervalSince(readStart)
        let status = TerminalStatusLine()
        var calibrator = PolytomousCalibrator(options: options)
        let threePL = kind == .threePL || perItem.values.contains(.threePL)
        if guessingPrior != nil && !threePL {
            throw ValidationError(
                "--guessing-prior applies to 3pl items; this --model \(kind.rawValue) fit has none (give an item model 3pl in the items file's model column)"
            )
        }
        if case .some(let prior) = try parsedGuessingPrior() { calibrator.threePLGuessingPrior = prior }
        if case .some(let prior) = try parsedSlopePrior() { calibrator.threePLSlopePrior = prior }
        let result = try calibrator.calibrate(
            data, model: kind, itemModels: perItem, categoryLabels: coded.labels,
            keys: coded.keys, fixedItems: fixedItems.mapValues(\.responseModel),
            progress: Self.progress(on: status))
        status.clear()
        let bank = try ItemBank(calibration: result, metadata: metadata, fixed: fixedBank)
        try bankWriter.write(bank.csv())
        try OutputSet.commit([("bank", bankWriter, bank.items.count)], manifest: manifestWriter) { entries in
            var summary = FitSummary(
                common: summaryCommon(model: kind.rawValue, fit: result, options: options, report: report, readSeconds: readSeconds),
                fit: CategoryCalibrationSummary(result: result, itemModels: perItem, report: report, readSeconds: readSeconds, options: options))
            if threePL {
                summary.fit.priors["guessing"] = calibrator.threePLGuessingPrior.map { "c ~ \($0) on 3pl items" } ?? "none"
                summary.fit.priors["slope"] =
                    (options.slopePrior.map { "a ~ \($0) on graded, gpcm and 3pl items" } ?? "none on graded and gpcm items")
                    + (options.slopePrior == nil ? calibrator.threePLSlopePrior.map { "; a ~ \($0) on 3pl items" } ?? "" : "")
            }
            summary.common.setFixed(bank: fixedBankPath, items: result.fixedItemIDs, notInData: result.fixedItemsNotInData)
            if fixedBankPath != nil {
                summary.fit.latent_mean = result.latentMean
                summary.fit.latent_mean_se = result.latentMeanStandardError
            }
            summary.common.outputs = entries
            return try summary.json()
        }
        var lines = [
            "iqscore calibrate: \(kind.rawValue) on \(responses) (\(report.layout.rawValue) layout, \(formatCount(report.dataRows)) data rows)"
        ]
        let counts = Dictionary(grouping: bank.items, by: \.modelName).map { "\($0.value.count) \($0.key)" }.sorted()
        lines.append(
            "data: \(formatCount(result.personCount)) persons × \(result.items.count) items (\(counts.joined(separator: ", "))), \(formatCount(data.cellCount)) responses; categories per item \(Set(bank.items.map(\.categoryCount)).sorted().map(String.init).joined(separator: ", "))"
        )
        let state = result.convergenceText
        lines.append(
            "\(state) (\(result.eSteps) E-steps, \(options.acceleration.rawValue)); read \(fixed(readSeconds, 2)) s, fit \(fixed(result.elapsedSeconds, 2)) s"
        )
        if let prior = options.slopePrior { lines.append("slope prior: a ~ \(prior) on the graded, gpcm and 3pl items (MAP item estimates)") }
        if threePL {
            lines.append(
                "3pl items: c ~ \(calibrator.threePLGuessingPrior.map(String.init(describing:)) ?? "no prior"), a ~ \((options.slopePrior ?? calibrator.threePLSlopePrior).map(String.init(describing:)) ?? "no prior")"
            )
        }
        lines.append(result.fitLine(logLikelihoodDecimals: 2))
        let rasch: Set<ItemModelKind> = [.partialCredit, .ratingScale]
        if let fixedBankPath {
            let notInData = result.fixedItemsNotInData.count
            lines.append(
                "fixed: \(result.fixedItemIDs.count) items held at their values in \(fixedBankPath), \(result.items.count - result.fixedItemIDs.count) free items estimated on its scale"
                    + (notInData > 0 ? "; \(notInData) bank item\(notInData == 1 ? "" : "s") not in the data (carried over)" : ""))
            lines.append(
                "latent distribution: mean \(fixed(result.latentMean, 4))" + (result.latentMeanStandardError.map { " (SE \(fixed($0, 4)))" } ?? "")
                    + ", SD \(fixed(result.latentSD, 4))" + (result.latentSDStandardError.map { " (SE \(fixed($0, 4)))" } ?? ""))
        } else if rasch.contains(kind) || perItem.values.contains(where: rasch.contains) {
            lines.append("latent SD \(fixed(result.latentSD, 4))" + (result.latentSDStandardError.map { " (SE \(fixed($0, 4)))" } ?? ""))
        }
        if let scale = result.items.lazy.compactMap({ $0.item as? RatingScaleItem }).first {
            lines.append(
                "rating-scale thresholds τ (shared; an rsm item's steps are its location + τ): "
                    + scale.thresholds.map { fixed($0, 4) }.joined(separator: ", "))
        }
        for note in coded.notes { lines.append("warning: \(note)") }
        lines += summaryTail(warnings: result.warnings, bankItems: bank.items.count)
        printError(lines.joined(separator: "\n"))
        return result.converged ? ExitStatus.success : ExitStatus.notConverged
    }
}

/// The own keys of a fit of items in more than two categories in its `--summary-json` document (`FitSummary`,
/// beside `FitSummaryCommon`'s; the manifest of its run).
struct CategoryCalibrationSummary: Encodable {
    /// Items whose model the items file's `model` column set.
    var item_models: [String: String]
    var n_items: Int
    var n_responses: Int
    var persons_without_responses: Int
    var excluded_items: [String]
    var quadrature_points: Int
    var theta_bound: Double
    var latent_sd: Double
    var latent_sd_se: Double?
    var latent_mean: Double?
    var latent_mean_se: Double?
    var standard_errors: String
    /// The prior on the graded and gpcm items' slopes (`--slope-prior`), or "none".
    var priors: [String: String]
    var elapsed_seconds: Double

    init(
        result: PolytomousCalibrationResult, itemModels: [String: ItemModelKind], report: ResponseFileReport, readSeconds: Double,
        options: CalibrationOptions
    ) {
        item_models = itemModels.mapValues(\.rawValue)
        n_items = result.items.count
        n_responses = result.items.reduce(0) { $0 + $1.responses }
        persons_without_responses = report.emptyPersons.count
        excluded_items = result.excludedItems
        quadrature_points = options.quadraturePoints
        theta_bound = options.thetaBound
        latent_sd = result.latentSD
        latent_sd_se = result.latentSDStandardError
        standard_errors =
            !options.standardErrors
            ? "none (--no-se)"
            : result.items.contains(where: { $0.standardErrors.contains { $0 != nil } })
                ? "observed information (Louis 1982), delta method to the IRT form" : "unavailable (see warnings)"
        priors = ["slope": options.slopePrior.map { "a ~ \($0) on graded and gpcm items" } ?? "none"]
        elapsed_seconds = result.elapsedSeconds + readSeconds
    }
}
