import CKernels

/// exp(vᵢ − shift) in place for every value, for the EAP and E-step posterior weights (61 exps per session, where
/// one libm `exp` call per node cost as much as the rest of the session).
///
/// The kernel is `iqscore_exp_shifted` (CKernels, built for SSE2, AVX2 and AVX-512, the CPU's best chosen at load
/// time, the same bits from each): Cody & Waite's (1980) argument reduction and a degree-13 Taylor polynomial,
/// within 4.5e-16 relative of libm's `exp` on [−708, 709] (tested); exp(x) = 0 for x < −708 (−∞ gives 0) and
/// x > 709 is taken as 709. The header documents the method.
@inline(__always)
package func expShifted(_ values: UnsafeMutableBufferPointer<Double>, by shift: Double) {
    guard let base = values.baseAddress else { return }
    iqscore_exp_shifted(base, values.count, shift)
}
