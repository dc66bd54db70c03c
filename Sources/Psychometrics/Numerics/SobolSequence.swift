import Foundation

/// The Sobol low-discrepancy sequence (Sobol 1967) in up to `maximumDimensions` dimensions, 32-bit, in the
/// Gray-code order of Antonov & Saleev (1979), with the direction numbers of Joe & Kuo (2008, "Constructing Sobol
/// sequences with better two-dimensional projections", *SIAM J. Sci. Comput.* 30; the file new-joe-kuo-6.21201,
/// the numbers SciPy's `qmc.Sobol` uses, whose unscrambled points this type reproduces bit for bit).
///
/// Dimension 0 has v_k = 2^(32−k); dimension j ≥ 1 has a primitive polynomial of degree s with inner coefficients
/// a_1 … a_{s−1} and initial numbers m_1 … m_s, v_k = m_k 2^(32−k) for k ≤ s, and for k > s
/// ```
/// v_k = v_{k−s} ⊕ (v_{k−s} ≫ s) ⊕ a_1 v_{k−1} ⊕ … ⊕ a_{s−1} v_{k−s+1}
/// ```
/// Point n + 1 is point n with v_c XOR-ed in, c the position of the lowest zero bit of n (point 0 is the origin).
package struct SobolSequence {
    /// (degree s, inner coefficients a as bits a_1 … a_{s−1} from the most significant, m_1 … m_s) of
    /// dimensions 1…11 (Joe & Kuo's lines d = 2…12).
    private static let directions: [(degree: Int, coefficients: UInt32, initial: [UInt32])] = [
        (1, 0, [1]), (2, 1, [1, 3]), (3, 1, [1, 3, 1]), (3, 2, [1, 1, 1]), (4, 1, [1, 1, 3, 3]), (4, 4, [1, 3, 5, 13]),
        (5, 2, [1, 1, 5, 5, 17]), (5, 4, [1, 1, 5, 5, 5]), (5, 7, [1, 1, 7, 11, 19]), (5, 11, [1, 1, 5, 1, 1]),
        (5, 13, [1, 1, 1, 3, 11])
    ]
    package static let maximumDimensions = 12
    /// The longest sequence: 2^31 points (32-bit direction numbers).
    package static let maximumCount = 1 << 31

    let dimensions: Int
    /// Per dimension, v_1 … v_32.
    private let v: [[UInt32]]

    package init(dimensions: Int) {
        precondition(dimensions >= 1 && dimensions <= Self.maximumDimensions, "Sobol dimensions 1…\(Self.maximumDimensions)")
        self.dimensions = dimensions
        var all: [[UInt32]] = [(0..<32).map { UInt32(1) << (31 - $0) }]
        for d in 1..<dimensions {
            let (s, a, m) = Self.directions[d - 1]
            var dv = [UInt32](repeating: 0, count: 32)
            for k in 0..<32 {
                if k < s {
                    dv[k] = m[k] << (31 - k)
                } else {
                    var x = dv[k - s] ^ (dv[k - s] >> UInt32(s))
                    for i in 1..<s where (a >> UInt32(s - 1 - i)) & 1 == 1 { x ^= dv[k - i] }
                    dv[k] = x
                }
            }
            all.append(dv)
        }
        v = all
    }

    /// The first `count` points, row-major (`count` × `dimensions`), each coordinate in [0, 1).
    package func points(count: Int) -> [Double] {
        precondition(count >= 0 && count <= Self.maximumCount)
        var out = [Double](repeating: 0, count: count * dimensions)
        var x = [UInt32](repeating: 0, count: dimensions)
        let scale = 1.0 / 4_294_967_296.0
        for n in 0..<count {
            if n > 0 {
                let c = (~UInt32(n - 1)).trailingZeroBitCount
                for d in 0..<dimensions { x[d] ^= v[d][c] }
            }
            for d in 0..<dimensions { out[n * dimensions + d] = Double(x[d]) * scale }
        }
        return out
    }

    /// `count` standard-normal points in `dimensions` dimensions for quasi–Monte Carlo integration against
    /// N(0, I): the Sobol points 0 … count − 1 with one fixed random digital shift (each coordinate's 32 bits
    /// XOR-ed with one word per dimension, drawn from a seeded generator so every run uses the same points; it keeps
    /// the net's stratification, Owen 2003, and moves the origin, whose Φ⁻¹ is infinite), each coordinate taken at
    /// the centre of its 2⁻³² cell and mapped by Φ⁻¹. Row-major `count` × `dimensions`.
    package static func normalPoints(count: Int, dimensions: Int, seed: UInt64 = 0x5EED_50B0) -> [Double] {
        precondition(count >= 0 && count <= maximumCount)
        var rng = SeededGenerator(seed: seed)
        let shift = (0..<dimensions).map { _ in UInt32(truncatingIfNeeded: rng.next() >> 32) }
        let sequence = SobolSequence(dimensions: dimensions)
        var out = [Double](repeating: 0, count: count * dimensions)
        var x = shift
        for n in 0..<count {
            if n > 0 {
                let c = (~UInt32(n - 1)).trailingZeroBitCount
                for d in 0..<dimensions { x[d] ^= sequence.v[d][c] }
            }
            for d in 0..<dimensions { out[n * dimensions + d] = StandardNormal.quantile((Double(x[d]) + 0.5) / 4_294_967_296.0) }
        }
        return out
    }

    /// `count` (even) standard-normal nodes for spherical–radial integration against N(0, I) (after Genz & Monahan
    /// 1998, "Stochastic integration rules for infinite regions", *SIAM J. Sci. Comput.* 19): the first count/2 of
    /// `normalPoints` keep their directions, and their radii are replaced, by rank, with the χ_K quantiles at
    /// (r + ½)/(count/2) (an exactly stratified radial distribution); each is followed by its negation (antithetic
    /// pairs: every odd moment is 0). Integrated after a random rotation, the error of a smooth integrand is the
    /// radial midpoint rule's, O(count⁻²), plus a directional error that the rotation makes average out.
    package static func balancedNormalPoints(count: Int, dimensions k: Int, seed: UInt64 = 0x5EED_50B0) -> [Double] {
        precondition(count >= 2 && count % 2 == 0)
        let half = count / 2
        let z = normalPoints(count: half, dimensions: k, seed: seed)
        let norms = (0..<half).map { n in (0..<k).reduce(0.0) { $0 + z[n * k + $1] * z[n * k + $1] }.squareRoot() }
        let order = (0..<half).sorted { norms[$0] < norms[$1] }
        var out = [Double](repeating: 0, count: count * k)
        for (rank, n) in order.enumerated() {
            // χ²_K quantile by bisection on its upper tail.
            let target = 1 - (Double(rank) + 0.5) / Double(half)
            var lo = 0.0, hi = Double(k) + 40 * Double(k).squareRoot() + 40
            for _ in 0..<100 {
                let mid = (lo + hi) / 2; if ChiSquare.upperTail(mid, degreesOfFreedom: Double(k)) > target { lo = mid } else { hi = mid }
            }
            let scale = ((lo + hi) / 2).squareRoot() / norms[n]
            for d in 0..<k {
                out[2 * n * k + d] = z[n * k + d] * scale
                out[(2 * n + 1) * k + d] = -z[n * k + d] * scale
            }
        }
        return out
    }
}
