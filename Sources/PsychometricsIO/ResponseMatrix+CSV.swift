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
    /// Long layout: the column of each response's time in seconds (nil: times are not read). Its cells are
    /// `ResponseTimeCell`s: a number of seconds, or empty/NA for none.
    public var timeColumn: String?
    /// Wide layout: the suffix that names an item's time column (`_time`: the times of item `q1` are in column
    /// `q1_time`), nil: times are not read. Time columns are not items; an item may lack one.
    public var timeSuffix: String?
    /// Force a layout; `nil` detects it from the header (long when the three long columns are present).
    public var layout: ResponseLayout?
    /// The field separator, one of `allowedDelimiters`: `,` (default), `;` (spreadsheets in locales whose decimal
    /// mark is a comma), tab or `|`.
    public var delimiter: UInt8
    /// Wide layout: columns that are not items (`sex`, `country`, a timestamp), left out of the responses. Each
    /// must be in the header (a misspelt name is an error, not a silent no-op). The long layout reads only its
    /// three columns (and an age column) anyway.
    public var ignoredColumns: [String] = []
    /// Cells are category indices, whole numbers 0…255 (items scored in more than two categories: graded,
    /// partial-credit or nominal; `calibrate --model graded`), not 0/1 answers; item j's number of categories is
    /// its largest response plus one (at least 2). Empty or `NA`: not administered.
    public var categoryResponses = false
    /// How messages and hints name a setting: in words for a program that sets these options in code ("ignore
    /// columns"), as options for the command line ("--ignore-columns").
    package var naming = SettingNaming.words
    /// With `categoryResponses`: a cell of one letter A–Z (either case) is an option chosen, read as the value
    /// `ResponseCell.optionLetterBase` + its place in the alphabet (A = 128, B = 129, …), and numbers are then
    /// 0…127, so that letters and numbers stay apart (`calibrate` reads nominal items' options so and turns them
    /// into categories per item).
    public var optionLetters = false

    /// The columns of a wide `header` read as items, in order: after the id column (when `hasID`), without the
    /// age column `age` (−1: none) and `ignoredColumns`. Both wide readers (`ResponseMatrix.load`, `BatchScorer`)
    /// take their items from here.
    /// - Throws: `InputError` at `file`:`line` for an ignored name the header lacks, or when no column is left.
    package func wideItemColumns(header: [String], hasID: Bool, age: Int = -1, file: String, line: Int) throws -> [Int] {
        try wideColumns(header: header, hasID: hasID, age: age, file: file, line: line).items
    }

    /// `wideItemColumns` and, with `timeSuffix`, each item column's time column (−1: none): the columns named
    /// an item's name plus the suffix, which are then not items.
    /// - Throws: as `wideItemColumns`, and when `timeSuffix` is set but no column pairs with an item.
    package func wideColumns(header: [String], hasID: Bool, age: Int = -1, file: String, line: Int) throws -> (items: [Int], times: [Int]) {
        let missing = ignoredColumns.filter { !header.contains($0) }
        if !missing.isEmpty {
            throw InputError(
                file: file, line: line,
                message:
                    "\(naming.name("ignore_columns")) names \(missing.map { TextFidelity.quoted($0) }.joined(separator: ", ")), which the header lacks (found: \(header.map(\.escapingControlCharacters).joined(separator: ",")))"
            )
        }
        let ignored = Set(ignoredColumns)
        var columns = ((hasID ? 1 : 0)..<header.count).filter { $0 != age && !ignored.contains(header[$0]) }
        var times: [Int] = []
        if let suffix = timeSuffix, !suffix.isEmpty {
            let position = Dictionary(header.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            let timeColumns = Set(
                columns.filter { c in
                    header[c].hasSuffix(suffix) && position[String(header[c].dropLast(suffix.count))].map { columns.contains($0) } == true
                })
            guard !timeColumns.isEmpty else {
                throw InputError(
                    file: file, line: line,
                    message:
                        "\(naming.name("time_suffix")) \(TextFidelity.quoted(suffix)): no column is an item's name followed by it (found: \(header.map(\.escapingControlCharacters).joined(separator: ",")))"
                )
            }
            columns.removeAll { timeColumns.contains($0) }
            times = columns.map { c in position[header[c] + suffix].flatMap { timeColumns.contains($0) ? $0 : nil } ?? -1 }
        }
        guard !columns.isEmpty else { throw InputError(file: file, line: line, message: "the header names no item columns") }
        return (columns, times)
    }

    /// The separators a response file may use.
    package static let allowedDelimiters: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t"), UInt8(ascii: "|")]

    public init(
        sessionColumn: String = "session_id", itemColumn: String = "item_id",
        responseColumn: String = "response", layout: ResponseLayout? = nil, delimiter: UInt8 = UInt8(ascii: ",")
    ) {
        precondition(Self.allowedDelimiters.contains(delimiter), "delimiter must be one of , ; tab |, got \(delimiter)")
        self.sessionColumn = sessionColumn
        self.itemColumn = itemColumn
        self.responseColumn = responseColumn
        self.layout = layout
        self.delimiter = delimiter
    }

    /// First-column headers that mark a wide file's id column (compared case-insensitively).
    package static let wideIDNames: Set<String> = [
        "id", "session_id", "session", "person_id", "person", "user_id",
        "respondent", "respondent_id", "subject", "subject_id", "test_session_id"
    ]

    /// Whether a wide file's first column, headed `name`, holds the ids: `sessionColumn`, a name of `wideIDNames`,
    /// or no name at all — R's `write.csv()` writes its row names under an empty header (`"","q1","q2"`), and an
    /// item cannot be nameless.
    package static func isWideIDColumn(_ name: String, sessionColumn: String) -> Bool {
        name.isEmpty || name == sessionColumn || wideIDNames.contains(name.lowercased())
    }
}

