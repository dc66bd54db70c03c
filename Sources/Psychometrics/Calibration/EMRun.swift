import Foundation

/// The EM iterations of one calibration, plain (`runPlain`) or accelerated (`runSQUAREM`, in `SQUAREM.swift`),
/// and their record: cycles, E-steps, the traces, where the time went, and the progress reports.
///
/// A cycle is one application of the EM map: the M-step from the E-step at the current parameters. Both
/// methods stop by the same rule, the largest change of any natural parameter (a, d, c; μ, σ) in a cycle below
/// `tolerance`, or after `maxCycles` cycles.
struct EMRun {
    var engine: EMEngine
    let tolerance: Double
    let maxCycles: Int
    let started: UInt64
    let progress: ((CalibrationProgress) -> Void)?

    var cycles = 0
    /// E-steps done: one per cycle, plus SQUAREM's rejected extrapolations (whose E-step starts no cycle).
    var eSteps = 0
    var converged = false
    /// Largest natural-parameter change in the last cycle.
    var change = Double.infinity
    /// Per cycle, at the parameters the cycle started from: the marginal log-likelihood, and it plus the log
    /// priors (the objective EM increases).
    var logLikelihoodTrace: [Double] = []
    var logPosteriorTrace: [Double] = []
    var timing = CalibrationTiming()
    /// SQUAREM extrapolations kept and rejected by the safeguard.
    var extrapolations = 0
    var rejectedExtrapolations = 0

    init(engine: EMEngine, options: CalibrationOptions, started: UInt64, progress: ((CalibrationProgress) -> Void)?) {
        self.engine = engine
        self.tolerance = options.tolerance
        self.maxCycles = options.maxCycles
        self.started = started
        self.progress = progress
    }

    private static func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// The E-step at the engine's current parameters, timed and counted.
    mutating func expectation() -> EMEngine.Expectation {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let e = engine.eStep()
        timing.eStepSeconds += Self.seconds(since: t0)
        timing.blasSeconds += e.blasSeconds
        eSteps += 1
        return e
    }

    /// Completes a cycle with the M-step from `e`, the E-step at the engine's current parameters, and reports it.
    /// Returns true when EM stops here: converged, or at the cycle limit.
    /// - Throws: `PsychometricsError(.numericalFailure)` when a parameter became infinite or NaN.
    mutating func cycle(_ e: EMEngine.Expectation) throws -> Bool {
        logLikelihoodTrace.append(e.logLikelihood)
        logPosteriorTrace.append(e.logLikelihood + engine.logPrior())
        let before = engine.naturalParameters()
        let t0 = DispatchTime.now().uptimeNanoseconds
        engine.mStep(e)
        timing.mStepSeconds += Self.seconds(since: t0)
        cycles += 1
        change = zip(engine.naturalParameters(), before).map { abs($0 - $1) }.max() ?? 0
        if !change.isFinite {
            throw PsychometricsError(.numericalFailure, "the EM iterations diverged in cycle \(cycles) (a parameter became infinite or NaN)")
        }
        progress?(CalibrationProgress(phase: .cycle, cycle: cycles, logLikelihood: e.logLikelihood, largestChange: change,
                                      elapsedSeconds: Self.seconds(since: started)))
        if change < tolerance { converged = true; return true }
        return cycles >= maxCycles
    }

    /// Plain EM (Bock & Aitkin 1981): E-step, M-step, until the stopping rule.
    mutating func runPlain() throws {
        while cycles < maxCycles {
            if try cycle(expectation()) { return }
        }
    }
}
