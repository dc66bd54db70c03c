import Foundation
import Psychometrics

/// The rows of a multidimensional bank file (`BifactorBank`, `CorrelatedFactorsBank`) as their readers check
/// them: each row's field count and item id (not empty, not repeated), and the problems of its cells located at
/// file:line:column with the item named, collected (`ErrorCollector`) so that one read reports every bad row.
final class BankRowChecker {
    let reader: CSVReader
    let path: String
    let header: [String]
    let idColumn: Int
    var errors = ErrorCollector()
    private var firstLine: [String: Int] = [:]
    /// The current row's line and item id.
    private(set) var line = 0
    private(set) var id = ""

    init(reader: CSVReader, path: String, header: [String], idColumn: Int) {
        self.reader = reader
        self.path = path
        self.header = header
        self.idColumn = idColumn
    }

    /// Moves to the next row with the header's field count and a new, non-empty item id (recording the rows
    /// skipped); false at the end of the file.
    func nextItem() throws -> Bool {
        while try reader.nextRow(fields: header.count, collecting: &errors) {
            line = reader.line
            id = reader.string(idColumn).trimmingCharacters(in: .whitespaces)
            if id.isEmpty { fail(idColumn, "an empty item id"); continue }
            if let previous = firstLine[id] { fail(idColumn, "already listed on line \(previous)"); continue }
            firstLine[id] = line
            return true
        }
        return false
    }

    /// Records a problem of the current row at `column` (0-based).
    func fail(_ column: Int, _ message: String) {
        errors.add(InputError(file: path, line: line, column: column + 1, message: "item '\(id.prefix(40))': " + message))
    }

    /// The trimmed text of `column`.
    func text(_ column: Int) -> String { reader.string(column).trimmingCharacters(in: .whitespaces) }

    /// The number in `column` (named `name`, default its header), in `range`; an empty cell is `fallback` when
    /// given. Nil, the problem recorded, for a cell that is not a plain number or out of range.
    func number(_ column: Int, _ range: NumberRange, name: String? = nil, emptyAs fallback: Double? = nil) -> Double? {
        let text = text(column), name = name ?? header[column]
        if text.isEmpty, let fallback { return fallback }
        guard let value = DecimalNumber.parse(text) else { fail(column, "\(name) \(TextFidelity.quoted(text)) is not a number"); return nil }
        if let problem = range.problem(value, name) { fail(column, problem); return nil }
        return value
    }

    /// The item's model cell (`column`, lowercased; "" without the column), or nil, the problem recorded, for one
    /// other than 2pl or 3pl, or a 2pl item with c ≠ 0 (`cColumn`).
    func model(_ column: Int?, guessing c: Double, cColumn: Int?, bank: String) -> String? {
        let model = column.map { text($0).lowercased() } ?? ""
        if !["", "2pl", "3pl"].contains(model) {
            fail(column!, "model \(TextFidelity.quoted(model)): a \(bank) bank's items are 2pl or 3pl"); return nil
        }
        if model == "2pl" && c != 0 { fail(cColumn!, "a 2pl item with c = \(c)"); return nil }
        return model
    }

    /// The current row's non-empty cells of `columns`, keyed by their header names.
    func cells(_ columns: [Int]) -> [String: String] {
        var cells: [String: String] = [:]
        for c in columns {
            let value = text(c)
            if !value.isEmpty { cells[header[c]] = value }
        }
        return cells
    }
}
