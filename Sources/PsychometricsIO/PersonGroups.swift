import Foundation
import Psychometrics

/// Each person's group label, read from a column of the response file (`iqscore dif --group-column`,
/// `calibrate --group-column`) in a second pass beside `ResponseMatrix.load`: in the long layout the label of
/// each session (every row of a session must carry the same one), in the wide layout each row's.
///
/// Checked, each error at file:line:column with the value: the column in the header (and, in the wide layout,
/// not read as an item: the caller lists it in `ignoredColumns`), a label on every row (empty or NA is an
/// error: every person needs a group), at most `maximumLabelBytes` bytes, at most `maximumGroups` distinct
/// labels, one label per session.
package enum PersonGroups {
    /// Longest label: 200 bytes.
    package static let maximumLabelBytes = 200
    /// Most distinct groups: 100.
    package static let maximumGroups = 100
    /// Errors listed before the rest are only counted.
    static let errorLimit = 20

    /// The label of each person of `matrix`, in its person order.
    /// - Parameters:
    ///   - report: the `ResponseMatrix.load` report of the same file (its layout and id column).
    /// - Throws: `InputErrors` / `InputError` as described above.
    package static func load(
        csv path: String, column: String, options: ResponseFileOptions, report: ResponseFileReport,
        matrix: ResponseMatrix
    ) throws -> [String] {
        try load(csv: path, column: column, options: options, report: report, matrix: matrix, noun: "group", maximumDistinct: maximumGroups)
    }

    /// The same for any per-session value named `noun` in messages (`date`: `iqscore monitor --date-column`), with
    /// at most `maximumDistinct` distinct values (nil: no limit) and each value checked by `problem` (nil: fine;
    /// else what is wrong, reported at the cell).
    package static func load(
        csv path: String, column: String, options: ResponseFileOptions, report: ResponseFileReport,
        matrix: ResponseMatrix, noun: String, maximumDistinct: Int?, problem: ((String) -> String?)? = nil
    ) throws -> [String] {
        let reader = try CSVReader(path: path, delimiter: options.delimiter)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header row") }
        let header = try reader.headerFields()
        guard let g = header.firstIndex(of: column) else {
            throw InputError(
                file: path, line: reader.line,
                message:
                    "no \(noun) column \(TextFidelity.quoted(column)) in the header (found: \(header.map(\.escapingControlCharacters).joined(separator: ",")))"
            )
        }
        let idIndex: Int?
        switch report.layout {
        case .long: idIndex = header.firstIndex(of: options.sessionColumn)
        case .wide: idIndex = report.idColumn.flatMap { header.firstIndex(of: $0) }
        }
        var labels: [String: (label: String, line: Int)] = [:]
        var distinct = Set<String>()
        var errors: [InputError] = [], omitted = 0
        func fail(_ error: InputError) { if errors.count < errorLimit { errors.append(error) } else { omitted += 1 } }
        var row = 0
        while try reader.nextRow() {
            row += 1
            guard reader.fieldCount > max(g, idIndex ?? 0) else { continue }
            let id = idIndex.map { reader.string($0) } ?? String(row)
            let label = reader.string(g)
            let trimmed = label.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed == "NA" {
                fail(
                    InputError(
                        file: path, line: reader.line, column: g + 1,
                        message: noun == "group"
                            ? "empty group label \(TextFidelity.quoted(label)) in column \(TextFidelity.quoted(column)); every person needs a group"
                            : "empty \(noun) \(TextFidelity.quoted(label)) in column \(TextFidelity.quoted(column)); every session needs one"))
                continue
            }
            if label.utf8.count > maximumLabelBytes {
                fail(
                    InputError(
                        file: path, line: reader.line, column: g + 1,
                        message:
                            "\(noun == "group" ? "group label" : noun) \(TextFidelity.quoted(label)) is \(label.utf8.count) bytes; at most \(maximumLabelBytes) allowed"
                    ))
                continue
            }
            if let problem, let message = problem(label) {
                fail(InputError(file: path, line: reader.line, column: g + 1, message: message))
                continue
            }
            if let previous = labels[id] {
                if previous.label != label {
                    fail(
                        InputError(
                            file: path, line: reader.line, column: g + 1,
                            message: noun == "group"
                                ? "session \(TextFidelity.quoted(id)) is in group \(TextFidelity.quoted(label)) here but in \(TextFidelity.quoted(previous.label)) on line \(previous.line); a session has one group"
                                : "session \(TextFidelity.quoted(id)) has \(noun) \(TextFidelity.quoted(label)) here but \(TextFidelity.quoted(previous.label)) on line \(previous.line); a session has one \(noun)"
                        ))
                }
                continue
            }
            if let maximumDistinct, distinct.insert(label).inserted && distinct.count > maximumDistinct {
                throw InputError(
                    file: path, line: reader.line, column: g + 1,
                    message:
                        "more than \(maximumDistinct) distinct groups in column \(TextFidelity.quoted(column)) (the \(maximumDistinct + 1)th: \(TextFidelity.quoted(label))); is it the right column?"
                )
            }
            labels[id] = (label, reader.line)
        }
        if !errors.isEmpty { throw InputErrors(errors, omitted: omitted) }
        return try matrix.personIDs.map { id in
            guard let entry = labels[id] else {
                throw InputError(
                    file: path,
                    message:
                        "person \(TextFidelity.quoted(id)) has responses but no \(noun == "group" ? "group label" : noun) in column \(TextFidelity.quoted(column))"
                )
            }
            return entry.label
        }
    }
}
