import Foundation
import Psychometrics

/// Which options would read a response file whose first rows failed: a different layout (long instead of
/// wide), an id column the reader did not recognise, another delimiter, or cells that are not right/wrong
/// responses at all (polytomous scores, option letters).
///
/// Looks at the header and the first `sampleRows` data records of a regular file, read with the options the
/// run used, and returns one sentence naming the options, or nil when nothing explains the failure better than
/// the error itself. It never reads more than the sample (bounded by `CSVReader`'s record limit), and a file it
/// cannot open gives nil: the hint accompanies an error, it never replaces one.
package enum ResponseLayoutHint {
    /// Data records examined.
    package static let sampleRows = 200

    /// The hint for `path` read with `options`; `itemIDs` are the bank's item ids when the command has a bank
    /// (`score`), which lets a long file's item column be recognised by its values.
    /// `ageColumn` is the column the run reads ages from (not an item, not extra).
    package static func hint(forFile path: String, options: ResponseFileOptions, itemIDs: Set<String>? = nil, ageColumn: String? = nil) -> String? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        guard let sample = try? Sample(path: path, delimiter: options.delimiter) else {
            // The header itself did not parse (`"a";"b"` read with commas: a quote closed before a ';'): its first
            // line, quotes respected, may show the separator.
            return headerHint(forFile: path, options: options)
        }
        if let hint = delimiterHint(sample, options: options) { return hint }
        guard sample.rows.count > 0 else { return nil }
        let header = sample.header
        let readsAsLong =
            options.layout == .long
            || (options.layout == nil && [options.sessionColumn, options.itemColumn, options.responseColumn].allSatisfy(header.contains))
        if readsAsLong {
            guard let r = header.firstIndex(of: options.responseColumn), !options.categoryResponses else { return nil }
            return cellHint(sample, columns: [r], naming: options.naming)
        }
        if options.layout != .wide, let hint = longHint(sample, itemIDs: itemIDs, naming: options.naming) { return hint }
        if let hint = idColumnHint(sample, options: options) { return hint }
        if let hint = extraColumnsHint(sample, itemIDs: itemIDs, options: options, ageColumn: ageColumn) { return hint }
        let idColumn = ResponseFileOptions.isWideIDColumn(header[0], sessionColumn: options.sessionColumn)
        // Cells read as categories (`categoryResponses`) are whole numbers by design.
        return options.categoryResponses ? nil : cellHint(sample, columns: Array((idColumn ? 1 : 0)..<header.count), naming: options.naming)
    }

    /// The header and first records as strings.
    struct Sample {
        var header: [String]
        var rows: [[String]] = []

        init(path: String, delimiter: UInt8) throws {
            let reader = try CSVReader(path: path, delimiter: delimiter)
            guard try reader.nextRow() else { throw InputError(file: path, message: "empty") }
            header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
            while rows.count < ResponseLayoutHint.sampleRows, try reader.nextRow() {
                rows.append(reader.strings().map { $0.trimmingCharacters(in: .whitespaces) })
            }
        }

        /// The non-empty cells of column `c` (rows too short for it are skipped).
        func cells(_ c: Int) -> [String] {
            rows.compactMap { c < $0.count && !$0[c].isEmpty ? $0[c] : nil }
        }
    }

    /// A cell the reader takes as a response (or as not administered): `ResponseCell.parse`, the reader's own rule.
    static func isResponse(_ cell: String) -> Bool {
        var cell = cell
        return cell.withUTF8 { ResponseCell.parse($0) } != .invalid
    }

    /// A column of right/wrong responses: every non-empty cell is one, and there is at least one.
    static func isResponseColumn(_ cells: [String]) -> Bool {
        !cells.isEmpty && cells.allSatisfy(isResponse)
    }

    static func option(_ name: String) -> String {
        name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." } && !name.isEmpty
            ? name : "'\(name.replacingOccurrences(of: "'", with: "'\\''"))'"
    }

    /// One header field holding `;`, tab or `|` between names: the file uses that separator.
    static func delimiterHint(_ sample: Sample, options: ResponseFileOptions) -> String? {
        let header = sample.header
        let candidates: [(UInt8, String, String)] = [
            (UInt8(ascii: ";"), ";", "';'"), (UInt8(ascii: "\t"), "\t", "tab"), (UInt8(ascii: "|"), "|", "'|'"), (UInt8(ascii: ","), ",", "','")
        ]
        guard header.count <= 2 else { return nil }
        let text = header.joined()
        let best = candidates.filter { $0.0 != options.delimiter }.map { ($0, text.components(separatedBy: $0.1).count - 1) }.max { $0.1 < $1.1 }
        guard let (candidate, count) = best, count >= 1 else { return nil }
        let fields = text.components(separatedBy: candidate.1).count
        return
            "the header is \(header.count) field\(header.count == 1 ? "" : "s") but holds \(count) \(candidate.2) separator\(count == 1 ? "" : "s"): the file looks \(candidate.2)-separated (\(fields) columns); read it with \(options.naming.name("delimiter")) \(candidate.1 == "\t" ? "tab" : candidate.2)"
    }

    /// The hint for a header that did not parse: its first line holds another separator outside its quotes, as
    /// R's `write.csv2` writes it (`"id";"q1";"q2"` read with commas); nil otherwise.
    package static func headerHint(forFile path: String, options: ResponseFileOptions) -> String? {
        guard let (separator, count) = FieldSeparatorSniffer.sniff(path: path, expected: options.delimiter) else { return nil }
        let name = FieldSeparatorSniffer.name(separator)
        return
            "the header holds \(count) \(name) separator\(count == 1 ? "" : "s") outside its quotes and no \(FieldSeparatorSniffer.name(options.delimiter)): the file looks \(name)-separated (\(count + 1) columns)\(separator == UInt8(ascii: ";") ? ", as R's write.csv2 and Excel in European locales write it" : ""); read it with \(options.naming.name("delimiter")) \(separator == UInt8(ascii: "\t") ? "tab" : name)"
    }

    /// Names of an age column that `--age-column` would read.
    static let ageNames: Set<String> = ["age", "age_years", "ageyears", "alter", "edad", "âge"]

    /// Columns of a wide file that are not items: with a bank, header names it lacks beside names it has;
    /// without one, columns none of whose cells is a response (nor all whole numbers, unless named as an age) beside more
    /// columns whose cells are (a `sex` column of M/F among 0/1 items). An age column is pointed at `--age-column`.
    static func extraColumnsHint(_ sample: Sample, itemIDs: Set<String>?, options: ResponseFileOptions, ageColumn: String?) -> String? {
        let header = sample.header
        guard !header.isEmpty else { return nil }
        let start = ResponseFileOptions.isWideIDColumn(header[0], sessionColumn: options.sessionColumn) ? 1 : 0
        let candidates = (start..<header.count).filter { !options.ignoredColumns.contains(header[$0]) && header[$0] != ageColumn }
        let extra: [Int]
        if let itemIDs {
            guard candidates.contains(where: { itemIDs.contains(header[$0]) }) else { return nil }
            extra = candidates.filter { !itemIDs.contains(header[$0]) }
        } else {
            // Whole numbers are more likely polytomous scores (`cellHint` says so), unless the name is an age's.
            let responses = candidates.filter { isResponseColumn(sample.cells($0)) }
            extra = candidates.filter { c in
                let cells = sample.cells(c)
                return !cells.isEmpty && !cells.contains(where: isResponse)
                    && (ageNames.contains(header[c].lowercased()) || !cells.allSatisfy { Int($0) != nil })
            }
            guard responses.count >= 2, extra.count < responses.count else { return nil }
        }
        guard !extra.isEmpty else { return nil }
        let names = extra.map { header[$0] }
        let ages = names.filter { ageNames.contains($0.lowercased()) }, others = names.filter { !ageNames.contains($0.lowercased()) }
        let list = names.map { "'\($0.escapingControlCharacters)'" }.joined(separator: ", ")
        var advice: [String] = []
        if !others.isEmpty {
            advice.append(
                "leave \(others.count == 1 ? "it" : "them") out with \(options.naming.name("ignore_columns")) \(option(others.joined(separator: ",")))"
            )
        }
        if let age = ages.first {
            advice.append(
                "read ages from \(TextFidelity.quoted(age)) with \(options.naming.name("age_column")) \(option(age))\(options.naming == .option ? " (score, norms build)" : "") or leave it out with \(options.naming.name("ignore_columns")) \(option(ages.joined(separator: ",")))"
            )
        }
        return
            "column\(names.count == 1 ? "" : "s") \(list) \(names.count == 1 ? "is" : "are") not \(itemIDs == nil ? "responses" : "items of the bank"): "
            + advice.joined(separator: "; ")
    }

    /// A long file (one row per response) read as wide: a response column, an item column and a session column
    /// among the first three-or-more columns.
    static func longHint(_ sample: Sample, itemIDs: Set<String>?, naming: SettingNaming) -> String? {
        let header = sample.header
        guard header.count >= 3, sample.rows.count >= 2 else { return nil }
        let columns = header.indices.map { sample.cells($0) }
        let responseColumns = header.indices.filter { isResponseColumn(columns[$0]) }
        guard responseColumns.count == 1, let r = responseColumns.first else { return nil }
        let others = header.indices.filter { $0 != r && !columns[$0].isEmpty }
        guard others.count >= 2 else { return nil }
        // The item column: values in the bank (when there is one; a header of bank item ids is a wide file), or
        // else a name that says so.
        var item: Int?
        if let itemIDs {
            guard header.filter(itemIDs.contains).count < 2 else { return nil }
            item = others.max { fraction(columns[$0], in: itemIDs) < fraction(columns[$1], in: itemIDs) }
            guard let i = item, fraction(columns[i], in: itemIDs) >= 0.5 else { return nil }
        } else {
            item = others.first { ["item", "question", "task", "problem"].contains(where: header[$0].lowercased().contains) }
        }
        // The session column: the remaining column whose values come in runs (a session's rows together), or
        // whose name says so.
        let rest = others.filter { $0 != item }
        var session = rest.first {
            ["session", "person", "user", "respondent", "subject", "candidate", "id"].contains(where: header[$0].lowercased().contains)
        }
        if session == nil { session = rest.max { runs(columns[$0]) < runs(columns[$1]) } }
        if item == nil, let s = session {
            item = rest.first { $0 != s && Set(columns[$0]).count < columns[$0].count && !columns[$0].allSatisfy { Double($0) != nil } }
        }
        guard let i = item, let s = session, i != s, runs(columns[s]) > 0 || Set(columns[s]).count < columns[s].count else { return nil }
        return
            "the file looks long (one row per response: session '\(header[s])', item '\(header[i])', response '\(header[r])') but was read as wide; read it with \(naming.name("session_column")) \(option(header[s])) \(naming.name("item_column")) \(option(header[i])) \(naming.name("response_column")) \(option(header[r]))"
    }

    static func fraction(_ cells: [String], in set: Set<String>) -> Double {
        cells.isEmpty ? 0 : Double(cells.filter(set.contains).count) / Double(cells.count)
    }

    /// Adjacent equal pairs.
    static func runs(_ cells: [String]) -> Int {
        zip(cells, cells.dropFirst()).filter { $0 == $1 }.count
    }

    /// A wide file whose first column holds ids under a name the reader does not recognise.
    static func idColumnHint(_ sample: Sample, options: ResponseFileOptions) -> String? {
        let header = sample.header
        guard header.count >= 2, !ResponseFileOptions.isWideIDColumn(header[0], sessionColumn: options.sessionColumn) else { return nil }
        let first = sample.cells(0)
        guard !first.isEmpty, !first.contains(where: isResponse), Set(first).count == first.count else { return nil }
        let rest = (1..<header.count).map { sample.cells($0) }.filter { !$0.isEmpty }
        guard !rest.isEmpty, rest.allSatisfy(isResponseColumn) else { return nil }
        return "the first column '\(header[0])' holds ids, not responses: read it with \(options.naming.name("session_column")) \(option(header[0]))"
    }

    /// Response cells that are whole numbers beyond 1 or option letters: not right/wrong responses.
    static func cellHint(_ sample: Sample, columns: [Int], naming: SettingNaming) -> String? {
        let cells = columns.flatMap { sample.cells($0) }.filter { !isResponse($0) }
        guard !cells.isEmpty else { return nil }
        if cells.allSatisfy({ Int($0).map { $0 >= 2 && $0 <= 100 } ?? false }) {
            let largest = cells.compactMap { Int($0) }.max()!
            return
                "response cells hold whole numbers up to \(largest): scores in more than two categories, \(naming == .option ? "which calibrate reads with --model graded, gpcm, pcm, rsm or nominal" : "which the graded, gpcm, pcm, rsm and nominal models read"); for right/wrong items recode them to 1 = correct, 0 = incorrect"
        }
        if cells.allSatisfy({ $0.count == 1 && $0.first!.isLetter }) {
            return
                "response cells hold option letters (\(Set(cells).sorted().prefix(6).joined(separator: ", "))): score reads them against the bank's answer keys (a key column of letters is used as it is; \(naming.name("key_column"))\(naming == .option ? " COLUMN" : "") names another), or recode them to 1 = the key, 0 = another option; \(naming == .option ? "iqscore analyze --options reads raw choices for distractor analysis" : "distractor analysis reads raw choices")"
        }
        return nil
    }
}
