@testable import Assembly
import PsychometricsIO
import Foundation
import Numerics
import Psychometrics
import Testing

@Suite("CAT simulation studies", .timeLimit(.minutes(2)))
struct CATSimulationTests {
    /// The report as JSON with the timing fields zeroed.
    func stableJSON(_ report: CATSimulationReport) throws -> String {
        var report = report
        report.elapsedSeconds = 0
        report.exposureControl?.elapsedSeconds = 0
        return try report.json()
    }

    @Test("the same seed reproduces the report byte for byte, with 1 or 2 threads; another seed differs")
    func seedsReproduce() throws {
        let bank = catTestBank(items: 150)
        var config = CATConfiguration(minItems: 4, maxItems: 15, seTarget: 0.4, minPerDomain: .all(1), randomesque: 3, exposureTarget: 0.4)
        config.exposureCalibrationSimulees = 300
        config.exposureCalibrationIterations = 5
        let pool = try CATItemPool(bank: bank, configuration: config)
        func study(seed: UInt64, threads: Int) throws -> String {
            let calibration = try SympsonHetter.calibrate(pool: pool, seed: seed, threads: threads)
            var options = CATSimulation.Options(simulees: 300, seed: seed)
            options.threads = threads
            return try stableJSON(CATSimulation.run(pool: pool, exposure: calibration, options: options))
        }
        let one = try study(seed: 21, threads: 1)
        let two = try study(seed: 21, threads: 2)
        #expect(one.replacingOccurrences(of: "\"threads\" : 1", with: "\"threads\" : 2") == two)
        #expect(try study(seed: 22, threads: 2) != two)
    }

