import Foundation
import Psychometrics

extension BatchScorer {
    /// Reads a run's session files, long or wide, row by row into a `SessionEventSink`: every cell becomes an event
    /// of its session (`SessionEvent`), with its file, line and column. The reader knows the layouts and the cells
    /// (responses, option keys, categories, times, ages); the sink decides how rows become sessions.
    ///
    /// It counts what it reads (files, rows, blank responses, dropped times, bytes, wide files with an unnamed id
    /// column) in `report`; the sink counts the sessions.
    struct SessionReader {
        let owner: BatchScorer
        /// Input names (for messages and the rejects' file column) and the paths read (a spooled copy for a pipe).
        let inputs: [String]
        let readPaths: [String]
        let progress: ((BatchProgress) -> Void)?
        let started: Date
        let totalBytes: Int?
        var report = BatchScoringReport()
        /// Bytes of the files read before the current one, and of the current one joined by a parallel reader.
        var bytesBefore = 0
        var parallelBytes = 0
        var lastProgress = Date()

        init(owner: BatchScorer, sources: InputSources, progress: ((BatchProgress) -> Void)?, started: Date) {
            self.owner = owner
            inputs = sources.names
            readPaths = sources.paths
            totalBytes = sources.totalBytes
            self.progress = progress
            self.started = started
            report.files = sources.names.count
        }

        /// The run's report: the reading counts, the sessions' counts from `sessions`, and the time taken.
        func finish(sessions: BatchScoringReport) -> BatchScoringReport {
            var report = self.report
            report.addSessions(sessions)
            report.seconds = Date().timeIntervalSince(started)
            return report
        }

        mutating func readAll<Sink: SessionEventSink>(into sink: inout Sink) throws {
            for (fileIndex, path) in readPaths.enumerated() {
                let csv = try CSVReader(
                    path: path, displayName: inputs[fileIndex], maxRecordBytes: owner.budgetedRecordBytes,
                    delimiter: owner.fileOptions.delimiter)
                try readFile(csv, fileIndex: fileIndex, into: &sink)
                bytesBefore += csv.bytesConsumed
                parallelBytes = 0
            }
            report.bytesRead = bytesBefore
        }

        mutating func readFile<Sink: SessionEventSink>(_ csv: CSVReader, fileIndex: Int, into sink: inout Sink) throws {
            let path = csv.path
            guard try csv.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header row") }
            let header = try csv.headerFields()
            let options = owner.fileOptions
            let hasLong = header.contains(options.sessionColumn) && header.contains(options.itemColumn)
            if (options.layout ?? (hasLong ? .long : .wide)) == .long {
                let (sc, ic, rc, tc) = try options.longColumnsWithTime(in: header, file: path, line: csv.line)
                let ac = try owner.ageColumnIndex(in: header, file: path, line: csv.line)
                try sink.take(.file(fileIndex, ageColumn: ac))
                let columns = LongColumns(
                    session: sc, item: ic, response: rc, age: ac, time: tc, headerCount: header.count,
                    sessionName: options.sessionColumn, responseName: options.responseColumn, timeName: options.timeColumn ?? "")
                try sink.readLongRows(csv, fileIndex: fileIndex, columns: columns, reader: &self)
            } else {
                try readWideRows(csv, header: header, fileIndex: fileIndex, into: &sink)
            }
        }

