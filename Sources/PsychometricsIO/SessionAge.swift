import Foundation
import Norming
import Psychometrics

/// The age column of a session file (`score --age-column`): how one cell reads, how an age is written, and the
/// reasons a session's age rejects it.
///
/// ```
/// cell   = blank (empty or NA, surrounding spaces ignored) | a plain decimal number in [0, 130] (years)
/// output = the age with at most 2 decimals, rounded half away from zero, trailing zeros dropped (34, 34.5, 34.57)
/// ```
/// A session's age is the one number its non-blank cells hold: blanks are allowed on some rows, but two
/// different numbers, or no number at all, reject the session.
package enum SessionAge {
    /// One cell of the age column.
    package enum Cell: Sendable, Hashable {
        case blank
        case age(Double)
        /// Not an allowed age: the reason, e.g. `age 'abc' is not a number; allowed: 0–130 years`.
        case invalid(String)
    }

    /// Ages allowed (`AgeNormScale.allowedAges`), as messages write them.
    package static let allowedText = "0–130 years"

    /// Reads one cell.
    package static func parse(_ raw: UnsafeBufferPointer<UInt8>) -> Cell {
        let b = raw.trimmingSpaces()
        if b.isEmpty || (b.count == 2 && (b[0] | 0x20) == UInt8(ascii: "n") && (b[1] | 0x20) == UInt8(ascii: "a")) { return .blank }
        // Fast path: one to three digits (the usual whole-year age).
        if b.count <= 3, b.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            let value = b.reduce(0) { $0 * 10 + Int($1 - 48) }
            return value <= 130 ? .age(Double(value)) : .invalid("age \(value) is outside \(allowedText)")
        }
        guard let value = DecimalNumber.parse(String(decoding: b, as: UTF8.self)) else {
            return .invalid("age \(TextFidelity.quoted(b)) is not a number; allowed: \(allowedText)")
        }
        guard AgeNormScale.allowedAges.contains(value) else { return .invalid("age \(exactText(value)) is outside \(allowedText)") }
        // −0 reads as 0, so that "0" and "-0" are the same age.
        return .age(value + 0)
    }

    /// An age as the score file writes it: at most 2 decimals, no trailing zeros.
    package static func text(_ age: Double) -> String {
        var out = ByteBuffer(capacity: 32)
        defer { out.deallocate() }
        ScoreText.appendAge(age, to: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// An age in a message: exact (the shortest decimal that reads back to it), so two different ages never
    /// print alike.
    package static func exactText(_ age: Double) -> String {
        if age == age.rounded(), abs(age) < 1e15 { return String(Int(age)) }
        return "\(age)"
    }

    /// The reason for a session whose non-blank ages differ: the first age and the first different one, with
    /// their lines (and the first one's file, when the session spans files).
    static func differs(first: Double, firstLine: Int, firstFile: String?, second: Double, secondLine: Int) -> String {
        "the age differs within the session: \(exactText(first)) on line \(firstLine)\(firstFile.map { " of " + $0 } ?? ""), \(exactText(second)) on line \(secondLine)"
    }

    /// The reason for a session whose age cells are all blank.
    package static let missing = "no age: the age column is blank on every row of the session"

    /// The error of a file whose header lacks the age column.
    static func missingColumn(_ name: String, header: [String], file: String, line: Int, naming: SettingNaming) -> InputError {
        InputError(
            file: file, line: line,
            message:
                "no age column '\(name.escapingControlCharacters)' in the header (\(header.map(\.escapingControlCharacters).joined(separator: ","))); name it with \(naming.name("age_column"))"
        )
    }
}

extension ScoreText {
    /// `age` with at most 2 decimals, rounded half away from zero, without trailing zeros (`SessionAge`).
    static func appendAge(_ age: Double, to out: inout ByteBuffer) {
        let start = out.count
        appendFixed(age, decimals: 2, to: &out)
        // Drop trailing zeros of the fraction, then a bare point.
        while out.count > start, out.bytes.last == UInt8(ascii: "0") { out.removeLast() }
        if out.count > start, out.bytes.last == UInt8(ascii: ".") { out.removeLast() }
    }
}
