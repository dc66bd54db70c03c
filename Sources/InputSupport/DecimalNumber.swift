/// The one parser for numbers written in input files (bank, item metadata, exposure CSVs, command-line option
/// lists such as `beta:5,17`): plain decimal notation only.
///
/// ```
/// number   = [sign] mantissa [exponent]
/// sign     = "+" | "-"
/// mantissa = digits ["." [digits]] | "." digits
/// exponent = ("e" | "E") [sign] digits
/// ```
/// Nothing else is accepted — no surrounding spaces (callers trim), no hexadecimal (`0x1p3`), no `inf`,
/// `infinity` or `nan`, no digit separators — and the value must be finite (`1e400` is rejected, `1e-400`
/// reads as 0). Swift's `Double(String)` accepts all of those forms, so a bank with `a = inf` or `b = 0x10`
/// would otherwise be read silently as something nobody wrote on purpose.
package enum DecimalNumber {
    /// The value of `text`, or nil when it is not a finite number in plain decimal notation.
    package static func parse(_ text: some StringProtocol) -> Double? {
        let bytes = Array(text.utf8)
        guard isDecimal(bytes), let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// Whether `bytes` follow the grammar above.
    static func isDecimal(_ bytes: [UInt8]) -> Bool {
        var i = 0
        func isDigit(_ k: Int) -> Bool { k < bytes.count && bytes[k] >= UInt8(ascii: "0") && bytes[k] <= UInt8(ascii: "9") }
        func digits() -> Int {
            let start = i
            while isDigit(i) { i += 1 }
            return i - start
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
        var mantissaDigits = digits()
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            i += 1
            mantissaDigits += digits()
        }
        guard mantissaDigits > 0 else { return false }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == bytes.count
    }

    /// The value of `text` as a whole number in plain decimal notation (optional sign, digits only), or nil when
    /// it is not one or does not fit in an `Int`.
    package static func parseInteger(_ text: some StringProtocol) -> Int? {
        let bytes = Array(text.utf8)
        var i = 0
        if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
        guard i < bytes.count, bytes[i...].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(String(decoding: bytes, as: UTF8.self))
    }
}