        /// The rows of a long file (one response per row) after its header, one by one.
        mutating func readLongRows<Sink: SessionEventSink>(
            _ csv: CSVReader, fileIndex: Int, columns: LongColumns, into sink: inout Sink
        ) throws {
            let (sc, ic, rc, tc, ac) = (columns.session, columns.item, columns.response, columns.time, columns.age)
            let headerCount = columns.headerCount
            let table = owner.scorer.itemTable
            while try csv.nextRow() {
                report.rowsRead += 1
                let line = csv.line
                if csv.fieldCount <= sc {
                    try sink.take(
                        .orphan(
                            file: fileIndex, line: line, column: csv.fieldCount,
                            reason: "malformed row: expected \(headerCount) fields as in the header, found \(csv.fieldCount); no session id"))
                    continue
                }
                if csv.withField(sc, { $0.trimmingSpaces().isEmpty }) {
                    try sink.take(
                        .orphan(
                            file: fileIndex, line: line, column: sc + 1,
                            reason: "empty \(columns.sessionName): the row belongs to no session"))
                    continue
                }
                try csv.withField(sc) { try sink.take(.enter(id: $0.trimmingSpaces(), file: fileIndex, line: line, column: sc + 1)) }
                if csv.fieldCount != headerCount {
                    try sink.take(
                        .failure(
                            file: fileIndex, line: line,
                            column: min(csv.fieldCount, headerCount) + (csv.fieldCount > headerCount ? 1 : 0),
                            reason: "malformed row: expected \(headerCount) fields as in the header, found \(csv.fieldCount)"))
                    continue
                }
                if ac >= 0 { try ageCell(csv.withField(ac) { SessionAge.parse($0) }, file: fileIndex, line: line, column: ac + 1, into: &sink) }
                // An item in more than two categories: its category (`CategoryCells`). The item is looked up once
                // (`known`: nil until looked up) for both paths.
                func lookUp() -> Int? { csv.withField(ic, { table.index(of: $0.trimmingSpaces()) }) }
                // The row's time (−1: times are not read); nil after a bad time cell.
                func seconds() throws -> Float? {
                    guard tc >= 0 else { return .nan }
                    return try timeCell(
                        csv.withField(tc) { ResponseTimeCell.parse($0) }, file: fileIndex, line: line, column: tc + 1,
                        text: { "\(columns.timeName) \(csv.withField(tc) { TextFidelity.quoted($0) })" }, into: &sink)
                }
                var known: Int?? = nil
                if owner.categoryCells != nil { known = .some(lookUp()) }
                if let categories = owner.categoryCells, let j = known ?? nil, categories.isCategoryItem(j) {
                    let v = csv.withField(rc) { categories.value($0, item: j) }
                    if v == ResponseCell.missingCategory {
                        report.blankResponses += 1
                        continue
                    }
                    if v == ResponseCell.invalidCategory {
                        try sink.take(
                            .failure(
                                file: fileIndex, line: line, column: rc + 1,
                                reason:
                                    "\(columns.responseName) \(csv.withField(rc) { TextFidelity.quoted($0) }) is not a response to item \(TextFidelity.quoted(owner.scorer.bank.items[j].itemID)); allowed: \(categories.allowed(item: j))"
                            ))
                        continue
                    }
                    guard let t = try seconds() else { continue }
                    try sink.take(.response(item: j, value: UInt8(v), seconds: t, file: fileIndex, line: line, column: ic + 1))
                    maybeProgress(csv, sessions: sink.sessionsBegun)
                    continue
                }
                var cell = csv.withField(rc) { ResponseCell.parse($0) }
                if let keys = owner.optionKeys, keys.mayBeOption(cell), let j = known ?? lookUp(),
                    let keyed = csv.withField(rc, { keys.score($0, item: j) })
                {
                    cell = keyed
                }
                if cell == .missing {
                    report.blankResponses += 1
                    continue
                }
                if cell == .invalid {
                    try sink.take(
                        .failure(
                            file: fileIndex, line: line, column: rc + 1,
                            reason:
                                "\(columns.responseName) \(csv.withField(rc) { TextFidelity.quoted($0) }) is not a response; allowed: \(ResponseCell.allowedDescription)"
                        ))
                    continue
                }
                guard let j = known ?? lookUp() else {
                    try sink.take(
                        .failure(
                            file: fileIndex, line: line, column: ic + 1,
                            reason: "unknown item id \(csv.withField(ic) { TextFidelity.quoted($0.trimmingSpaces()) }) (not in the bank)"))
                    continue
                }
                guard let t = try seconds() else { continue }
                try sink.take(.response(item: j, value: cell == .correct ? 1 : 0, seconds: t, file: fileIndex, line: line, column: ic + 1))
                maybeProgress(csv, sessions: sink.sessionsBegun)
            }
        }

