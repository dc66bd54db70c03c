import Psychometrics
/// The hashes (`ByteKeyTable.hash`) of the sessions a streaming batch run has closed, in bounded memory.
///
/// A session id that comes back means the input is not grouped by session and must be regrouped. The hashes
/// live in a `HashSet64` of at most `limitBytes`; when it would grow past that, its members are sorted and
/// written to a spill file (a sorted run, 8 bytes per session) and the set starts empty. `insert` sees repeats
/// among the hashes in memory at once; `allDistinct()`, at the end of the input, merges the runs with the set
/// and finds repeats across them. So memory stays within the limit for any number of sessions, at 8 bytes of
/// disk per session once the limit is reached.
struct SeenSessions {
    private var set = HashSet64()
    private let limitBytes: Int
    private let spillPrefix: () -> String
    private var runs: [SpillFile] = []

    init(limitBytes: Int, spillPrefix: @escaping () -> String) {
        self.limitBytes = max(limitBytes, 1 << 12)
        self.spillPrefix = spillPrefix
    }

    /// Spilled runs so far (for tests and reports).
    var runCount: Int { runs.count }

    /// Adds `hash`; false when it is among the hashes held in memory.
    mutating func insert(_ hash: Int) throws -> Bool {
        if set.isFull && set.memoryBytes * 2 > limitBytes && !set.contains(hash) { try spill() }
        return set.insert(hash)
    }

    private mutating func spill() throws {
        let run = try SpillFile(prefix: spillPrefix())
        for h in set.members.sorted() { try run.write(word: h) }
        try run.rewind()
        runs.append(run)
        set.removeAll()
    }

    /// Whether no hash occurs twice across the spilled runs and the set (true when nothing was spilled).
    mutating func allDistinct() throws -> Bool {
        guard !runs.isEmpty else { return true }
        var heads: [UInt64?] = []
        for run in runs { heads.append(try run.atEnd() ? nil : try run.readWord()) }
        let current = set.members.sorted()
        var k = 0
        var previous: UInt64?
        while true {
            var best = -1
            var value = UInt64.max
            for (i, h) in heads.enumerated() { if let h, best < 0 || h < value { best = i; value = h } }
            if k < current.count, best < 0 || current[k] < value { best = heads.count; value = current[k] }
            if best < 0 { return true }
            if value == previous { return false }
            previous = value
            if best == heads.count { k += 1 } else { heads[best] = try runs[best].atEnd() ? nil : try runs[best].readWord() }
        }
    }
}
