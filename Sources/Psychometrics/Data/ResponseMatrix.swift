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

    /// Builds a matrix from CSR arrays.
    /// - Precondition: offsets are non-decreasing from 0 to the cell count, item indices are in range and
    ///   strictly ascending within a row, responses are 0 or 1.
    public init(personIDs: [String], itemIDs: [String], rowOffsets: [Int], itemIndices: [Int32], responses: [UInt8]) {
        precondition(rowOffsets.count == personIDs.count + 1, "rowOffsets needs persons + 1 entries, got \(rowOffsets.count) for \(personIDs.count) persons")
        precondition(rowOffsets.first == 0 && rowOffsets.last == itemIndices.count, "rowOffsets must run from 0 to the cell count")
        precondition(itemIndices.count == responses.count, "one response per item index")
        for i in 0..<personIDs.count {
            var previous: Int32 = -1
            for k in rowOffsets[i]..<rowOffsets[i + 1] {
                let j = itemIndices[k]
                precondition(j > previous && Int(j) < itemIDs.count, "item indices must be ascending and in range in row \(i)")
                precondition(responses[k] <= 1, "responses must be 0 or 1, got \(responses[k])")
                previous = j
            }
        }
        self.personIDs = personIDs
        self.itemIDs = itemIDs
        self.rowOffsets = rowOffsets
        self.itemIndices = itemIndices
        self.responses = responses
    }

    /// Builds a matrix from rows of optional responses (`nil` = not administered). Convenient for tests and
    /// small data; persons are kept even when they answered nothing.
    public init(personIDs: [String]? = nil, itemIDs: [String], rows: [[UInt8?]]) {
        var offsets = [0], items: [Int32] = [], values: [UInt8] = []
        for row in rows {
            precondition(row.count == itemIDs.count, "each row needs \(itemIDs.count) cells, got \(row.count)")
            for (j, cell) in row.enumerated() {
                if let cell { items.append(Int32(j)); values.append(cell) }
            }
            offsets.append(items.count)
        }
        self.init(personIDs: personIDs ?? rows.indices.map { String($0 + 1) }, itemIDs: itemIDs,
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
    /// Returns the indices (into this matrix) of the dropped persons.
    public func keepingItems(_ keep: [Bool]) -> (matrix: ResponseMatrix, droppedPersons: [Int]) {
        precondition(keep.count == itemCount, "keep needs one flag per item")
        var newIndex = [Int32](repeating: -1, count: itemCount)
        var ids: [String] = []
        for j in 0..<itemCount where keep[j] {
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
        return (ResponseMatrix(personIDs: persons, itemIDs: ids, rowOffsets: offsets, itemIndices: items, responses: values), dropped)
    }
}