        /// The rows of a wide file (one session per row, one column per item) after its header.
        mutating func readWideRows<Sink: SessionEventSink>(_ csv: CSVReader, header: [String], fileIndex: Int, into sink: inout Sink) throws {
            let path = csv.path
            let options = owner.fileOptions
            let table = owner.scorer.itemTable
            let first = header.first ?? ""
            let hasID = ResponseFileOptions.isWideIDColumn(first, sessionColumn: options.sessionColumn)
            if hasID && first.isEmpty && !report.unnamedIDColumnFiles.contains(path) { report.unnamedIDColumnFiles.append(path) }
            let ac = try owner.ageColumnIndex(in: header, file: path, line: csv.line)
            try sink.take(.file(fileIndex, ageColumn: ac))
            // The columns read as items: not the id, the age or an ignored column.
            let (itemColumns, timeColumns) = try options.wideColumns(header: header, hasID: hasID, age: ac, file: path, line: csv.line)
            let columnItem: [Int?] = header.indices.map { table.index(of: header[$0]) }
            var row = 0
            let prefix = inputs.count > 1 ? (path as NSString).lastPathComponent + ":" : ""
            while try csv.nextRow() {
                report.rowsRead += 1
                row += 1
                let line = csv.line
                if hasID && (csv.fieldCount == 0 || csv.withField(0, { $0.trimmingSpaces().isEmpty })) {
                    try sink.take(.orphan(file: fileIndex, line: line, column: 1, reason: "empty \(first): the row belongs to no session"))
                    continue
                }
                if hasID {
                    try csv.withField(0) { try sink.take(.enter(id: $0.trimmingSpaces(), file: fileIndex, line: line, column: 1)) }
                } else {
                    let id = Array((prefix + String(row)).utf8)
                    try id.withUnsafeBufferPointer { try sink.take(.enter(id: $0, file: fileIndex, line: line, column: 1)) }
                }
                if csv.fieldCount != header.count {
                    try sink.take(
                        .failure(
                            file: fileIndex, line: line, column: min(csv.fieldCount, header.count) + 1,
                            reason: "malformed row: expected \(header.count) fields as in the header, found \(csv.fieldCount)"))
                    try sink.take(.endOfRow)
                    continue
                }
                if ac >= 0 { try ageCell(csv.withField(ac) { SessionAge.parse($0) }, file: fileIndex, line: line, column: ac + 1, into: &sink) }
                for (k, c) in itemColumns.enumerated() {
                    // The cell's time (NaN: none, or times are not read); nil after a bad time cell.
                    func seconds() throws -> Float? {
                        guard !timeColumns.isEmpty, case let tc = timeColumns[k], tc >= 0 else { return .nan }
                        return try timeCell(
                            csv.withField(tc) { ResponseTimeCell.parse($0) }, file: fileIndex, line: line, column: tc + 1,
                            text: { "column \(TextFidelity.quoted(header[tc])): \(csv.withField(tc) { TextFidelity.quoted($0) })" },
                            into: &sink)
                    }
                    if let categories = owner.categoryCells, let j = columnItem[c], categories.isCategoryItem(j) {
                        let v = csv.withField(c) { categories.value($0, item: j) }
                        if v == ResponseCell.missingCategory { continue }
                        if v == ResponseCell.invalidCategory {
                            try sink.take(
                                .failure(
                                    file: fileIndex, line: line, column: c + 1,
                                    reason:
                                        "column \(TextFidelity.quoted(header[c])): \(csv.withField(c) { TextFidelity.quoted($0) }) is not a response; allowed: \(categories.allowed(item: j))"
                                ))
                            continue
                        }
                        guard let t = try seconds() else { continue }
                        try sink.take(.response(item: j, value: UInt8(v), seconds: t, file: fileIndex, line: line, column: c + 1))
                        continue
                    }
                    var cell = csv.withField(c) { ResponseCell.parse($0) }
                    if let keys = owner.optionKeys, keys.mayBeOption(cell), let j = columnItem[c],
                        let keyed = csv.withField(c, { keys.score($0, item: j) })
                    {
                        cell = keyed
                    }
                    switch cell {
                    case .missing: continue
                    case .invalid:
                        try sink.take(
                            .failure(
                                file: fileIndex, line: line, column: c + 1,
                                reason:
                                    "column \(TextFidelity.quoted(header[c])): \(csv.withField(c) { TextFidelity.quoted($0) }) is not a response; allowed: \(ResponseCell.allowedDescription)"
                            ))
                    case .correct, .incorrect:
                        guard let j = columnItem[c] else {
                            try sink.take(
                                .failure(
                                    file: fileIndex, line: line, column: c + 1,
                                    reason: "unknown item id \(TextFidelity.quoted(header[c])) (column \(c + 1) is not in the bank)"))
                            continue
                        }
                        guard let t = try seconds() else { continue }
                        try sink.take(.response(item: j, value: cell == .correct ? 1 : 0, seconds: t, file: fileIndex, line: line, column: c + 1))
                    }
                }
                try sink.take(.endOfRow)
                maybeProgress(csv, sessions: sink.sessionsBegun)
            }
        }

