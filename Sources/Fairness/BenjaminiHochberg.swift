import Foundation

/// The Benjamini–Hochberg (1995) step-up adjustment, which controls the false discovery rate of a family of
/// tests: with the m p-values sorted p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted value of p₍ᵢ₎ is
/// min_{k ≥ i} min(1, m p₍ₖ₎ / k) (R's `p.adjust(method = "BH")`). Rejecting where the adjusted p is below q keeps
/// the expected share of false rejections among the rejections at most q (independent or positively dependent
/// tests). nil entries (tests not run) are left out of m and stay nil.
///
/// Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate. *JRSS B* 57(1), 289–300.
package enum BenjaminiHochberg {
    package static func adjusted(_ p: [Double?]) -> [Double?] {
        let present = p.indices.filter { p[$0] != nil }.sorted { p[$0]! < p[$1]! }
        let m = Double(present.count)
        var out = [Double?](repeating: nil, count: p.count)
        var running = 1.0
        for (rank, index) in present.enumerated().reversed() {
            running = min(running, min(1, m * p[index]! / Double(rank + 1)))
            out[index] = running
        }
        return out
    }
}
