/// CSV field quoting (RFC 4180): quotes a field that holds a comma, quote, CR or LF byte, doubling its quotes.
/// Works on the UTF-8 bytes (a CR LF pair or a quote followed by a combining mark is one `Character` in
/// Swift, and must still count).
package func csvField(_ value: String) -> String {
    guard value.utf8.contains(where: { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }) else { return value }
    var bytes: [UInt8] = [34]
    for b in value.utf8 {
        if b == 34 { bytes.append(34) }
        bytes.append(b)
    }
    bytes.append(34)
    return String(decoding: bytes, as: UTF8.self)
}
