import CKernels

/// The upper triangle of C = G Gᵀ for a small G (m rows, w columns, row-major with `rowStride`), written packed by
/// rows into `packed`: C[x][y], y ≥ x, at `x·m − x(x + 1)/2 + y`, m(m + 1)/2 doubles. Each entry is
/// Σ_t G[x][t] G[y][t] summed over t in order, with no fused multiply-add: the same bits on every CPU.
///
/// For the standard errors' per-person score blocks (about 50 × 38 on the app's bank), where it replaced
/// OpenBLAS `dsyrk` and the copy of its square result into packed rows. The kernel is `iqscore_gram_upper_packed`
/// (CKernels, built for SSE2, AVX2 and AVX-512); the header documents the method. `scratch` holds
/// `gramScratchCount(rows:columns:)` doubles.
@inline(__always)
package func gramUpperPacked(
    _ g: UnsafePointer<Double>, rows m: Int, columns w: Int, rowStride: Int,
    scratch: UnsafeMutablePointer<Double>, into packed: UnsafeMutablePointer<Double>
) {
    iqscore_gram_upper_packed(m, w, g, rowStride, scratch, packed)
}

/// Doubles of `gramUpperPacked`'s scratch for up to `rows` rows and `columns` columns.
package func gramScratchCount(rows m: Int, columns w: Int) -> Int { w * iqscore_gram_scratch_stride(m) }
