import Psychometrics
/// Checks of a CSV header whose columns are found by name (bank, item metadata, options, exclusion and
/// exposure files).
///
/// A reader that looks a column up by name takes the first one; a second column of the same name would be
/// ignored silently (and for metadata, the last one would win), so a repeated name is an error naming both
/// columns, in the wording of the response reader's "item 'q1' appears twice in the header (columns 2 and 5)".
package enum CSVHeader {
    /// One error per repeated column name, located at the repeat (1-based column); names are compared as
    /// given (trimmed by the caller). Empty names are skipped: they name nothing a reader looks up.
    package static func duplicateColumnErrors(_ header: [String], file: String, line: Int, what: String = "column") -> [InputError] {
        var first: [String: Int] = [:]
        var errors: [InputError] = []
        for (k, name) in header.enumerated() where !name.isEmpty {
            if let previous = first[name] {
                errors.append(
                    InputError(
                        file: file, line: line, column: k + 1,
                        message: "\(what) '\(name.escapingControlCharacters)' appears twice in the header (columns \(previous + 1) and \(k + 1))"))
            } else {
                first[name] = k
            }
        }
        return errors
    }

    /// Throws the errors of `duplicateColumnErrors`, if any.
    package static func checkUnique(_ header: [String], file: String, line: Int, what: String = "column") throws {
        let errors = duplicateColumnErrors(header, file: file, line: line, what: what)
        if errors.count == 1 { throw errors[0] }
        if !errors.isEmpty { throw InputErrors(errors) }
    }
}
