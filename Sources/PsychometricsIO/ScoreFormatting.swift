import Foundation
import Psychometrics

/// Fast text output for score files: fixed-point numbers, CSV and JSON escaping, straight into a byte buffer
/// (no `String(format:)` on the hot path).
enum ScoreText {
    /// Appends x with `decimals` digits after the point, rounded half away from zero. x must be finite.
    ///
    /// Any finite x is written: values whose scaled magnitude reaches 2⁶⁴ (an ML standard error of 10⁸⁰ when the
    /// only item is far from θ̂) go through the C library's `%f`, exact at that size because such doubles have
    /// no fraction bits left; the fast path would trap converting them to `UInt64`.
    @inline(__always)
    static func appendFixed(_ x: Double, decimals: Int, to out: inout ByteBuffer) {
        precondition(x.isFinite, "cannot format \(x)")
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(x) * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 0x1p64 else {
            out.append(String(format: "%.\(decimals)f", x))
            return
        }
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
    static func appendInteger(_ value: UInt64, to out: inout ByteBuffer) {
        if value == 0 { out.append(UInt8(ascii: "0")); return }
        var v = value
        var tmp:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &tmp) { buf in
            while v > 0 { buf[n] = UInt8(ascii: "0") + UInt8(v % 10); v /= 10; n += 1 }
            for k in stride(from: n - 1, through: 0, by: -1) { out.append(buf[k]) }
        }
    }

    @inline(__always)
    static func appendInt(_ value: Int, to out: inout ByteBuffer) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendInteger(value.magnitude.toUInt64, to: &out)
    }

    /// A CSV field, quoted when it holds a comma, quote or line break.
    static func appendCSVField(_ s: String, to out: inout ByteBuffer) {
        var s = s
        s.withUTF8 { appendCSVField(bytes: $0, to: &out) }
    }

    /// A CSV field from UTF-8 bytes, quoted when it holds a comma, quote or line break.
    static func appendCSVField(bytes: UnsafeBufferPointer<UInt8>, to out: inout ByteBuffer) {
        var needsQuotes = false
        for b in bytes where b == UInt8(ascii: ",") || b == UInt8(ascii: "\"") || b == 10 || b == 13 { needsQuotes = true; break }
        if !needsQuotes { out.append(contentsOf: bytes); return }
        out.append(UInt8(ascii: "\""))
        for b in bytes {
            if b == UInt8(ascii: "\"") { out.append(b) }
            out.append(b)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A JSON string literal.
    static func appendJSONString(_ s: String, to out: inout ByteBuffer) {
        out.append(UInt8(ascii: "\""))
        // Most strings (ids, domain names, labels) need no escape: copied whole.
        var s = s
        let plain = s.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != 92 }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain {
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(92); out.append(34)
            case 92: out.append(92); out.append(92)
            case 10: out.append(92); out.append(UInt8(ascii: "n"))
            case 13: out.append(92); out.append(UInt8(ascii: "r"))
            case 9: out.append(92); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                for c in [92, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 15)]] { out.append(c) }
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

private extension UInt {
    var toUInt64: UInt64 { UInt64(self) }
}

/// A growable byte buffer written through a raw pointer: score rows are built a byte at a time, and `Array`'s
/// per-append uniqueness check cost more than the formatting. Owned by one thread; `deallocate()` once.
struct ByteBuffer {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    func deallocate() { base.deallocate() }

    /// Empties the buffer, keeping its memory.
    mutating func removeAll() { count = 0 }

    /// Drops the last byte (there must be one).
    mutating func removeLast() {
        precondition(count > 0, "removeLast on an empty buffer")
        count -= 1
    }

    private mutating func grow(to needed: Int) {
        var c = capacity * 2
        while c < needed { c *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: c)
        bigger.update(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity = c
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always) mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        if let src = bytes.baseAddress { (base + count).update(from: src, count: bytes.count) }
        count += bytes.count
    }

    mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { append(contentsOf: $0) }
    }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }
    /// A copy of the contents.
    var array: [UInt8] { Array(bytes) }
}
