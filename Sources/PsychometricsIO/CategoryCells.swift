import Psychometrics

/// How response cells of a bank's items in more than two categories (`CategoryBankItem`) are read: a whole
/// number 0 ..< K, or, for an item with response labels (`CategoryBankItem.responseLabels`: data coded from 1, a
/// collapsed category, nominal options), one of its labels (ASCII letters in any case); empty or `NA` is not
/// administered. 0/1 items keep `ResponseCell`'s rules (and `OptionKeys`').
package struct CategoryCells: Sendable {
    /// Per bank item: nil for a 0/1 item; else K and the labels' bytes (empty: the cells 0 ..< K).
    private let items: [(count: Int, labels: [[UInt8]])?]

    /// nil when the bank has no item in more than two categories (readers then take the 0/1 paths only).
    package init?(bank: ItemBank) {
        guard bank.hasCategoryItems else { return nil }
        items = bank.items.map { item in item.categoryModel.map { ($0.categoryCount, $0.responseLabels.map { Array($0.utf8) }) } }
    }

    /// Whether bank item `j` is read as categories.
    @inline(__always) package func isCategoryItem(_ j: Int) -> Bool { items[j] != nil }

    /// The category of the cell `raw` for category item `j`, `ResponseCell.missingCategory` for empty or `NA`,
    /// `ResponseCell.invalidCategory` for anything else.
    package func value(_ raw: UnsafeBufferPointer<UInt8>, item j: Int) -> Int {
        let (count, labels) = items[j]!
        guard !labels.isEmpty else {
            let v = ResponseCell.parseCategory(raw)
            return v >= count ? ResponseCell.invalidCategory : v
        }
        let b = raw.trimmingSpaces()
        if b.count == 0 || (b.count == 2 && (b[0] | 0x20) == UInt8(ascii: "n") && (b[1] | 0x20) == UInt8(ascii: "a")) {
            return ResponseCell.missingCategory
        }
        for (k, label) in labels.enumerated() where label.count == b.count {
            var equal = true
            for i in 0..<b.count where b[i] != label[i] {
                let x = b[i] | 0x20, y = label[i] | 0x20
                if !(x == y && x >= UInt8(ascii: "a") && x <= UInt8(ascii: "z")) { equal = false; break }
            }
            if equal { return k }
        }
        return ResponseCell.invalidCategory
    }

    /// What item `j`'s cells may be, for messages: "0…3" or "1, 2, 3, 4", and not administered.
    package func allowed(item j: Int) -> String {
        let (count, labels) = items[j]!
        return (labels.isEmpty ? "0…\(count - 1)" : labels.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ", "))
            + ", or empty/NA for not administered"
    }
}
