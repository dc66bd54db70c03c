import CLapack

/// Entries of the inverse of a symmetric positive-definite matrix, computed on the calibrator's own worker
/// threads from single-threaded BLAS tiles (OpenBLAS's own threading is process-wide, and the calibrator runs it
/// single-threaded; a whole-matrix `dpotrf` + `dpotri` was one serial section of several seconds for a bank's
/// 3,000 parameters).
///
/// 1. A = L Lᵀ by the tiled right-looking Cholesky factorisation (Golub & Van Loan 2013, Matrix Computations,
///    §4.2.9): for each diagonal tile k, `dpotrf` on it, the panel below solved against it (`dtrsm`, tiles in
///    parallel), the trailing tiles updated (`dsyrk`/`dgemm`, tiles in parallel). n³/3 multiply-adds.
/// 2. Z = L⁻¹ by column blocks, each an independent triangular solve L[c:, c:] Z[c:, block] = I (`dtrsm`),
///    blocks in parallel. n³/3 multiply-adds; the full inverse Zᵀ Z (`dlauum`, another n³/3) is never formed.
/// 3. (A⁻¹)ₓᵧ = Σₖ Z[k, x] Z[k, y] over k ≥ max(x, y): one dot product of two columns of Z per entry asked for,
///    which is all the delta method needs (an item's own 2 × 2 or 3 × 3 block).
///
/// Serial parts: the diagonal tiles' `dpotrf` (n·b²/3 for tile size b, under 1% of the factorisation at b = 128
/// and n = 3,000) and the steps' barriers (n / b of them).
package struct CholeskyInverse: Sendable {
    package let n: Int
    /// Z = L⁻¹, column-major (column x is `z[x·n ..< (x+1)·n]`, zero above the diagonal).
    private let z: [Double]
    private static let tile = 128

    /// Factors `a` (n × n, row-major, only its upper triangle read — which is the lower triangle of the same
    /// storage read column-major); `a` is overwritten. Nil when `a` is not numerically positive definite.
    package init?(upperTriangleOf a: inout [Double], n: Int, workers: Int) {
        precondition(a.count == n * n, "an n × n matrix")
        self.n = n
        let w = max(1, workers), b = Self.tile
        let tiles = (n + b - 1) / b
        let factored = a.withUnsafeMutableBufferPointer { buffer -> Bool in
            let m = buffer.baseAddress!
            for k in 0..<tiles {
                let k0 = k * b, kb = min(b, n - k0)
                let diagonal = m + k0 + k0 * n
                guard LAPACKE_dpotrf(LAPACK_COL_MAJOR, Int8(UInt8(ascii: "L")), Int32(kb), diagonal, Int32(n)) == 0 else { return false }
                let below = tiles - k - 1
                if below == 0 { break }
                let box = UncheckedSendableBox(m)
                // Panel: A_ik ← A_ik L_kkᵀ⁻¹.
                parallelFor(min(w, below)) { worker in
                    let m = box.value
                    for i in stride(from: k + 1 + worker, to: tiles, by: min(w, below)) {
                        let i0 = i * b, ib = min(b, n - i0)
                        cblas_dtrsm(
                            CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, Int32(ib), Int32(kb), 1,
                            m + k0 + k0 * n, Int32(n), m + i0 + k0 * n, Int32(n))
                    }
                }
                // Trailing update: A_ij −= A_ik A_jkᵀ for k < j ≤ i, tile pairs dealt round-robin.
                let pairs = below * (below + 1) / 2
                parallelFor(min(w, pairs)) { worker in
                    let m = box.value
                    var index = 0
                    for i in (k + 1)..<tiles {
                        for j in (k + 1)...i {
                            defer { index += 1 }
                            guard index % min(w, pairs) == worker else { continue }
                            let i0 = i * b, ib = min(b, n - i0), j0 = j * b, jb = min(b, n - j0)
                            if i == j {
                                cblas_dsyrk(
                                    CblasColMajor, CblasLower, CblasNoTrans, Int32(ib), Int32(kb), -1,
                                    m + i0 + k0 * n, Int32(n), 1, m + i0 + i0 * n, Int32(n))
                            } else {
                                cblas_dgemm(
                                    CblasColMajor, CblasNoTrans, CblasTrans, Int32(ib), Int32(jb), Int32(kb), -1,
                                    m + i0 + k0 * n, Int32(n), m + j0 + k0 * n, Int32(n), 1, m + i0 + j0 * n, Int32(n))
                            }
                        }
                    }
                }
            }
            return true
        }
        guard factored else { return nil }
        // Z = L⁻¹, column blocks in parallel; block c costs ∝ (n − c·b)², so blocks are dealt round-robin.
        var z = [Double](repeating: 0, count: n * n)
        a.withUnsafeBufferPointer { l in
            z.withUnsafeMutableBufferPointer { zb in
                let box = UncheckedSendableBox((l.baseAddress!, zb.baseAddress!))
                parallelFor(min(w, tiles)) { worker in
                    let (l, z) = box.value
                    for c in stride(from: worker, to: tiles, by: min(w, tiles)) {
                        let c0 = c * b, cb = min(b, n - c0)
                        for x in 0..<cb { z[(c0 + x) * n + c0 + x] = 1 }
                        cblas_dtrsm(
                            CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, Int32(n - c0), Int32(cb), 1,
                            l + c0 + c0 * n, Int32(n), z + c0 + c0 * n, Int32(n))
                    }
                }
            }
        }
        guard z.allSatisfy(\.isFinite) else { return nil }
        self.z = z
    }

    /// (A⁻¹)ₓᵧ.
    package func entry(_ x: Int, _ y: Int) -> Double {
        precondition(x >= 0 && x < n && y >= 0 && y < n, "an index of the matrix")
        return z.withUnsafeBufferPointer { z in
            let zx = z.baseAddress! + x * n, zy = z.baseAddress! + y * n
            var sum = 0.0
            for k in max(x, y)..<n { sum += zx[k] * zy[k] }
            return sum
        }
    }
}
