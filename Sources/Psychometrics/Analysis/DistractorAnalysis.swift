import Foundation

/// Multiple-choice option analysis (Haladyna & Downing 1993; Kelley's 27% groups).
///
/// For each item: every option's choice rate overall and in the top and bottom groups (the 27% of persons with
/// the highest and lowest rest score: number correct on the other keyed items they answered), the option's
/// discrimination index D = rate_top − rate_bottom (positive for a working key, negative for a working
/// distractor), and flags: a distractor chosen by fewer than `minimumRate` (5%) of those who answered is
/// non-functioning; a distractor with D > 0 attracts able persons; a key with D ≤ 0 does not discriminate.
/// Omitted answers (empty, 0 or NA) are not counted as choices.
package struct DistractorAnalysis: Sendable, Hashable {
    package struct Option: Sendable, Hashable {
        package var itemID: String
        package var option: String
        package var isKey: Bool
        package var count: Int
        package var rate: Double
        package var rateTop: Double
        package var rateBottom: Double
        package var discrimination: Double
        package var flags: [String]
    }

    package var options: [Option]
    /// Persons in each of the top and bottom groups.
    package var groupSize: Int

    /// - Parameters:
    ///   - choices: per person, per item (in `itemIDs` order), the chosen option or nil when omitted.
    ///   - keys: the keyed option per item.
    package init(personCount: Int, itemIDs: [String], choices: [[String?]], keys: [String], minimumRate: Double = 0.05, groupShare: Double = 0.27) {
        precondition(choices.count == personCount && keys.count == itemIDs.count, "one choice row per person and one key per item")
        let J = itemIDs.count
        // Rest scores per person and item.
        var correct = [[Bool?]](repeating: [Bool?](repeating: nil, count: J), count: personCount)
        var totals = [Int](repeating: 0, count: personCount)
        for i in 0..<personCount {
            for j in 0..<J {
                if let c = choices[i][j] { correct[i][j] = c == keys[j]; if c == keys[j] { totals[i] += 1 } }
            }
        }
        var result: [Option] = []
        var groupSizeSeen = 0
        for j in 0..<J {
            let answered = (0..<personCount).filter { choices[$0][j] != nil }
            guard !answered.isEmpty else { continue }
            let rest = answered.map { i in (i, totals[i] - (correct[i][j] == true ? 1 : 0)) }
            // Order by rest score; ties keep person order, so groups are reproducible.
            let ordered = rest.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
            let g = max(1, Int((Double(ordered.count) * groupShare).rounded()))
            groupSizeSeen = max(groupSizeSeen, g)
            let bottom = ordered.prefix(g).map(\.0), top = ordered.suffix(g).map(\.0)
            var optionsSeen = Set(answered.compactMap { choices[$0][j] })
            optionsSeen.insert(keys[j])
            let sortedOptions = optionsSeen.sorted { (Int($0) ?? Int.max, $0) < (Int($1) ?? Int.max, $1) }
            for option in sortedOptions {
                let count = answered.filter { choices[$0][j] == option }.count
                let rate = Double(count) / Double(answered.count)
                let rateTop = Double(top.filter { choices[$0][j] == option }.count) / Double(top.count)
                let rateBottom = Double(bottom.filter { choices[$0][j] == option }.count) / Double(bottom.count)
                let isKey = option == keys[j]
                var flags: [String] = []
                if isKey {
                    if rateTop - rateBottom <= 0 { flags.append("key does not discriminate") }
                } else {
                    if rate < minimumRate {
                        flags.append(
                            "non-functioning (chosen by \(String(format: "%.1f", 100 * rate))% < \(String(format: "%.0f", 100 * minimumRate))%)")
                    }
                    if rateTop - rateBottom > 0 { flags.append("attracts the top group") }
                }
                result.append(
                    Option(
                        itemID: itemIDs[j], option: option, isKey: isKey, count: count, rate: rate,
                        rateTop: rateTop, rateBottom: rateBottom, discrimination: rateTop - rateBottom, flags: flags))
            }
        }
        options = result
        groupSize = groupSizeSeen
    }
}
