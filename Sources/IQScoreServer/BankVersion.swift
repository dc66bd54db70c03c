/// The version of a served bank, and the seed of an adaptive test, from bytes.
///
/// The bank version is the first 16 hexadecimal digits of the SHA-256 digest of the bank file's bytes (FIPS 180-4),
/// so an operator can check which file a server holds with `sha256sum BANK.csv | cut -c1-16`; `GET /v1/bank`
/// also gives the whole digest. It changes with any byte of the bank file, and with nothing else (norms, CAT rules
/// and the blueprint are configuration, not the bank).
package enum BankVersion {
    /// The first 16 hexadecimal digits (64 bits) of `sha256(bytes)`.
    package static func version(ofBankBytes bytes: some Collection<UInt8>) -> String {
        String(sha256Hex(bytes).prefix(16))
    }

    /// The SHA-256 digest of `bytes` as 64 lowercase hexadecimal digits.
    package static func sha256Hex(_ bytes: some Collection<UInt8>) -> String {
        hex(SHA256.digest(Array(bytes)))
    }

    /// `bytes` as lowercase hexadecimal digits, two a byte (a digest or its first bytes).
    static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(2 * bytes.count)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The seed of an adaptive test's draws: 64-bit FNV-1a over the UTF-8 bytes of `sessionID`, one zero byte, and
    /// the bytes of `bankVersion`.
    ///
    /// ```
    /// h = 0xcbf29ce484222325;  for each byte x: h = (h ^ x) · 0x100000001b3  (mod 2⁶⁴)
    /// ```
    /// Stable across processes, machines and releases (unlike Swift's `Hasher`, which is seeded per process), so
    /// every instance behind a load balancer gives the same next item for the same session and history, and a
    /// new bank version gives a session new draws. Fowler–Noll–Vo, FNV-1a (IETF draft-eastlake-fnv).
    package static func catSeed(sessionID: String, bankVersion: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        @inline(__always) func mix(_ x: UInt8) { h = (h ^ UInt64(x)) &* 0x0000_0100_0000_01b3 }
        for x in sessionID.utf8 { mix(x) }
        mix(0)
        for x in bankVersion.utf8 { mix(x) }
        return h
    }
}

/// SHA-256 (FIPS 180-4), for bank versions (a file hashed once per load) and bearer tokens (one per request):
/// blocks are compressed straight from the message, with the schedule and the padded tail on the stack, so a
/// token's digest allocates only its result (`Benchmarks/ServeLatency` times the token check).
enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
    ]

    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
            (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
        k.withUnsafeBufferPointer { k in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
                    message.withUnsafeBufferPointer { m in
                        let whole = m.count / 64
                        for block in 0..<whole { compress(m.baseAddress! + 64 * block, &h, w, k) }
                        // The tail: the bytes after the last whole block, 0x80, zeros, the length in bits (one or two blocks).
                        let rest = m.count - 64 * whole
                        let blocks = rest < 56 ? 1 : 2
                        tail.initialize(repeating: 0)
                        if rest > 0 { _ = UnsafeMutableBufferPointer(rebasing: tail[0..<rest]).initialize(from: m[(64 * whole)...]) }
                        tail[rest] = 0x80
                        let bits = UInt64(m.count) &* 8
                        for b in 0..<8 { tail[64 * blocks - 1 - b] = UInt8(truncatingIfNeeded: bits >> UInt64(8 * b)) }
                        for block in 0..<blocks { compress(UnsafePointer(tail.baseAddress! + 64 * block), &h, w, k) }
                    }
                }
            }
        }
        // The eight words big-endian (a homogeneous tuple is laid out as an array of them).
        return withUnsafeBytes(of: h) { words in
            (0..<32).map { UInt8(truncatingIfNeeded: words.load(fromByteOffset: $0 & ~3, as: UInt32.self) >> UInt32(24 - 8 * ($0 & 3))) }
        }
    }

    /// One 64-byte block into the state `h` (FIPS 180-4 §6.2.2); `w` holds the message schedule.
    @inline(__always)
    private static func compress(
        _ block: UnsafePointer<UInt8>, _ h: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
        _ w: UnsafeMutableBufferPointer<UInt32>, _ k: UnsafeBufferPointer<UInt32>
    ) {
        @inline(__always) func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        for t in 0..<16 {
            let p = block + 4 * t
            w[t] = UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3])
        }
        for t in 16..<64 {
            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = h
        for t in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let ch = (e & f) ^ (~e & g)
            let t1 = hh &+ s1 &+ ch &+ k[t] &+ w[t]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            hh = g; g = f; f = e; e = d &+ t1; d = c; c = b; b = a; a = t1 &+ t2
        }
        h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
    }
}
