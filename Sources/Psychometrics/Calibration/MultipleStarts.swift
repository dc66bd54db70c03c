import Foundation

/// One EM run of a calibration with several starting values (`BifactorCalibrator.starts`,
/// `CorrelatedFactorsCalibrator.starts`).
package struct StartRecord: Sendable, Hashable, Codable {
    /// 0 is the default start; 1… are its seeded perturbations (`StartPerturbation`).
    package var start: Int
    /// The marginal log-likelihood where the run stopped (nil: the run diverged).
    package var logLikelihood: Double?
    /// The log-likelihood plus the log priors of the parameters (what EM maximises, and what picks the kept run).
    package var logPosterior: Double?
    package var cycles: Int
    package var converged: Bool
    /// Whether the calibration kept this run (the highest log-likelihood plus log prior).
    package var kept: Bool

    /// The most starts a calibration takes.
    package static let maximumStarts = 100

    enum CodingKeys: String, CodingKey { case start, logLikelihood = "log_likelihood", logPosterior = "log_posterior", cycles, converged, kept }
}

extension EMRun {
    /// EM from several starting values (Bock & Aitkin's marginal likelihood of a multidimensional model can have
    /// local maxima; mirt's advice is to refit from other starts): runs `runs` engines in turn (`engine(k)`, k = 0
    /// the default start), each to the stopping rule, and keeps the run whose log-likelihood plus log prior at its
    /// end is highest (the earliest on a tie within 1e-9). A perturbed start whose iterations diverge is recorded
    /// and passed over; the default start's divergence is the calibration's error.
    /// - Throws: `PsychometricsError(.numericalFailure)` when the default start (or every start) diverges.
    static func best(
        of runs: Int, engine: (Int) -> Engine, options: CalibrationOptions, started: UInt64,
        progress: ((CalibrationProgress) -> Void)?
    ) throws -> (run: EMRun, starts: [StartRecord]) {
        var best: (run: EMRun, objective: Double, index: Int)? = nil
        var records: [StartRecord] = []
        for k in 0..<max(1, runs) {
            var run = EMRun(engine: engine(k), options: options, started: started, progress: progress)
            do {
                switch options.acceleration {
                case .none: try run.runPlain()
                case .squarem: try run.runSQUAREM()
                }
            } catch  where k > 0 {
                records.append(StartRecord(start: k, logLikelihood: nil, logPosterior: nil, cycles: run.cycles, converged: false, kept: false))
                continue
            }
            let e = run.engine.eStep()
            let objective = e.logLikelihood + run.engine.logPrior()
            records.append(
                StartRecord(
                    start: k, logLikelihood: e.logLikelihood, logPosterior: objective, cycles: run.cycles, converged: run.converged, kept: false))
            if objective.isFinite && (best == nil || objective > best!.objective + 1e-9) { best = (run, objective, records.count - 1) }
        }
        guard let best else { throw PsychometricsError(.numericalFailure, "the EM iterations diverged from every start") }
        records[best.index].kept = true
        return (best.run, records)
    }
}

/// The seeded perturbation of start `k` ≥ 1 (start 0 is the calibrator's default): a generator seeded by k, so
/// the same `starts` give the same fit. Slopes are multiplied by exp(0.25 z) and intercepts shifted by 0.25 z,
/// z ~ N(0, 1) per parameter: about ±25% and a quarter logit, enough to leave a local maximum's basin without
/// starting far from the data.
struct StartPerturbation {
    var rng: SeededGenerator

    init(start k: Int) { rng = SeededGenerator(seed: 0x5EED_0000 &+ UInt64(k)) }

    mutating func slope(_ a: Double) -> Double { a * exp(0.25 * RandomVariate.normal(using: &rng)) }
    mutating func shift(_ d: Double, by sd: Double = 0.25) -> Double { d + sd * RandomVariate.normal(using: &rng) }
}
