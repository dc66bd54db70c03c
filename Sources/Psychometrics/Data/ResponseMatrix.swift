/// Responses of persons (or sessions) to items, stored sparsely: only answered cells are kept.
///
/// Layout: compressed sparse rows by person. Person `i`'s answered items are
/// `itemIndices[rowOffsets[i] ..< rowOffsets[i + 1]]` (ascending) with the matching `responses`: category
/// indices 0 ..< `categoryCounts[j]` (0/1 for dichotomous items, the score of a graded or partial-credit item,
/// the option of a nominal item; `ItemResponseModel`).
/// Storage is O(persons + answered cells), so a bank of 1,500 items where each session answers 25 costs 25
/// cells per session, not 1,500.
public struct ResponseMatrix: Sendable, Hashable {
    public let personIDs: [String]
    public let itemIDs: [String]
    public let rowOffsets: [Int]
    public let itemIndices: [Int32]
    public let responses: [UInt8]
    /// Per item, its number of response categories K_j (2 for a dichotomous item); responses are 0 ..< K_j.
    public let categoryCounts: [Int]

    /// Builds a matrix from CSR arrays, checking them.
    /// - Throws: `PsychometricsError` `.lengthMismatch` unless there are persons + 1 offsets running
    ///   non-decreasing from 0 to the cell count and one response per item index; `.unknownItem` for an item
    ///   index out of range; `.repeatedItem` for an index repeated in a row; `.invalidOptions` for a row's
    ///   indices out of ascending order; `.invalidResponse` for a response other than 0 or 1.
    public init(personIDs: [String], itemIDs: [String], rowOffsets: [Int], itemIndices: [Int32], responses: [UInt8]) throws(PsychometricsError) {
        try self.init(
            personIDs: personIDs, itemIDs: itemIDs, rowOffsets: rowOffsets, itemIndices: itemIndices, responses: responses,
            categoryCounts: [Int](repeating: 2, count: itemIDs.count))
    }

    /// Builds a matrix of category indices from CSR arrays, checking them: item j's responses must be
    /// 0 ..< `categoryCounts[j]` (2…256).
    /// - Throws: as the dichotomous initialiser; `.lengthMismatch` unless there is one category count per item,
    ///   `.invalidOptions` for a count outside 2…256, `.invalidResponse` for a response outside its item's categories.
    public init(
        personIDs: [String], itemIDs: [String], rowOffsets: [Int], itemIndices: [Int32], responses: [UInt8],
        categoryCounts: [Int]
    ) throws(PsychometricsError) {
        guard categoryCounts.count == itemIDs.count else {
            throw PsychometricsError(.lengthMismatch, "one category count per item: \(categoryCounts.count) for \(itemIDs.count) items")
        }
        if let j = categoryCounts.firstIndex(where: { !(2...256).contains($0) }) {
            throw PsychometricsError(.invalidOptions, "item \(itemIDs[j]) has \(categoryCounts[j]) categories; allowed 2…256")
        }
        guard rowOffsets.count == personIDs.count + 1 else {
            throw PsychometricsError(.lengthMismatch, "rowOffsets needs persons + 1 = \(personIDs.count + 1) entries, got \(rowOffsets.count)")
        }
        guard itemIndices.count == responses.count else {
            throw PsychometricsError(.lengthMismatch, "one response per item index: \(itemIndices.count) indices, \(responses.count) responses")
        }
        guard rowOffsets.first == 0, rowOffsets.last == itemIndices.count else {
            throw PsychometricsError(
                .lengthMismatch,
                "rowOffsets must run from 0 to the cell count \(itemIndices.count), got \(rowOffsets.first ?? 0)…\(rowOffsets.last ?? 0)")
        }
        for i in 0..<personIDs.count {
            guard rowOffsets[i] <= rowOffsets[i + 1] else {
                throw PsychometricsError(.lengthMismatch, "rowOffsets must not decrease: row \(i) runs from \(rowOffsets[i]) to \(rowOffsets[i + 1])")
            }
            var previous: Int32 = -1
            for k in rowOffsets[i]..<rowOffsets[i + 1] {
                let j = itemIndices[k]
                guard j >= 0, Int(j) < itemIDs.count else {
                    throw PsychometricsError(.unknownItem, "row \(i): item index \(j) is outside 0…\(itemIDs.count - 1)")
                }
                guard j != previous else { throw PsychometricsError(.repeatedItem, "row \(i): item index \(j) appears twice") }
                guard j > previous else {
                    throw PsychometricsError(.invalidOptions, "row \(i): item indices must be ascending, got \(j) after \(previous)")
                }
                guard Int(responses[k]) < categoryCounts[Int(j)] else {
                    throw PsychometricsError(.invalidResponse, "row \(i), item \(j): \(Self.allowed(categoryCounts[Int(j)])), got \(responses[k])")
                }
                previous = j
            }
        }
        self.init(
            validatedPersonIDs: personIDs, itemIDs: itemIDs, rowOffsets: rowOffsets, itemIndices: itemIndices, responses: responses,
            categoryCounts: categoryCounts)
    }

