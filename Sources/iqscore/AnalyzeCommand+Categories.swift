import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

extension AnalyzeCommand {
    /// `analyze` on a bank with items scored in more than two categories (`CategoryItemFit`): ITEMS.csv with
    /// item_id,model,categories,n,mean_score,max_score,item_rest_r,category_n,category_mean_rest,sx2,sx2_df,sx2_p,
    /// infit,outfit,infit_z,outfit_z,flags for the items in both the responses and the bank.
    func runCategoryAnalysis(bank itemBank: ItemBank, rules: FlagRules) throws -> Int32 {
        if q3Out != nil || options != nil {
            throw ValidationError(
                "--q3-out and --options are computed for banks of 0/1 items; this bank has items in more than two categories (its analysis: S-X², infit/outfit and classical statistics per category, and person fit with --persons-out)"
            )
        }
        let (data, bankItems, unknown) = try Self.categoryData(responses: responses, fileOptions: columns.fileOptions, bank: itemBank, bankPath: bank)
        let fit = try CategoryItemFit(
            data: data, items: bankItems.map(\.responseModel), freeParameters: Self.freeParameters(bankItems),
            latentScale: itemBank.latentScale, minimumExpected: 1)

        func num(_ v: Double?, _ digits: Int = 4) -> String { v.map { $0.isFinite ? fixed($0, digits) : "" } ?? "" }
        var text =
            "item_id,model,categories,n,mean_score,max_score,item_rest_r,category_n,category_mean_rest,sx2,sx2_df,sx2_p,infit,outfit,infit_z,outfit_z,flags\n"
        var flagged = 0, fitFlags = ["sx2": 0, "infit_or_outfit": 0, "categories": 0]
        let critical = rules.meanSquareCriticalZ
        for (item, f) in zip(bankItems, fit.items) {
            var flags: [String] = []
            if let p = f.sx2P, p < rules.misfitP { flags.append("misfit (S-X² p \(String(format: "%.2g", p)))"); fitFlags["sx2"]! += 1 }
            let outside = [(f.infit, f.infitZ, "infit"), (f.outfit, f.outfitZ, "outfit")].filter { ms, z, _ in
                guard let ms, let z else { return false }
                return (ms < rules.mnsqRange.0 || ms > rules.mnsqRange.1) && abs(z) > critical
            }
            if !outside.isEmpty {
                flags.append(outside.map { "\($0.2) \(fixed($0.0!, 2))" }.joined(separator: ", ")); fitFlags["infit_or_outfit"]! += 1
            }
            if let r = f.itemRestCorrelation, r < rules.minPointBiserial { flags.append("low item-rest correlation") }
            // Rating-scale diagnostics (Linacre 2002): a category chosen by fewer than 10, and ordered categories whose
            // mean rest score falls.
            if f.categoryCounts.count > 2 {
                if f.categoryCounts.contains(where: { $0 < 10 }) { flags.append("sparse category (< 10 responses)"); fitFlags["categories"]! += 1 }
                let means = zip(f.categoryMeanRestScore, f.categoryCounts).filter { $0.1 >= 10 }.compactMap(\.0)
                if item.responseModel.categoriesAreScores && zip(means, means.dropFirst()).contains(where: { $0 >= $1 }) {
                    flags.append("category rest scores out of order")
                }
            }
            if !flags.isEmpty { flagged += 1 }
            text +=
                [
                    csvField(item.itemID), item.modelName, String(item.categoryCount), String(f.responses), num(f.meanScore),
                    String(f.maximumScore), num(f.itemRestCorrelation), f.categoryCounts.map(String.init).joined(separator: ";"),
                    f.categoryMeanRestScore.map { num($0, 2) }.joined(separator: ";"), num(f.sx2), f.sx2DegreesOfFreedom.map(String.init) ?? "",
                    num(f.sx2P, 6), num(f.infit), num(f.outfit), num(f.infitZ, 3), num(f.outfitZ, 3), csvField(flags.joined(separator: ";"))
                ]
                .joined(separator: ",") + "\n"
        }
        try writeAtomically(text, to: out)
        var personFit: [String: Any] = [:]
        if let personsOut {
            // WLE on the bank's scale, then l_z and l_z* there (`PersonFitLz.statistics(models:…)`).
            let models = bankItems.map(\.responseModel)
            let estimator = try AbilityEstimator(items: models, options: AbilityOptions(method: .wle), latentScale: itemBank.latentScale)
            var p = "person_id,theta_wle,se,lz,lz_star\n", lzCount = 0, lzStarCount = 0, misfitting = 0, misfittingStar = 0
            for i in 0..<data.personCount {
                let cells = data.cells(ofPerson: i)
                let items = cells.map { Int(data.itemIndices[$0]) }, answers = cells.map { data.responses[$0] }
                let wle = try estimator.estimate(items: items, responses: answers)
                let fit = items.withUnsafeBufferPointer { i in
                    answers.withUnsafeBufferPointer { PersonFitLz.statistics(models: models, items: i, responses: $0, theta: wle.theta) }
                }
                if let lz = fit.lz { lzCount += 1; if lz < -1.96 { misfitting += 1 } }
                if let lz = fit.lzStar { lzStarCount += 1; if lz < -1.96 { misfittingStar += 1 } }
                p += "\(csvField(data.personIDs[i])),\(num(wle.theta)),\(num(wle.standardError)),\(num(fit.lz)),\(num(fit.lzStar))\n"
            }
            try writeAtomically(p, to: personsOut)
            personFit = ["lz": ["tested": lzCount, "flagged": misfitting], "lz_star": ["tested": lzStarCount, "flagged": misfittingStar]]
        }
        if let summaryJSON {
            var json: [String: Any] = [
                "n_persons": data.personCount, "n_items": data.itemCount, "flagged_items": flagged, "fit_flags": fitFlags,
                "items_not_in_bank": unknown, "analysis": "items in more than two categories (CategoryItemFit)"
            ]
            if !personFit.isEmpty { json["person_fit"] = personFit }
            let bytes = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            try writeAtomically(String(decoding: bytes, as: UTF8.self) + "\n", to: summaryJSON)
        }
        var lines = [
            "iqscore analyze: \(formatCount(data.personCount)) persons × \(data.itemCount) items (\(Set(bankItems.map(\.modelName)).sorted().joined(separator: ", ")))"
        ]
        if !unknown.isEmpty {
            lines.append(
                "warning: \(unknown.count) item\(unknown.count == 1 ? "" : "s") not in the bank left out: \(unknown.prefix(5).joined(separator: ", "))\(unknown.count > 5 ? ", …" : "")"
            )
        }
        lines.append(
            "flagged items: \(flagged) of \(data.itemCount); fit: S-X² \(fitFlags["sx2"]!), infit/outfit \(fitFlags["infit_or_outfit"]!); sparse categories \(fitFlags["categories"]!)"
        )
        if let lz = personFit["lz_star"] as? [String: Int] {
            lines.append(
                "person fit: l_z* < −1.96 for \(lz["flagged"]!) of \(lz["tested"]!) persons (\(fixed(100 * Double(lz["flagged"]!) / Double(max(1, lz["tested"]!)), 1))%)"
            )
        }
        lines.append("wrote \(out)" + (personsOut.map { ", \($0)" } ?? "") + (summaryJSON.map { ", \($0)" } ?? ""))
        printError(lines.joined(separator: "\n"))
        return ExitStatus.success
    }

