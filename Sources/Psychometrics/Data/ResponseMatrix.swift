/// Dichotomous responses of persons (or sessions) to items, stored sparsely: only answered cells are kept.
///
/// Layout: compressed sparse rows by person. Person `i`'s answered items are
/// `itemIndices[rowOffsets[i] ..< rowOffsets[i + 1]]` (ascending) with the matching 0/1 `responses`.
/// Storage is O(persons + answered cells), so a bank of 1,500 items where each session answers 25 costs 25
/// cells per session, not 1,500.
public struct ResponseMatrix: Sendable, Hashable {
    public let personIDs: [String]
    public let itemIDs: [String]
    public let rowOffsets: [Int]
    public let itemIndices: [Int32]
    public let responses: [UInt8]

    /// Builds a matrix from CSR arrays, checking them.
    /// - Throws: `PsychometricsError` `.lengthMismatch` unless there are persons + 1 offsets running
    ///   non-decreasing from 0 to the cell count and one response per item index; `.unknownItem` for an item
    ///   index out of range; `.repeatedItem` for an index repeated in a row; `.invalidOptions` for a row's
    ///   indices out of ascending order; `.invalidResponse` for a response other than 0 or 1.
    public init(personIDs: [String], itemIDs: [String], rowOffsets: [Int], itemIndices: [Int32], responses: [UInt8]) throws(PsychometricsError) {
        guard rowOffsets.count == personIDs.count + 1 else {
            throw PsychometricsError(.lengthMismatch, "rowOffsets needs persons + 1 = \(personIDs.count + 1) entries, got \(rowOffsets.count)")
        }
        guard itemIndices.count == responses.count else {
            throw PsychometricsError(.lengthMismatch, "one response per item index: \(itemIndices.count) indices, \(responses.count) responses")
        }
        guard rowOffsets.first == 0, rowOffsets.last == itemIndices.count else {
            throw PsychometricsError(.lengthMismatch, "rowOffsets must run from 0 to the cell count \(itemIndices.count), got \(rowOffsets.first ?? 0)…\(rowOffsets.last ?? 0)")
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
                guard j > previous else { throw PsychometricsError(.invalidOptions, "row \(i): item indices must be ascending, got \(j) after \(previous)") }
                guard responses[k] <= 1 else { throw PsychometricsError(.invalidResponse, "row \(i), item \(j): responses must be 0 or 1, got \(responses[k])") }
                previous = j
            }
        }
        self.init(validatedPersonIDs: personIDs, itemIDs: itemIDs, rowOffsets: rowOffsets, itemIndices: itemIndices, responses: responses)
    }

    /// The package's path for arrays it built itself (readers, the simulator): no checks.
    package init(validatedPersonIDs personIDs: [String], itemIDs: [String], rowOffsets: [Int], itemIndices: [Int32], responses: [UInt8]) {
        self.personIDs = personIDs
        self.itemIDs = itemIDs
        self.rowOffsets = rowOffsets
        self.itemIndices = itemIndices
        self.responses = responses
    }

    /// Builds a matrix from rows of optional responses (`nil` = not administered). Convenient for tests and
    /// small data; persons are kept even when they answered nothing.
    /// - Throws: `PsychometricsError.lengthMismatch` for a row without one cell per item (or person ids not one
    ///   per row), `.invalidResponse` for a response other than 0 or 1.
    public init(personIDs: [String]? = nil, itemIDs: [String], rows: [[UInt8?]]) throws(PsychometricsError) {
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
                guard cell <= 1 else { throw PsychometricsError(.invalidResponse, "row \(i), item \(j): responses must be 0 or 1, got \(cell)") }
                items.append(Int32(j))
                values.append(cell)
            }
            offsets.append(items.count)
        }
        self.init(validatedPersonIDs: personIDs ?? rows.indices.map { String($0 + 1) }, itemIDs: itemIDs,
                  rowOffsets: offsets, itemIndices: items, responses: values)
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

    /// Per item: number of responses and number correct.
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
        var ids: [String] = []
        for j in 0..<min(itemCount, keep.count) where keep[j] {
            newIndex[j] = Int32(ids.count)
            ids.append(itemIDs[j])
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
        return (ResponseMatrix(validatedPersonIDs: persons, itemIDs: ids, rowOffsets: offsets, itemIndices: items, responses: values), dropped)
    }
}
