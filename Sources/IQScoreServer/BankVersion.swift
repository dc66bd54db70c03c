/// The version of a served bank, and the seed of an adaptive test, from bytes.
///
/// The bank version is the first 16 hexadecimal digits of the SHA-256 digest of the bank file's bytes (FIPS 180-4),
/// so an operator can check which file a server holds with `sha256sum BANK.csv | cut -c1-16`; `GET /v1/bank`
/// also gives the whole digest. It changes with any byte of the bank file, and with nothing else (norms, CAT rules
/// and the blueprint are configuration, not the bank).
public enum BankVersion {
    /// The first 16 hexadecimal digits (64 bits) of `sha256(bytes)`.
    public static func version(ofBankBytes bytes: some Collection<UInt8>) -> String {
        String(sha256Hex(bytes).prefix(16))
    }

    /// The SHA-256 digest of `bytes` as 64 lowercase hexadecimal digits.
    public static func sha256Hex(_ bytes: some Collection<UInt8>) -> String {
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
    public static func catSeed(sessionID: String, bankVersion: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        @inline(__always) func mix(_ x: UInt8) { h = (h ^ UInt64(x)) &* 0x0000_0100_0000_01b3 }
        for x in sessionID.utf8 { mix(x) }
        mix(0)
        for x in bankVersion.utf8 { mix(x) }
        return h
    }
}

/// SHA-256 (FIPS 180-4), for bank versions: a file is hashed once per load, so this favours brevity over speed
/// (about 200 MB/s unoptimised, a millisecond for a 1,500-item bank).
enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        var data = message
        let bitLength = UInt64(message.count) &* 8
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { data.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        @inline(__always) func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        var w = [UInt32](repeating: 0, count: 64)
        for chunk in stride(from: 0, to: data.count, by: 64) {
            for t in 0..<16 {
                let i = chunk + 4 * t
                w[t] = UInt32(data[i]) << 24 | UInt32(data[i + 1]) << 16 | UInt32(data[i + 2]) << 8 | UInt32(data[i + 3])
            }
            for t in 16..<64 {
                let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
                let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
                w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
            }
            var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7]
            for t in 0..<64 {
                let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                let ch = (e & f) ^ (~e & g)
                let t1 = hh &+ s1 &+ ch &+ k[t] &+ w[t]
                let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                let maj = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ maj
                hh = g; g = f; f = e; e = d &+ t1; d = c; c = b; b = a; a = t1 &+ t2
            }
            h[0] = h[0] &+ a; h[1] = h[1] &+ b; h[2] = h[2] &+ c; h[3] = h[3] &+ d
            h[4] = h[4] &+ e; h[5] = h[5] &+ f; h[6] = h[6] &+ g; h[7] = h[7] &+ hh
        }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for word in h { for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) } }
        return out
    }
}
