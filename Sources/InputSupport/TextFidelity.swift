/// How input bytes become text in messages and outputs. Ids are bytes in the input; iqscore keeps those that are
/// valid UTF-8 exactly (as Swift `String`s, which hold only valid UTF-8) and rejects the others with one error,
/// the same in every command, rather than repairing them to U+FFFD (which would merge ids that differ only in
/// invalid bytes, and change them on the way out).
package enum TextFidelity {
    /// Most bytes of a bad value that a message quotes (cut at a character boundary; the full length is given).
    package static let quotedValueLimit = 100

    /// The bytes as text when they are valid UTF-8, else nil.
    @inline(__always)
    package static func validString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var ascii = true
        for b in bytes where b >= 0x80 { ascii = false; break }
        if ascii { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The bytes for a message: valid characters as they are (control characters escaped as `\n`, `\u{1B}`…),
    /// invalid UTF-8 bytes as `\xFF`; at most `limit` bytes of the value, then `…`.
    package static func display(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int = Int.max) -> String {
        // Printable ASCII within the limit is shown as it is (a request's path in every request log line).
        if bytes.count <= limit, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return String(decoding: bytes, as: UTF8.self) }
        var out = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var used = 0
        loop: while used < limit {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                out += String(Character(scalar)).escapingControlCharacters
                used += encoded.count
            case .error(let length):
                for k in 0..<length {
                    let hex = String(bytes[used + k], radix: 16, uppercase: true)
                    out += "\\x" + (hex.count == 1 ? "0" : "") + hex
                }
                used += length
            case .emptyInput:
                break loop
            }
        }
        return used < bytes.count ? out + "…" : out
    }

    /// A bad value quoted for a message: `'text'`, or `'first 100 bytes…' (N bytes)` when longer, with invalid
    /// UTF-8 and control characters escaped.
    package static func quoted(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let text = "'" + display(bytes, limit: quotedValueLimit) + "'"
        return bytes.count > quotedValueLimit ? text + " (\(bytes.count) bytes)" : text
    }

    package static func quoted(_ string: String) -> String {
        var s = string
        return s.withUTF8 { quoted($0) }
    }

    /// The reason given for an id that is not valid UTF-8.
    package static func invalidUTF8(_ what: String, _ bytes: UnsafeBufferPointer<UInt8>) -> String {
        "\(what) \(quoted(bytes)) is not valid UTF-8; ids must be UTF-8 text"
    }
}
