/// Where a CSV file's bytes come from: the file at a path, or bytes already read from it (the server reads a
/// bank once, hashes those bytes for its version and parses the same bytes, so a file replaced mid-load cannot
/// give a version of one file and items of another).
package enum CSVSource: Sendable {
    case path(String)
    case bytes([UInt8], name: String)

    /// The name messages give: the path.
    package var name: String {
        switch self {
        case .path(let path): path
        case .bytes(_, let name): name
        }
    }

    /// A reader over the source, fields separated by `delimiter`.
    /// - Throws: `InputError` when the file cannot be opened or is a directory.
    package func reader(delimiter: UInt8 = UInt8(ascii: ",")) throws -> CSVReader {
        switch self {
        case .path(let path): try CSVReader(path: path, delimiter: delimiter)
        case .bytes(let bytes, let name): CSVReader(bytes: bytes, name: name, delimiter: delimiter)
        }
    }

    /// The separator the first line uses when it is not `expected` (`FieldSeparatorSniffer`).
    package func sniffSeparator(expected: UInt8) -> (separator: UInt8, count: Int)? {
        switch self {
        case .path(let path): FieldSeparatorSniffer.sniff(path: path, expected: expected)
        case .bytes(let bytes, _):
            FieldSeparatorSniffer.sniff(firstLineOf: Array(bytes.prefix(FieldSeparatorSniffer.sampleBytes)), expected: expected)
        }
    }
}
