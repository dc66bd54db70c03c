import Foundation

extension ItemBank {
    /// Reads a bank CSV (as written by `iqscore calibrate`, or any file with `item_id,a,b` and optionally `c`,
    /// `model`, SE columns and metadata such as `domain`).
    ///
    /// Every problem is an error naming the line and column: a missing required column, a number that does not
    /// parse, a slope that is not positive and finite (scoring needs a > 0), a non-finite difficulty, c outside
    /// [0, 1), an unknown model, a duplicated item id, a row of the wrong width. An empty bank is an error.
    /// - Parameter requirePositiveSlopes: scoring needs a > 0; item analysis reads any finite slope so that a
    ///   negative one can be flagged.
    public static func load(csv path: String, requirePositiveSlopes: Bool = true) throws -> ItemBank {
        var bank = try loadRows(path, requirePositiveSlopes: requirePositiveSlopes)
        bank.sourcePath = path
        return bank
    }

    private static func loadRows(_ path: String, requirePositiveSlopes: Bool) throws -> ItemBank {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the bank file is empty; expected a header with item_id,a,b") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        let headerLine = reader.line
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        guard let idColumn = column("item_id"), let aColumn = column("a"), let bColumn = column("b") else {
            let missing = ["item_id", "a", "b"].filter { column($0) == nil }
            throw InputError(file: path, line: headerLine, message: "the bank header lacks \(missing.joined(separator: ", ")) (found: \(header.joined(separator: ",")))")
        }
        let cColumn = column("c"), modelColumn = column("model")
        let seColumns = [column("se_a"), column("se_b"), column("se_c")]
        let nColumn = column("n_responses"), pColumn = column("p_value"), flagsColumn = column("flags")
        let known = Set(coreColumns)
        let metadataColumns = header.filter { !known.contains($0) && !$0.isEmpty }
        let metadataIndex = metadataColumns.map { column($0)! }

        var errors = ErrorCollector()
        var items: [BankItem] = []
        var firstLine: [String: Int] = [:]
        while try reader.nextRow() {
            let line = reader.line
            guard reader.fieldCount == header.count else {
                errors.add(InputError(file: path, line: line, message: "expected \(header.count) fields as in the header, found \(reader.fieldCount)"))
                continue
            }
            let id = reader.string(idColumn).trimmingCharacters(in: .whitespaces)
            if id.isEmpty {
                errors.add(InputError(file: path, line: line, column: idColumn + 1, message: "empty item_id"))
                continue
            }
            if let previous = firstLine[id] {
                errors.add(InputError(file: path, line: line, column: idColumn + 1, message: "item '\(id)' already defined on line \(previous)"))
                continue
            }
            firstLine[id] = line
            func number(_ c: Int?, _ name: String, allowEmpty: Bool) -> Double?? {
                guard let c else { return .some(nil) }
                let text = reader.string(c).trimmingCharacters(in: .whitespaces)
                if text.isEmpty {
                    if allowEmpty { return .some(nil) }
                    errors.add(InputError(file: path, line: line, column: c + 1, message: "item '\(id)': \(name) is empty"))
                    return nil
                }
                guard let v = Double(text) else {
                    errors.add(InputError(file: path, line: line, column: c + 1, message: "item '\(id)': \(name) '\(text.escapingControlCharacters)' is not a number"))
                    return nil
                }
                return .some(v)
            }
            guard let a = number(aColumn, "a", allowEmpty: false), let b = number(bColumn, "b", allowEmpty: false),
                  let c = number(cColumn, "c", allowEmpty: true) else { continue }
            let slope = a!, difficulty = b!, guessing = c ?? 0
            if !slope.isFinite || (requirePositiveSlopes && !(slope > 0)) {
                errors.add(InputError(file: path, line: line, column: aColumn + 1, message: "item '\(id)': a = \(slope); scoring needs a positive, finite slope"))
                continue
            }
            if !difficulty.isFinite {
                errors.add(InputError(file: path, line: line, column: bColumn + 1, message: "item '\(id)': b = \(difficulty) is not finite"))
                continue
            }
            if !(guessing >= 0 && guessing < 1) {
                errors.add(InputError(file: path, line: line, column: cColumn! + 1, message: "item '\(id)': c = \(guessing); allowed 0 ≤ c < 1"))
                continue
            }
            var model: IRTModel = guessing > 0 ? .threePL : .twoPL
            if let modelColumn {
                let text = reader.string(modelColumn).trimmingCharacters(in: .whitespaces).lowercased()
                if !text.isEmpty {
                    guard let m = IRTModel(rawValue: text) else {
                        errors.add(InputError(file: path, line: line, column: modelColumn + 1, message: "item '\(id)': model '\(text)' is not one of rasch, 1pl, 2pl, 3pl"))
                        continue
                    }
                    model = m
                }
            }
            var se = ItemStandardErrors()
            let seValues = seColumns.map { c -> Double? in
                guard let c, let v = Double(reader.string(c).trimmingCharacters(in: .whitespaces)), v.isFinite else { return nil }
                return v
            }
            se.discrimination = seValues[0]; se.difficulty = seValues[1]; se.guessing = seValues[2]
            var metadata: [String: String] = [:]
            for (name, c) in zip(metadataColumns, metadataIndex) { metadata[name] = reader.string(c) }
            var item = BankItem(
                itemID: id, model: model, parameters: ItemParameters(discrimination: slope, difficulty: difficulty, guessing: guessing),
                standardErrors: se, responses: nColumn.flatMap { Int(reader.string($0)) }, pValue: pColumn.flatMap { Double(reader.string($0)) },
                flags: flagsColumn.map { reader.string($0).split(separator: ";").map(String.init) } ?? [], metadata: metadata)
            item.sourceLine = line
            items.append(item)
        }
        try errors.throwIfAny()
        guard !items.isEmpty else { throw InputError(file: path, line: headerLine, message: "the bank has no items") }
        return ItemBank(items: items, metadataColumns: metadataColumns)
    }
}
