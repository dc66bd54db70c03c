import Foundation
import Psychometrics

/// The Mantel–Haenszel DIF statistic of one item for one reference/focal pair (Holland & Thayer 1988), over
/// strata k of the matching criterion with the 2 × 2 table
/// ```
///             correct   incorrect
/// reference     A_k        B_k        n_Rk
/// focal         C_k        D_k        n_Fk
///               m_1k       m_0k       N_k
/// ```
/// - common odds ratio α_MH = Σ A_k D_k / N_k ÷ Σ B_k C_k / N_k;
/// - χ²_MH = (|Σ A_k − Σ E A_k| − ½)² / Σ Var A_k with E A_k = n_Rk m_1k / N_k and
///   Var A_k = n_Rk n_Fk m_1k m_0k / (N_k² (N_k − 1)), 1 df (continuity-corrected);
/// - MH D-DIF = −2.35 ln α_MH (the ETS delta metric; negative: the item is harder for the focal group at equal
///   matching score), its SE 2.35 √Var(ln α_MH) by the Robins–Breslow–Greenland (1986) variance
///   ```
///   Var ln α = Σ P_k R_k / (2 R²) + Σ (P_k S_k + Q_k R_k) / (2 R S) + Σ Q_k S_k / (2 S²)
///   ```
///   with P_k = (A_k + D_k)/N_k, Q_k = (B_k + C_k)/N_k, R_k = A_k D_k / N_k, S_k = B_k C_k / N_k, R = Σ R_k,
///   S = Σ S_k;
/// - the ETS class (Zwick 2012, p. 3; the interval test of Paek & Holland 2013): **A** when |D| < 1 or χ²_MH is
///   not significant at 0.05; **C** when |D| ≥ 1.5 and |D| is significantly above 1 (z = (|D| − 1)/SE > 1.645,
///   one-sided 0.05); **B** otherwise. The sign is appended to B and C: "−" when the item favours the reference
///   group (D < 0), "+" when it favours the focal group.
///
/// Strata where either group is absent carry no information and are skipped. Holland, P. W. & Thayer, D. T.
/// (1988). Differential item performance and the Mantel–Haenszel procedure. In H. Wainer & H. Braun (Eds.),
/// *Test Validity* (pp. 129–145). Zwick, R. (2012). *A review of ETS differential item functioning assessment
/// procedures* (ETS RR-12-08).
package struct MantelHaenszelDIF: Sendable, Hashable, Codable {
    package var chiSquare: Double
    package var p: Double
    /// α_MH; nil when a sum of off-diagonal products is 0 (every stratum's odds ratio 0 or infinite).
    package var commonOddsRatio: Double?
    /// MH D-DIF = −2.35 ln α_MH and its standard error (nil with `commonOddsRatio`).
    package var delta: Double?
    package var deltaStandardError: Double?
    /// "A", "B−", "B+", "C−" or "C+" (see above); nil without a delta.
    package var etsClass: String?
    /// Strata with both groups present.
    package var strata: Int

    /// The 2 × 2 table of one stratum.
    package struct Table: Sendable, Hashable {
        package var referenceCorrect: Double
        package var referenceIncorrect: Double
        package var focalCorrect: Double
        package var focalIncorrect: Double
        package init(referenceCorrect: Double = 0, referenceIncorrect: Double = 0, focalCorrect: Double = 0, focalIncorrect: Double = 0) {
            self.referenceCorrect = referenceCorrect
            self.referenceIncorrect = referenceIncorrect
            self.focalCorrect = focalCorrect
            self.focalIncorrect = focalIncorrect
        }
    }

    /// The statistic over `tables` (one per stratum); nil when no stratum has both groups.
    package init?(tables: [Table]) {
        var sumA = 0.0, sumE = 0.0, sumV = 0.0, r = 0.0, s = 0.0, pr = 0.0, psqr = 0.0, qs = 0.0, used = 0
        for t in tables {
            let a = t.referenceCorrect, b = t.referenceIncorrect, c = t.focalCorrect, d = t.focalIncorrect
            let nR = a + b, nF = c + d, n = nR + nF
            guard nR > 0, nF > 0, n > 1 else { continue }
            used += 1
            let m1 = a + c, m0 = b + d
            sumA += a
            sumE += nR * m1 / n
            sumV += nR * nF * m1 * m0 / (n * n * (n - 1))
            let rk = a * d / n, sk = b * c / n, pk = (a + d) / n, qk = (b + c) / n
            r += rk; s += sk
            pr += pk * rk; psqr += pk * sk + qk * rk; qs += qk * sk
        }
        guard used > 0 else { return nil }
        strata = used
        let deviation = max(abs(sumA - sumE) - 0.5, 0)
        chiSquare = sumV > 0 ? deviation * deviation / sumV : 0
        p = ChiSquare.upperTail(chiSquare, degreesOfFreedom: 1)
        guard r > 0, s > 0 else { return }
        let alpha = r / s
        commonOddsRatio = alpha
        let variance = pr / (2 * r * r) + psqr / (2 * r * s) + qs / (2 * s * s)
        let d = -2.35 * log(alpha), se = 2.35 * variance.squareRoot()
        delta = d
        deltaStandardError = se
        etsClass = Self.etsClass(delta: d, standardError: se, p: p)
    }

    /// The ETS A/B/C class of a delta with its SE and the χ²_MH p-value (see the type's description).
    package static func etsClass(delta d: Double, standardError se: Double, p: Double) -> String {
        if abs(d) < 1 || p >= 0.05 { return "A" }
        let sign = d < 0 ? "-" : "+"
        if abs(d) >= 1.5 && se > 0 && (abs(d) - 1) / se > 1.645 { return "C" + sign }
        return "B" + sign
    }
}