    @Test("θ recovery: 30-item maximum-information CAT on a 300-item bank, 400 simulees: RMSE < 0.35, |bias| < 0.06, r > 0.93")
    func recovery() throws {
        let bank = catTestBank(items: 300)
        let config = CATConfiguration(minItems: 30, maxItems: 30, minPerDomain: .all(5), randomesque: 2, exposureTarget: nil)
        let pool = try CATItemPool(bank: bank, configuration: config)
        let report = try CATSimulation.run(pool: pool, exposure: nil, options: CATSimulation.Options(simulees: 400, seed: 5))
        // Expected SE ≈ 1/√(30 · 0.5) ≈ 0.26 for a ≈ 1.4 items near θ.
        #expect(report.figures.rmse < 0.35, "RMSE \(report.figures.rmse)")
        #expect(abs(report.figures.bias) < 0.06, "bias \(report.figures.bias)")
        #expect(report.figures.correlation > 0.93, "r \(report.figures.correlation)")
        #expect(report.meanLength == 30 && report.contentViolations == 0 && report.stopReasons["max_items"] == 400)
        #expect(
            report.figures.meanSE.isApproximatelyEqual(to: report.figures.rmse, absoluteTolerance: 0.06),
            "SE \(report.figures.meanSE) vs RMSE \(report.figures.rmse)")
        // The bins partition the simulees.
        #expect(report.bins.reduce(0) { $0 + $1.count } == 400)
    }

    @Test("variable length: most simulees reach the SE target, content holds, exposures and lengths are consistent")
    func variableLength() throws {
        let bank = catTestBank(items: 300, domains: ["a", "b", "c", "d", "e", "f"], slopeMeanLog: 0.5)
        let config = CATConfiguration(minItems: 6, maxItems: 25, seTarget: 0.35, minPerDomain: .all(1), randomesque: 3, exposureTarget: nil)
        let pool = try CATItemPool(bank: bank, configuration: config)
        let r = try CATSimulation.run(pool: pool, exposure: nil, options: CATSimulation.Options(simulees: 300, seed: 8))
        #expect(r.figures.shareSEReached! > 0.9)
        #expect(r.contentViolations == 0)
        #expect(r.minLength >= 6 && r.maxLength <= 25)
        #expect(r.stopReasons.values.reduce(0, +) == 300)
        #expect(r.figures.meanExposure.isApproximatelyEqual(to: r.meanLength / 300, absoluteTolerance: 1e-12))
        #expect(r.domainMeanItems.values.reduce(0, +).isApproximatelyEqual(to: r.meanLength, absoluteTolerance: 1e-9))
    }

    @Test("Sympson–Hetter calibration brings the maximum exposure of a greedy CAT from 1 to the target")
    func sympsonHetter() throws {
        let bank = catTestBank(items: 150)
        var config = CATConfiguration(minItems: 10, maxItems: 10, randomesque: 1, exposureTarget: 0.3)
        config.exposureCalibrationSimulees = 1000
        config.exposureCalibrationIterations = 30
        config.exposureMargin = 0.03
        let pool = try CATItemPool(bank: bank, configuration: config)
        let uncontrolled = try CATSimulation.run(pool: pool, exposure: nil, options: CATSimulation.Options(simulees: 500, seed: 2))
        #expect(uncontrolled.figures.maxExposure == 1) // the first item is the same for everybody
        let calibration = try SympsonHetter.calibrate(pool: pool, seed: 3)
        #expect(calibration.converged, "rounds: \(calibration.rounds.map(\.maxExposure))")
        #expect(calibration.rounds.last!.maxExposure <= 0.3)
        #expect(calibration.rounds.first!.maxExposure == 1)
        // A fresh study (other simulees) stays at the target up to sampling error (SE ≈ 0.02 at n = 500).
        let controlled = try CATSimulation.run(pool: pool, exposure: calibration, options: CATSimulation.Options(simulees: 500, seed: 4))
        #expect(controlled.figures.maxExposure <= 0.3 + 0.05, "max exposure \(controlled.figures.maxExposure)")
        #expect(controlled.figures.overlapRate < uncontrolled.figures.overlapRate)
        #expect(controlled.exposureControl?.converged == true)
    }

    @Test("given parameters reproduce the calibrated study exactly; the report names them without a calibration record")
    func givenParameters() throws {
        let bank = catTestBank(items: 60)
        var config = CATConfiguration(minItems: 8, maxItems: 8, randomesque: 2, exposureTarget: 0.35)
        config.exposureCalibrationSimulees = 300
        config.exposureCalibrationIterations = 6
        let pool = try CATItemPool(bank: bank, configuration: config)
        let calibration = try SympsonHetter.calibrate(pool: pool, seed: 9, threads: 2)
        let options = CATSimulation.Options(simulees: 250, seed: 10)
        let calibrated = try CATSimulation.run(pool: pool, exposure: calibration, options: options)
        let given = try CATSimulation.run(pool: pool, given: calibration.parameters, options: options)
        #expect(given.figures.maxExposure == calibrated.figures.maxExposure)
        #expect(given.figures.rmse == calibrated.figures.rmse)
        #expect(given.figures.overlapRate == calibrated.figures.overlapRate)
        #expect(given.exposureControl?.controlledItems == calibration.parameters.controlledCount)
        #expect(given.exposureControl?.rounds == nil && given.exposureControl?.converged == nil)
        #expect(calibrated.exposureControl?.rounds?.count == calibration.rounds.count)
        let json = try given.json()
        #expect(!json.contains("\"rounds\"") && json.contains("\"controlled_items\""))

        // Parameters for another bank size are refused, not read past.
        let short = ExposureParameters(uncontrolled: 5)
        #expect(throws: AssemblyError.self) { try CATSimulation.run(pool: pool, given: short, options: options) }
    }

    @Test("settings outside the documented ranges throw invalid_configuration listing each (no trap)")
    func invalidSettingsThrow() throws {
        let pool = try CATItemPool(
            bank: catTestBank(items: 30), configuration: CATConfiguration(minItems: 3, maxItems: 3, randomesque: 1, exposureTarget: nil))
        var options = CATSimulation.Options(simulees: 0, seed: 1)
        options.binWidth = 0
        options.thetaSD = -1
        do {
            _ = try CATSimulation.run(pool: pool, exposure: nil, options: options)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(error.problems.count == 3, "\(error.problems)")
        }
        // Calibration without a target, or with an impossible margin, throws too.
        #expect(throws: AssemblyError.self) { try SympsonHetter.calibrate(pool: pool, seed: 1) }
        #expect(throws: AssemblyError.self) {
            try SympsonHetter.calibrate(pool: pool, target: 0.3, margin: 0.5, simulees: 100, maxRounds: 2, seed: 1)
        }
    }

    @Test("overlap rate equals the mean pairwise share of common items (fixed length: Chen, Ankenmann & Spray 2003)")
    func overlapFormula() throws {
        // A 2-item pool, fixed length 1, exposures r and 1 − r: Chen et al. T = N Σr²/((N − 1) L) − 1/(N − 1).
        let bank = catTestBank(items: 40)
        let config = CATConfiguration(minItems: 3, maxItems: 3, randomesque: 6, exposureTarget: nil)
        let pool = try CATItemPool(bank: bank, configuration: config)
        let run = CATSimulation.runSimulees(pool: pool, exposure: nil, count: 200, seed: 1, stream: 0, thetaMean: 0, thetaSD: 1, threads: 2)
        let report = try CATSimulation.run(pool: pool, exposure: nil, options: CATSimulation.Options(simulees: 200, seed: 1))
        let n = 200.0, length = 3.0
        let chen = n * run.administered.reduce(0.0) { $0 + (Double($1) / n) * (Double($1) / n) } / ((n - 1) * length) - 1 / (n - 1)
        #expect(report.figures.overlapRate.isApproximatelyEqual(to: chen, absoluteTolerance: 1e-12))
    }

    @Test("the report JSON has the issue's keys")
    func reportKeys() throws {
        let bank = catTestBank(items: 60)
        let pool = try CATItemPool(bank: bank, configuration: CATConfiguration(maxItems: 5, seTarget: 0.5, exposureTarget: nil))
        let json = try CATSimulation.run(pool: pool, exposure: nil, options: CATSimulation.Options(simulees: 20, seed: 1)).json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        for key in [
            "mean_length", "rmse", "bias", "share_se_reached", "max_exposure", "mean_exposure", "overlap_rate", "content_violations", "stop_reasons",
            "bins"
        ] {
            #expect(object[key] != nil, "missing \(key)")
        }
    }
}
