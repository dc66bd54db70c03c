import Foundation
@testable import Norming
import Numerics
import Psychometrics
import Testing

@Suite("Sinh–arcsinh distribution")
struct SinhArcsinhTests {
    @Test("ε = 0, δ = 1 is the normal: cdf and quantile equal Φ and Φ⁻¹ to 1e-12")
    func normalCase() {
        let d = SinhArcsinh(location: 0.3, scale: 1.7)
        for k in -80...80 {
            let y = 0.3 + Double(k) * 0.1
            let z = (y - 0.3) / 1.7
            #expect(d.cdf(y).isApproximatelyEqual(to: StandardNormal.cdf(z), absoluteTolerance: 1e-12), "y \(y)")
            // log φ(z) − log σ
            let logPhi = -0.5 * z * z - 0.5 * log(2 * Double.pi) - log(1.7)
            #expect(d.logDensity(y).isApproximatelyEqual(to: logPhi, absoluteTolerance: 1e-12), "y \(y)")
        }
        for p in [1e-10, 0.001, 0.02275, 0.1, 0.5, 0.8, 0.97725, 0.999999] {
            #expect(d.quantile(p).isApproximatelyEqual(to: 0.3 + 1.7 * StandardNormal.quantile(p), absoluteTolerance: 1e-12), "p \(p)")
        }
        let moments = d.meanAndSD
        #expect(moments.mean.isApproximatelyEqual(to: 0.3, absoluteTolerance: 1e-12))
        #expect(moments.sd.isApproximatelyEqual(to: 1.7, absoluteTolerance: 1e-12))
    }

    @Test("cdf(quantile(p)) = p for skewed and heavy- or light-tailed shapes", arguments: [(0.8, 0.6), (-0.5, 1.4), (0.0, 0.3), (1.5, 2.5)])
    func quantileInvertsCDF(skewness: Double, tailWeight: Double) {
        let d = SinhArcsinh(location: -0.4, scale: 0.9, skewness: skewness, tailWeight: tailWeight)
        for p in [1e-9, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999] {
            #expect(d.cdf(d.quantile(p)).isApproximatelyEqual(to: p, relativeTolerance: 1e-10), "ε \(skewness) δ \(tailWeight) p \(p)")
        }
    }

    @Test("the density integrates to 1 and its mean and SD match meanAndSD (trapezoid on a fine grid)")
    func densityIntegrates() {
        let d = SinhArcsinh(location: 0.2, scale: 1.1, skewness: -0.6, tailWeight: 0.8)
        var mass = 0.0, m1 = 0.0, m2 = 0.0
        let h = 0.001
        for k in -60_000...60_000 {
            let y = Double(k) * h
            let f = exp(d.logDensity(y)) * h
            mass += f; m1 += f * y; m2 += f * y * y
        }
        #expect(mass.isApproximatelyEqual(to: 1, absoluteTolerance: 1e-6))
        let (mean, sd) = d.meanAndSD
        #expect(m1.isApproximatelyEqual(to: mean, absoluteTolerance: 1e-5))
        #expect((m2 - m1 * m1).squareRoot().isApproximatelyEqual(to: sd, absoluteTolerance: 1e-5))
        // Skewness to the left: the mean lies below the median.
        #expect(mean < d.quantile(0.5))
    }

    @Test("analytic derivatives of the log-density match central differences (relative 1e-6)")
    func derivatives() {
        for (y, eta) in [(0.7, [0.1, -0.2, 0.4, 0.3]), (-2.5, [0.3, 0.2, -0.7, -0.4]), (1.9, [-0.5, 0.0, 0.0, 0.0])] {
            let d = SHASHDerivatives(y: y, mu: eta[0], s: eta[1], epsilon: eta[2], tau: eta[3])
            func ell(_ e: [Double]) -> Double { SHASHDerivatives(y: y, mu: e[0], s: e[1], epsilon: e[2], tau: e[3]).logDensity }
            func grad(_ e: [Double], _ i: Int) -> Double { SHASHDerivatives(y: y, mu: e[0], s: e[1], epsilon: e[2], tau: e[3]).gradient(i) }
            let h = 1e-5
            let reference = SinhArcsinh(location: eta[0], scale: exp(eta[1]), skewness: eta[2], tailWeight: exp(eta[3])).logDensity(y)
            #expect(d.logDensity.isApproximatelyEqual(to: reference, absoluteTolerance: 1e-12))
            for i in 0..<4 {
                var up = eta, down = eta
                up[i] += h; down[i] -= h
                let numeric = (ell(up) - ell(down)) / (2 * h)
                #expect(d.gradient(i).isApproximatelyEqual(to: numeric, absoluteTolerance: 1e-6 * max(1, abs(numeric))), "∂\(i) at y \(y)")
                for j in 0..<4 {
                    let second = (grad(up, j) - grad(down, j)) / (2 * h)
                    #expect(d.hessian(i, j).isApproximatelyEqual(to: second, absoluteTolerance: 1e-6 * max(1, abs(second))), "∂\(i)∂\(j) at y \(y)")
                }
            }
        }
    }

    @Test("seeded recovery: ML on 4,000 draws recovers (μ, σ, ε, δ) within 4 standard errors' worth (0.1, 0.08, 0.15, 0.15)")
    func recovery() throws {
        var rng = SeededGenerator(seed: 41)
        let truth = SinhArcsinh(location: 0.5, scale: 1.2, skewness: -0.4, tailWeight: 0.8)
        var thetas: [Double] = []
        for _ in 0..<4000 {
            let z = RandomVariate.normal(using: &rng)
            thetas.append(truth.location + truth.scale * sinh((asinh(z) + truth.skewness) / truth.tailWeight))
        }
        var options = ContinuousNormsOptions()
        options.fixedDegrees = SHASHDegrees(location: 0, logScale: 0, skewness: 0, logTailWeight: 0)
        let ages = (0..<4000).map { Double(20 + $0 % 50) }
        let fit = try ContinuousNorms.fit(ages: ages, thetas: thetas, options: options)
        #expect(fit.converged)
        let d = fit.norms.distribution(age: 40)
        #expect(abs(d.location - truth.location) < 0.1, "μ \(d.location)")
        #expect(abs(d.scale - truth.scale) < 0.08, "σ \(d.scale)")
        #expect(abs(d.skewness - truth.skewness) < 0.15, "ε \(d.skewness)")
        #expect(abs(d.tailWeight - truth.tailWeight) < 0.15, "δ \(d.tailWeight)")
    }
}
