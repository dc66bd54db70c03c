/// exp(x) on four lanes at once, for the EAP posterior weights of batch scoring (61 exps per session, where
/// one libm `exp` call per node cost as much as the rest of the session).
///
/// Method (Cody & Waite 1980; as in fdlibm and Cephes): x = k·ln2 + r with k = round(x/ln2) and |r| ≤ ln2/2,
/// ln2 split into a high part exact in k·ln2_hi and a low part; exp(r) by its Taylor polynomial of degree 13
/// (truncation error below 1e-17 relative), and the factor 2^k built directly in the exponent bits. Rounding
/// uses the 1.5·2^52 trick and no FMA, so it vectorises on baseline x86-64 (SSE2) and arm64.
/// Accuracy: within 4.5e-16 relative of libm's `exp` on [−708, 709] (tested); exp(x) = 0 for x < −708 (the
/// smallest normal is e^−708.4), x > 709 is clamped to e^709. NaN inputs are not expected.
@inline(__always)
package func exp4(_ x: SIMD4<Double>) -> SIMD4<Double> {
    let lo = SIMD4<Double>(repeating: -708), hi = SIMD4<Double>(repeating: 709)
    let xc = x.replacing(with: lo, where: x .< lo).replacing(with: hi, where: x .> hi)
    let magic = SIMD4<Double>(repeating: 6_755_399_441_055_744)        // 1.5 · 2^52
    let t = xc * 1.442_695_040_888_963_4 + magic                       // k + magic, k = round(x / ln2)
    let k = t - magic
    let r = (xc - k * 6.931_471_803_691_238_164_90e-01) - k * 1.908_214_929_270_587_700_02e-10
    var p = SIMD4<Double>(repeating: 1.0 / 6_227_020_800)               // 1/13!
    p = p * r + 1.0 / 479_001_600
    p = p * r + 1.0 / 39_916_800
    p = p * r + 1.0 / 3_628_800
    p = p * r + 1.0 / 362_880
    p = p * r + 1.0 / 40_320
    p = p * r + 1.0 / 5_040
    p = p * r + 1.0 / 720
    p = p * r + 1.0 / 120
    p = p * r + 1.0 / 24
    p = p * r + 1.0 / 6
    p = p * r + 0.5
    p = p * r + 1
    p = p * r + 1
    // 2^k: k sits in the low bits of t's significand; (k + 1023) << 52 is the double 2^k.
    let kBits = unsafeBitCast(t, to: SIMD4<Int64>.self) &- 0x4338_0000_0000_0000
    let scale = unsafeBitCast((kBits &+ 1023) &<< 52, to: SIMD4<Double>.self)
    return (p * scale).replacing(with: 0, where: x .< lo)
}