    /// The responses of a bank with items in more than two categories, read as categories (`categoryResponses`),
    /// restricted to the bank's items (the others listed in `unknown`), cells mapped to the bank's categories
    /// (response labels; 0/1 for 0/1 items); a cell outside an item's categories is an error naming the item.
    static func categoryData(responses: String, fileOptions given: ResponseFileOptions, bank itemBank: ItemBank, bankPath bank: String) throws
        -> (data: ResponseMatrix, items: [BankItem], unknown: [String])
    {
        var fileOptions = given
        fileOptions.categoryResponses = true
        // Nominal items may be answered in option letters (their bank labels A, B, …).
        fileOptions.optionLetters = itemBank.items.contains { $0.categoryModel?.kind == .nominal }
        let (raw, _) = try ResponseMatrix.load(csv: responses, options: fileOptions)
        // The data's items in the bank, their cells mapped to the bank's categories (labels, 0/1).
        let position = Dictionary(itemBank.items.enumerated().map { ($1.itemID, $0) }, uniquingKeysWith: { first, _ in first })
        let kept = raw.itemIDs.indices.filter { position[raw.itemIDs[$0]] != nil }
        let unknown = raw.itemIDs.filter { position[$0] == nil }
        guard kept.count >= 2 else {
            throw InputError(
                file: responses, message: "only \(kept.count) of the file's \(raw.itemCount) items are in \(bank); the analysis needs at least 2")
        }
        let bankItems = kept.map { itemBank.items[position[raw.itemIDs[$0]]!] }
        var newIndex = [Int32](repeating: -1, count: raw.itemCount)
        for (k, j) in kept.enumerated() { newIndex[j] = Int32(k) }
        var offsets = [0], indices: [Int32] = [], values: [UInt8] = [], persons: [String] = []
        var problems: [String: (count: Int, value: Int)] = [:]
        for i in 0..<raw.personCount {
            let start = indices.count
            for c in raw.cells(ofPerson: i) where newIndex[Int(raw.itemIndices[c])] >= 0 {
                let k = Int(newIndex[Int(raw.itemIndices[c])]), item = bankItems[k], v = Int(raw.responses[c])
                let category = item.categoryModel.map { $0.category(of: ResponseCell.text(ofCategory: v)) } ?? (v <= 1 ? v : nil)
                guard let category else {
                    problems[item.itemID, default: (0, v)].count += 1
                    continue
                }
                indices.append(Int32(k)); values.append(UInt8(category))
            }
            if indices.count > start { persons.append(raw.personIDs[i]); offsets.append(indices.count) }
        }
        if !problems.isEmpty {
            let listed = problems.sorted { $0.key < $1.key }.prefix(5).map { id, p in
                let item = bankItems.first { $0.itemID == id }!
                return
                    "item '\(id)': \(p.count) response\(p.count == 1 ? "" : "s") such as \(ResponseCell.text(ofCategory: p.value)) outside its categories (allowed \(item.categoryModel?.allowedResponses ?? "0 or 1"))"
            }
            throw InputError(file: responses, message: listed.joined(separator: "; ") + (problems.count > 5 ? "; …" : ""))
        }
        let data = ResponseMatrix(
            validatedPersonIDs: persons, itemIDs: bankItems.map(\.itemID), rowOffsets: offsets, itemIndices: indices,
            responses: values, categoryCounts: bankItems.map(\.categoryCount))
        return (data, bankItems, unknown)
    }

    /// Each item's estimated parameters (the S-X² df): `ItemModelKind.freeParameters(categories:)`, 1/2/3 for
    /// Rasch and 1PL/2PL/3PL.
    static func freeParameters(_ items: [BankItem]) -> [Int] {
        items.map { item in
            if let m = item.categoryModel { return m.kind.freeParameters(categories: m.categoryCount) }
            return item.model == .rasch || item.model == .onePL ? 1 : item.model == .twoPL ? 2 : 3
        }
    }
}
