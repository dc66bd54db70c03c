import Foundation

/// What an EM engine offers the iterations (`EMRun`): the E-step, the M-step from it, and its parameters in
/// natural form (the stopping rule) and in working form with their blocks (SQUAREM). `EMEngine` (the dichotomous
/// models' engine) and `ItemModelEngine` (any `CalibratableItemModel`s) conform.
protocol EMIterable {
    associatedtype Expectation: EMExpectation
    func eStep() -> Expectation
    mutating func mStep(_ e: Expectation)
    /// The parameters whose largest change in a cycle is compared with the tolerance.
    func naturalParameters() -> [Double]
    func workingParameters() -> [Double]
    /// Sets the working parameters, projecting them into their ranges.
    mutating func setWorkingParameters(_ x: [Double])
    /// Contiguous blocks of the working parameters (SQUAREM's per-block steps).
    func parameterBlocks() -> [Range<Int>]
    /// The log prior density of the working parameters (0 without priors).
    func logPrior() -> Double
}

/// The workers an EM engine uses: `requested`, but at least 256 persons each (a worker's own expected counts cost
/// more to add than fewer persons save), and at least 1. One rule for every engine.
func emWorkers(_ requested: Int, persons: Int) -> Int { max(1, min(requested, max(1, persons / 256))) }

/// What an E-step reports to the iterations.
protocol EMExpectation {
    var logLikelihood: Double { get }
    /// Wall time inside BLAS products (0 where there are none), for benchmarks.
    var blasSeconds: Double { get }
}

extension EMEngine: EMIterable {}
extension EMEngine.Expectation: EMExpectation {}

/// The EM iterations of one calibration, plain (`runPlain`) or accelerated (`runSQUAREM`, in `SQUAREM.swift`),
/// and their record: cycles, E-steps, the traces, where the time went, and the progress reports.
///
/// A cycle is one application of the EM map: the M-step from the E-step at the current parameters. Both
/// methods stop by the same rule, the largest change of any natural parameter (a, d, c; μ, σ) in a cycle below
/// `tolerance`, or after `maxCycles` cycles.
/// The warning of a run that stopped at its cycle limit: the cycles, the last change and the tolerance.
func nonConvergenceWarning(cycles: Int, change: Double, tolerance: Double) -> String {
    "EM did not converge in \(cycles) cycles: the largest parameter change in the last cycle was \(change.formatted6) (tolerance \(tolerance.formatted6)); estimates are provisional"
}

struct EMRun<Engine: EMIterable> {
    var engine: Engine
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

    /// `nonConvergenceWarning` of this run, nil when it converged.
    var nonConvergence: String? { converged ? nil : nonConvergenceWarning(cycles: cycles, change: change, tolerance: tolerance) }
    /// Per cycle, at the parameters the cycle started from: the marginal log-likelihood, and it plus the log
    /// priors (the objective EM increases).
    var logLikelihoodTrace: [Double] = []
    var logPosteriorTrace: [Double] = []
    var timing = CalibrationTiming()
    /// SQUAREM extrapolations kept and rejected by the safeguard.
    var extrapolations = 0
    var rejectedExtrapolations = 0

    init(engine: Engine, options: CalibrationOptions, started: UInt64, progress: ((CalibrationProgress) -> Void)?) {
        self.engine = engine
        self.tolerance = options.tolerance
        self.maxCycles = options.maxCycles
        self.started = started
        self.progress = progress
    }

    private static func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// An E-step already done at the engine's starting parameters (a warm start from a fit that ended there):
    /// the first `expectation()` returns it instead of computing it again.
    var pending: Engine.Expectation?

    /// The E-step at the engine's current parameters, timed and counted.
    mutating func expectation() -> Engine.Expectation {
        if let e = pending {
            pending = nil
            return e
        }
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
    mutating func cycle(_ e: Engine.Expectation) throws -> Bool {
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
        progress?(
            CalibrationProgress(
                phase: .cycle, cycle: cycles, logLikelihood: e.logLikelihood, largestChange: change,
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
