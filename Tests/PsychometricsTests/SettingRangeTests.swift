import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("Setting ranges: one range per setting, named for the caller")
struct SettingRangeTests {
    @Test("ranges print their ends and reject NaN and infinities")
    func numberRange() {
        #expect(NumberRange.aboveUpTo(0, 20).description == "(0, 20]")
        #expect(NumberRange.closed(0.01, 100).description == "[0.01, 100]")
        #expect(IQScale.allowedConfidenceLevels.description == "(0, 0.9999999999]")
        #expect(NumberRange(lower: 0, upper: 1, includesUpper: false).inequality("c") == "0 ≤ c < 1")
        for x in [Double.nan, .infinity, -.infinity] { #expect(!NumberRange.closed(-10, 10).contains(x)) }
        #expect(NumberRange.closed(-10, 10).problem(.nan, "--prior-mean") == "--prior-mean must be in [-10, 10], got nan")
        #expect((1...256).problem(0, "--threads") == "--threads must be 1…256, got 0")
        #expect((1...Int.max).problem(0, "max cycles") == "max cycles must be at least 1, got 0")
    }

    @Test("one check, three namings: words, JSON keys, command-line options")
    func naming() {
        var options = AbilityOptions()
        options.priorSD = 0
        options.quadraturePoints = 1000
        #expect(options.validationProblems() == ["prior SD must be in [0.01, 100], got 0.0", "quadrature points must be 5…401, got 1000"])
        #expect(
            options.validationProblems(naming: .jsonKey) == ["prior_sd must be in [0.01, 100], got 0.0", "quadrature_points must be 5…401, got 1000"])
        #expect(
            options.validationProblems(naming: .option) == [
                "--prior-sd must be in [0.01, 100], got 0.0", "--quadrature-points must be 5…401, got 1000"
            ])
    }

    @Test("thread counts are capped at 256 wherever they are set; the default is within the cap")
    func threads() {
        #expect(WorkerThreads.maximum == 256)
        #expect(WorkerThreads.validationProblems(100_000, naming: .option) == ["--threads must be 1…256, got 100000"])
        #expect(WorkerThreads.validationProblems(nil).isEmpty)
        #expect(WorkerThreads.allowed.contains(WorkerThreads.all))
        var calibration = CalibrationOptions(model: .twoPL)
        calibration.workers = 257
        #expect(calibration.validationProblems() == ["worker threads must be 1…256, got 257"])
    }

    @Test("the scorer's file index is 16 bits: more session files are a problem before any is read")
    func inputFiles() {
        // (Through the binary this needs 33,000 arguments, which ArgumentParser takes minutes to parse.)
        #expect(BatchScorer.maximumInputFiles == 1_000_000)
        #expect(BatchScorer.validationProblems(fileCount: 1_000_001) == ["the number of session files must be 1…1000000, got 1000001"])
        #expect(BatchScorer.validationProblems(fileCount: 33_000).isEmpty)
    }

    @Test("every confidence level the validation accepts has a finite critical value; the next double up is refused")
    func confidenceCap() throws {
        let cap = IQScale.allowedConfidenceLevels.upper
        for level in [1e-300, 0.5, 0.95, 0.999999, cap] {
            let scale = try IQScale(confidenceLevel: level)
            #expect(scale.criticalValue.isFinite && scale.criticalValue >= 0, "level \(level)")
        }
        #expect(try IQScale(confidenceLevel: cap).criticalValue.isApproximatelyEqual(to: 6.466951087, absoluteTolerance: 1e-6))
        for level in [cap.nextUp, 0.9999999999999999, 1, .nan] {
            #expect(throws: PsychometricsError.self) { try IQScale(confidenceLevel: level) }
        }
    }

    @Test("norms: θ-scale mean within ±10, SD within [0.01, 10]")
    func norms() {
        #expect(
            Norms(name: "n", version: "1", mean: 1e300, sd: 1e-300).validationProblems()
                == ["norms mean must be in [-10, 10], got 1e+300", "norms sd must be in [0.01, 10], got 1e-300"])
        #expect(
            Norms(name: "n", version: "1", mean: 100, sd: 15).validationProblems(naming: .jsonKey)
                == ["mean must be in [-10, 10], got 100.0", "sd must be in [0.01, 10], got 15.0"])
        #expect(Norms(name: "n", version: "1", mean: -0.3, sd: 1.1).validationProblems().isEmpty)
    }

    @Test("priors the calibrator cannot use are problems before the initializer's precondition sees them")
    func priors() {
        #expect(
            BetaPrior.validationProblems(alpha: .infinity, beta: 0.5)
                == ["the Beta prior's alpha must be in [1, 1000], got inf", "the Beta prior's beta must be in [1, 1000], got 0.5"])
        #expect(
            LogNormalPrior.validationProblems(meanLog: .nan, sdLog: 0) == [
                "the log-normal prior's MEANLOG must be in [-3, 3], got nan",
                "the log-normal prior's SDLOG must be in (0, 10], got 0.0"
            ])
    }
}

@Suite("AbilityOptions: the EAP grid must resolve the prior")
struct EAPGridTests {
    @Test("a prior SD narrower than the grid spacing is refused for EAP (its SE would be 0), allowed for MAP")
    func gridResolvesPrior() throws {
        var options = AbilityOptions(method: .eap)
        options.priorSD = 0.05
        #expect(
            options.validationProblems(naming: .option) == [
                "the θ grid's spacing 2·--theta-bound/(--quadrature-points − 1) = 0.2 is wider than the --prior-sd 0.05, so EAP cannot resolve the prior: narrow the bound or add points"
            ])
        options.thetaBound = 1
        options.quadraturePoints = 41
        #expect(options.validationProblems().isEmpty)
        options.method = .map
        options.thetaBound = 6
        options.quadraturePoints = 61
        #expect(options.validationProblems().isEmpty)
        // And a score is reported, with a positive SE, at the narrowest setting EAP accepts.
        var eap = AbilityOptions(method: .eap)
        eap.priorSD = 0.05
        eap.thetaBound = 1
        eap.quadraturePoints = 41
        let estimator = try AbilityEstimator(parameters: [ItemParameters(discrimination: 1.2, difficulty: 0, guessing: 0)], options: eap)
        let e = try estimator.estimate(items: [0], responses: [1])
        #expect(e.standardError > 0 && e.standardError.isFinite)
    }
}
