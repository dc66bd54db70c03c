import Foundation
import Psychometrics

/// The two CSV layouts iqscore reads responses from.
/// - `wide`: one row per person/session; the first column is the id (when its header is an id name, see
///   `ResponseFileOptions`), every other column is an item; cells are `1`, `0` or empty (not administered).
/// - `long`: one row per response with session, item and response columns (names configurable); other
///   columns are ignored. Rows of one session need not be contiguous.
public enum ResponseLayout: String, Sendable, Hashable, Codable, CaseIterable {
    case wide, long
}

/// How to read a response CSV.
public struct ResponseFileOptions: Sendable, Hashable {
    /// Long layout: the session (person) id column. Wide layout: if the first header equals this name (or a
    /// common id name such as `id`, `person_id`, `user_id`), the first column holds ids.
    public var sessionColumn = "session_id"
    /// Long layout: the item id column.
    public var itemColumn = "item_id"
    /// Long layout: the response column.
    public var responseColumn = "response"
    /// Force a layout; `nil` detects it from the header (long when the three long columns are present).
    public var layout: ResponseLayout?
    /// The field separator, one of `allowedDelimiters`: `,` (default), `;` (spreadsheets in locales whose decimal
    /// mark is a comma), tab or `|`.
    public var delimiter: UInt8

    /// The separators a response file may use.
    public static let allowedDelimiters: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t"), UInt8(ascii: "|")]

    public init(sessionColumn: String = "session_id", itemColumn: String = "item_id",
                responseColumn: String = "response", layout: ResponseLayout? = nil, delimiter: UInt8 = UInt8(ascii: ",")) {
        precondition(Self.allowedDelimiters.contains(delimiter), "delimiter must be one of , ; tab |, got \(delimiter)")
        self.sessionColumn = sessionColumn
        self.itemColumn = itemColumn
        self.responseColumn = responseColumn
        self.layout = layout
        self.delimiter = delimiter
    }

    /// First-column headers that mark a wide file's id column (compared case-insensitively).
    package static let wideIDNames: Set<String> = ["id", "session_id", "session", "person_id", "person", "user_id",
                                                   "respondent", "respondent_id", "subject", "subject_id", "test_session_id"]
}

extension ResponseFileOptions {
    /// The long layout's session, item and response columns in `header`: each must be there exactly once (a
    /// second column of the same name would make the row's value ambiguous).
    package func longColumns(in header: [String], file: String, line: Int) throws -> (session: Int, item: Int, response: Int) {
        func column(_ name: String, _ role: String) throws -> Int {
            let matches = header.indices.filter { header[$0] == name }
            guard let c = matches.first else {
                throw InputError(file: file, line: line,
                                 message: "no \(role) column '\(name)' in the header (\(header.joined(separator: ","))); name it with --\(role)-column")
            }
            if matches.count > 1 {
                throw InputError(file: file, line: line, column: matches[1] + 1,
                                 message: "\(role) column '\(name)' appears twice in the header (columns \(c + 1) and \(matches[1] + 1))")
            }
            return c
        }
        return (try column(sessionColumn, "session"), try column(itemColumn, "item"), try column(responseColumn, "response"))
    }
}

/// What a response file held besides the matrix.
public struct ResponseFileReport: Sendable, Hashable {
    public var path: String
    public var layout: ResponseLayout
    /// Data records after the header.
    public var dataRows: Int
    /// Distinct persons/sessions found, including those with no responses.
    public var personsRead: Int
    /// Persons/sessions that had no responses at all: excluded from the matrix (id and line).
    public var emptyPersons: [(id: String, line: Int)]
    /// Long layout: rows whose response cell was empty/NA (not administered).
    public var blankResponses: Int
    /// Wide layout: the id column's header, or nil when persons are numbered by data row.
    public var idColumn: String?

