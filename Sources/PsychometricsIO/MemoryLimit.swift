import Psychometrics
/// A memory budget given on the command line: a whole number of bytes with an optional binary suffix —
/// `K`, `M`, `G`, `T` (×1024ⁿ; `KB`/`KiB` etc. accepted, any case) — e.g. `512M`, `2G`, `1.5G`.
package struct MemoryLimit: Sendable, Hashable, CustomStringConvertible {
    package let bytes: Int

    /// 1 GiB: what `score` and `calibrate` use unless told otherwise.
    package static let standard = MemoryLimit(uncheckedBytes: 1 << 30)
    /// 32 MiB: below this the fixed overhead (tables, buffers, thread stacks) dominates and no run fits.
    package static let minimum = MemoryLimit(uncheckedBytes: 32 << 20)
    /// 1 TiB.
    package static let maximum = MemoryLimit(uncheckedBytes: 1 << 40)

    private init(uncheckedBytes: Int) { bytes = uncheckedBytes }

    /// Parses `text`; nil when it is not a size or lies outside `minimum` … `maximum`.
    package init?(_ text: String) {
        var t = Substring(text.trimmingCharacters(in: [" "])).lowercased()[...]
        for suffix in ["ib", "b"] where t.hasSuffix(suffix) { t = t.dropLast(suffix.count); break }
        var scale = 1.0
        if let last = t.last, let power = ["k": 1.0, "m": 2.0, "g": 3.0, "t": 4.0][last] {
            scale = Double(1 << (10 * Int(power)))
            t = t.dropLast()
        }
        guard !t.isEmpty, t.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), t.filter({ $0 == "." }).count <= 1,
            let value = Double(t), value.isFinite
        else { return nil }
        let bytes = value * scale
        guard bytes >= Double(Self.minimum.bytes), bytes <= Double(Self.maximum.bytes) else { return nil }
        self.bytes = Int(bytes)
    }

    /// The size in the largest whole binary unit, e.g. `1G`, `512M`, `1536K`.
    package var description: String {
        for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] where bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift)\(unit)"
        }
        return "\(bytes)"
    }

    /// The message for text that `init?` refuses.
    package static func problem(_ text: String, option: String) -> String {
        "\(option) must be a size from \(minimum) to \(maximum) such as 512M or 2G (K, M, G, T = ×1024ⁿ), got '\(text)'"
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> String {
        String(drop(while: { set.contains($0) }).reversed().drop(while: { set.contains($0) }).reversed())
    }
}
