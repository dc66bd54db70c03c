/// The one strict JSON parser of iqscore: RFC 8259 in one pass, keeping where every value and key is. It reads
/// the JSON files the command line takes (`JSONInput`: norms, blueprints, CAT rules) and the server's request
/// bodies (`RequestDecoding`).
///
/// Stricter than Foundation's `JSONSerialization`/`JSONDecoder`, which accept trailing commas, keep one of two
/// equal keys, report only a character offset, and turn `1.0` into the integer 1. Here each of these is an error
/// located by line and column, or stays visible (a number keeps its text, so a response written `1.0` is refused
/// as not `1`):
/// - a syntax error; a key that appears twice in one object (naming the line of the first);
/// - invalid UTF-8 in a string, a control character in a string, a lone surrogate escape;
/// - a number beyond the range of a double (`1e400`);
/// - nesting deeper than `maximumDepth` (a recursive parser would exhaust the stack);
/// - an array longer than the caller's `maximumArrayLength`, refused while it is read (the server passes its
///   largest limit, so a body of two million zeros never becomes two million values).
///
/// Lines and columns are worked out only for an error (counting them for every value made a long one-line
/// document quadratic). Measured on `POST /v1/score` (25 items, `perf`): `JSONDecoder` after a key-checking
/// scanner took 38% of the server's CPU; this parser and the hand-written extraction in `RequestDecoding` take a
/// few percent.
package struct StrictJSON {
    package struct Value {
        package enum Kind {
            case object([Member])
            case array([Value])
            case string(String)
            /// The number's text is `bytes[start..<end]`.
            case number
            case bool(Bool)
            case null
        }

        package var kind: Kind
        /// Where the value's text is in the input: `bytes[start..<end]`.
        package var start: Int
        package var end: Int

        /// What a message calls this kind of value: "a string", "a number", "an object", …
        package var kindName: String {
            switch kind {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool(let b): b ? "true" : "false"
            case .null: "null"
            }
        }
    }

    package struct Member {
        package var key: String
        /// Where the key's opening quote is in the input.
        package var keyOffset: Int
        package var value: Value
    }

    /// What the input is, as messages name its end: "the end of the file", "the end of the body".
    package enum Input: Sendable {
        case file, body
        var end: String { self == .file ? "the end of the file" : "the end of the body" }
    }

    /// Why the input is refused, and where (1-based line and column, in characters).
    package struct SyntaxError: Error, Equatable {
        package var message: String
        package var line: Int
        package var column: Int
        /// A key repeated in one object: RFC 8259 grammar allows it (its names "SHOULD be unique"); iqscore does
        /// not, as parsers disagree on which value wins.
        package var isRepeatedKey = false

        /// The message as both readers state it: "not valid JSON: …" for a syntax error.
        package var sentence: String { isRepeatedKey ? message : "not valid JSON: " + message }
    }

    /// An array longer than the caller's limit, found while parsing: the keys and indices from the root to it.
    package struct ArrayTooLong: Error {
        package var path: [String]
    }

    /// The deepest nesting of arrays and objects accepted (iqscore's documents need 3).
    package static let maximumDepth = 64

    let bytes: [UInt8]
    private let input: Input
    private let maximumArrayLength: Int
    private var i = 0
    private var depth = 0
    /// Keys and indices from the root to the value being parsed (for `ArrayTooLong`).
    private var path: [PathStep] = []

    /// A place in a document: a key of an object or an index of an array, from the root down.
    package enum PathStep: Sendable, Hashable {
        case key(String)
        case index(Int)

        /// The step as a JSON Pointer component names it (unescaped): the key, or the index's digits.
        package var component: String {
            switch self {
            case .key(let key): key
            case .index(let k): String(k)
            }
        }
    }

    /// Parses `bytes` as one JSON document (white space around it allowed, a UTF-8 byte-order mark skipped).
    /// - Throws: `SyntaxError`, or `ArrayTooLong` when an array has more than `maximumArrayLength` elements.
    package static func parse(_ bytes: [UInt8], input: Input = .file, maximumArrayLength: Int = .max) throws -> Value {
        var parser = StrictJSON(bytes: bytes, input: input, maximumArrayLength: maximumArrayLength)
        parser.skipSpace()
        let value = try parser.value()
        parser.skipSpace()
        if parser.i < bytes.count { throw parser.failure("unexpected \(parser.found()) after the end of the JSON value") }
        return value
    }

    private init(bytes: [UInt8], input: Input, maximumArrayLength: Int) {
        self.bytes = bytes
        self.input = input
        self.maximumArrayLength = maximumArrayLength
        i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    }

    /// The 1-based line and column (in characters; UTF-8 continuation bytes and a byte-order mark do not count)
    /// of byte `offset` of `bytes`.
    package static func location(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1, column = 1
        let first = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var k = first
        while k < min(offset, bytes.count) {
            if bytes[k] == 0x0A { line += 1; column = 1 } else if bytes[k] & 0xC0 != 0x80 { column += 1 }
            k += 1
        }
        return (line, column)
    }

    private func failure(_ message: String, at offset: Int? = nil) -> SyntaxError {
        let (line, column) = Self.location(of: offset ?? i, in: bytes)
        return SyntaxError(message: message, line: line, column: column)
    }

    private func found() -> String {
        guard i < bytes.count else { return input.end }
        return Self.describe(byte: bytes[i])
    }

    /// `'x'` for a printable ASCII byte, else `byte 0xFF`.
    private static func describe(byte b: UInt8) -> String {
        if b >= 0x21 && b < 0x7F { return "'\(Character(UnicodeScalar(b)))'" }
        let hex = Array("0123456789ABCDEF")
        return "byte 0x\(hex[Int(b >> 4)])\(hex[Int(b & 15)])"
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func value() throws -> Value {
        guard i < bytes.count else { throw failure("expected a value, found \(input.end)") }
        let start = i
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return Value(kind: .string(try string()), start: start, end: i)
        case UInt8(ascii: "t"): try literal("true"); return Value(kind: .bool(true), start: start, end: i)
        case UInt8(ascii: "f"): try literal("false"); return Value(kind: .bool(false), start: start, end: i)
        case UInt8(ascii: "n"): try literal("null"); return Value(kind: .null, start: start, end: i)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number(); return Value(kind: .number, start: start, end: i)
        default: throw failure("expected a value, found \(found())")
        }
    }

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth { throw failure("arrays and objects nested more than \(Self.maximumDepth) deep") }
    }

    private mutating func object() throws -> Value {
        let start = i
        try enter()
        i += 1
        var members: [Member] = []
        // Looked up beyond 8 members, so a hostile object with many keys stays linear.
        var firstOffset: [String: Int] = [:]
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return Value(kind: .object(members), start: start, end: i)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw failure("expected a key in double quotes, found \(found())") }
            let keyOffset = i
            let key = try string()
            if members.count == 8 { for member in members { firstOffset[member.key] = member.keyOffset } }
            let first = members.count < 8 ? members.first(where: { $0.key == key })?.keyOffset : firstOffset.updateValue(keyOffset, forKey: key)
            if let first {
                var error = failure(
                    "key \"\(key.escapingControlCharacters)\" appears twice in one object (first on line \(Self.location(of: first, in: bytes).line))",
                    at: keyOffset)
                error.isRepeatedKey = true
                throw error
            }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                throw failure("expected ':' after the key \"\(key.escapingControlCharacters)\", found \(found())")
            }
            i += 1
            skipSpace()
            path.append(.key(key))
            members.append(Member(key: key, keyOffset: keyOffset, value: try value()))
            path.removeLast()
            skipSpace()
            guard i < bytes.count else { throw failure("expected ',' or '}', found \(input.end)") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                depth -= 1
                return Value(kind: .object(members), start: start, end: i)
            }
            throw failure("expected ',' or '}', found \(found())")
        }
    }

    private mutating func array() throws -> Value {
        let start = i
        try enter()
        i += 1
        var elements: [Value] = []
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return Value(kind: .array(elements), start: start, end: i)
        }
        while true {
            guard elements.count < maximumArrayLength else {
                throw ArrayTooLong(path: path.map(\.component))
            }
            skipSpace()
            path.append(.index(elements.count))
            elements.append(try value())
            path.removeLast()
            skipSpace()
            guard i < bytes.count else { throw failure("expected ',' or ']', found \(input.end)") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                depth -= 1
                return Value(kind: .array(elements), start: start, end: i)
            }
            throw failure("expected ',' or ']', found \(found())")
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw failure("expected a value, found \(found())") }
        let matches = word.withUTF8Buffer { w in (0..<n).allSatisfy { bytes[i + $0] == w[$0] } }
        guard matches else { throw failure("expected a value, found \(found())") }
        i += n
    }

    /// A number by the JSON grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, finite as a double.
    private mutating func number() throws {
        let start = i
        func digit() -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard digit() else { throw failure("expected a digit, found \(found())") }
        if bytes[i] == UInt8(ascii: "0") { i += 1 } else { while digit() { i += 1 } }
        var plain = true
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            plain = false
            i += 1
            guard digit() else { throw failure("expected a digit after '.', found \(found())") }
            while digit() { i += 1 }
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            plain = false
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard digit() else { throw failure("expected a digit in the exponent, found \(found())") }
            while digit() { i += 1 }
        }
        // Short integers are always finite; anything else must be a finite double.
        if !(plain && i - start <= 18) {
            guard let v = Double(String(decoding: bytes[start..<i], as: UTF8.self)), v.isFinite else {
                let shown = String(decoding: bytes[start..<min(i, start + 40)], as: UTF8.self) + (i - start > 40 ? "…" : "")
                throw failure("the number \(shown) is too large for a double", at: start)
            }
        }
    }

    /// A string (the opening quote at `i`); returns its value with escapes decoded. Invalid UTF-8 and control
    /// characters are errors.
    private mutating func string() throws -> String {
        i += 1
        let start = i
        // The common case: no escapes, no bytes to check beyond UTF-8 validity.
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            let text = try validated(start, i)
            i += 1
            return text
        }
        var out: [UInt8] = Array(bytes[start..<i])
        while true {
            guard i < bytes.count else { throw failure("a string is not closed") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b < 0x20 { throw failure("a control character (\(Self.describe(byte: b))) inside a string; write it as an escape") }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw failure("a string is not closed") }
            let escape = bytes[i]
            i += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
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
                guard let scalar = UnicodeScalar(code) else { throw failure("a \\u escape of a lone surrogate") }
                out.append(contentsOf: String(Character(scalar)).utf8)
            default:
                i -= 1
                throw failure("unknown escape \\\(found().filter { $0 != "'" })")
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
        return text
    }

    private func validated(_ start: Int, _ end: Int) throws -> String {
        let slice = bytes[start..<end]
        if slice.allSatisfy({ $0 < 0x80 }) { return String(decoding: slice, as: UTF8.self) }
        guard let text = String(validating: slice, as: UTF8.self) else { throw failure("a string is not valid UTF-8", at: start) }
        return text
    }

    private mutating func hex4() throws -> UInt32 {
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
