import Foundation
import NIOCore

/// A JSON value as the tests read responses: numbers keep their text (so `0.1708` is compared with the score
/// CSV's `0.1708` exactly, and `1` is told from `1.0`), booleans are not numbers, and object members keep their
/// order.
indirect enum TestJSON: Equatable, CustomStringConvertible {
    case object([(String, TestJSON)])
    case array([TestJSON])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    static func == (l: TestJSON, r: TestJSON) -> Bool {
        switch (l, r) {
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let a), .array(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    subscript(key: String) -> TestJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    subscript(index: Int) -> TestJSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    var keys: [String] { if case .object(let m) = self { m.map(\.0) } else { [] } }
    var string: String? { if case .string(let s) = self { s } else { nil } }
    var numberText: String? { if case .number(let s) = self { s } else { nil } }
    var int: Int? { numberText.flatMap { Int($0) } }
    var double: Double? { numberText.flatMap { Double($0) } }
    var array: [TestJSON]? { if case .array(let a) = self { a } else { nil } }
    var isNull: Bool { self == .null }

    var description: String {
        switch self {
        case .object(let m): "{" + m.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        case .array(let a): "[" + a.map(\.description).joined(separator: ",") + "]"
        case .string(let s): "\"\(s)\""
        case .number(let n): n
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        }
    }

    /// The object without `key` (to compare a server score with the CLI's, which has no bank_version).
    func removing(_ key: String) -> TestJSON {
        guard case .object(let m) = self else { return self }
        return .object(m.filter { $0.0 != key })
    }

    struct ParseError: Error, CustomStringConvertible { var description: String }

    static func parse(_ buffer: ByteBuffer) throws -> TestJSON { try parse(Array(buffer.readableBytesView)) }
    static func parse(_ text: String) throws -> TestJSON { try parse(Array(text.utf8)) }

    static func parse(_ bytes: [UInt8]) throws -> TestJSON {
        var i = 0
        func fail(_ what: String) -> ParseError {
            ParseError(description: "\(what) at byte \(i) of \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        func space() { while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 } }
        func value() throws -> TestJSON {
            space()
            guard i < bytes.count else { throw fail("end of input") }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var members: [(String, TestJSON)] = []
                space()
                if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                while true {
                    space()
                    guard case .string(let key) = try value() else { throw fail("key") }
                    space()
                    guard bytes[i] == UInt8(ascii: ":") else { throw fail("colon") }
                    i += 1
                    members.append((key, try value()))
                    space()
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                    throw fail("object")
                }
            case UInt8(ascii: "["):
                i += 1
                var elements: [TestJSON] = []
                space()
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(elements) }
                while true {
                    elements.append(try value())
                    space()
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(elements) }
                    throw fail("array")
                }
            case UInt8(ascii: "\""):
                i += 1
                var out: [UInt8] = []
                while bytes[i] != UInt8(ascii: "\"") {
                    if bytes[i] == UInt8(ascii: "\\") {
                        i += 1
                        switch bytes[i] {
                        case UInt8(ascii: "n"): out.append(10)
                        case UInt8(ascii: "r"): out.append(13)
                        case UInt8(ascii: "t"): out.append(9)
                        case UInt8(ascii: "b"): out.append(8)
                        case UInt8(ascii: "f"): out.append(12)
                        case UInt8(ascii: "u"):
                            let hex = String(decoding: bytes[(i + 1)...(i + 4)], as: UTF8.self)
                            out += Array(String(UnicodeScalar(UInt32(hex, radix: 16)!)!).utf8)
                            i += 4
                        default: out.append(bytes[i])
                        }
                        i += 1
                    } else {
                        out.append(bytes[i])
                        i += 1
                    }
                }
                i += 1
                return .string(String(decoding: out, as: UTF8.self))
            case UInt8(ascii: "t"): i += 4; return .bool(true)
            case UInt8(ascii: "f"): i += 5; return .bool(false)
            case UInt8(ascii: "n"): i += 4; return .null
            default:
                let start = i
                while i < bytes.count, "+-0123456789.eE".utf8.contains(bytes[i]) { i += 1 }
                guard i > start else { throw fail("value") }
                return .number(String(decoding: bytes[start..<i], as: UTF8.self))
            }
        }
        let result = try value()
        space()
        guard i == bytes.count else { throw fail("trailing data") }
        return result
    }
}
