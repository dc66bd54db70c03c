import Foundation
import Psychometrics

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether `n` bytes at `a` and `b` are equal: eight at a time, then the rest (for short ids, cheaper than a
/// `memcmp` call).
@inline(__always)
package func bytesEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
    var i = 0
    let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
    while i + 8 <= n {
        if ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) != rb.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
        i += 8
    }
    if i + 4 <= n {
        if ra.loadUnaligned(fromByteOffset: i, as: UInt32.self) != rb.loadUnaligned(fromByteOffset: i, as: UInt32.self) { return false }
        i += 4
    }
    while i < n {
        if a[i] != b[i] { return false }
        i += 1
    }
    return true
}

/// A set of 64-bit hashes (the ids of sessions already closed in a batch run): open addressing with linear
/// probing in one flat array, grown at half full. Inserting costs one probe sequence, where `Set<Int>` re-hashes
/// every key with SipHash. The hash 0 (which marks an empty slot) is kept in a flag of its own, so every 64-bit
/// value is a distinct member.
struct HashSet64 {
    private var slots: [UInt64]
    private var mask: Int
    private var hasZero = false
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size < 2 * capacity { size *= 2 }
        slots = [UInt64](repeating: 0, count: size)
        mask = size - 1
    }

    /// Bytes held by the table.
    var memoryBytes: Int { slots.count * 8 }

    /// Whether the next insertion of a new value doubles the table.
    var isFull: Bool { 2 * (count + 1) > slots.count }

    /// Inserts `hash`; false when it was already present.
    mutating func insert(_ hash: Int) -> Bool {
        let h = UInt64(bitPattern: Int64(hash))
        if h == 0 {
            if hasZero { return false }
            hasZero = true
            count += 1
            return true
        }
        if 2 * (count + 1) > slots.count { grow() }
        return slots.withUnsafeMutableBufferPointer { s in
            var i = Int(truncatingIfNeeded: h) & mask
            while true {
                let v = s[i]
                if v == 0 { s[i] = h; count += 1; return true }
                if v == h { return false }
                i = (i + 1) & mask
            }
        }
    }

    /// Whether `hash` is present.
    func contains(_ hash: Int) -> Bool {
        let h = UInt64(bitPattern: Int64(hash))
        if h == 0 { return hasZero }
        return slots.withUnsafeBufferPointer { s in
            var i = Int(truncatingIfNeeded: h) & mask
            while true {
                let v = s[i]
                if v == 0 { return false }
                if v == h { return true }
                i = (i + 1) & mask
            }
        }
    }

    /// The members, in no particular order.
    var members: [UInt64] {
        var out = slots.filter { $0 != 0 }
        if hasZero { out.append(0) }
        return out
    }

    /// Empties the set, keeping its size.
    mutating func removeAll() {
        for i in slots.indices { slots[i] = 0 }
        hasZero = false
        count = 0
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        slots.withUnsafeMutableBufferPointer { s in
            for h in old where h != 0 {
                var i = Int(truncatingIfNeeded: h) & mask
                while s[i] != 0 { i = (i + 1) & mask }
                s[i] = h
            }
        }
    }
}

/// A growable map from byte strings to their insertion index (0, 1, 2, …): the sessions of a regrouping pass
/// by id. Keys are copied once into one byte arena; lookups hash with `ByteKeyTable.hash` and compare bytes, with
/// no per-lookup allocation (a `[[UInt8]: Int]` dictionary built an array and ran SipHash for every row).
struct ByteStringIndex {
    private var slotHash: [UInt64]
    /// Entry index + 1; 0 marks an empty slot.
    private var slotEntry: [Int32]
    private var mask: Int
    private var arena: [UInt8] = []
    private var starts: [Int] = [0]

    init() {
        slotHash = [UInt64](repeating: 0, count: 64)
        slotEntry = [Int32](repeating: 0, count: 64)
        mask = 63
    }

    var count: Int { starts.count - 1 }

    /// The index of `key`, inserting it as the next index when absent.
    mutating func index(of key: UnsafeBufferPointer<UInt8>) -> (index: Int, inserted: Bool) {
        index(of: key, hash: Self.hash(key))
    }

    /// `ByteKeyTable.hash(key)` as this index stores it (its low bits pick the slot).
    @inline(__always) static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        UInt64(bitPattern: Int64(ByteKeyTable.hash(key)))
    }

    /// `index(of:)` with the key's `hash(key)` computed by the caller (for example by the thread that parsed it).
    mutating func index(of key: UnsafeBufferPointer<UInt8>, hash h: UInt64) -> (index: Int, inserted: Bool) {
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let e = Int(slotEntry[i])
            if e == 0 { break }
            if slotHash[i] == h {
                let s = starts[e - 1], n = starts[e] - s
                if n == key.count && (n == 0 || arena.withUnsafeBufferPointer { bytesEqual($0.baseAddress! + s, key.baseAddress!, n) }) {
                    return (e - 1, false)
                }
            }
            i = (i + 1) & mask
        }
        let index = count
        arena.append(contentsOf: key)
        starts.append(arena.count)
        slotHash[i] = h
        slotEntry[i] = Int32(index + 1)
        if 2 * count > slotEntry.count { grow() }
        return (index, true)
    }

    private mutating func grow() {
        let oldHash = slotHash, oldEntry = slotEntry
        slotHash = [UInt64](repeating: 0, count: oldHash.count * 2)
        slotEntry = [Int32](repeating: 0, count: oldHash.count * 2)
        mask = slotHash.count - 1
        for k in oldEntry.indices where oldEntry[k] != 0 {
            var i = Int(truncatingIfNeeded: oldHash[k]) & mask
            while slotEntry[i] != 0 { i = (i + 1) & mask }
            slotHash[i] = oldHash[k]
            slotEntry[i] = oldEntry[k]
        }
    }
}