    /// What a response to an item with `k` categories may be, for messages.
    static func allowed(_ k: Int) -> String { k == 2 ? "responses must be 0 or 1" : "responses must be 0…\(k - 1)" }

    /// The package's path for arrays it built itself (readers, the simulator): no checks. Without
    /// `categoryCounts` every item is dichotomous.
    package init(
        validatedPersonIDs personIDs: [String], itemIDs: [String], rowOffsets: [Int], itemIndices: [Int32], responses: [UInt8],
        categoryCounts: [Int]? = nil
    ) {
        self.personIDs = personIDs
        self.itemIDs = itemIDs
        self.rowOffsets = rowOffsets
        self.itemIndices = itemIndices
        self.responses = responses
        self.categoryCounts = categoryCounts ?? [Int](repeating: 2, count: itemIDs.count)
    }

    /// Builds a matrix from rows of optional responses (`nil` = not administered). Convenient for tests and
    /// small data; persons are kept even when they answered nothing.
    /// With `categoryCounts` (one per item, 2…256) item j's responses are 0 ..< `categoryCounts[j]`; without,
    /// every item is dichotomous.
    /// - Throws: `PsychometricsError.lengthMismatch` for a row without one cell per item (or person ids not one
    ///   per row, or category counts not one per item), `.invalidOptions` for a count outside 2…256,
    ///   `.invalidResponse` for a response outside its item's categories.
    public init(personIDs: [String]? = nil, itemIDs: [String], rows: [[UInt8?]], categoryCounts: [Int]? = nil) throws(PsychometricsError) {
        let counts = categoryCounts ?? [Int](repeating: 2, count: itemIDs.count)
        guard counts.count == itemIDs.count else {
            throw PsychometricsError(.lengthMismatch, "one category count per item: \(counts.count) for \(itemIDs.count) items")
        }
        if let j = counts.firstIndex(where: { !(2...256).contains($0) }) {
            throw PsychometricsError(.invalidOptions, "item \(itemIDs[j]) has \(counts[j]) categories; allowed 2…256")
        }
        if let personIDs, personIDs.count != rows.count {
            throw PsychometricsError(.lengthMismatch, "\(personIDs.count) person ids for \(rows.count) rows")
        }
        var offsets = [0], items: [Int32] = [], values: [UInt8] = []
        for (i, row) in rows.enumerated() {
            guard row.count == itemIDs.count else {
                throw PsychometricsError(.lengthMismatch, "row \(i) has \(row.count) cells for \(itemIDs.count) items")
            }
            for (j, cell) in row.enumerated() {
                guard let cell else { continue }
                guard Int(cell) < counts[j] else {
                    throw PsychometricsError(.invalidResponse, "row \(i), item \(j): \(Self.allowed(counts[j])), got \(cell)")
                }
                items.append(Int32(j))
                values.append(cell)
            }
            offsets.append(items.count)
        }
        self.init(
            validatedPersonIDs: personIDs ?? rows.indices.map { String($0 + 1) }, itemIDs: itemIDs,
            rowOffsets: offsets, itemIndices: items, responses: values, categoryCounts: counts)
    }

