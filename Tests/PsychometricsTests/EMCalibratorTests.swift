import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("EM calibration: known values")
struct EMCalibratorKnownValueTests {
    /// mirt 1.45: `mirt(expand.table(LSAT7), 1)`, 61 points on [−6, 6] — the same quadrature as our default.
    /// Slope–intercept estimates quoted to 7 decimals in mirt's `coef()` documentation; logLik −2658.805;
    /// SE (default Oakes observed information) to 6 decimals from the printed Wald intervals.
    static let mirtA = [0.9879254, 1.0808847, 1.7058006, 0.7651853, 0.7357980]
    static let mirtD = [1.8560605, 0.8079786, 1.8042187, 0.4859966, 1.8545127]
    static let mirtSEA = [0.177245, 0.168805, 0.320404, 0.134144, 0.151156]
    static let mirtSED = [0.131490, 0.091253, 0.204417, 0.074918, 0.114421]

    @Test("LSAT7 2PL matches mirt's estimates, log-likelihood and standard errors")
    func lsat7TwoPL() throws {
        var options = CalibrationOptions(model: .twoPL)
        options.tolerance = 1e-6
        let result = try EMCalibrator(options: options).calibrate(LSAT7.matrix)
        #expect(result.converged)
        // Tolerances: mirt stops at a change of 1e-4, so its printed estimates are themselves ±~1e-3.
        for j in 0..<5 {
            let p = result.items[j].parameters
            #expect(p.discrimination.isApproximatelyEqual(to: Self.mirtA[j], absoluteTolerance: 2e-3), "a[\(j)] = \(p.discrimination)")
            #expect(p.intercept.isApproximatelyEqual(to: Self.mirtD[j], absoluteTolerance: 2e-3), "d[\(j)] = \(p.intercept)")
        }
        #expect(result.logLikelihood.isApproximatelyEqual(to: -2658.805, absoluteTolerance: 0.001))
        #expect(result.aic.isApproximatelyEqual(to: 5337.61, absoluteTolerance: 0.01))
        #expect(result.bic.isApproximatelyEqual(to: 5386.688, absoluteTolerance: 0.01))
        // SE(a) to 1% relative (mirt's SE(d) is on the intercept scale; SE(b) is checked against a numerical
        // Hessian in `standardErrorsMatchNumericalHessian`).
        for j in 0..<5 {
            let se = try #require(result.items[j].standardErrors.discrimination)
            #expect(se.isApproximatelyEqual(to: Self.mirtSEA[j], relativeTolerance: 0.01), "se(a[\(j)]) = \(se)")
        }
    }

    @Test("LSAT7 Rasch matches mirt: intercepts, latent variance 1.022, logLik −2664.901")
    func lsat7Rasch() throws {
        var options = CalibrationOptions(model: .rasch)
        options.tolerance = 1e-6
        let result = try EMCalibrator(options: options).calibrate(LSAT7.matrix)
        #expect(result.converged)
        let mirtD = [1.868, 0.791, 1.461, 0.521, 1.993] // mirt prints 3 decimals
        for j in 0..<5 {
            #expect(result.items[j].parameters.discrimination == 1)
            #expect((-result.items[j].parameters.difficulty).isApproximatelyEqual(to: mirtD[j], absoluteTolerance: 1.5e-3))
        }
        #expect((result.latentSD * result.latentSD).isApproximatelyEqual(to: 1.022, absoluteTolerance: 1.5e-3))
        #expect(result.logLikelihood.isApproximatelyEqual(to: -2664.901, absoluteTolerance: 0.001))
        #expect(result.parameterCount == 6)
        #expect(result.aic.isApproximatelyEqual(to: 5341.802, absoluteTolerance: 0.01))
    }

