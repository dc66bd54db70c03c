#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An immutable open-addressing hash table from byte strings (e.g. item ids straight out of a CSV buffer) to
/// integer values, so the hot path of batch scoring looks ids up without building `String`s.
///
/// Keys of up to 8 bytes (most item ids) are packed into one 64-bit word kept in the slot, so a lookup is one
/// finaliser to hash and one word compare, with no pointer chasing; longer keys are hashed with FNV-1a 64 and
/// compared with `memcmp`. Linear probing, load factor ≤ 0.5.
package struct ByteKeyTable: Sendable {
    @usableFromInline struct Slot: Sendable {
        @usableFromInline var word: UInt64 = 0
        @usableFromInline var length: Int32 = 0
        /// Entry index + 1; 0 marks an empty slot.
        @usableFromInline var entry: Int32 = 0
        @usableFromInline init(word: UInt64 = 0, length: Int32 = 0, entry: Int32 = 0) {
            self.word = word
            self.length = length
            self.entry = entry
        }
    }
    // Inlinable into the batch scorer's parsing loops (another module): the lookup is part of every row.
    @usableFromInline let keys: [UInt8] // all keys, concatenated (for keys longer than 8 bytes)
    @usableFromInline let keyStart: [Int] // per entry: start in `keys`, and end at keyStart[i + 1]
    @usableFromInline let slots: [Slot]
    @usableFromInline let mask: Int

    /// - Precondition: keys are distinct.
    package init(_ entries: [String]) {
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
    @inlinable @inline(__always) package static func word(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
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
    @inlinable @inline(__always) package static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
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
    @inlinable @inline(__always) package func index(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
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

    package func index(of key: String) -> Int? {
        var key = key
        return key.withUTF8 { index(of: $0) }
    }
}
