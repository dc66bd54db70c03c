import Foundation
import Psychometrics

/// A bifactor bank read from a file: the factors and each item's parameters (`BifactorItem`), in file order.
///
/// Layouts:
/// - iqscore's (`calibrate --model bifactor`, `bifactorBankCSV`): `item_id`, one `a_<factor>` column per factor
///   (the first the general factor), `d`, `c`; `model` (2pl/3pl) and `specific_factor` when present; other
///   columns (standard errors, counts, metadata) are not read.
/// - mirt's slope–intercept `coef(mod, simplify = TRUE)$items` of a `bfactor()` fit, as R's `write.csv` writes it:
///   row names (an empty first header) or `item_id`, `a1` (the general factor, named G as mirt names it), `a2` … `ak`
///   (the specific factors S1 … S(k−1)), `d`, `g` (c), `u` (the upper asymptote, which must be 1).
///
/// An item loads on the general factor and on at most one specific factor: the specific factor is the one
/// slope column besides the general one that is not 0 (or the `specific_factor` cell, which must then agree).
package struct BifactorBank: Sendable, Hashable {
    package var structure: FactorStructure
    package var itemIDs: [String]
    package var items: [BifactorItem]
    /// "iqscore" or "mirt slope–intercept (a1…ak, d, g, u)".
    package var layout: String
    /// The columns the bank carries besides its parameters (a domain, a key, a status…), in file order, and per
    /// item its cells (empty cells left out): what the unidimensional view (`scoringBank`) carries as metadata.
    package var metadataColumns: [String] = []
    package var metadata: [[String: String]] = []

    /// Whether `header` (trimmed names) is a multidimensional bank's: two or more `a_<factor>` columns, or mirt's
    /// `a1` and `a2`.
    package static func isMultidimensional(header: [String]) -> Bool {
        header.filter { $0.hasPrefix("a_") && $0.count > 2 && !Self.isNumberedNominal($0) }.count >= 2
            || (header.contains("a1") && header.contains("a2"))
    }

    /// Whether the bank file at `path` has a multidimensional header (`isMultidimensional(header:)`); false for a
    /// file that cannot be read or is empty (its reader names the problem).
    package static func isMultidimensional(csv path: String) -> Bool { isMultidimensional(.path(path)) }

    /// `isMultidimensional(csv:)` of a file or of its bytes already read.
    package static func isMultidimensional(_ source: CSVSource) -> Bool {
        guard let reader = try? source.reader(), (try? reader.nextRow()) == true else { return false }
        return isMultidimensional(header: reader.strings().map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// `a_0`, `a_1`, …: a nominal item's category slopes (`CategoryBankItem`), not factors.
    static func isNumberedNominal(_ name: String) -> Bool { Int(name.dropFirst(2)) != nil }

    /// - Throws: `InputError` naming the file, line and column for a header that is not a bifactor bank's, a
    ///   repeated item id, a cell that is not a plain number, a value outside its range (slopes in
    ///   `ItemBank.allowedSlopes`, |d| ≤ 100, c in [0, 1), u = 1), an item with two specific slopes, or a
    ///   `specific_factor` that disagrees with the slopes; with `requirePositiveGeneralSlopes` (a bank to score
    ///   with), a general slope that is not in `ItemBank.allowedPositiveSlopes`.
    package static func load(csv path: String, requirePositiveGeneralSlopes: Bool = false) throws -> BifactorBank {
        try load(.path(path), requirePositiveGeneralSlopes: requirePositiveGeneralSlopes)
    }

    /// `load(csv:requirePositiveGeneralSlopes:)` from a file or from its bytes already read.
    package static func load(_ source: CSVSource, requirePositiveGeneralSlopes: Bool = false) throws -> BifactorBank {
        let path = source.name
        let reader = try source.reader()
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a bifactor bank's header") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        try CSVHeader.checkUnique(header, file: path, line: reader.line)
        let found = "(found: \(header.joined(separator: ",").prefix(200)))"
        let idColumn: Int
        if let c = header.firstIndex(of: "item_id") {
            idColumn = c
        } else if header.first == "" && header.count > 1 {
            idColumn = 0
        } else {
            throw InputError(file: path, line: 1, message: "the bank header lacks item_id \(found)")
        }
        if header.contains("factor") && header.contains(where: { $0.hasPrefix("r_") }) {
            throw InputError(
                file: path, line: 1,
                message:
                    "a correlated-factors bank (factor and r_<factor> columns), read as a battery by BatteryBank; this reader takes bifactor and testlet banks"
            )
        }
        // Slope columns and factor names.
        var slopeColumns: [Int] = [], names: [String] = [], layout = "iqscore"
        let native = header.indices.filter { header[$0].hasPrefix("a_") && header[$0].count > 2 && !isNumberedNominal(header[$0]) }
        if native.count >= 2 {
            slopeColumns = native
            names = native.map { String(header[$0].dropFirst(2)) }
        } else {
            var k = 1
            while let c = header.firstIndex(of: "a\(k)") { slopeColumns.append(c); k += 1 }
            guard slopeColumns.count >= 2 else {
                throw InputError(
                    file: path, line: 1,
                    message:
                        "not a bifactor bank: it needs a slope column per factor, a_<factor> (the general factor first) or mirt's a1, a2, … \(found)")
            }
            names = ["G"] + (1..<slopeColumns.count).map { "S\($0)" }
            layout = "mirt slope–intercept (a1…a\(slopeColumns.count), d, g, u)"
        }
        guard let dColumn = header.firstIndex(of: "d") else {
            throw InputError(file: path, line: 1, message: "the bank header lacks the intercept d \(found)")
        }
        let cColumn = header.firstIndex(of: "c") ?? header.firstIndex(of: "g"), uColumn = header.firstIndex(of: "u")
        let modelColumn = header.firstIndex(of: "model"), factorColumn = header.firstIndex(of: "specific_factor")
        let structureNames = (general: names[0], specifics: Array(names.dropFirst()))
        // Every other column but a bank's own (standard errors, counts, flags, row names) is metadata.
        let parameterColumns = Set(slopeColumns + [idColumn, dColumn] + [cColumn, uColumn, modelColumn, factorColumn].compactMap { $0 })
        let bankColumns: Set<String> = ["n_responses", "p_value", "flags", "se_d", "se_c", "se_g", "se_u"]
        let metadataIndices = header.indices.filter {
            !parameterColumns.contains($0) && !bankColumns.contains(header[$0]) && !header[$0].hasPrefix("se_") && !header[$0].isEmpty
        }
        var metadata: [[String: String]] = []

        let row = BankRowChecker(reader: reader, path: path, header: header, idColumn: idColumn)
        var ids: [String] = [], items: [BifactorItem] = []
        while try row.nextItem() {
            let slopes = slopeColumns.enumerated().map {
                row.number(
                    $0.element, $0.offset == 0 && requirePositiveGeneralSlopes ? ItemBank.allowedPositiveSlopes : ItemBank.allowedSlopes,
                    emptyAs: $0.offset == 0 ? nil : 0)
            }
            let intercept = row.number(dColumn, .closed(-100, 100), name: "d")
            guard slopes.allSatisfy({ $0 != nil }), let d = intercept else { continue }
            let c = cColumn.flatMap { row.number($0, ItemBank.allowedGuessing, emptyAs: 0) } ?? 0
            if let u = uColumn, let upper = row.number(u, .closed(0, 1), name: "u", emptyAs: 1), upper != 1 {
                row.fail(u, "u = \(upper) is an upper asymptote below 1 (4PL), which the bifactor model does not have"); continue
            }
            let values = slopes.map { $0! }
            let loaded = (1..<values.count).filter { values[$0] != 0 }
            if loaded.count > 1 {
                row.fail(
                    slopeColumns[loaded[1]],
                    "slopes on two specific factors (\(loaded.map { names[$0] }.joined(separator: ", "))); a bifactor item loads on at most one");
                continue
            }
            var specific = loaded.first.map { $0 - 1 }
            if let fc = factorColumn {
                let named = row.text(fc)
                if !named.isEmpty {
                    guard let f = structureNames.specifics.firstIndex(of: named) else {
                        row.fail(
                            fc,
                            "specific_factor \(TextFidelity.quoted(named)) is not one of the slope columns' factors (\(structureNames.specifics.joined(separator: ", ")))"
                        ); continue
                    }
                    if let s = specific, s != f {
                        row.fail(fc, "specific_factor \(named) but the nonzero slope is a_\(structureNames.specifics[s])"); continue
                    }
                    specific = f
                } else if let s = specific {
                    row.fail(fc, "an empty specific_factor but a slope on \(structureNames.specifics[s])"); continue
                }
            }
            guard let model = row.model(modelColumn, guessing: c, cColumn: cColumn, bank: "bifactor") else { continue }
            ids.append(row.id)
            metadata.append(row.cells(metadataIndices))
            items.append(
                BifactorItem(
                    generalSlope: values[0], specificSlope: specific.map { values[$0 + 1] } ?? 0, specific: specific, intercept: d,
                    guessing: c, estimatesGuessing: model == "3pl" || c > 0))
        }
        try row.errors.throwIfAny()
        guard !items.isEmpty else { throw InputError(file: path, message: "the bank has no items") }
        let structure = try FactorStructure(
            generalFactor: structureNames.general,
            items: zip(ids, items).map { ($0, $1.specific.map { structureNames.specifics[$0] }) })
        // The structure lists factors in the order items meet them; keep the file's column order instead.
        var ordered = structure
        ordered.specificFactors = structureNames.specifics
        ordered.specificFactorOfItem = Dictionary(uniqueKeysWithValues: zip(ids, items).compactMap { id, item in item.specific.map { (id, $0) } })
        return BifactorBank(
            structure: ordered, itemIDs: ids, items: items, layout: layout,
            metadataColumns: metadataIndices.map { header[$0] }, metadata: metadata)
    }

    /// The bank as unidimensional items on its general factor: each item's general-factor marginal
    /// (`BifactorItem.generalMarginal`, 2PL or 3PL as the item) with the bank's metadata, in bank order — what a
    /// `SessionScorer(battery:bank:)`, the adaptive engine and form assembly see of a battery.
    package var scoringBank: ItemBank {
        let bankItems = items.indices.map { j in
            BankItem(
                itemID: itemIDs[j], model: items[j].estimatesGuessing ? .threePL : .twoPL, parameters: items[j].generalMarginal,
                metadata: j < metadata.count ? metadata[j] : [:])
        }
        return ItemBank(items: bankItems, metadataColumns: metadataColumns)
    }
}
