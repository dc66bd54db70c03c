import NIOCore
import Psychometrics

/// The fast path of `POST /v1/score`: reads the body a client usually sends straight into its fields (`Scanned`,
/// the item ids left as byte ranges of the body for `ScoringService.plainScoreMembers` to look up), without
/// building `StrictJSON`'s value tree, and gives up (nil) on anything else.
///
/// It takes only a subset of the documents `StrictJSON` + `RequestDecoding.scoreRequest` accept, and reads the
/// same request from each of them: one object (white space as RFC 8259 §2 allows it between tokens, no byte-order
/// mark) whose keys are distinct members of `ScoreRequest.keys` other than `age`; strings of printable ASCII
/// without escapes (`session_id`, `method`: such a string or `null`; `item_ids`: an array of them); `responses`:
/// an array of the one-digit numbers `0` and `1`; `seconds`: an array of `null` and plain decimals (`12`, `3.25`:
/// no sign, no exponent, at most 15 digits) within `ResponseTimes.allowedSeconds`; arrays no longer than
/// `maximumArrayLength`. Every other body —
/// an escape, a byte above 0x7E, an age, a `1.0`, a repeated or unknown key, a syntax error, a missing key —
/// returns nil and goes the strict way, which answers it (or its problem) as before. `ScoreRequestScannerTests`
/// checks the two ways agree on valid bodies and on thousands of mutated ones.
///
/// Why: on 25-item sessions the value tree (an enum per value, an array per container, a dictionary per object)
/// cost about a tenth of the server's CPU per request (`perf`, issue 25); this reads the same bytes once.
struct ScoreRequestScanner {
    /// A scanned body: the item ids as byte ranges of the body it was read from.
    struct Scanned {
        var sessionID: String?
        var method: String?
        var itemIDs: [Range<Int>]
        var responses: [UInt8]
        /// Per response its seconds (NaN: `null`); nil without a `seconds` member.
        var seconds: [Float]?
    }

    private let bytes: UnsafeRawBufferPointer
    private var i = 0

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// `use` of the request in `body` (with the body's bytes, which the item ids' ranges index), or nil when
    /// `body` is not in the subset above (or `use` returns nil).
    static func scan<R>(
        _ body: ByteBuffer, maximumArrayLength: Int,
        _ use: (Scanned, UnsafeRawBufferPointer) throws -> R?
    ) rethrows -> R? {
        try body.withUnsafeReadableBytes { bytes in
            var scanner = ScoreRequestScanner(bytes)
            guard let scanned = scanner.request(maximumArrayLength: maximumArrayLength) else { return nil }
            return try use(scanned, bytes)
        }
    }

