import Foundation

/// xoshiro256** (Blackman & Vigna 2018), seeded through SplitMix64: a small, fast, reproducible generator.
/// The same seed gives the same stream on every platform and Swift version.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    public init(seed: UInt64) {
        var x = seed
        func splitmix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitmix(); s1 = splitmix(); s2 = splitmix(); s3 = splitmix()
    }

    @inlinable static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    public mutating func next() -> UInt64 {
        let result = Self.rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = Self.rotl(s3, 45)
        return result
    }
}

/// Random variates used by the simulator. Every function takes the generator explicitly so results are
/// reproducible from a seed.
package enum RandomVariate {
    /// Uniform on the open interval (0, 1), 53 random bits.
    @inlinable package static func uniform(using rng: inout some RandomNumberGenerator) -> Double {
        (Double(rng.next() >> 11) + 0.5) * 0x1.0p-53
    }

    /// Standard normal by the Box–Muller transform (one variate per call; simple and exact).
    package static func normal(mean: Double = 0, sd: Double = 1, using rng: inout some RandomNumberGenerator) -> Double {
        let u1 = uniform(using: &rng), u2 = uniform(using: &rng)
        return mean + sd * (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// Gamma(shape, 1) by Marsaglia & Tsang (2000); shape < 1 uses the boost Gamma(shape + 1)·U^(1/shape).
    package static func gamma(shape: Double, using rng: inout some RandomNumberGenerator) -> Double {
        precondition(shape > 0, "gamma shape must be positive, got \(shape)")
        if shape < 1 {
            let g = gamma(shape: shape + 1, using: &rng)
            return g * pow(uniform(using: &rng), 1 / shape)
        }
        let d = shape - 1.0 / 3, c = 1 / (9 * d).squareRoot()
        while true {
            var x: Double, v: Double
            repeat {
                x = normal(using: &rng)
                v = 1 + c * x
            } while v <= 0
            v = v * v * v
            let u = uniform(using: &rng)
            if u < 1 - 0.0331 * x * x * x * x { return d * v }
            if log(u) < 0.5 * x * x + d * (1 - v + log(v)) { return d * v }
        }
    }

    /// Beta(α, β) as G₁ / (G₁ + G₂) with G ~ Gamma.
    package static func beta(_ alpha: Double, _ beta: Double, using rng: inout some RandomNumberGenerator) -> Double {
        let x = gamma(shape: alpha, using: &rng), y = gamma(shape: beta, using: &rng)
        return x / (x + y)
    }
}
