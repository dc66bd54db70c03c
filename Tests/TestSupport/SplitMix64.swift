import Foundation

// A seeded generator for tests whose draws must be the same on every platform and Swift version: the fuzz
// targets' mutations, the interruption tests' kill times, generated request bodies and data files.

/// SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number generators"): a 64-bit state
/// advanced by the golden-ratio increment and mixed by two multiply–xorshift rounds; period 2⁶⁴.
///
/// The helpers below use only `next()` (not the standard library's `random(in:)`, whose algorithm may change),
/// so a case is the same on every platform and Swift version.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    package private(set) var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform on 0..<n (n ≥ 1); the modulo bias is below n/2⁶⁴.
    package mutating func below(_ n: Int) -> Int {
        precondition(n >= 1, "below(_:) needs n ≥ 1, got \(n)")
        return Int(next() % UInt64(n))
    }

    /// Uniform on lower...upper.
    package mutating func inRange(_ lower: Int, _ upper: Int) -> Int { lower + below(upper - lower + 1) }

    /// True with probability p.
    package mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) * 0x1p-53 < p }

    package mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }

    /// Fisher–Yates.
    package mutating func shuffle<T>(_ values: inout [T]) {
        guard values.count > 1 else { return }
        for i in stride(from: values.count - 1, to: 0, by: -1) { values.swapAt(i, below(i + 1)) }
    }

    /// The generator of case `index` of `target` under `seed`: the seed, the target name (FNV-1a) and the index
    /// mixed into one SplitMix64 output.
    package static func forCase(seed: UInt64, target: String, index: Int) -> SplitMix64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in target.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        var mixer = SplitMix64(seed: seed ^ hash ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
        return SplitMix64(seed: mixer.next())
    }

    /// Uniform on the open interval (0, 1): the top 53 bits, offset by half a step.
    package mutating func uniform() -> Double { (Double(next() >> 11) + 0.5) * 0x1p-53 }

    /// A seed written in decimal or as 0x hex (`IQSCORE_FUZZ_SEED=0x2a`), nil for anything else.
    package static func parseSeed(_ text: String) -> UInt64? {
        text.lowercased().hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }

    /// The seed of a test that draws its timings or data: `IQSCORE_TEST_SEED` when it is set (to replay a failure
    /// whose message named it), else `fallback`, mixed with the test's own name so that tests do not share draws.
    package static func forTest(_ name: String, fallback: UInt64) -> (generator: SplitMix64, seed: UInt64) {
        let seed = ProcessInfo.processInfo.environment["IQSCORE_TEST_SEED"].flatMap(parseSeed) ?? fallback
        return (forCase(seed: seed, target: name, index: 0), seed)
    }
}
