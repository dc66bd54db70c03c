/// A request body parsed strictly by RFC 8259, in one pass, keeping where each value is.
///
/// Stricter than Foundation's `JSONDecoder`, which accepts trailing commas, keeps one of two equal keys, and
/// turns `1.0` into the integer 1: here each of those is an error or stays visible (a number keeps its text, so a
/// response written `1.0` is refused as not `1`). Also refused: invalid UTF-8 in a string, a lone surrogate
/// escape, nesting deeper than `maximumDepth`, a number beyond a double's range, and an array longer than
/// `maximumArrayLength` (the caller passes its largest limit, so a body of two million zeros is refused while it
/// is read, before it becomes two million values).
///
/// Measured on `POST /v1/score` (25 items, `perf`), `JSONDecoder` after the repository's `JSONScanner` took 38%
/// of the server's CPU; this parser and the hand-written extraction in `RequestDecoding` take a few percent.
struct RequestJSON {
    struct Value {
        enum Kind {
            case object([Member])
            case array([Value])
            case string(String)
            /// The number's text: `bytes[start..<end]`.
            case number
            case bool(Bool)
            case null
        }

        var kind: Kind
        /// Where the value's text is in the body: `bytes[start..<end]`.
        var start: Int
        var end: Int

        /// What a message calls this kind of value: "a string", "a number", "an object", …
        var kindName: String {
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

    struct Member {
        var key: String
        var value: Value
    }

    /// Why the body is not JSON, and where (1-based line and column, in characters).
    struct SyntaxError: Error {
        var message: String
        var line: Int
        var column: Int
    }

    /// A value outside the caller's limits, found while parsing: the pointer to the array and its length so far.
    struct ArrayTooLong: Error {
        var pointer: String
    }

    static let maximumDepth = 64

    let bytes: [UInt8]
    private var i = 0
    private var depth = 0
    private let maximumArrayLength: Int
    /// Keys and indices from the root to the value being parsed (for `ArrayTooLong`).
    private var path: [PathStep] = []

    private enum PathStep {
        case key(String)
        case index(Int)
    }

    /// Parses `bytes` as one JSON document (white space around it allowed, a UTF-8 byte-order mark skipped).
    static func parse(_ bytes: [UInt8], maximumArrayLength: Int) throws -> Value {
        var parser = RequestJSON(bytes: bytes, maximumArrayLength: maximumArrayLength)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.i = 3 }
        parser.skipSpace()
        let value = try parser.value()
        parser.skipSpace()
        if parser.i < bytes.count { throw parser.failure("unexpected \(parser.found()) after the end of the JSON value") }
        return value
    }

    private init(bytes: [UInt8], maximumArrayLength: Int) {
        self.bytes = bytes
        self.maximumArrayLength = maximumArrayLength
    }

    /// The text of a number value.
    func text(_ value: Value) -> Substring {
        Substring(decoding: bytes[value.start..<value.end], as: UTF8.self)
    }

    private func failure(_ message: String, at offset: Int? = nil) -> SyntaxError {
        let at = min(offset ?? i, bytes.count)
        var line = 1, column = 1
        for k in 0..<at {
            if bytes[k] == 0x0A { line += 1; column = 1 } else if bytes[k] & 0xC0 != 0x80 { column += 1 }
        }
        return SyntaxError(message: message, line: line, column: column)
    }

    private func found() -> String {
        guard i < bytes.count else { return "the end of the body" }
        let b = bytes[i]
        if b >= 0x21 && b < 0x7F { return "'\(Character(UnicodeScalar(b)))'" }
        let hex = Array("0123456789ABCDEF")
        return "byte 0x\(hex[Int(b >> 4)])\(hex[Int(b & 15)])"
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func value() throws -> Value {
        guard i < bytes.count else { throw failure("expected a value, found the end of the body") }
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
        var keys: Set<String> = []   // used beyond 8 members, so a hostile object with many keys stays linear
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
            if members.count == 8 { keys = Set(members.map(\.key)) }
            let repeated = members.count < 8 ? members.contains(where: { $0.key == key }) : !keys.insert(key).inserted
            if repeated {
                throw failure("key \(RequestDecoding.quoted(key)) appears twice in one object", at: keyOffset)
            }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw failure("expected ':' after a key, found \(found())") }
            i += 1
            skipSpace()
            path.append(.key(key))
            members.append(Member(key: key, value: try value()))
            path.removeLast()
            skipSpace()
            guard i < bytes.count else { throw failure("expected ',' or '}', found the end of the body") }
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
                throw ArrayTooLong(pointer: JSONPointer.from(components: path.map { step in
                    switch step { case .key(let key): key; case .index(let k): String(k) }
                }))
            }
            skipSpace()
            path.append(.index(elements.count))
            elements.append(try value())
            path.removeLast()
            skipSpace()
            guard i < bytes.count else { throw failure("expected ',' or ']', found the end of the body") }
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
                throw failure("the number \(String(decoding: bytes[start..<min(i, start + 40)], as: UTF8.self)) is beyond the range of a double", at: start)
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
            if b < 0x20 { throw failure("a control character inside a string; write it as an escape") }
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
                throw failure("unknown escape \\\(found().replacingOccurrences(of: "'", with: ""))")
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