    public static func == (l: Self, r: Self) -> Bool {
        l.path == r.path && l.layout == r.layout && l.dataRows == r.dataRows && l.personsRead == r.personsRead
            && l.emptyPersons.map(\.id) == r.emptyPersons.map(\.id) && l.blankResponses == r.blankResponses
            && l.idColumn == r.idColumn
    }
    public func hash(into h: inout Hasher) { h.combine(path); h.combine(dataRows) }
}

/// A parsed response cell.
package enum ResponseCell: Sendable, Hashable {
    case correct, incorrect, missing, invalid

    /// Parses `1`/`0`, `true`/`false` (any case), and empty or `NA` as not administered; surrounding spaces are
    /// ignored.
    @inline(__always)
    package static func parse(_ raw: UnsafeBufferPointer<UInt8>) -> ResponseCell {
        let b = raw.trimmingSpaces()
        switch b.count {
        case 0: return .missing
        case 1:
            if b[0] == UInt8(ascii: "1") { return .correct }
            if b[0] == UInt8(ascii: "0") { return .incorrect }
            return .invalid
        case 2:
            return (b[0] | 0x20) == UInt8(ascii: "n") && (b[1] | 0x20) == UInt8(ascii: "a") ? .missing : .invalid
        case 4:
            return matches(b, "true") ? .correct : .invalid
        case 5:
            return matches(b, "false") ? .incorrect : .invalid
        default:
            return .invalid
        }
    }

    @inline(__always) private static func matches(_ b: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        let w = word.utf8Start
        for i in 0..<b.count where (b[i] | 0x20) != w[i] { return false }
        return true
    }

    package static let allowedDescription = "1, 0, true, false, or empty/NA for not administered"
}

extension ResponseMatrix {
    /// Reads a response CSV in wide or long layout (detected from the header unless forced).
    ///
    /// Errors name file, line and column: a malformed record, a row with the wrong number of fields, a cell
    /// that is not a response (grouped per column, with the count), a duplicated item column or person id,
    /// and (long layout) the same item twice in a session, naming both lines. Persons with no responses are
    /// excluded and listed in the report.
    ///
    /// Calibration keeps every response in memory. With `maxMemoryBytes`, reading stops with an error once the
    /// responses read so far need more than that (long layout: about 33 bytes per response while reading and
    /// grouping, 160 per session; wide: 5 per response, 160 per person), naming the line reached.
    ///
    /// When the file's problems look like a misread layout (long read as wide, an unrecognised id column, another
    /// delimiter, polytomous cells), the thrown `InputErrors` carry a `hint` naming the options that would read it.
    public static func load(csv path: String, options: ResponseFileOptions = ResponseFileOptions(), maxMemoryBytes: Int? = nil) throws
        -> (matrix: ResponseMatrix, report: ResponseFileReport)
    {
        do {
            return try loadWithoutHint(csv: path, options: options, maxMemoryBytes: maxMemoryBytes)
        } catch let error as InputErrors {
            guard let hint = ResponseLayoutHint.hint(forFile: path, options: options) else { throw error }
            throw InputErrors(error.errors, omitted: error.omitted, hint: hint)
        } catch let error as InputError {
            guard let hint = ResponseLayoutHint.hint(forFile: path, options: options) else { throw error }
            throw InputErrors([error], hint: hint)
        }
    }

    private static func loadWithoutHint(csv path: String, options: ResponseFileOptions, maxMemoryBytes: Int?) throws
        -> (matrix: ResponseMatrix, report: ResponseFileReport)
    {
        let reader = try CSVReader(path: path, delimiter: options.delimiter)
        let budget = MemoryCheck(limit: maxMemoryBytes, path: path)
        guard try reader.nextRow() else {
            throw InputError(file: path, message: "the file is empty; expected a header row")
        }
        let header = try reader.headerFields()
        let headerLine = reader.line
        // Long when the session and item columns are present (a missing response column is then reported by
        // name rather than the file being misread as wide).
        let hasLong = header.contains(options.sessionColumn) && header.contains(options.itemColumn)
        let layout = options.layout ?? (hasLong ? .long : .wide)
        switch layout {
        case .long:
            return try loadLong(reader: reader, header: header, headerLine: headerLine, options: options, budget: budget)
        case .wide:
            return try loadWide(reader: reader, header: header, headerLine: headerLine, options: options, budget: budget)
        }
    }

