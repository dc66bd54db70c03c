import Psychometrics

/// Answer keys for response files that hold the options people chose (`A`, `C`, or option numbers) instead of
/// right/wrong: a cell equal to its item's key (trimmed, any case) is correct, another option incorrect.
///
/// Two modes:
/// - every cell an option (`score --key-column COLUMN`): needed when options are numbered, since `1` would
///   otherwise read as "correct"; empty and `NA` stay "not administered", and every scored item needs a key;
/// - letters only (automatic on a bank whose `key` column holds letters): a one-letter cell is an option, while
///   `1`/`0`/`true`/`false` keep their meaning (`t` and `f` are then the options T and F).
package struct OptionKeys: Sendable {
    /// Per bank item: the key in upper case (empty: the item has none).
    let keys: [[UInt8]]
    /// Whether every non-empty cell is an option.
    package let everyCell: Bool

    /// Keys from the bank's metadata `column`. `everyCell`: every scored item must have one.
    /// - Throws: `InputError` naming the bank and the items without a key.
    package init(bank: ItemBank, column: String, everyCell: Bool) throws {
        let file = bank.sourcePath ?? "bank"
        guard bank.metadataColumns.contains(column) else {
            throw InputError(
                file: file, line: 1,
                message:
                    "the bank has no column '\(column.escapingControlCharacters)' to take answer keys from (columns: \(bank.metadataColumns.joined(separator: ", ")))"
            )
        }
        keys = bank.items.map { Array(($0.metadata[column] ?? "").trimmingCharacters(in: .whitespaces).uppercased().utf8) }
        self.everyCell = everyCell
        if everyCell {
            let missing = bank.items.indices.filter { bank.items[$0].isScored && keys[$0].isEmpty }.map { bank.items[$0].itemID }
            if !missing.isEmpty {
                throw InputError(
                    file: file,
                    message:
                        "\(missing.count) scored item\(missing.count == 1 ? " has" : "s have") no key in column '\(column)' (\(missing.prefix(5).joined(separator: ", "))\(missing.count > 5 ? ", …" : "")): options cannot be scored without it"
                )
            }
        }
    }

    /// Letter keys from the bank's `key` column when every key there is one letter (nil otherwise): the
    /// automatic mode.
    package static func letters(in bank: ItemBank) -> OptionKeys? {
        guard bank.metadataColumns.contains("key") else { return nil }
        let keys = bank.items.compactMap { $0.metadata["key"]?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !keys.isEmpty, keys.allSatisfy({ $0.count == 1 && $0.unicodeScalars.allSatisfy { $0.properties.isAlphabetic && $0.isASCII } }) else {
            return nil
        }
        return try? OptionKeys(bank: bank, column: "key", everyCell: false)
    }

    /// Whether a cell that `ResponseCell.parse` read as `parsed` may be an option: any answered cell with every
    /// cell an option, else one that is no right/wrong response. (Readers look up the item only then.)
    @inline(__always)
    package func mayBeOption(_ parsed: ResponseCell) -> Bool { everyCell ? parsed != .missing : parsed == .invalid }

    /// The cell `raw` of bank item `j` (one `mayBeOption` let through) scored against its key, or nil when this
    /// mode does not take it as an option (then it is read as a right/wrong response).
    @inline(__always)
    package func score(_ raw: UnsafeBufferPointer<UInt8>, item j: Int) -> ResponseCell? {
        let b = raw.trimmingSpaces()
        let key = keys[j]
        if !everyCell {
            guard b.count == 1, !key.isEmpty, (b[0] | 0x20) >= UInt8(ascii: "a"), (b[0] | 0x20) <= UInt8(ascii: "z") else { return nil }
        }
        guard b.count == key.count else { return .incorrect }
        for i in 0..<b.count {
            let c = b[i] >= UInt8(ascii: "a") && b[i] <= UInt8(ascii: "z") ? b[i] - 32 : b[i]
            if c != key[i] { return .incorrect }
        }
        return .correct
    }
}
