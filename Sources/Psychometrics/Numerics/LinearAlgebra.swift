import CLapack
import Dispatch

/// Thin wrappers over the OpenBLAS/LAPACKE calls the calibrator uses. Matrices are row-major `Double`.
package enum BLAS {
    /// C = α·op(A)·op(B) + β·C with op(A) m×k, op(B) k×n, C m×n (`cblas_dgemm`).
    @inline(__always)
    package static func gemm(
        transposeA: Bool = false, transposeB: Bool = false, m: Int, n: Int, k: Int,
        alpha: Double = 1, a: UnsafePointer<Double>, lda: Int, b: UnsafePointer<Double>, ldb: Int,
        beta: Double, c: UnsafeMutablePointer<Double>, ldc: Int
    ) {
        cblas_dgemm(
            CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans,
            Int32(m), Int32(n), Int32(k), alpha, a, Int32(lda), b, Int32(ldb), beta, c, Int32(ldc))
    }

    /// y = A·x with A m×n (`cblas_dgemv`).
    @inline(__always)
    static func gemv(m: Int, n: Int, a: UnsafePointer<Double>, lda: Int, x: UnsafePointer<Double>, y: UnsafeMutablePointer<Double>) {
        cblas_dgemv(CblasRowMajor, CblasNoTrans, Int32(m), Int32(n), 1, a, Int32(lda), x, 1, 0, y, 1)
    }

    /// Upper triangle of C = α·Aᵀ·A + β·C with A k×n (`cblas_dsyrk`, transposed).
    @inline(__always)
    static func syrkUpperTransposed(
        n: Int, k: Int, alpha: Double = 1, a: UnsafePointer<Double>, lda: Int,
        beta: Double, c: UnsafeMutablePointer<Double>, ldc: Int
    ) {
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, Int32(n), Int32(k), alpha, a, Int32(lda), beta, c, Int32(ldc))
    }

    /// OpenBLAS's own thread count (process-wide; set with `OPENBLAS_NUM_THREADS` or
    /// `openblas_set_num_threads`). Read for reports only: how the calibrator threads its products is
    /// `CalibrationOptions.denseProductThreading`.
    static var threadCount: Int { Int(openblas_get_num_threads()) }
}

/// Solves the small symmetric positive-definite system H x = g (n × n, n³/3 operations) by Cholesky; adds a ridge
/// when H is not numerically positive definite. Used by the per-item M-steps (n ≤ 3 for the dichotomous models,
/// one per working parameter of an item model in `ItemModelEngine`).
@inline(__always)
package func solveSmallSPD(_ h: [Double], _ g: [Double], n: Int) -> [Double] {
    var ridge = 0.0
    for _ in 0..<30 {
        var l = h
        if ridge != 0 { for i in 0..<n { l[i * n + i] += ridge } }
        if choleskyInPlace(&l, n: n, minimumPivot: 1e-12) {
            var y = [Double](repeating: 0, count: n), x = y
            solveCholesky(l, g, n: n, work: &y, into: &x)
            return x
        }
        var scale = 0.0
        for i in 0..<n { scale = max(scale, abs(h[i * n + i])) }
        ridge = ridge == 0 ? max(1e-8, 1e-6 * scale) : ridge * 10
    }
    return [Double](repeating: 0, count: n)
}

/// The lower Cholesky factor of the symmetric positive-definite n × n row-major `m`, in place (the upper
/// triangle left as it was); false when a pivot is not above `minimumPivot`.
@inline(__always) package func choleskyInPlace(_ m: inout [Double], n: Int, minimumPivot: Double = 0) -> Bool {
    for j in 0..<n {
        var d = m[j * n + j]
        for t in 0..<j { d -= m[j * n + t] * m[j * n + t] }
        guard d > minimumPivot else { return false }
        let l = d.squareRoot()
        m[j * n + j] = l
        for i in (j + 1)..<n {
            var v = m[i * n + j]
            for t in 0..<j { v -= m[i * n + t] * m[j * n + t] }
            m[i * n + j] = v / l
        }
    }
    return true
}

/// x = (L Lᵀ)⁻¹ b from the Cholesky factor L (lower triangle of `l`, row-major n × n): forward then back
/// substitution, `y` the intermediate L⁻¹ b.
@inline(__always) package func solveCholesky(_ l: [Double], _ b: [Double], n: Int, work y: inout [Double], into x: inout [Double]) {
    for i in 0..<n {
        var v = b[i]
        for t in 0..<i { v -= l[i * n + t] * y[t] }
        y[i] = v / l[i * n + i]
    }
    for i in stride(from: n - 1, through: 0, by: -1) {
        var v = y[i]
        for t in (i + 1)..<n { v -= l[t * n + i] * x[t] }
        x[i] = v / l[i * n + i]
    }
}

/// Runs `body(worker)` for `workers` workers concurrently (inline when 1).
@inline(__always)
package func parallelFor(_ workers: Int, _ body: (Int) -> Void) {
    if workers <= 1 { body(0); return }
    withoutActuallyEscaping(body) { escaping in
        let box = UncheckedSendableBox(escaping)
        DispatchQueue.concurrentPerform(iterations: workers) { box.value($0) }
    }
}

/// `parallelFor` over the storage of three arrays: `body(worker, a, b, c)` for `workers` workers concurrently. The
/// workers share the buffers, so each must write only elements no other worker touches.
package func parallelFor<A, B, C>(
    _ workers: Int, mutating a: inout [A], _ b: inout [B], _ c: inout [C],
    _ body: (
        Int, UnsafeMutableBufferPointer<A>, UnsafeMutableBufferPointer<B>,
        UnsafeMutableBufferPointer<C>
    ) -> Void
) {
    a.withUnsafeMutableBufferPointer { a in
        b.withUnsafeMutableBufferPointer { b in
            c.withUnsafeMutableBufferPointer { c in
                let buffers = UncheckedSendableBox((a, b, c))
                parallelFor(workers) { worker in
                    let (a, b, c) = buffers.value
                    body(worker, a, b, c)
                }
            }
        }
    }
}

/// Carries a value into a concurrent closure when the code guarantees exclusive use (each worker touches only
/// its own slice of shared buffers; a batch is handed over to one background task and read back after it ends).
package struct UncheckedSendableBox<T>: @unchecked Sendable {
    package let value: T
    package init(_ value: T) { self.value = value }
}
