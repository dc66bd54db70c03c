/// Fast text output for score files: fixed-point numbers, CSV and JSON escaping, straight into a byte buffer
/// (no `String(format:)` on the hot path).
enum ScoreText {
    /// Appends x with `decimals` digits after the point, rounded half away from zero. x must be finite.
    @inline(__always)
    static func appendFixed(_ x: Double, decimals: Int, to out: inout [UInt8]) {
        precondition(x.isFinite, "cannot format \(x)")
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(x) * scale).rounded(.toNearestOrAwayFromZero)
        if x < 0 && scaled > 0 { out.append(UInt8(ascii: "-")) }
        let whole = UInt64(scaled / scale)
        var fraction = UInt64(scaled - Double(whole) * scale)
        appendInteger(whole, to: &out)
        if decimals > 0 {
            out.append(UInt8(ascii: "."))
            // Most significant fraction digit first, without a temporary buffer.
            var divisor: UInt64 = 1
            for _ in 1..<decimals { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(fraction / divisor))
                fraction %= divisor
                divisor /= 10
            }
        }
    }

    @inline(__always)
    static func appendInteger(_ value: UInt64, to out: inout [UInt8]) {
        if value == 0 { out.append(UInt8(ascii: "0")); return }
        var v = value
        var tmp: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &tmp) { buf in
            while v > 0 { buf[n] = UInt8(ascii: "0") + UInt8(v % 10); v /= 10; n += 1 }
            for k in stride(from: n - 1, through: 0, by: -1) { out.append(buf[k]) }
        }
    }

    @inline(__always)
    static func appendInt(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendInteger(value.magnitude.toUInt64, to: &out)
    }

    /// A CSV field, quoted when it holds a comma, quote or line break.
    static func appendCSVField(_ s: String, to out: inout [UInt8]) {
        let needsQuotes = s.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }
        if !needsQuotes { out.append(contentsOf: s.utf8); return }
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            if b == UInt8(ascii: "\"") { out.append(b) }
            out.append(b)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A JSON string literal.
    static func appendJSONString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case 92: out.append(contentsOf: [92, 92])
            case 10: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 13: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 9: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [92, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

private extension UInt {
    var toUInt64: UInt64 { UInt64(self) }
}
