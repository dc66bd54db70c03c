import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON object that iqscore reads from a file (norms, a blueprint, CAT rules), with its schema's keys so that
/// a misspelt key is an error instead of being ignored.
package protocol JSONObjectInput: Decodable {
    /// Every key the object may have, in documentation order (listed when a key is unknown).
    static var jsonKeys: [String] { get }
    /// Keys whose value is an object of another checked type, or an array of such objects (e.g. a blueprint's
    /// `target_information` entries). Keys not listed here hold data whose keys are free (domain names).
    static var nestedJSONObjects: [String: any JSONObjectInput.Type] { get }
    /// Keys whose value is a whole number, or an object or array of whole numbers (e.g. `domain_counts`).
    /// `JSONDecoder` reports 2.5 or 1e20 for an `Int` as "The given data was not valid JSON" without naming
    /// the key, so these are checked first.
    static var integerKeys: Set<String> { get }
    /// What the file holds, as messages name it: "the CAT configuration", "norms JSON".
    static var jsonDescription: String { get }
    /// A minimal valid document, shown when the file is not an object: `{"max_items": 25}`.
    static var jsonExample: String { get }
    /// Appended to "… lacks "KEY"" (default: nothing).
    static var missingKeyHint: String { get }
}

extension JSONObjectInput {
    package static var nestedJSONObjects: [String: any JSONObjectInput.Type] { [:] }
    package static var missingKeyHint: String { "" }
    package static var integerKeys: Set<String> { [] }
}

/// Reads JSON input files strictly, for every JSON file the command line takes.
///
/// Before decoding, the text is checked against RFC 8259 by a small scanner that also records where every
/// key is, so that each of these is an error naming the file, line and column rather than something a parser
/// silently tolerates or resolves:
/// - a syntax error (Foundation accepts trailing commas and reports only a character offset);
/// - a key that appears twice in one object (JSONSerialization keeps the last, JSONDecoder the first);
/// - a key the type does not know, at any level of `nestedJSONObjects`;
/// - a number outside the range of a Double (`1e400`), or a fraction or an out-of-range number where the
///   schema has a whole number (`integerKeys`);
/// - nesting deeper than `maximumDepth` (a recursive parser would exhaust the stack);
/// - a file larger than `maximumBytes`.
/// Decoding errors then name the key path (`target_information[1].theta`) and the expected type.
package enum JSONInput {
    /// The largest JSON input file read: 16 MiB. Configuration files are a few kilobytes; a blueprint's
    /// exclusion list of 100,000 item ids is about 2 MB.
    package static let maximumBytes = 16 << 20

    /// The deepest nesting of arrays and objects accepted: 64 (the schemas need 3).
    package static let maximumDepth = 64

    /// Checks and decodes `data` as `T`; errors name `file`.
    package static func decode<T: JSONObjectInput>(_ type: T.Type, from data: Data, file: String) throws -> T {
        guard data.count <= maximumBytes else {
            throw InputError(file: file, message: "the input is larger than 16 MiB; \(T.jsonDescription) is a few kilobytes")
        }
        var scanner = JSONScanner(bytes: Array(data), file: file)
        let root = try scanner.document()
        guard case .object(let members) = root.kind else {
            throw InputError(file: file, message: "\(T.jsonDescription) must be a JSON object, e.g. \(T.jsonExample)")
        }
        var errors = ErrorCollector()
        checkKeys(members, of: T.self, at: "", scanner: scanner, errors: &errors)
        if errors.errors.count == 1 && errors.omitted == 0 { throw errors.errors[0] }
        try errors.throwIfAny()
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw InputError(file: file, message: message(for: error, description: T.jsonDescription, missingKeyHint: T.missingKeyHint))
        }
    }

    /// Unknown keys of one object (and of its nested checked objects), one error each.
    static func checkKeys(_ members: [JSONScanner.Member], of type: any JSONObjectInput.Type, at path: String,
                          scanner: JSONScanner, errors: inout ErrorCollector) {
        let known = Set(type.jsonKeys)
        for member in members {
            if !known.contains(member.key) {
                let place = path.isEmpty ? "" : " in \(path)"
                errors.add(InputError(file: scanner.file, line: member.line, column: scanner.column(of: member),
                                         message: "unknown key \"\(member.key.escapingControlCharacters)\"\(place) (known: \(type.jsonKeys.joined(separator: ", ")))"))
                continue
            }
            let here = path.isEmpty ? member.key : "\(path).\(member.key)"
            if type.integerKeys.contains(member.key) { checkIntegers(member.value, at: here, scanner: scanner, errors: &errors) }
            guard let nested = type.nestedJSONObjects[member.key] else { continue }
            switch member.value.kind {
            case .object(let inner):
                checkKeys(inner, of: nested, at: here, scanner: scanner, errors: &errors)
            case .array(let elements):
                for (k, element) in elements.enumerated() {
                    if case .object(let inner) = element.kind { checkKeys(inner, of: nested, at: "\(here)[\(k)]", scanner: scanner, errors: &errors) }
                }
            case .scalar, .number:
                break // a wrong type is the decoder's to report
            }
        }
    }

    /// Numbers in `value` (itself, or the values of an object or array) that are not whole numbers within `Int`.
    static func checkIntegers(_ value: JSONScanner.Value, at path: String, scanner: JSONScanner, errors: inout ErrorCollector) {
        switch value.kind {
        case .number(let text, let line, let offset, let lineStart):
            if Int(text) != nil { return }
            let v = Double(text) ?? .nan
            if v == v.rounded() && abs(v) < 0x1p63 { return }
            let problem = v == v.rounded() ? "is too large for a whole number (at most \(Int.max))" : "must be a whole number"
            errors.add(InputError(file: scanner.file, line: line, column: scanner.column(of: offset, lineStart: lineStart),
                                  message: "\"\(path)\" \(problem), got \(text)"))
        case .object(let members):
            for member in members { checkIntegers(member.value, at: "\(path).\(member.key)", scanner: scanner, errors: &errors) }
        case .array(let elements):
            for (k, element) in elements.enumerated() { checkIntegers(element, at: "\(path)[\(k)]", scanner: scanner, errors: &errors) }
        case .scalar:
            break
        }
    }

    /// A decoding error as a sentence naming the key path.
    static func message(for error: DecodingError, description: String, missingKeyHint: String) -> String {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            var text = ""
            for key in codingPath + (last.map { [$0] } ?? []) {
                if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == String(index) {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(description) lacks \"\(path(context.codingPath, key))\"" + missingKeyHint
        case .typeMismatch(let type, let context):
            return "\"\(path(context.codingPath))\" has the wrong type: expected \(expectation(type, context))"
        case .valueNotFound(_, let context):
            return "\"\(path(context.codingPath))\" must not be null"
        case .dataCorrupted(let context):
            let key = path(context.codingPath)
            return key.isEmpty ? "not a valid \(description.replacingOccurrences(of: "the ", with: "")): \(context.debugDescription)"
                : "\"\(key)\": \(context.debugDescription)"
        @unknown default:
            return "not a valid \(description): \(error)"
        }
    }

    /// "an integer", "a number", "a string", … for a type the decoder expected.
    static func expectation(_ type: Any.Type, _ context: DecodingError.Context) -> String {
        switch type {
        case is Int.Type, is Int32.Type, is Int64.Type, is UInt64.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return context.debugDescription
        }
    }
}