    private mutating func request(maximumArrayLength: Int) -> Scanned? {
        var sessionID: String?, method: String?
        var itemIDs: [Range<Int>]?, responses: [UInt8]?, seconds: [Float]?
        var seen = 0 // a bit per key of ScoreRequest.keys
        guard consume(UInt8(ascii: "{")) else { return nil }
        repeat {
            guard let key = keyIndex(), seen & (1 << key) == 0 else { return nil }
            seen |= 1 << key
            guard consume(UInt8(ascii: ":")) else { return nil }
            switch key {
            case 0:
                guard let value = stringOrNull() else { return nil }
                sessionID = value
            case 1:
                guard let value = strings(limit: maximumArrayLength) else { return nil }
                itemIDs = value
            case 2:
                guard let value = digits(limit: maximumArrayLength) else { return nil }
                responses = value
            case 3:
                guard let value = stringOrNull() else { return nil }
                method = value
            case 5:
                if null() { seconds = nil; break }
                guard let value = times(limit: maximumArrayLength) else { return nil }
                seconds = value
            default:
                return nil
            }
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "}")) else { return nil }
        skipSpace()
        guard i == bytes.count, let itemIDs, let responses else { return nil }
        return Scanned(sessionID: sessionID, method: method, itemIDs: itemIDs, responses: responses, seconds: seconds)
    }

    /// After white space, `byte`: consumes it.
    private mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard i < bytes.count, bytes[i] == byte else { return false }
        i += 1
        return true
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    /// Where a plain string's bytes are (after white space): between quotes, each 0x20…0x7E but `"` and `\`.
    private mutating func plainString() -> Range<Int>? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = i
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return start..<(i - 1)
            }
            guard b >= 0x20, b <= 0x7E, b != UInt8(ascii: "\\") else { return nil }
            i += 1
        }
        return nil
    }

    /// Which of `ScoreRequest.keys` the next key is: 0 session_id, 1 item_ids, 2 responses, 3 method, 4 age, 5 seconds.
    private mutating func keyIndex() -> Int? {
        guard let range = plainString() else { return nil }
        let key = bytes[range]
        for (k, name) in Self.keyBytes.enumerated() where name.count == key.count && name.elementsEqual(key) { return k }
        return nil
    }

    private static let keyBytes: [[UInt8]] = ScoreRequest.keys.map { Array($0.utf8) }

    /// After white space, `null`: consumes it.
    private mutating func null() -> Bool {
        skipSpace()
        guard i + 4 <= bytes.count, bytes[i] == UInt8(ascii: "n"), bytes[i + 1] == UInt8(ascii: "u"), bytes[i + 2] == UInt8(ascii: "l"),
            bytes[i + 3] == UInt8(ascii: "l")
        else {
            return false
        }
        i += 4
        return true
    }

    /// A plain string (`.some(text)`) or `null` (`.some(nil)`); nil for anything else.
    private mutating func stringOrNull() -> String?? {
        if null() { return .some(nil) }
        guard let range = plainString() else { return nil }
        return .some(String(decoding: bytes[range], as: UTF8.self))
    }

    /// An array of plain strings (where they are), at most `limit` of them.
    private mutating func strings(limit: Int) -> [Range<Int>]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var out: [Range<Int>] = []
        out.reserveCapacity(32)
        if consume(UInt8(ascii: "]")) { return out }
        repeat {
            guard out.count < limit, let range = plainString() else { return nil }
            out.append(range)
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "]")) ? out : nil
    }

    /// An array of response times: `null` (NaN) or a plain decimal `digits[.digits]` as JSON writes it (no leading
    /// zero before another digit), at most 15 digits, within `ResponseTimes.allowedSeconds`; at most `limit`. The
    /// value is the decimal's digits divided by its power of ten, both exact, so it is the correctly rounded number
    /// the strict reader's `Double(text)` gives.
    private mutating func times(limit: Int) -> [Float]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var out: [Float] = []
        out.reserveCapacity(32)
        if consume(UInt8(ascii: "]")) { return out }
        repeat {
            guard out.count < limit else { return nil }
            if null() {
                out.append(.nan)
            } else {
                guard i < bytes.count else { return nil }
                let start = i
                var value = 0.0, scale = 1.0, digits = 0, point = -1
                while i < bytes.count {
                    let b = bytes[i]
                    if b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") {
                        value = value * 10 + Double(b - UInt8(ascii: "0"))
                        if point >= 0 { scale *= 10 }
                        digits += 1
                    } else if b == UInt8(ascii: "."), point < 0, digits > 0 {
                        point = i
                    } else {
                        break
                    }
                    i += 1
                }
                guard digits > 0, digits <= 15, point != i - 1 else { return nil }
                // `01` is not JSON; `0.5` is.
                if bytes[start] == UInt8(ascii: "0"), i - start > 1, bytes[start + 1] != UInt8(ascii: ".") { return nil }
                let seconds = Float(value / scale)
                guard ResponseTimes.allowedSeconds.contains(seconds) else { return nil }
                out.append(seconds)
            }
            if i < bytes.count, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "]"),
                bytes[i] != 0x20, bytes[i] != 0x0A, bytes[i] != 0x0D, bytes[i] != 0x09
            {
                return nil
            }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "]")) ? out : nil
    }

    /// An array of the numbers `0` and `1`, each one digit followed by white space, `,` or `]`; at most `limit`.
    private mutating func digits(limit: Int) -> [UInt8]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        if consume(UInt8(ascii: "]")) { return out }
        repeat {
            skipSpace()
            guard out.count < limit, i < bytes.count, bytes[i] == UInt8(ascii: "0") || bytes[i] == UInt8(ascii: "1") else { return nil }
            out.append(bytes[i] - UInt8(ascii: "0"))
            i += 1
            // `10`, `1.0`, `1e0` and `0x` are the strict reader's to refuse.
            if i < bytes.count, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "]"),
                bytes[i] != 0x20, bytes[i] != 0x0A, bytes[i] != 0x0D, bytes[i] != 0x09
            {
                return nil
            }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "]")) ? out : nil
    }
}
