import Psychometrics

/// What `BatchScorer.SessionReader` finds in session files, row by row, for a consumer (`SessionEventSink`) to
/// group into sessions.
///
/// A position is an input file's index in the run, a line (of the record's first line) and a 1-based column. Every
/// row of a session begins with `enter` (its id); the events after it, up to the next `enter` or `orphan`, belong
/// to that session. Blank cells are no events (the reader counts them). The bytes of `enter` are valid only during
/// the call that receives the event.
enum SessionEvent {
    /// An input file begins: its index and the column of its ages (−1: ages are not read).
    case file(Int, ageColumn: Int)
    /// A row belongs to the session with these id bytes (trimmed), found at `column`.
    case enter(id: UnsafeBufferPointer<UInt8>, file: Int, line: Int, column: Int)
    /// A row without a session id: a session of its own, rejected for `reason`.
    case orphan(file: Int, line: Int, column: Int, reason: String)
    /// A response of the current session to bank item `item`: its value (0/1, or a category) and its seconds
    /// (NaN: none, or times are not read).
    case response(item: Int, value: UInt8, seconds: Float, file: Int, line: Int, column: Int)
    /// A bad cell or row of the current session; its first failure in line order is the session's reject reason.
    case failure(file: Int, line: Int, column: Int?, reason: String)
    /// The age on a row of the current session (a bad age cell is a `failure`).
    case age(Double, file: Int, line: Int, column: Int)
    /// The end of a wide file's row, which holds one whole session.
    case endOfRow
}

/// A consumer of the reader's events: `BatchScorer.StreamingSessions` (contiguous sessions, scored as they close),
/// `BatchScorer.GatheredSessions` (grouped by session in memory, then scored in order of first appearance) and
/// `BatchScorer.PartitionedSessions` (recorded into partition files by session, each grouped in memory, the
/// outputs merged in order). The reader is generic over its sink, so each is specialised: no existential and no
/// allocation per event.
protocol SessionEventSink {
    /// Sessions begun so far (for progress).
    var sessionsBegun: Int { get }
    mutating func take(_ event: SessionEvent) throws
    /// Reads the rows of a long file after its header. By default one by one through `take`
    /// (`SessionReader.readLongRows`); the streaming consumer parses and scores them in parallel chunks.
    mutating func readLongRows(
        _ csv: CSVReader, fileIndex: Int, columns: BatchScorer.LongColumns, reader: inout BatchScorer.SessionReader) throws
}

extension SessionEventSink {
    mutating func readLongRows(
        _ csv: CSVReader, fileIndex: Int, columns: BatchScorer.LongColumns, reader: inout BatchScorer.SessionReader
    ) throws {
        try reader.readLongRows(csv, fileIndex: fileIndex, columns: columns, into: &self)
    }
}
