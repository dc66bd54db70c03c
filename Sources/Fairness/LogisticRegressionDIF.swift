import Foundation
import Psychometrics

/// Logistic-regression DIF of one item for one reference/focal pair (Swaminathan & Rogers 1990): three nested
/// models of the item response u on the matching criterion S and the group G (0 reference, 1 focal),
/// ```
/// M1: logit P(u = 1) = β₀ + β₁ S
/// M2: … + β₂ G                      (uniform DIF: M2 vs M1, 1 df)
/// M3: … + β₃ S·G                    (non-uniform DIF: M3 vs M2, 1 df; both: M3 vs M1, 2 df)
/// ```
/// each fitted by Newton–Raphson (S centred and scaled first, which changes no statistic). The effect size is
/// the change in Nagelkerke's R², R²_N = (1 − (L₀/L)^{2/n}) / (1 − L₀^{2/n}) with L₀ the intercept-only
/// likelihood: ΔR² = R²(M3) − R²(M1) (and R²(M2) − R²(M1) for the uniform part). Classes, A negligible, B
/// moderate, C large, each B/C only when the 2-df test is significant at 0.05:
/// - Zumbo & Thomas (1997): ΔR² < 0.13 A, < 0.26 B, else C;
/// - Jodoin & Gierl (2001): ΔR² < 0.035 A, < 0.070 B, else C.
///
/// Swaminathan, H. & Rogers, H. J. (1990). Detecting differential item functioning using logistic regression
/// procedures. *Journal of Educational Measurement* 27(4), 361–370. Zumbo, B. D. (1999). *A handbook on the
/// theory and methods of differential item functioning*. Jodoin, M. G. & Gierl, M. J. (2001). *Applied
/// Measurement in Education* 14(4), 329–349.
package struct LogisticRegressionDIF: Sendable, Hashable, Codable {
    package var uniformChiSquare: Double
    package var uniformP: Double
    package var nonUniformChiSquare: Double
    package var nonUniformP: Double
    /// M3 vs M1, 2 df.
    package var chiSquare: Double
    package var p: Double
    package var deltaR2: Double
    package var uniformDeltaR2: Double
    package var zumboThomasClass: String
    package var jodoinGierlClass: String
    /// β₂ of M2 on the standardised criterion: negative when the item is harder for the focal group.
    package var groupCoefficient: Double

    /// The tests over the responses `u` (0/1), criterion values `score` and focal flags; nil with fewer than 10
    /// responses, without both groups, or without variation in u.
    package init?(responses u: [UInt8], score: [Double], focal: [Bool]) {
        let n = u.count
        guard n >= 10, score.count == n, focal.count == n, focal.contains(true), focal.contains(false) else { return nil }
        let correct = u.reduce(0) { $0 + Int($1) }
        guard correct > 0, correct < n else { return nil }
        let mean = score.reduce(0, +) / Double(n)
        let sd = (score.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n)).squareRoot()
        let z = score.map { sd > 0 ? ($0 - mean) / sd : 0 }
        let g = focal.map { $0 ? 1.0 : 0.0 }
        let p0 = Double(correct) / Double(n)
        let l0 = Double(correct) * log(p0) + Double(n - correct) * log(1 - p0)
        let l1 = Self.fit(u, columns: [z]).logLikelihood
        let m2 = Self.fit(u, columns: [z, g])
        let l3 = Self.fit(u, columns: [z, g, zip(z, g).map { $0 * $1 }]).logLikelihood
        let l2 = max(m2.logLikelihood, l1), l3c = max(l3, l2)
        uniformChiSquare = 2 * (l2 - l1)
        nonUniformChiSquare = 2 * (l3c - l2)
        chiSquare = 2 * (l3c - l1)
        uniformP = ChiSquare.upperTail(uniformChiSquare, degreesOfFreedom: 1)
        nonUniformP = ChiSquare.upperTail(nonUniformChiSquare, degreesOfFreedom: 1)
        p = ChiSquare.upperTail(chiSquare, degreesOfFreedom: 2)
        func nagelkerke(_ l: Double) -> Double {
            let coxSnell = 1 - exp(2 * (l0 - l) / Double(n)), maximum = 1 - exp(2 * l0 / Double(n))
            return maximum > 0 ? coxSnell / maximum : 0
        }
        deltaR2 = nagelkerke(l3c) - nagelkerke(l1)
        uniformDeltaR2 = nagelkerke(l2) - nagelkerke(l1)
        groupCoefficient = m2.coefficients[2]
        zumboThomasClass = Self.effectClass(deltaR2: deltaR2, p: p, moderate: 0.13, large: 0.26)
        jodoinGierlClass = Self.effectClass(deltaR2: deltaR2, p: p, moderate: 0.035, large: 0.070)
    }

    /// A when the 2-df test is not significant at 0.05 or ΔR² < `moderate`, B below `large`, else C.
    static func effectClass(deltaR2: Double, p: Double, moderate: Double, large: Double) -> String {
        guard p < 0.05 else { return "A" }
        return deltaR2 < moderate ? "A" : deltaR2 < large ? "B" : "C"
    }

    /// The maximum-likelihood logistic regression of u on an intercept and `columns` (Newton–Raphson with step
    /// halving, at most 50 iterations; a ridge of 10⁻⁸ keeps separated data finite).
    static func fit(_ u: [UInt8], columns: [[Double]]) -> (logLikelihood: Double, coefficients: [Double]) {
        let n = u.count, k = columns.count + 1
        func row(_ i: Int, _ t: Int) -> Double { t == 0 ? 1 : columns[t - 1][i] }
        func logLikelihood(_ beta: [Double]) -> Double {
            var l = 0.0
            for i in 0..<n {
                var eta = 0.0
                for t in 0..<k { eta += beta[t] * row(i, t) }
                l += Logistic.logSigmoid(u[i] == 1 ? eta : -eta)
            }
            return l
        }
        var beta = [Double](repeating: 0, count: k), current = logLikelihood(beta)
        for _ in 0..<50 {
            var gradient = [Double](repeating: 0, count: k), information = [Double](repeating: 0, count: k * k)
            for i in 0..<n {
                var eta = 0.0
                for t in 0..<k { eta += beta[t] * row(i, t) }
                let prob = Logistic.sigmoid(eta), w = prob * (1 - prob), resid = Double(u[i]) - prob
                for a in 0..<k {
                    let xa = row(i, a)
                    gradient[a] += resid * xa
                    for b in a..<k { information[a * k + b] += w * xa * row(i, b) }
                }
            }
            for a in 0..<k {
                information[a * k + a] += 1e-8
                for b in 0..<a { information[a * k + b] = information[b * k + a] }
            }
            let step = solveSmallSPD(information, gradient, n: k)
            var scale = 1.0, accepted = false
            for _ in 0..<30 {
                let trial = zip(beta, step).map { $0 + scale * $1 }
                let value = logLikelihood(trial)
                if value >= current - 1e-12 * abs(current) {
                    let change = zip(trial, beta).map { abs($0 - $1) }.max() ?? 0
                    beta = trial
                    let gain = value - current
                    current = value
                    accepted = true
                    if change < 1e-9 || gain < 1e-12 { return (current, beta) }
                    break
                }
                scale *= 0.5
            }
            if !accepted { break }
        }
        return (current, beta)
    }
}