    /// The reading budget: throws once the estimated bytes pass the limit.
    struct MemoryCheck {
        let limit: Int?
        let path: String

        func check(line: Int, responses: Int, persons: Int, bytesPerResponse: Int) throws {
            guard let limit else { return }
            let need = responses * bytesPerResponse + persons * 160
            if need > limit {
                throw InputError(file: path, line: line, message: "by this line the responses need about \(need >> 20) MiB in memory "
                                 + "(\(responses) responses, \(persons) persons), more than the limit of \(limit >> 20) MiB; calibration keeps "
                                 + "every response in memory: raise --max-memory")
            }
        }
    }

    private static func loadWide(reader: CSVReader, header: [String], headerLine: Int, options: ResponseFileOptions, budget: MemoryCheck) throws
        -> (matrix: ResponseMatrix, report: ResponseFileReport)
    {
        let path = reader.path
        var errors = ErrorCollector()
        let first = header.first ?? ""
        let hasID = first == options.sessionColumn || ResponseFileOptions.wideIDNames.contains(first.lowercased())
        let itemStart = hasID ? 1 : 0
        let itemIDs = Array(header[itemStart...])
        guard !itemIDs.isEmpty else {
            throw InputError(file: path, line: headerLine, message: "the header names no item columns")
        }
        var seenItem: [String: Int] = [:]
        for (k, id) in itemIDs.enumerated() {
            if id.isEmpty {
                errors.add(InputError(file: path, line: headerLine, column: k + itemStart + 1, message: "item column \(k + itemStart + 1) has an empty name"))
            } else if let previous = seenItem[id] {
                errors.add(InputError(file: path, line: headerLine, column: k + itemStart + 1,
                                      message: "item '\(id)' appears twice in the header (columns \(previous) and \(k + itemStart + 1))"))
            } else {
                seenItem[id] = k + itemStart + 1
            }
        }
        try errors.throwIfAny()

        let fieldCount = header.count
        var personIDs: [String] = [], offsets = [0], items: [Int32] = [], values: [UInt8] = []
        var empty: [(id: String, line: Int)] = []
        var seenPerson: [String: Int] = [:]
        var rows = 0
        // Invalid cells are grouped per column: (count, first line, first value).
        var badCells = [(count: Int, line: Int, value: String)?](repeating: nil, count: fieldCount)

        while try reader.nextRow() {
            rows += 1
            let line = reader.line
            if rows & 0xFFF == 0 { try budget.check(line: line, responses: items.count, persons: personIDs.count, bytesPerResponse: 5) }
            if reader.fieldCount != fieldCount {
                errors.add(InputError(file: path, line: line, column: min(reader.fieldCount, fieldCount) + (reader.fieldCount > fieldCount ? 1 : 0),
                                      message: "expected \(fieldCount) fields as in the header, found \(reader.fieldCount)"))
                continue
            }
            var invalidID = false
            let id = hasID ? reader.withField(0) { raw -> String in
                let b = raw.trimmingSpaces()
                if let text = TextFidelity.validString(b) { return text }
                invalidID = true
                errors.add(InputError(file: path, line: line, column: 1, message: TextFidelity.invalidUTF8("\(first)", b)))
                return ""
            } : String(rows)
            if invalidID { continue }
            if hasID {
                if id.isEmpty {
                    errors.add(InputError(file: path, line: line, column: 1, message: "empty \(first) (every row needs an id)"))
                    continue
                }
                if let previous = seenPerson[id] {
                    errors.add(InputError(file: path, line: line, column: 1, message: "\(first) '\(id)' already appeared on line \(previous)"))
                    continue
                }
                seenPerson[id] = line
            }
            let before = items.count
            for c in itemStart..<fieldCount {
                let cell = reader.withField(c) { ResponseCell.parse($0) }
                switch cell {
                case .correct: items.append(Int32(c - itemStart)); values.append(1)
                case .incorrect: items.append(Int32(c - itemStart)); values.append(0)
                case .missing: break
                case .invalid:
                    if let bad = badCells[c] { badCells[c] = (bad.count + 1, bad.line, bad.value) }
                    else { badCells[c] = (1, line, reader.withField(c) { TextFidelity.quoted($0) }) }
                }
            }
            if items.count == before {
                empty.append((id, line))
                continue
            }
            personIDs.append(id)
            offsets.append(items.count)
        }
        for c in 0..<fieldCount {
            guard let bad = badCells[c] else { continue }
            let more = bad.count > 1 ? " (\(bad.count) invalid cells in this column)" : ""
            errors.add(InputError(file: path, line: bad.line, column: c + 1,
                                  message: "column \(TextFidelity.quoted(header[c])): \(bad.value) is not a response; allowed: \(ResponseCell.allowedDescription)\(more)"))
        }
        try errors.throwIfAny()
        if rows == 0 { throw InputError(file: path, line: headerLine, message: "no data rows after the header") }
        let matrix = ResponseMatrix(validatedPersonIDs: personIDs, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: items, responses: values)
        let report = ResponseFileReport(path: path, layout: .wide, dataRows: rows, personsRead: personIDs.count + empty.count,
                                        emptyPersons: empty, blankResponses: 0, idColumn: hasID ? first : nil)
        return (matrix, report)
    }