    public var personCount: Int { personIDs.count }
    public var itemCount: Int { itemIDs.count }
    public var cellCount: Int { itemIndices.count }

    /// Answered cells as a fraction of persons × items.
    public var density: Double {
        personCount == 0 || itemCount == 0 ? 0 : Double(cellCount) / (Double(personCount) * Double(itemCount))
    }

    /// True when every person answered every item.
    public var isComplete: Bool { cellCount == personCount * itemCount }

    /// Range of cell positions of person `i`.
    @inlinable public func cells(ofPerson i: Int) -> Range<Int> { rowOffsets[i]..<rowOffsets[i + 1] }

    /// Whether every item has two categories (0/1).
    public var isDichotomous: Bool { categoryCounts.allSatisfy { $0 == 2 } }

    /// Per item, the number of responses in each category (`categoryCounts[j]` values).
    public func categoryTotals() -> [[Int]] {
        var out = categoryCounts.map { [Int](repeating: 0, count: $0) }
        for k in 0..<cellCount { out[Int(itemIndices[k])][Int(responses[k])] += 1 }
        return out
    }

    /// Per item: number of responses and number correct (for items with more categories, the sum of the scores).
    public func itemTotals() -> (responses: [Int], correct: [Int]) {
        var n = [Int](repeating: 0, count: itemCount), r = [Int](repeating: 0, count: itemCount)
        for k in 0..<cellCount {
            let j = Int(itemIndices[k])
            n[j] += 1
            r[j] += Int(responses[k])
        }
        return (n, r)
    }

    /// The matrix restricted to the items with `keep[j] == true`; persons left with no responses are dropped.
    /// Returns the indices (into this matrix) of the dropped persons. Items beyond `keep`'s end are dropped.
    public func keepingItems(_ keep: [Bool]) -> (matrix: ResponseMatrix, droppedPersons: [Int]) {
        var newIndex = [Int32](repeating: -1, count: itemCount)
        var ids: [String] = [], counts: [Int] = []
        for j in 0..<min(itemCount, keep.count) where keep[j] {
            newIndex[j] = Int32(ids.count)
            ids.append(itemIDs[j])
            counts.append(categoryCounts[j])
        }
        var offsets = [0], items: [Int32] = [], values: [UInt8] = [], persons: [String] = [], dropped: [Int] = []
        items.reserveCapacity(cellCount)
        values.reserveCapacity(cellCount)
        for i in 0..<personCount {
            let before = items.count
            for k in cells(ofPerson: i) where newIndex[Int(itemIndices[k])] >= 0 {
                items.append(newIndex[Int(itemIndices[k])])
                values.append(responses[k])
            }
            if items.count == before { dropped.append(i); continue }
            persons.append(personIDs[i])
            offsets.append(items.count)
        }
        return (
            ResponseMatrix(
                validatedPersonIDs: persons, itemIDs: ids, rowOffsets: offsets, itemIndices: items, responses: values,
                categoryCounts: counts), dropped
        )
    }

    /// The same responses with item j renumbered `newIndex[j]` (a permutation of 0 ..< items) and the items named
    /// `itemIDs` in the new order; each person's answers re-sorted ascending.
    package func renumberingItems(_ newIndex: [Int32], itemIDs ids: [String]) -> ResponseMatrix {
        var counts = [Int](repeating: 2, count: itemCount)
        for j in 0..<itemCount { counts[Int(newIndex[j])] = categoryCounts[j] }
        var items = [Int32](repeating: 0, count: cellCount), values = [UInt8](repeating: 0, count: cellCount)
        var row: [(Int32, UInt8)] = []
        for i in 0..<personCount {
            row.removeAll(keepingCapacity: true)
            for k in cells(ofPerson: i) { row.append((newIndex[Int(itemIndices[k])], responses[k])) }
            row.sort { $0.0 < $1.0 }
            for (n, (j, u)) in row.enumerated() {
                items[rowOffsets[i] + n] = j
                values[rowOffsets[i] + n] = u
            }
        }
        return ResponseMatrix(
            validatedPersonIDs: personIDs, itemIDs: ids, rowOffsets: rowOffsets, itemIndices: items, responses: values,
            categoryCounts: counts)
    }
}
