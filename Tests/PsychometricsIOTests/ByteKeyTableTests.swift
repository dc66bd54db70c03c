import Foundation
@testable import Psychometrics
@testable import PsychometricsIO
import Testing

// `ByteKeyTable.hash` keys the set of finished session ids that tells the batch scorer whether a session came
// back (and the input must be regrouped). It must be one-to-one on short ids, or files with plain integer ids
// regroup for nothing.

@Suite("ByteKeyTable: exact lookups, a hash one-to-one on short keys")
struct ByteKeyTableTests {
    static func hash(_ s: String) -> Int {
        var s = s
        return s.withUTF8 { ByteKeyTable.hash($0) }
    }

    @Test("pairs that collided under the old hash (word ^ length << 59) hash apart")
    func formerCollisions() {
        for (a, b) in [("1111", "11119"), ("s10008", "s100000"), ("", "\0"), ("a", "a\0"), ("1234567", "12345670")] {
            #expect(Self.hash(a) != Self.hash(b), "\(a) vs \(b)")
        }
    }

    @Test("integer ids 0 ..< 2,000,000 and s-prefixed ids 0 ..< 1,000,000 get distinct hashes")
    func integersAreDistinct() {
        var seen = HashSet64(capacity: 3_000_000)
        var repeats: [String] = []
        for k in 0..<2_000_000 where !seen.insert(Self.hash(String(k))) { repeats.append(String(k)) }
        for k in 0..<1_000_000 where !seen.insert(Self.hash("s" + String(k))) { repeats.append("s\(k)") }
        #expect(repeats.isEmpty)
        #expect(seen.count == 3_000_000)
    }

    @Test("every key of 0–3 bytes over a small alphabet, and every 8-byte key over digits 0–1, hashes distinctly")
    func shortKeysAreDistinct() {
        let alphabet: [UInt8] = [0, 1, 7, 8, 48, 49, 255]
        var seen = HashSet64()
        var keys: [[UInt8]] = [[]]
        for _ in 1...3 { keys += keys.filter { $0.count == keys.last!.count }.flatMap { k in alphabet.map { k + [$0] } } }
        for k in 0..<256 {
            keys.append((0..<8).map { UInt8(48 + ((k >> $0) & 1)) })
        }
        for key in keys {
            let h = key.withUnsafeBufferPointer { ByteKeyTable.hash($0) }
            let fresh = seen.insert(h)
            #expect(fresh, "\(key)")
        }
    }

    @Test("lookups are exact for keys that share a hash prefix, length or word")
    func lookups() {
        let ids = ["1111", "11119", "s10008", "s100000", "a", "ab", "abc", "abcd", "abcdefgh", "abcdefghi", "", "x"]
        let table = ByteKeyTable(ids)
        for (k, id) in ids.enumerated() { #expect(table.index(of: id) == k) }
        for missing in ["11", "1119", "s1000", "abcdefg", "abcdefghij", "y"] { #expect(table.index(of: missing) == nil) }
    }

    @Test("HashSet64 keeps 0 and 1 apart and reports membership")
    func hashSetZero() {
        var set = HashSet64()
        let inserted = [set.insert(0), set.insert(1), set.insert(0)]
        #expect(inserted == [true, true, false])
        #expect(set.contains(0) && set.contains(1) && !set.contains(2))
        #expect(Set(set.members) == [0, 1])
    }
}
