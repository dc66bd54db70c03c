import Foundation
import Psychometrics

extension ItemMetadata {
    /// Reads `item_id` plus every other column. Duplicate ids, repeated column names and rows of the wrong width
    /// are errors naming the line.
    /// - Throws: `InputError` (an unreadable or empty file, no id column) or `InputErrors` listing every repeated
    ///   id, each naming the file, line and column.
    public static func load(csv path: String, idColumn: String = "item_id") throws -> ItemMetadata {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header with \(idColumn)") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        try CSVHeader.checkUnique(header, file: path, line: reader.line)
        guard let idIndex = header.firstIndex(of: idColumn) else {
            throw InputError(file: path, line: reader.line, message: "no '\(idColumn)' column in the header (\(header.joined(separator: ",")))")
        }
        var errors = ErrorCollector()
        var values: [String: [String: String]] = [:], firstLine: [String: Int] = [:]
        while try reader.nextRow(fields: header.count, collecting: &errors) {
            let id = reader.string(idIndex).trimmingCharacters(in: .whitespaces)
            if let previous = firstLine[id] {
                errors.add(InputError(file: path, line: reader.line, column: idIndex + 1, message: "item '\(id)' already listed on line \(previous)"))
                continue
            }
            firstLine[id] = reader.line
            var row: [String: String] = [:]
            for (c, name) in header.enumerated() where c != idIndex { row[name] = reader.string(c) }
            values[id] = row
        }
        try errors.throwIfAny()
        return ItemMetadata(columns: header.enumerated().filter { $0.offset != idIndex }.map(\.element), values: values)
    }
}