extension ResponseFileOptions {
    /// The long layout's session, item and response columns in `header`: each must be there exactly once (a
    /// second column of the same name would make the row's value ambiguous).
    package func longColumns(in header: [String], file: String, line: Int) throws -> (session: Int, item: Int, response: Int) {
        let c = try longColumnsWithTime(in: header, file: file, line: line)
        return (c.session, c.item, c.response)
    }

    /// `longColumns` and the `timeColumn` (−1 when times are not read); it too must be there exactly once.
    package func longColumnsWithTime(in header: [String], file: String, line: Int) throws -> (session: Int, item: Int, response: Int, time: Int) {
        func column(_ name: String, _ role: String) throws -> Int {
            let matches = header.indices.filter { header[$0] == name }
            guard let c = matches.first else {
                throw InputError(
                    file: file, line: line,
                    message: "no \(role) column '\(name)' in the header (\(header.joined(separator: ","))); name it with --\(role)-column")
            }
            if matches.count > 1 {
                throw InputError(
                    file: file, line: line, column: matches[1] + 1,
                    message: "\(role) column '\(name)' appears twice in the header (columns \(c + 1) and \(matches[1] + 1))")
            }
            return c
        }
        return (
            try column(sessionColumn, "session"), try column(itemColumn, "item"), try column(responseColumn, "response"),
            try timeColumn.map { try column($0, "time") } ?? -1
        )
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
    /// With `ResponseFileOptions.timeColumn` or `timeSuffix`: the times of the matrix's cells (NaN: none).
    public var times: ResponseTimes?
    /// Times outside `ResponseTimes.allowedSeconds` (0, or more than a day) whose responses were kept without
    /// them, and the first one's line.
    public var droppedTimes = 0
    public var firstDroppedTimeLine: Int?

    public static func == (l: Self, r: Self) -> Bool {
        l.path == r.path && l.layout == r.layout && l.dataRows == r.dataRows && l.personsRead == r.personsRead
            && l.emptyPersons.map(\.id) == r.emptyPersons.map(\.id) && l.blankResponses == r.blankResponses
            && l.idColumn == r.idColumn && l.times == r.times && l.droppedTimes == r.droppedTimes
    }
    public func hash(into h: inout Hasher) { h.combine(path); h.combine(dataRows) }
}

/// A parsed response cell.
package enum ResponseCell: Sendable, Hashable {
    case correct, incorrect, missing, invalid

    /// Parses `1`/`0`, `true`/`false` and `t`/`f` (any case; `t`/`f` as PostgreSQL and other databases export
    /// booleans), and empty or `NA` as not administered; surrounding spaces are ignored.
    @inline(__always)
    package static func parse(_ raw: UnsafeBufferPointer<UInt8>) -> ResponseCell {
        let b = raw.trimmingSpaces()
        switch b.count {
        case 0: return .missing
        case 1:
            switch b[0] | (b[0] >= 0x41 ? 0x20 : 0) {
            case UInt8(ascii: "1"), UInt8(ascii: "t"): return .correct
            case UInt8(ascii: "0"), UInt8(ascii: "f"): return .incorrect
            default: return .invalid
            }
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

    package static let allowedDescription = "1, 0, true, false, t, f, or empty/NA for not administered"

    /// A category cell (`ResponseFileOptions.categoryResponses`): 0…255, `missingCategory` for empty or `NA`,
    /// `invalidCategory` for anything else (signs, decimals, more than three digits); spaces around are ignored.
    /// With `letters` (`ResponseFileOptions.optionLetters`) one letter A–Z (either case) is `optionLetterBase` +
    /// its place in the alphabet, and numbers go up to 127.
    @inline(__always)
    package static func parseCategory(_ raw: UnsafeBufferPointer<UInt8>, letters: Bool = false) -> Int {
        let b = raw.trimmingSpaces()
        if b.count == 0 { return missingCategory }
        if b.count == 2 && (b[0] | 0x20) == UInt8(ascii: "n") && (b[1] | 0x20) == UInt8(ascii: "a") { return missingCategory }
        if letters && b.count == 1 {
            let lower = b[0] | 0x20
            if lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z") { return optionLetterBase + Int(lower - UInt8(ascii: "a")) }
        }
        guard b.count <= 3 else { return invalidCategory }
        var v = 0
        for c in b {
            guard c >= 48 && c <= 57 else { return invalidCategory }
            v = v * 10 + Int(c - 48)
        }
        return v < (letters ? optionLetterBase : 256) ? v : invalidCategory
    }

    package static let missingCategory = -1
    package static let invalidCategory = -2
    /// The value of option letter A in `parseCategory(_:letters:)`; B is one more, and so on to Z.
    package static let optionLetterBase = 128

    /// The cell text a value of `parseCategory(_:letters:)` stands for: its option letter (A for
    /// `optionLetterBase`, …), or the number.
    package static func text(ofCategory v: Int) -> String {
        v >= optionLetterBase ? String(UnicodeScalar(UInt8(65 + v - optionLetterBase))) : String(v)
    }
    package static let allowedCategoryDescription = "a whole number 0…255 (the response's category), or empty/NA for not administered"
    package static let allowedOptionDescription =
        "an option letter A–Z, a whole number 0…127 (the response's category), or empty/NA for not administered"

    /// What a cell may hold under `options`.
    package static func allowedDescription(_ options: ResponseFileOptions) -> String {
        !options.categoryResponses ? allowedDescription : options.optionLetters ? allowedOptionDescription : allowedCategoryDescription
    }

    /// Per item (0 ..< `itemCount`), its largest category in `values` plus one, at least 2.
    package static func categoryCounts(itemCount: Int, items: [Int32], values: [UInt8]) -> [Int] {
        var counts = [Int](repeating: 2, count: itemCount)
        for k in items.indices { counts[Int(items[k])] = max(counts[Int(items[k])], Int(values[k]) + 1) }
        return counts
    }
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
    /// grouping, 160 per session; wide: 5 per response, 10 while the chunks are joined, 160 per person), naming
    /// the line reached.
    ///
    /// The records after the header are parsed by `threads` worker threads (1…`WorkerThreads.maximum`; default:
    /// all cores), in chunks of the file; the result, errors included, does not depend on the count.
    ///
    /// When the file's problems look like a misread layout (long read as wide, an unrecognised id column, another
    /// delimiter, polytomous cells), the thrown `InputErrors` carry a `hint` naming the options that would read it.
    /// - Throws: `InputError`/`InputErrors` naming the file, line and column (and a layout, id column or delimiter
    ///   that would read the file), or `PsychometricsError` `.resourceLimit` when the responses would need more
    ///   than `maxMemoryBytes`.
    public static func load(
        csv path: String, options: ResponseFileOptions = ResponseFileOptions(), maxMemoryBytes: Int? = nil,
        threads: Int = WorkerThreads.all
    ) throws -> (matrix: ResponseMatrix, report: ResponseFileReport) {
        try load(csv: path, options: options, maxMemoryBytes: maxMemoryBytes, threads: threads, chunkBytes: 4 << 20)
    }

    /// `load` with the size of the parallel chunks, `chunkBytes` (4 MiB by default; tests use tiny chunks so that
    /// records straddle them). With a memory budget a chunk takes at most a sixteenth of it over all chunks.
    package static func load(csv path: String, options: ResponseFileOptions, maxMemoryBytes: Int?, threads: Int, chunkBytes: Int) throws
        -> (matrix: ResponseMatrix, report: ResponseFileReport)
    {
        precondition(WorkerThreads.allowed.contains(threads), "threads must be in \(WorkerThreads.allowed), got \(threads)")
        let budgeted = maxMemoryBytes.map { min(chunkBytes, max(1 << 12, $0 / 16 / (2 * threads))) } ?? chunkBytes
        let chunks = ParallelCSVChunks(workers: threads, chunkBytes: budgeted)
        do {
            return try loadWithoutHint(csv: path, options: options, maxMemoryBytes: maxMemoryBytes, chunks: chunks)
        } catch let error as InputErrors {
            guard let hint = ResponseLayoutHint.hint(forFile: path, options: options) else { throw error }
            throw InputErrors(error.errors, omitted: error.omitted, hint: hint)
        } catch let error as InputError {
            guard let hint = ResponseLayoutHint.hint(forFile: path, options: options) else { throw error }
            throw InputErrors([error], hint: hint)
        }
    }

    private static func loadWithoutHint(csv path: String, options: ResponseFileOptions, maxMemoryBytes: Int?, chunks: ParallelCSVChunks) throws
        -> (matrix: ResponseMatrix, report: ResponseFileReport)
    {
        let reader = try CSVReader(path: path, delimiter: options.delimiter)
        let budget = MemoryCheck(limit: maxMemoryBytes, path: path, limitName: options.naming.name("max_memory"))
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
            return try loadLong(reader: reader, header: header, headerLine: headerLine, options: options, budget: budget, chunks: chunks)
        case .wide:
            return try loadWide(reader: reader, header: header, headerLine: headerLine, options: options, budget: budget, chunks: chunks)
        }
    }

    /// The reading budget: throws once the estimated bytes pass the limit.
    struct MemoryCheck {
        let limit: Int?
        let path: String
        /// How the message names the limit (`ResponseFileOptions.naming`).
        let limitName: String

        func check(line: Int, responses: Int, persons: Int, bytesPerResponse: Int) throws {
            guard let limit else { return }
            let need = responses * bytesPerResponse + persons * 160
            if need > limit {
                throw InputError(
                    file: path, line: line,
                    message: "by this line the responses need about \(need >> 20) MiB in memory "
                        + "(\(responses) responses, \(persons) persons), more than the limit of \(limit >> 20) MiB; calibration keeps "
                        + "every response in memory: raise \(limitName)")
            }
        }
    }
}
