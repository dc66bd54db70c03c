import Foundation
import Testing
@testable import Psychometrics

// Issue 28: the correlated-factors model beyond 3 factors, by adaptive quasi–Monte Carlo.

@Suite("Correlated factors: adaptive quasi–Monte Carlo")
struct CorrelatedFactorsAdaptiveTests {
    @Test("Sobol points equal SciPy 1.17's unscrambled qmc.Sobol(d = 12) (Joe & Kuo's numbers), bit for bit")
    func sobolKnownValues() {
        let p = SobolSequence(dimensions: 12).points(count: 1024)
        // Rows of qmc.Sobol(d=12, scramble=False).random(1024) × 1024 (every coordinate a multiple of 1/1024).
        let expected: [Int: [Double]] = [
            5: [896, 896, 128, 384, 896, 640, 896, 384, 384, 128, 384, 896],
            17: [608, 992, 992, 160, 800, 480, 32, 352, 992, 672, 608, 928],
            31: [32, 544, 928, 992, 992, 800, 352, 544, 160, 608, 32, 352],
            1000: [225, 99, 531, 693, 287, 929, 47, 921, 513, 71, 87, 261]
        ]
        for (row, values) in expected { #expect((0..<12).map { p[row * 12 + $0] * 1024 } == values, "row \(row)") }
        // Every dimension of the first 2^10 points takes each of the 1,024 values k/1024 once (a (0, m, 1)-net).
        for d in 0..<12 { #expect(Set((0..<1024).map { Int(p[$0 * 12 + d] * 1024) }).count == 1024) }
    }

    @Test("balanced nodes: antithetic pairs and χ_K-stratified radii")
    func balancedNodes() {
        let k = 5, m = 512
        let z = SobolSequence.balancedNormalPoints(count: m, dimensions: k)
        for n in stride(from: 0, to: m, by: 2) { for d in 0..<k { #expect(z[n * k + d] == -z[(n + 1) * k + d]) } }
        let squared = (0..<(m / 2)).map { n in (0..<k).reduce(0.0) { $0 + z[2 * n * k + $1] * z[2 * n * k + $1] } }.sorted()
        for (rank, r2) in squared.enumerated() {
            let p = 1 - ChiSquare.upperTail(r2, degreesOfFreedom: Double(k))
            #expect(abs(p - (Double(rank) + 0.5) / Double(m / 2)) < 1e-9)
        }
    }

    /// The 3-factor fixture's engine with the adaptive E-step (`nodes` points, the calibrator's fine grid).
    static func adaptive(_ grid: CorrelatedFactorsEngine, nodes: Int) -> CorrelatedFactorsEngine {
        CorrelatedFactorsEngine(
            items: grid.items, correlation: grid.correlation, data: grid.data,
            grid: QuadratureGrid(validatedCount: CorrelatedFactorsCalibrator.adaptiveTablePoints, bound: 6), factor: grid.factor,
            factorItems: grid.factorItems, workers: 2, maximumSlope: 20, slopePrior: nil, guessingPrior: nil,
            nodes: SobolSequence.balancedNormalPoints(count: nodes, dimensions: 3))
    }

    @Test("E-step: the log-likelihood and second moments of a 61³ grid to 0.002 and 0.1% at 1,024 nodes; Fisher's identity")
    func eStepAgainstTheGrid() throws {
        var rng = SeededGenerator(seed: 5)
        let simulator = try CorrelatedFactorsSimulator(
            items: CorrelatedFactorsTests.items, factors: CorrelatedFactorsTests.factors,
            correlations: CorrelatedFactorsTests.correlations)
        let (data, _) = simulator.matrix(count: 600, itemIDs: (0..<9).map { "i\($0)" }, using: &rng)
        let grid = CorrelatedFactorsTests.engine(data, points: 61)
        let exact = grid.eStep()
        // Measured with s = 1.35: −0.00106 at 1,024 nodes, +0.00016 at 4,096 (per person at 1,024: mean −1.8e-6,
        // SD 1.1e-4).
        let adaptive = Self.adaptive(grid, nodes: 1024), estimate = adaptive.eStep()
        #expect(abs(estimate.logLikelihood - exact.logLikelihood) < 0.002, "\(estimate.logLikelihood) against \(exact.logLikelihood)")
        for x in [0, 1, 2, 4, 5, 8] { #expect(abs(estimate.secondMoments[x] - exact.secondMoments[x]) < 1e-3 * exact.secondMoments[x]) }
        let answers = Double(adaptive.data.responses.count), counted = estimate.counts.reduce(0) { $0 + $1.reduce(0, +) }
        #expect(abs(counted - answers) < 1e-8 * answers)
        // Fisher's identity on the approximation: the gradient against central differences of its log-likelihood.
        let engine = Self.adaptive(grid, nodes: 256), e = engine.eStep()
        let x = engine.workingParameters(), g = engine.gradient(e)
        for c in [0, 3, x.count - 2, x.count - 1] {
            var up = engine, down = engine, xu = x, xd = x
            xu[c] += 1e-4; xd[c] -= 1e-4
            up.setWorkingParameters(xu); down.setWorkingParameters(xd)
            let numeric = (up.eStep().logLikelihood - down.eStep().logLikelihood) / 2e-4
            #expect(abs(g[c] - numeric) < 0.02 * max(1, abs(numeric)), "parameter \(c): \(g[c]) against \(numeric)")
        }
    }

    @Test("recovery: 4 correlated factors by adaptive QMC (the default from 4 factors), within the standard errors")
    func recoveryFourFactors() throws {
        let items = (0..<12).map { j in BifactorItem(generalSlope: [1.2, 0.9, 1.6][j % 3], intercept: [0.4, -0.6, 0.1, 0.9][j % 4]) }
        let factors = (0..<12).map { $0 / 3 }
        let r: [Double] = [
            1, 0.6, 0.4, 0.5,
            0.6, 1, 0.5, 0.3,
            0.4, 0.5, 1, 0.6,
            0.5, 0.3, 0.6, 1
        ]
        var rng = SeededGenerator(seed: 44)
        let simulator = try CorrelatedFactorsSimulator(items: items, factors: factors, correlations: r)
        let ids = (0..<12).map { "i\($0)" }
        let (data, _) = simulator.matrix(count: 800, itemIDs: ids, using: &rng)
        let structure = try FactorStructure(items: ids.enumerated().map { ($1, ["a", "b", "c", "d"][factors[$0]]) })
        var options = CalibrationOptions(model: .twoPL)
        options.tolerance = 1e-4
        let calibrator = CorrelatedFactorsCalibrator(options: options, monteCarloPoints: 128)
        #expect(
            CorrelatedFactorsCalibrator().resolvedIntegration(factors: 4) == .adaptiveQuasiMonteCarlo
                && CorrelatedFactorsCalibrator().resolvedIntegration(factors: 3) == .productGrid)
        #expect(CorrelatedFactorsCalibrator(quadraturePoints: 9).resolvedIntegration(factors: 4) == .productGrid)
        #expect(CorrelatedFactorsCalibrator(monteCarloPoints: 512).resolvedIntegration(factors: 2) == .adaptiveQuasiMonteCarlo)
        let result = try calibrator.calibrate(data, structure: structure)
        #expect(result.converged && result.integration == .adaptiveQuasiMonteCarlo && result.nodes == 128)
        let se = try #require(result.correlationStandardErrors)
        var zs: [Double] = []
        for f in 1..<4 {
            for g in 0..<f {
                zs.append((result.correlations[f * 4 + g] - r[f * 4 + g]) / se[f * 4 + g])
                #expect(se[f * 4 + g] > 0.02 && se[f * 4 + g] < 0.12, "SE \(se[f * 4 + g])")
            }
        }
        for (j, item) in result.items.enumerated() {
            zs.append((item.slope - items[j].generalSlope) / item.slopeStandardError!)
            zs.append((item.intercept - items[j].intercept) / item.interceptStandardError!)
        }
        #expect(zs.allSatisfy { abs($0) < 3.5 }, "\(zs)")
        let rms = (zs.reduce(0) { $0 + $1 * $1 } / Double(zs.count)).squareRoot()
        #expect(rms > 0.6 && rms < 1.4, "RMS z \(rms)")
    }

    @Test("refusals: quasi–Monte Carlo points not a power of two or out of range, more factors than the Sobol dimensions")
    func refusals() throws {
        var rng = SeededGenerator(seed: 2)
        let items = (0..<13).map { _ in BifactorItem(generalSlope: 1, intercept: 0) }
        var r = [Double](repeating: 0.3, count: 169)
        for f in 0..<13 { r[f * 13 + f] = 1 }
        let simulator = try CorrelatedFactorsSimulator(items: items, factors: Array(0..<13), correlations: r)
        let ids = (0..<13).map { "i\($0)" }
        let (data, _) = simulator.matrix(count: 100, itemIDs: ids, using: &rng)
        let thirteen = try FactorStructure(items: ids.map { ($0, $0) })
        #expect { try CorrelatedFactorsCalibrator().calibrate(data, structure: thirteen) } throws: { "\($0)".contains("limited to 12") }
        let four = try FactorStructure(items: ids.enumerated().map { ($1, "f\($0 % 4)") })
        for m in [1000, 32, 131_072] {
            #expect { try CorrelatedFactorsCalibrator(monteCarloPoints: m).calibrate(data, structure: four) } throws: {
                "\($0)".contains("a power of two in 64…65536")
            }
        }
    }
}