/// A strict RFC 8259 scanner that keeps where every object key is. It builds only the structure needed to
/// check keys (values are skipped over); the values themselves are decoded by `JSONDecoder` afterwards.
package struct JSONScanner {
    package struct Member {
        package var key: String
        package var line: Int
        /// Where the key's opening quote is, and where its line starts (byte offsets; the column is worked out
        /// only for a key that is reported).
        var offset: Int
        var lineStart: Int
        package var value: Value
    }

    package struct Value {
        package enum Kind {
            case object([Member])
            case array([Value])
            /// A number: its text, line, and byte offsets of the number and of its line.
            case number(String, line: Int, offset: Int, lineStart: Int)
            /// A string, true, false or null.
            case scalar
        }
        package var kind: Kind
    }

    let bytes: [UInt8]
    package let file: String
    var i = 0
    var line = 1
    var lineStart = 0
    var depth = 0

    package init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3; lineStart = 3 }
    }

    /// The whole document: one value and nothing after it but white space.
    package mutating func document() throws -> Value {
        skipSpace()
        let value = try self.value()
        skipSpace()
        if i < bytes.count { throw failure("unexpected \(found()) after the end of the JSON value") }
        return value
    }

    var column: Int { column(of: i, lineStart: lineStart) }

    /// The 1-based column of byte `offset`, in characters (UTF-8 continuation bytes do not count).
    package func column(of offset: Int, lineStart: Int) -> Int {
        var c = 1
        var k = lineStart
        while k < offset { if bytes[k] & 0xC0 != 0x80 { c += 1 }; k += 1 }
        return c
    }

    /// The column of a member's key.
    package func column(of member: Member) -> Int { column(of: member.offset, lineStart: member.lineStart) }

    func failure(_ message: String) -> InputError {
        InputError(file: file, line: line, column: column, message: "not valid JSON: \(message)")
    }

    func found() -> String {
        guard i < bytes.count else { return "the end of the file" }
        let b = bytes[i]
        if b >= 0x21 && b < 0x7F { return "'\(Character(UnicodeScalar(b)))'" }
        return String(format: "byte 0x%02X", b)
    }

    mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0D: i += 1
            case 0x0A: i += 1; line += 1; lineStart = i
            default: return
            }
        }
    }

    mutating func value() throws -> Value {
        guard i < bytes.count else { throw failure("expected a value, found the end of the file") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): _ = try string(); return Value(kind: .scalar)
        case UInt8(ascii: "t"): try literal("true"); return Value(kind: .scalar)
        case UInt8(ascii: "f"): try literal("false"); return Value(kind: .scalar)
        case UInt8(ascii: "n"): try literal("null"); return Value(kind: .scalar)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let numberLine = line, offset = i, numberLineStart = lineStart
            let text = try number()
            return Value(kind: .number(text, line: numberLine, offset: offset, lineStart: numberLineStart))
        default: throw failure("expected a value, found \(found())")
        }
    }

    mutating func enter() throws {
        depth += 1
        if depth > JSONInput.maximumDepth { throw failure("arrays and objects nested more than \(JSONInput.maximumDepth) deep") }
    }

    mutating func object() throws -> Value {
        try enter()
        i += 1
        var members: [Member] = []
        var seen: [String: Int] = [:]
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return Value(kind: .object(members)) }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw failure("expected a key in double quotes, found \(found())") }
            let keyLine = line, keyOffset = i, keyLineStart = lineStart
            let key = try string()
            if let first = seen[key] {
                throw InputError(file: file, line: keyLine, column: column(of: keyOffset, lineStart: keyLineStart),
                                 message: "key \"\(key.escapingControlCharacters)\" appears twice in one object (first on line \(first))")
            }
            seen[key] = keyLine
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw failure("expected ':' after the key \"\(key.escapingControlCharacters)\", found \(found())") }
            i += 1
            skipSpace()
            members.append(Member(key: key, line: keyLine, offset: keyOffset, lineStart: keyLineStart, value: try value()))
            skipSpace()
            guard i < bytes.count else { throw failure("expected ',' or '}', found the end of the file") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return Value(kind: .object(members)) }
            throw failure("expected ',' or '}', found \(found())")
        }
    }

    mutating func array() throws -> Value {
        try enter()
        i += 1
        var elements: [Value] = []
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") { i += 1; depth -= 1; return Value(kind: .array(elements)) }
        while true {
            skipSpace()
            elements.append(try value())
            skipSpace()
            guard i < bytes.count else { throw failure("expected ',' or ']', found the end of the file") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; depth -= 1; return Value(kind: .array(elements)) }
            throw failure("expected ',' or ']', found \(found())")
        }
    }

    mutating func literal(_ word: String) throws {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w else { throw failure("expected a value, found \(found())") }
        i += w.count
    }

    /// A number by the JSON grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, finite as a Double.
    mutating func number() throws -> String {
        // The column is worked out only for an error: counting it for every number made a long one-line
        // document quadratic (a 280 KB array took 20 s to reject).
        let start = i, startLineStart = lineStart
        func digit() -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard digit() else { throw failure("expected a digit, found \(found())") }
        if bytes[i] == UInt8(ascii: "0") { i += 1 } else { while digit() { i += 1 } }
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digit() else { throw failure("expected a digit after '.', found \(found())") }
            while digit() { i += 1 }
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard digit() else { throw failure("expected a digit in the exponent, found \(found())") }
            while digit() { i += 1 }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard let v = Double(text), v.isFinite else {
            throw InputError(file: file, line: line, column: column(of: start, lineStart: startLineStart),
                             message: "not valid JSON: the number \(text) is too large for a double")
        }
        return text
    }

    /// A string; returns its value (escapes decoded).
    mutating func string() throws -> String {
        i += 1
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
            run.removeAll(keepingCapacity: true)
        }
        while true {
            guard i < bytes.count else { throw failure("a string is not closed") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b < 0x20 { throw failure("a control character (\(String(format: "0x%02X", b))) inside a string; write it as an escape") }
            if b != UInt8(ascii: "\\") { run.append(b); i += 1; continue }
            flush()
            i += 1
            guard i < bytes.count else { throw failure("a string is not closed") }
            switch bytes[i] {
            case UInt8(ascii: "\""): scalars.append("\""); i += 1
            case UInt8(ascii: "\\"): scalars.append("\\"); i += 1
            case UInt8(ascii: "/"): scalars.append("/"); i += 1
            case UInt8(ascii: "b"): scalars.append("\u{08}"); i += 1
            case UInt8(ascii: "f"): scalars.append("\u{0C}"); i += 1
            case UInt8(ascii: "n"): scalars.append("\n"); i += 1
            case UInt8(ascii: "r"): scalars.append("\r"); i += 1
            case UInt8(ascii: "t"): scalars.append("\t"); i += 1
            case UInt8(ascii: "u"):
                i += 1
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw failure("a \\u escape starts a surrogate pair that is not completed")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw failure("a \\u escape starts a surrogate pair that is not completed") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = UnicodeScalar(code) else { throw failure("\\u escape of a lone surrogate") }
                scalars.append(scalar)
            default:
                throw failure("unknown escape \\\(found().trimmingCharacters(in: CharacterSet(charactersIn: "'")))")
            }
        }
        flush()
        return String(scalars)
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw failure("a \\u escape needs 4 hexadecimal digits") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw failure("a \\u escape needs 4 hexadecimal digits, found \(found())")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }
}
