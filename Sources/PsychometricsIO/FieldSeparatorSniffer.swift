import Foundation

/// Which separator a CSV file's first line uses when it is not the one expected: R's `write.csv2()` and Excel in
/// European locales write `;` (with decimal commas, `1,25`), databases tab or `|`.
///
/// The first line (at most `sampleBytes` of a regular file) is scanned once with quotes respected: a candidate
/// separator (`;`, tab, `|`) that appears outside quotes while the expected one does not is the file's. A pipe,
/// FIFO or device is never read (the sample would be consumed), and nothing is guessed from data rows.
package enum FieldSeparatorSniffer {
    /// The most bytes of the first line looked at.
    package static let sampleBytes = 64 << 10

    /// The separator and how often it appears outside quotes on the first line of `path`, when that line has
    /// no `expected` separator outside quotes but has one of the others; nil otherwise.
    package static func sniff(path: String, expected: UInt8) -> (separator: UInt8, count: Int)? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: sampleBytes) else { return nil }
        return sniff(firstLineOf: Array(data), expected: expected)
    }

    /// `sniff(path:expected:)` on bytes already read.
    package static func sniff(firstLineOf bytes: [UInt8], expected: UInt8) -> (separator: UInt8, count: Int)? {
        var counts: [UInt8: Int] = [:]
        var quoted = false
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { quoted.toggle(); continue }
            if quoted { continue }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
            if byte == expected || candidates.contains(byte) { counts[byte, default: 0] += 1 }
        }
        guard counts[expected] == nil, let best = counts.max(by: { $0.value < $1.value }) else { return nil }
        return (best.key, best.value)
    }

    /// `;`, tab and `|`, and `,` (a comma-separated file read with another `--delimiter`).
    static let candidates: Set<UInt8> = [UInt8(ascii: ";"), UInt8(ascii: "\t"), UInt8(ascii: "|"), UInt8(ascii: ",")]

    /// The separator as messages and `--delimiter` name it: `';'`, `tab`, `'|'`, `','`.
    package static func name(_ separator: UInt8) -> String {
        separator == UInt8(ascii: "\t") ? "tab" : "'\(Character(Unicode.Scalar(separator)))'"
    }
}
