/// An immutable open-addressing hash table from byte strings (e.g. item ids straight out of a CSV buffer) to
/// integer values, so the hot path of batch scoring looks ids up without building `String`s.
/// FNV-1a 64-bit hashing, linear probing, load factor ≤ 0.5.
public struct ByteKeyTable: Sendable {
    private let keys: [UInt8]           // all keys, concatenated
    private let keyStart: [Int]         // per entry: start in `keys`, and end at keyStart[i + 1]
    private let slots: [Int32]          // entry index + 1, 0 = empty
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
        var slots = [Int32](repeating: 0, count: size)
        for e in 0..<entries.count {
            var h = keys.withUnsafeBufferPointer { Self.hash(UnsafeBufferPointer(rebasing: $0[starts[e]..<starts[e + 1]])) } & (size - 1)
            while slots[h] != 0 { h = (h + 1) & (size - 1) }
            slots[h] = Int32(e + 1)
        }
        self.keys = keys
        self.keyStart = starts
        self.slots = slots
        self.mask = size - 1
    }

    @inline(__always) public static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }

    /// The value (insertion index) of `bytes`, or nil.
    @inline(__always) public func index(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var h = Self.hash(bytes) & mask
        return keys.withUnsafeBufferPointer { k in
            while true {
                let e = Int(slots[h])
                if e == 0 { return nil }
                let s = keyStart[e - 1], end = keyStart[e]
                if end - s == bytes.count && (bytes.count == 0 || memcmp(k.baseAddress! + s, bytes.baseAddress!, bytes.count) == 0) {
                    return e - 1
                }
                h = (h + 1) & mask
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