    private static func loadLong(reader: CSVReader, header: [String], headerLine: Int, options: ResponseFileOptions, budget: MemoryCheck) throws
        -> (matrix: ResponseMatrix, report: ResponseFileReport)
    {
        let path = reader.path
        let (sc, ic, rc) = try options.longColumns(in: header, file: path, line: headerLine)

        var errors = ErrorCollector()
        var sessionIndex: [String: Int32] = [:], sessionIDs: [String] = [], sessionLine: [Int] = []
        var itemIndex: [String: Int32] = [:], itemIDs: [String] = []
        var cellSession: [Int32] = [], cellItem: [Int32] = [], cellValue: [UInt8] = [], cellLine: [Int] = []
        var rows = 0, blanks = 0
        var lastSessionBytes: [UInt8] = [], lastSession: Int32 = -1

        while try reader.nextRow() {
            rows += 1
            let line = reader.line
            if rows & 0xFFFF == 0 { try budget.check(line: line, responses: cellSession.count, persons: sessionIDs.count, bytesPerResponse: 33) }
            if reader.fieldCount != header.count {
                errors.add(InputError(file: path, line: line, column: min(reader.fieldCount, header.count) + (reader.fieldCount > header.count ? 1 : 0),
                                      message: "expected \(header.count) fields as in the header, found \(reader.fieldCount)"))
                continue
            }
            // Session id: consecutive rows of the same session skip the dictionary.
            let s: Int32 = reader.withField(sc) { raw in
                let b = raw.trimmingSpaces()
                if lastSession >= 0 && b.elementsEqual(lastSessionBytes) { return lastSession }
                guard let id = TextFidelity.validString(b) else {
                    errors.add(InputError(file: path, line: line, column: sc + 1, message: TextFidelity.invalidUTF8(options.sessionColumn, b)))
                    return -1
                }
                let index: Int32
                if let known = sessionIndex[id] { index = known } else {
                    index = Int32(sessionIDs.count)
                    sessionIndex[id] = index
                    sessionIDs.append(id)
                    sessionLine.append(line)
                }
                lastSessionBytes.removeAll(keepingCapacity: true)
                lastSessionBytes.append(contentsOf: b)
                lastSession = index
                return index
            }
            if s < 0 { continue }
            if sessionIDs[Int(s)].isEmpty {
                errors.add(InputError(file: path, line: line, column: sc + 1, message: "empty \(options.sessionColumn)"))
                continue
            }
            let cell = reader.withField(rc) { ResponseCell.parse($0) }
            if cell == .invalid {
                errors.add(InputError(file: path, line: line, column: rc + 1,
                                      message: "\(options.responseColumn) \(reader.withField(rc) { TextFidelity.quoted($0) }) is not a response; allowed: \(ResponseCell.allowedDescription)"))
                continue
            }
            guard let itemID = reader.withField(ic, { TextFidelity.validString($0.trimmingSpaces()) }) else {
                errors.add(InputError(file: path, line: line, column: ic + 1,
                                      message: reader.withField(ic) { TextFidelity.invalidUTF8(options.itemColumn, $0.trimmingSpaces()) }))
                continue
            }
            if itemID.isEmpty {
                errors.add(InputError(file: path, line: line, column: ic + 1, message: "empty \(options.itemColumn)"))
                continue
            }
            let j: Int32
            if let known = itemIndex[itemID] { j = known } else {
                j = Int32(itemIDs.count)
                itemIndex[itemID] = j
                itemIDs.append(itemID)
            }
            if cell == .missing { blanks += 1; continue }
            cellSession.append(s)
            cellItem.append(j)
            cellValue.append(cell == .correct ? 1 : 0)
            cellLine.append(line)
        }
        if rows == 0 { throw InputError(file: path, line: headerLine, message: "no data rows after the header") }

        // Group cells by session (counting sort keeps file order within a session), then sort each session's
        // items and reject repeats.
        let sessions = sessionIDs.count
        var counts = [Int](repeating: 0, count: sessions + 1)
        for s in cellSession { counts[Int(s) + 1] += 1 }
        for s in 0..<sessions { counts[s + 1] += counts[s] }
        var next = counts
        let n = cellSession.count
        var order = [Int](repeating: 0, count: n)
        for k in 0..<n {
            let s = Int(cellSession[k])
            order[next[s]] = k
            next[s] += 1
        }
        var personIDs: [String] = [], offsets = [0], items: [Int32] = [], values: [UInt8] = []
        items.reserveCapacity(n)
        values.reserveCapacity(n)
        var empty: [(id: String, line: Int)] = []
        for s in 0..<sessions {
            let range = counts[s]..<counts[s + 1]
            if range.isEmpty { empty.append((sessionIDs[s], sessionLine[s])); continue }
            var cells = range.map { order[$0] }
            cells.sort { cellItem[$0] != cellItem[$1] ? cellItem[$0] < cellItem[$1] : cellLine[$0] < cellLine[$1] }
            var firstLine = 0
            for (position, k) in cells.enumerated() {
                if position > 0 && cellItem[cells[position - 1]] == cellItem[k] {
                    errors.add(InputError(file: path, line: cellLine[k], column: ic + 1,
                                          message: "item '\(itemIDs[Int(cellItem[k])])' is repeated in session '\(sessionIDs[s])' (first on line \(firstLine))"))
                    continue
                }
                firstLine = cellLine[k]
                items.append(cellItem[k])
                values.append(cellValue[k])
            }
            personIDs.append(sessionIDs[s])
            offsets.append(items.count)
        }
        try errors.throwIfAny()
        let matrix = ResponseMatrix(validatedPersonIDs: personIDs, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: items, responses: values)
        let report = ResponseFileReport(path: path, layout: .long, dataRows: rows, personsRead: sessions,
                                        emptyPersons: empty, blankResponses: blanks, idColumn: nil)
        return (matrix, report)
    }
}
