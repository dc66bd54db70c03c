/// An immutable open-addressing hash table from byte strings (e.g. item ids straight out of a CSV buffer) to
/// integer values, so the hot path of batch scoring looks ids up without building `String`s.
///
/// Keys of up to 8 bytes (most item ids) are packed into one 64-bit word kept in the slot, so a lookup is one
/// finaliser to hash and one word compare, with no pointer chasing; longer keys are hashed with FNV-1a 64 and
/// compared with `memcmp`. Linear probing, load factor ≤ 0.5.
public struct ByteKeyTable: Sendable {
    private struct Slot {
        var word: UInt64 = 0
        var length: Int32 = 0
        /// Entry index + 1; 0 marks an empty slot.
        var entry: Int32 = 0
    }
    private let keys: [UInt8]           // all keys, concatenated (for keys longer than 8 bytes)
    private let keyStart: [Int]         // per entry: start in `keys`, and end at keyStart[i + 1]
    private let slots: [Slot]
    private let mask: Int

    /// - Precondition: keys are distinct.
    public init(_ entries: [String]) {
        var keys: [UInt8] = [], starts = [0]
        for key in entries {
            keys.append(contentsOf: key.utf8)
            starts.append(keys.count)
        }
        var size = 16
        while size < 2 * max(entries.count, 1) { size *= 2 }
        var slots = [Slot](repeating: Slot(), count: size)
        keys.withUnsafeBufferPointer { k in
            for e in 0..<entries.count {
                let key = UnsafeBufferPointer(rebasing: k[starts[e]..<starts[e + 1]])
                var h = Self.hash(key) & (size - 1)
                while slots[h].entry != 0 { h = (h + 1) & (size - 1) }
                slots[h] = Slot(word: key.count <= 8 ? Self.word(key) : 0, length: Int32(key.count), entry: Int32(e + 1))
            }
        }
        self.keys = keys
        self.keyStart = starts
        self.slots = slots
        self.mask = size - 1
    }

    /// A key of at most 8 bytes as one word: its bytes in order from the low byte, zero-padded (for 4–8 bytes
    /// built from two overlapping 4-byte loads, for 1–3 bytes from single bytes). Together with the length this
    /// identifies the key; it reads no byte outside it.
    @inline(__always) static func word(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let n = b.count
        guard n > 0, let base = b.baseAddress else { return 0 }
        if n >= 4 {
            let raw = UnsafeRawPointer(base)
            let lo = raw.loadUnaligned(as: UInt32.self), hi = raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
            // hi holds bytes n−4 … n−1; dropping its first 8 − n bytes leaves bytes 4 … n−1.
            return UInt64(lo) | UInt64(hi >> (8 * (8 - n))) << 32
        }
        return UInt64(base[0]) | (n >= 2 ? UInt64(base[1]) << 8 : 0) | (n == 3 ? UInt64(base[2]) << 16 : 0)
    }

    /// A 64-bit hash of a byte string, one-to-one on short keys.
    ///
    /// Keys of up to 7 bytes map to `word | length << 56` (the top byte is free, so the length cannot alias data),
    /// 8-byte keys whose last byte is at least 8 to `word` itself (its top byte then differs from every shorter
    /// key's length byte); both are then mixed by MurmurHash3's finaliser, a bijection of 64-bit words. So two
    /// distinct such keys never share a hash — plain integer ids up to 10⁸ and ids like `s100000` included.
    /// Other keys (longer, or 8 bytes ending in a byte below 8) are hashed with FNV-1a 64 and the same
    /// finaliser: distinct keys then collide with probability about 2⁻⁶⁴ per pair.
    @inline(__always) public static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var h: UInt64
        let n = bytes.count
        if n < 8 {
            h = word(bytes) | UInt64(n) << 56
        } else if n == 8 && bytes[7] >= 8 {
            h = word(bytes)
        } else {
            h = 0xcbf2_9ce4_8422_2325
            for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        }
        // MurmurHash3's 64-bit finaliser: every input bit reaches the low bits the table masks.
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return Int(truncatingIfNeeded: h)
    }

    /// The value (insertion index) of `bytes`, or nil.
    @inline(__always) public func index(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let n = bytes.count
        var h = Self.hash(bytes) & mask
        return slots.withUnsafeBufferPointer { slots in
            if n <= 8 {
                let w = Self.word(bytes)
                while true {
                    let slot = slots[h]
                    if slot.entry == 0 { return nil }
                    if slot.word == w && Int(slot.length) == n { return Int(slot.entry) - 1 }
                    h = (h + 1) & mask
                }
            }
            return keys.withUnsafeBufferPointer { k in
                while true {
                    let slot = slots[h]
                    if slot.entry == 0 { return nil }
                    if Int(slot.length) == n {
                        let s = keyStart[Int(slot.entry) - 1]
                        if memcmp(k.baseAddress! + s, bytes.baseAddress!, n) == 0 { return Int(slot.entry) - 1 }
                    }
                    h = (h + 1) & mask
                }
            }
        }
    }

    public func index(of key: String) -> Int? {
        var key = key
        return key.withUTF8 { index(of: $0) }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether `n` bytes at `a` and `b` are equal: eight at a time, then the rest (for short ids, cheaper than a
/// `memcmp` call).
@inline(__always)
func bytesEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
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
        let h = UInt64(bitPattern: Int64(ByteKeyTable.hash(key)))
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
