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
public struct BifactorBank: Sendable, Hashable {
    public var structure: FactorStructure
    public var itemIDs: [String]
    public var items: [BifactorItem]
    /// "iqscore" or "mirt slope–intercept (a1…ak, d, g, u)".
    public var layout: String
    /// The columns the bank carries besides its parameters (a domain, a key, a status…), in file order, and per
    /// item its cells (empty cells left out): what the unidimensional view (`scoringBank`) carries as metadata.
    public var metadataColumns: [String] = []
    public var metadata: [[String: String]] = []

    /// Whether `header` (trimmed names) is a multidimensional bank's: two or more `a_<factor>` columns, or mirt's
    /// `a1` and `a2`.
    public static func isMultidimensional(header: [String]) -> Bool {
        header.filter { $0.hasPrefix("a_") && $0.count > 2 && !Self.isNumberedNominal($0) }.count >= 2
            || (header.contains("a1") && header.contains("a2"))
    }

    /// Whether the bank file at `path` has a multidimensional header (`isMultidimensional(header:)`); false for a
    /// file that cannot be read or is empty (its reader names the problem).
    public static func isMultidimensional(csv path: String) -> Bool {
        guard let reader = try? CSVReader(path: path), (try? reader.nextRow()) == true else { return false }
        return isMultidimensional(header: reader.strings().map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// `a_0`, `a_1`, …: a nominal item's category slopes (`CategoryBankItem`), not factors.
    static func isNumberedNominal(_ name: String) -> Bool { Int(name.dropFirst(2)) != nil }

    /// - Throws: `InputError` naming the file, line and column for a header that is not a bifactor bank's, a
    ///   repeated item id, a cell that is not a plain number, a value outside its range (slopes in
    ///   `ItemBank.allowedSlopes`, |d| ≤ 100, c in [0, 1), u = 1), an item with two specific slopes, or a
    ///   `specific_factor` that disagrees with the slopes; with `requirePositiveGeneralSlopes` (a bank to score
    ///   with), a general slope that is not in `ItemBank.allowedPositiveSlopes`.
    public static func load(csv path: String, requirePositiveGeneralSlopes: Bool = false) throws -> BifactorBank {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a bifactor bank's header") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        try CSVHeader.checkUnique(header, file: path, line: reader.line)
        let found = "(found: \(header.joined(separator: ",").prefix(200)))"
        let idColumn: Int
        if let c = header.firstIndex(of: "item_id") { idColumn = c }
        else if header.first == "" && header.count > 1 { idColumn = 0 }
        else { throw InputError(file: path, line: 1, message: "the bank header lacks item_id \(found)") }
        if header.contains("factor") && header.contains(where: { $0.hasPrefix("r_") }) {
            throw InputError(file: path, line: 1, message: "a correlated-factors bank (calibrate --model correlated: factor and r_<factor> columns); scoring reads bifactor and unidimensional banks, not this one yet")
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
                throw InputError(file: path, line: 1, message: "not a bifactor bank: it needs a slope column per factor, a_<factor> (the general factor first) or mirt's a1, a2, … \(found)")
            }
            names = ["G"] + (1..<slopeColumns.count).map { "S\($0)" }
            layout = "mirt slope–intercept (a1…a\(slopeColumns.count), d, g, u)"
        }
        guard let dColumn = header.firstIndex(of: "d") else { throw InputError(file: path, line: 1, message: "the bank header lacks the intercept d \(found)") }
        let cColumn = header.firstIndex(of: "c") ?? header.firstIndex(of: "g"), uColumn = header.firstIndex(of: "u")
        let modelColumn = header.firstIndex(of: "model"), factorColumn = header.firstIndex(of: "specific_factor")
        let structureNames = (general: names[0], specifics: Array(names.dropFirst()))
        // Every other column but a bank's own (standard errors, counts, flags, row names) is metadata.
        let parameterColumns = Set(slopeColumns + [idColumn, dColumn] + [cColumn, uColumn, modelColumn, factorColumn].compactMap { $0 })
        let bankColumns: Set<String> = ["n_responses", "p_value", "flags", "se_d", "se_c", "se_g", "se_u"]
        let metadataIndices = header.indices.filter { !parameterColumns.contains($0) && !bankColumns.contains(header[$0]) && !header[$0].hasPrefix("se_") && !header[$0].isEmpty }
        var metadata: [[String: String]] = []

        var errors = ErrorCollector()
        var ids: [String] = [], items: [BifactorItem] = [], firstLine: [String: Int] = [:]
        while try reader.nextRow() {
            guard reader.fieldCount == header.count else { errors.add(reader.fieldCountError(expected: header.count)); continue }
            let line = reader.line
            let id = reader.string(idColumn).trimmingCharacters(in: .whitespaces)
            func fail(_ column: Int, _ message: String) { errors.add(InputError(file: path, line: line, column: column + 1, message: "item '\(id.prefix(40))': " + message)) }
            if id.isEmpty { fail(idColumn, "an empty item id"); continue }
            if let previous = firstLine[id] { fail(idColumn, "already listed on line \(previous)"); continue }
            firstLine[id] = line
            func number(_ column: Int, _ name: String, _ range: NumberRange, emptyAs fallback: Double? = nil) -> Double? {
                let text = reader.string(column).trimmingCharacters(in: .whitespaces)
                if text.isEmpty, let fallback { return fallback }
                guard let value = DecimalNumber.parse(text) else {
                    fail(column, "\(name) \(TextFidelity.quoted(text)) is not a number"); return nil
                }
                if let problem = range.problem(value, name) { fail(column, problem); return nil }
                return value
            }
            let slopes = slopeColumns.enumerated().map {
                number($0.element, header[$0.element], $0.offset == 0 && requirePositiveGeneralSlopes ? ItemBank.allowedPositiveSlopes : ItemBank.allowedSlopes,
                       emptyAs: $0.offset == 0 ? nil : 0)
            }
            let intercept = number(dColumn, "d", .closed(-100, 100))
            guard slopes.allSatisfy({ $0 != nil }), let d = intercept else { continue }
            let c = cColumn.flatMap { number($0, header[$0], ItemBank.allowedGuessing, emptyAs: 0) } ?? 0
            if let u = uColumn, let upper = number(u, "u", .closed(0, 1), emptyAs: 1), upper != 1 {
                fail(u, "u = \(upper) is an upper asymptote below 1 (4PL), which the bifactor model does not have"); continue
            }
            let values = slopes.map { $0! }
            let loaded = (1..<values.count).filter { values[$0] != 0 }
            if loaded.count > 1 {
                fail(slopeColumns[loaded[1]], "slopes on two specific factors (\(loaded.map { names[$0] }.joined(separator: ", "))); a bifactor item loads on at most one"); continue
            }
            var specific = loaded.first.map { $0 - 1 }
            if let fc = factorColumn {
                let named = reader.string(fc).trimmingCharacters(in: .whitespaces)
                if !named.isEmpty {
                    guard let f = structureNames.specifics.firstIndex(of: named) else {
                        fail(fc, "specific_factor \(TextFidelity.quoted(named)) is not one of the slope columns' factors (\(structureNames.specifics.joined(separator: ", ")))"); continue
                    }
                    if let s = specific, s != f { fail(fc, "specific_factor \(named) but the nonzero slope is a_\(structureNames.specifics[s])"); continue }
                    specific = f
                } else if let s = specific {
                    fail(fc, "an empty specific_factor but a slope on \(structureNames.specifics[s])"); continue
                }
            }
            let model = modelColumn.map { reader.string($0).trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            if !["", "2pl", "3pl"].contains(model) { fail(modelColumn!, "model \(TextFidelity.quoted(model)): a bifactor bank's items are 2pl or 3pl"); continue }
            if model == "2pl" && c != 0 { fail(cColumn!, "a 2pl item with c = \(c)"); continue }
            ids.append(id)
            var cells: [String: String] = [:]
            for c in metadataIndices {
                let text = reader.string(c).trimmingCharacters(in: .whitespaces)
                if !text.isEmpty { cells[header[c]] = text }
            }
            metadata.append(cells)
            items.append(BifactorItem(generalSlope: values[0], specificSlope: specific.map { values[$0 + 1] } ?? 0, specific: specific, intercept: d,
                                      guessing: c, estimatesGuessing: model == "3pl" || c > 0))
        }
        try errors.throwIfAny()
        guard !items.isEmpty else { throw InputError(file: path, message: "the bank has no items") }
        let structure = try FactorStructure(generalFactor: structureNames.general,
                                            items: zip(ids, items).map { ($0, $1.specific.map { structureNames.specifics[$0] }) })
        // The structure lists factors in the order items meet them; keep the file's column order instead.
        var ordered = structure
        ordered.specificFactors = structureNames.specifics
        ordered.specificFactorOfItem = Dictionary(uniqueKeysWithValues: zip(ids, items).compactMap { id, item in item.specific.map { (id, $0) } })
        return BifactorBank(structure: ordered, itemIDs: ids, items: items, layout: layout,
                            metadataColumns: metadataIndices.map { header[$0] }, metadata: metadata)
    }

    /// The bank as unidimensional items on its general factor: each item's general-factor marginal
    /// (`BifactorItem.generalMarginal`, 2PL or 3PL as the item) with the bank's metadata, in bank order — what a
    /// `SessionScorer(battery:bank:)`, the adaptive engine and form assembly see of a battery.
    public var scoringBank: ItemBank {
        let bankItems = items.indices.map { j in
            BankItem(itemID: itemIDs[j], model: items[j].estimatesGuessing ? .threePL : .twoPL, parameters: items[j].generalMarginal,
                     metadata: j < metadata.count ? metadata[j] : [:])
        }
        return ItemBank(items: bankItems, metadataColumns: metadataColumns)
    }
}
