/// A problem with user-supplied data, located to file, line and column (both 1-based; the column is the CSV
/// field number). `description` follows the compiler convention `file:line:column: error: message`.
public struct InputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if line != nil, let column { location += ":\(column)" }
        return "\(location): error: \(message)"
    }
}

/// One or more input errors found while reading a file. Readers keep going after the first problem so one run
/// reports every kind of problem; `omitted` counts problems beyond the ones listed.
public struct InputErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [InputError]
    public var omitted: Int
    /// Which options would read the file, when the problems look like a misread layout (`ResponseLayoutHint`).
    public var hint: String?

    public init(_ errors: [InputError], omitted: Int = 0, hint: String? = nil) {
        self.errors = errors
        self.omitted = omitted
        self.hint = hint
    }

    public var description: String {
        var lines = errors.map(\.description)
        if omitted > 0 { lines.append("… and \(omitted) more problem\(omitted == 1 ? "" : "s") not listed") }
        if let hint { lines.append("hint: " + hint) }
        return lines.joined(separator: "\n")
    }
}

/// Collects located problems up to a limit, counting the rest.
package struct ErrorCollector {
    package var errors: [InputError] = []
    package var omitted = 0
    package let limit: Int

    package init(limit: Int = 20) { self.limit = limit }

    package mutating func add(_ error: InputError) {
        if errors.count < limit { errors.append(error) } else { omitted += 1 }
    }

    package var isEmpty: Bool { errors.isEmpty && omitted == 0 }

    package func throwIfAny() throws {
        if !isEmpty { throw InputErrors(errors, omitted: omitted) }
    }
}

extension String {
    /// The string with line breaks, tabs and other control characters written as escapes (`\n`, `\r`, `\t`,
    /// `\u{1B}`), so a quoted bad value keeps an error message on one line.
    package var escapingControlCharacters: String {
        var out = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
