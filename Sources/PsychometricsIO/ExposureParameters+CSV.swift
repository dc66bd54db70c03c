import Assembly
import Foundation
import Psychometrics

extension ExposureParameters {
    /// Reads Sympson–Hetter parameters as `iqscore cat simulate --exposure-out` writes them (`item_id,k`, one
    /// row per item) for `bank`, in bank order. Bank items the file does not list get K = 1 (uncontrolled: items
    /// added to the bank after the calibration); a row for an item the bank lacks, a repeated item, a K that is
    /// not a plain number in [0, 1], a missing column or a short row is an error naming the line and column.
    /// - Throws: `InputError` (an unreadable or empty file, a header without `item_id` and `k`) or `InputErrors`
    ///   listing every bad row as above, each naming the file, line and column.
    public static func load(csv path: String, bank: AssemblyBank) throws -> ExposureParameters {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header with item_id,k") }
        let header = try reader.headerFields().map { $0.trimmingCharacters(in: .whitespaces) }
        guard let idColumn = header.firstIndex(of: "item_id"), let kColumn = header.firstIndex(of: "k") else {
            throw InputError(file: path, line: reader.line, message: "the header needs item_id and k (found \(header.joined(separator: ",")))")
        }
        var probabilities = [Double](repeating: 1, count: bank.items.count)
        var seen: [Int: Int] = [:]
        var errors = ErrorCollector()
        while try reader.nextRow(fields: header.count, collecting: &errors) {
            let line = reader.line
            let id = reader.string(idColumn).trimmingCharacters(in: .whitespaces)
            guard let j = bank.index(of: id) else {
                errors.add(InputError(file: path, line: line, column: idColumn + 1, message: "item \(TextFidelity.quoted(id)) is not in the bank"))
                continue
            }
            if let first = seen[j] {
                errors.add(
                    InputError(
                        file: path, line: line, column: idColumn + 1, message: "item \(TextFidelity.quoted(id)) already given on line \(first)"))
                continue
            }
            seen[j] = line
            let text = reader.string(kColumn).trimmingCharacters(in: .whitespaces)
            guard let k = DecimalNumber.parse(text), k >= 0, k <= 1 else {
                errors.add(
                    InputError(file: path, line: line, column: kColumn + 1, message: "k \(TextFidelity.quoted(text)) is not a number in [0, 1]"))
                continue
            }
            probabilities[j] = k
        }
        try errors.throwIfAny()
        return try ExposureParameters(probabilities: probabilities)
    }
}