    @Test("1PL is the Rasch model on another scale: same log-likelihood, common slope = latent SD")
    func onePLEqualsRasch() throws {
        let rasch = try EMCalibrator(options: CalibrationOptions(model: .rasch)).calibrate(LSAT7.matrix)
        let onePL = try EMCalibrator(options: CalibrationOptions(model: .onePL)).calibrate(LSAT7.matrix)
        #expect(onePL.logLikelihood.isApproximatelyEqual(to: rasch.logLikelihood, absoluteTolerance: 1e-3))
        let a = onePL.items[0].parameters.discrimination
        #expect(a.isApproximatelyEqual(to: rasch.latentSD, absoluteTolerance: 1e-3))
        // mirt's equal-slope model: common a1 = 1.011.
        #expect(a.isApproximatelyEqual(to: 1.011, absoluteTolerance: 1.5e-3))
        for j in 0..<5 {
            #expect(
                (onePL.items[j].parameters.difficulty * a).isApproximatelyEqual(to: rasch.items[j].parameters.difficulty, absoluteTolerance: 2e-3))
        }
    }

    @Test("Louis standard errors agree with the curvature of the marginal log-likelihood (finite differences)")
    func standardErrorsMatchNumericalHessian() throws {
        // Independent check: the inverse of the marginal log-likelihood's Hessian by central finite differences
        // (step 1e-4, computed here by brute-force quadrature), against the reported Louis SEs.
        var options = CalibrationOptions(model: .twoPL)
        options.tolerance = 1e-8
        let result = try EMCalibrator(options: options).calibrate(LSAT7.matrix)
        let data = LSAT7.matrix
        let grid = try QuadratureGrid(count: 61, bound: 6)
        let base = result.items.flatMap { [$0.parameters.discrimination, $0.parameters.intercept] }
        func loglik(_ x: [Double]) -> Double {
            var total = 0.0
            for i in 0..<data.personCount {
                var lik = 0.0
                for q in 0..<grid.count {
                    var l = grid.weights[q]
                    for k in data.cells(ofPerson: i) {
                        let j = Int(data.itemIndices[k])
                        let p = 1 / (1 + .exp(-(x[2 * j] * grid.points[q] + x[2 * j + 1])))
                        l *= data.responses[k] == 1 ? p : 1 - p
                    }
                    lik += l
                }
                total += .log(lik)
            }
            return total
        }
        let covariance = invert(negativeHessian(of: loglik, at: base))
        for j in 0..<5 {
            let seA = covariance[2 * j][2 * j].squareRoot()
            let reported = try #require(result.items[j].standardErrors.discrimination)
            #expect(reported.isApproximatelyEqual(to: seA, relativeTolerance: 2e-3), "item \(j): Louis \(reported) vs numerical \(seA)")
            // b = −d/a: delta method with the numerical covariance.
            let a = base[2 * j], d = base[2 * j + 1]
            let g = [d / (a * a), -1 / a]
            let varB =
                g[0] * g[0] * covariance[2 * j][2 * j] + 2 * g[0] * g[1] * covariance[2 * j][2 * j + 1] + g[1] * g[1]
                * covariance[2 * j + 1][2 * j + 1]
            let reportedB = try #require(result.items[j].standardErrors.difficulty)
            #expect(reportedB.isApproximatelyEqual(to: varB.squareRoot(), relativeTolerance: 2e-3))
        }
    }
}

/// Gauss–Jordan inverse for the small test matrices (independent of the LAPACK path under test).
func invert(_ m: [[Double]]) -> [[Double]] {
    let n = m.count
    var a = m.enumerated().map { i, row in row + (0..<n).map { $0 == i ? 1.0 : 0.0 } }
    for col in 0..<n {
        let pivot = (col..<n).max { abs(a[$0][col]) < abs(a[$1][col]) }!
        a.swapAt(col, pivot)
        let p = a[col][col]
        a[col] = a[col].map { $0 / p }
        for r in 0..<n where r != col {
            let f = a[r][col]
            if f != 0 { a[r] = zip(a[r], a[col]).map { $0 - f * $1 } }
        }
    }
    return a.map { Array($0[n...]) }
}
