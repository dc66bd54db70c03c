/// Calendar dates of sessions as day numbers (days since 1970-01-01, proleptic Gregorian), for the item monitor
/// and the simulator: read from `YYYY-MM-DD`, optionally followed by a time (`2026-03-01T14:05:00Z`,
/// `2026-03-01 14:05`), which is ignored; written as `YYYY-MM-DD`. Days from civil dates by Hinnant's algorithm
/// (H. Hinnant, *chrono-compatible low-level date algorithms*).
package enum SessionDate {
    /// Years a date may have: 1900…2200.
    package static let allowedYears = 1900...2200

    /// The day number of `text`, or nil when it does not start with a valid `YYYY-MM-DD` followed by nothing, a
    /// space or `T`.
    package static func day(_ text: some StringProtocol) -> Int? {
        let b = Array(text.utf8.prefix(11)).drop { $0 == 0x20 }
        let bytes = Array(b)
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        if bytes.count > 10 && bytes[10] != UInt8(ascii: "T") && bytes[10] != UInt8(ascii: " ") { return nil }
        func number(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r { guard bytes[i] >= 48 && bytes[i] <= 57 else { return nil }; v = v * 10 + Int(bytes[i] - 48) }
            return v
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10), allowedYears.contains(y), (1...12).contains(m) else { return nil }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...lengths[m - 1]).contains(d) else { return nil }
        return days(year: y, month: m, day: d)
    }

    /// Days since 1970-01-01 of a valid civil date.
    package static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// `YYYY-MM-DD` of a day number.
    package static func text(_ z: Int) -> String {
        let shifted = z + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let doe = shifted - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))"
    }
}
