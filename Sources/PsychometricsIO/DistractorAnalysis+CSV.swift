import Foundation
import Psychometrics

extension DistractorAnalysis {
    /// Reads a wide option file (header of item ids, optionally a first id column; cells are option codes;
    /// empty, `0` or `NA` = omitted) and scores it against `keys` (item id → key).
    package static func load(csv path: String, keys: [String: String], idColumn: String = "session_id") throws
        -> (analysis: DistractorAnalysis, scored: ResponseMatrix)
    {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header of item ids") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        let first = header.first ?? ""
        let hasID = ResponseFileOptions.isWideIDColumn(first, sessionColumn: idColumn)
        let itemIDs = Array(header.dropFirst(hasID ? 1 : 0))
        try CSVHeader.checkUnique(header, file: path, line: reader.line, what: "item")
        let missingKeys = itemIDs.filter { keys[$0] == nil }
        guard missingKeys.isEmpty else {
            throw InputError(
                file: path, line: reader.line,
                message:
                    "no key for item\(missingKeys.count == 1 ? "" : "s") \(missingKeys.prefix(5).joined(separator: ", "))\(missingKeys.count > 5 ? ", …" : ""); give keys in a key column of the item file"
            )
        }
        var choices: [[String?]] = [], ids: [String] = []
        var errors = ErrorCollector()
        while try reader.nextRow(fields: header.count, collecting: &errors) {
            ids.append(hasID ? reader.string(0) : String(choices.count + 1))
            var row: [String?] = []
            for c in (hasID ? 1 : 0)..<header.count {
                let v = reader.string(c).trimmingCharacters(in: .whitespaces)
                row.append(v.isEmpty || v == "0" || v.uppercased() == "NA" ? nil : v)
            }
            choices.append(row)
        }
        try errors.throwIfAny()
        let keyList = itemIDs.map { keys[$0]! }
        let analysis = DistractorAnalysis(personCount: choices.count, itemIDs: itemIDs, choices: choices, keys: keyList)
        let rows: [[UInt8?]] = choices.map { row in zip(row, keyList).map { c, k in c.map { $0 == k ? 1 : 0 } } }
        return (analysis, try ResponseMatrix(personIDs: ids, itemIDs: itemIDs, rows: rows))
    }
}
