import NIOCore
import PsychometricsIO

/// Compact JSON written straight into a response buffer: no pretty printing, no intermediate dictionaries, and no
/// NaN or infinity (a number that is not finite is written `null`; the values that matter are checked before).
struct JSONWriter {
    private(set) var buffer: ByteBuffer
    /// Whether the next member or element needs a comma before it.
    private var needsComma = false

    init(capacity: Int = 256) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    private mutating func separate() {
        if needsComma { buffer.writeInteger(UInt8(ascii: ",")) }
        needsComma = true
    }

    mutating func beginObject() { separate(); buffer.writeInteger(UInt8(ascii: "{")); needsComma = false }
    mutating func endObject() { buffer.writeInteger(UInt8(ascii: "}")); needsComma = true }
    mutating func beginArray() { separate(); buffer.writeInteger(UInt8(ascii: "[")); needsComma = false }
    mutating func endArray() { buffer.writeInteger(UInt8(ascii: "]")); needsComma = true }

    /// An object key (the value follows).
    mutating func key(_ name: StaticString) {
        separate()
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(name)
        buffer.writeStaticString("\":")
        needsComma = false
    }

    /// An object key that is data (a domain name), escaped.
    mutating func key(dynamic name: String) {
        separate()
        writeEscaped(name)
        buffer.writeInteger(UInt8(ascii: ":"))
        needsComma = false
    }

    mutating func string(_ value: String) { separate(); writeEscaped(value) }
    mutating func optionalString(_ value: String?) { if let value { string(value) } else { null() } }
    mutating func integer(_ value: some BinaryInteger) { separate(); buffer.writeString(String(value)) }
    mutating func bool(_ value: Bool) { separate(); buffer.writeStaticString(value ? "true" : "false") }
    mutating func null() { separate(); buffer.writeStaticString("null") }

    /// A double in its shortest round-trip form (`1.25`, `-0.003`, `1e-05`: all valid JSON); `null` when not finite.
    mutating func number(_ value: Double) {
        guard value.isFinite else { null(); return }
        separate()
        buffer.writeString(value.description)
    }

    /// A double with `decimals` digits after the point, rounded half away from zero, as the score columns write
    /// θ and SE (`ScoreJSONWriter.fixed`); `null` when not finite.
    mutating func fixed(_ value: Double, decimals: Int) {
        guard let text = ScoreJSONWriter.fixed(value, decimals: decimals) else { null(); return }
        separate()
        buffer.writeString(text)
    }

    /// Bytes that are already JSON object members (`ScoreJSONWriter.members`): written after a comma if needed.
    mutating func members(_ bytes: [UInt8]) {
        separate()
        buffer.writeBytes(bytes)
    }

    /// A JSON string literal: quote, backslash and control characters escaped (RFC 8259 §7); the runs between
    /// them copied whole from the string's contiguous UTF-8.
    private mutating func writeEscaped(_ s: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            var run = 0
            for i in 0..<utf8.count {
                let b = utf8[i]
                guard b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b < 0x20 else { continue }
                buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[run..<i]))
                switch b {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case 0x0A: buffer.writeStaticString("\\n")
                case 0x0D: buffer.writeStaticString("\\r")
                case 0x09: buffer.writeStaticString("\\t")
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    buffer.writeBytes([
                        UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 15)]
                    ])
                }
                run = i + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[run...]))
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}
