import NIOHTTP1

/// The header fields the guard reads, found in one pass over the head (names compared without case, as RFC 9110
/// §5.1 says; list values split on commas): a lookup by canonical form lower-cased every name and value, three
/// times a request.
struct HeadFields {
    var hosts = 0
    var expect: String?
    var contentLengths: [Substring] = []
    var keepAlive = false
    var close = false

    init(_ headers: HTTPHeaders) {
        for (name, value) in headers {
            switch name.utf8.count {
            case 4 where Self.equalsLowercase(name.utf8, "host"): hosts += 1
            case 6 where Self.equalsLowercase(name.utf8, "expect"): if expect == nil { expect = value }
            case 10 where Self.equalsLowercase(name.utf8, "connection"):
                for token in value.split(separator: ",") {
                    let t = Self.trimmed(token)
                    if Self.equalsLowercase(t.utf8, "close") { close = true } else if Self.equalsLowercase(t.utf8, "keep-alive") { keepAlive = true }
                }
            case 14 where Self.equalsLowercase(name.utf8, "content-length"):
                // A list value ("5, 5") counts as several, as the lookup by canonical form split it.
                for part in value.split(separator: ",", omittingEmptySubsequences: false) { contentLengths.append(Self.trimmed(part)) }
            default: break
            }
        }
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmed(_ text: Substring) -> Substring {
        var t = text
        while let c = t.utf8.first, c == 0x20 || c == 0x09 { t = t.dropFirst() }
        while let c = t.utf8.last, c == 0x20 || c == 0x09 { t = t.dropLast() }
        return t
    }

    /// ASCII case-insensitive equality with a lower-case `lower`.
    static func equalsLowercase<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ lower: StaticString) -> Bool {
        guard bytes.count == lower.utf8CodeUnitCount else { return false }
        return lower.withUTF8Buffer { b in
            var k = 0
            for x in bytes {
                if (x >= 65 && x <= 90 ? x | 0x20 : x) != b[k] { return false }
                k += 1
            }
            return true
        }
    }
}