        /// The time cell of a response's row (column `column`): its seconds (NaN: none; a dropped time counted), or
        /// nil after a bad cell, which is the session's failure on this row.
        mutating func timeCell<Sink: SessionEventSink>(
            _ cell: ResponseTimeCell, file: Int, line: Int, column: Int, text: () -> String, into sink: inout Sink
        ) throws -> Float? {
            switch cell {
            case .seconds(let t): return t
            case .missing: return .nan
            case .dropped:
                report.droppedTimes += 1
                return .nan
            case .invalid:
                try sink.take(
                    .failure(
                        file: file, line: line, column: column,
                        reason: "\(text()) is not a response time; allowed: \(ResponseTimeCell.allowedDescription)"))
                return nil
            }
        }

        /// One cell of the age column: a bad one is the session's failure on this row; a blank one no event.
        func ageCell<Sink: SessionEventSink>(_ cell: SessionAge.Cell, file: Int, line: Int, column: Int, into sink: inout Sink) throws {
            switch cell {
            case .blank: return
            case .invalid(let reason): try sink.take(.failure(file: file, line: line, column: column, reason: reason))
            case .age(let age): try sink.take(.age(age, file: file, line: line, column: column))
            }
        }

        /// Progress from the serial path, at most every 65,536 rows and 0.25 s.
        mutating func maybeProgress(_ csv: CSVReader, sessions: Int) {
            guard progress != nil, report.rowsRead & 0xFFFF == 0 else { return }
            reportProgress(bytes: bytesBefore + csv.bytesConsumed, sessions: sessions)
        }

        /// Progress after `bytes` more bytes of a long file were joined by the parallel path.
        mutating func parallelProgress(_ bytes: Int, sessions: Int) {
            parallelBytes += bytes
            guard progress != nil else { return }
            reportProgress(bytes: bytesBefore + parallelBytes, sessions: sessions)
        }

        private mutating func reportProgress(bytes: Int, sessions: Int) {
            guard let progress else { return }
            let now = Date()
            guard now.timeIntervalSince(lastProgress) >= 0.25 else { return }
            lastProgress = now
            progress(
                BatchProgress(
                    bytesRead: bytes, totalBytes: totalBytes, rows: report.rowsRead, sessions: sessions, seconds: now.timeIntervalSince(started)))
        }
    }
}
