import Foundation
import Psychometrics

/// Sympson–Hetter exposure parameters: for each bank item, Kᵢ = P(administer | selected) (1 = not controlled).
public struct ExposureParameters: Sendable, Hashable, Codable {
    public var probabilities: [Double]

    /// - Throws: `AssemblyError.invalidExposure` when some Kᵢ is outside [0, 1] (or not a number).
    public init(probabilities: [Double]) throws(AssemblyError) {
        if let i = probabilities.firstIndex(where: { !($0 >= 0 && $0 <= 1) }) {
            throw AssemblyError(
                .invalidExposure, field: "probabilities[\(i)]", "exposure parameter \(i + 1) is \(probabilities[i]); allowed 0 ≤ K ≤ 1")
        }
        self.probabilities = probabilities
    }

    /// No control: Kᵢ = 1 for `itemCount` items.
    public init(uncontrolled itemCount: Int) { probabilities = [Double](repeating: 1, count: itemCount) }

    /// Number of items with Kᵢ < 1.
    public var controlledCount: Int { probabilities.reduce(0) { $0 + ($1 < 1 ? 1 : 0) } }
}

/// Sympson–Hetter exposure control calibrated by simulation (Sympson & Hetter 1985; the operational
/// procedure of Hetter & Sympson 1997 for CAT-ASVAB). An item i that the selection rule picks ("selected", event Sᵢ) is
/// administered with probability Kᵢ, so its exposure rate is
/// ```
/// P(Aᵢ) = Kᵢ · P(Sᵢ)
/// ```
/// P(Sᵢ) depends on every K, so the Kᵢ are found by iteration: starting from Kᵢ = 1, each round simulates
/// `simulees` tests with θ ~ N(prior_mean, prior_sd²), estimates P(Sᵢ) and P(Aᵢ) from the counts, and sets
/// ```
/// Kᵢ ← 1                  if P(Sᵢ) ≤ r′
/// Kᵢ ← r′ / P(Sᵢ)         otherwise,        r′ = r_max − margin
/// ```
/// It stops at the first round whose largest observed exposure is ≤ r_max (converged; the parameters of that
/// round are returned) or after `maxRounds` rounds (not converged: the last parameters are returned with
/// `converged = false`). Aiming r′ a margin below r_max leaves room for simulation noise: with n simulees an
/// exposure estimate has SE √(r(1 − r)/n) ≈ 0.006 at r = 0.25, n = 5,000.
package struct SympsonHetter: Sendable {
    /// One calibration round (under the parameters in force during the round).
    package struct Round: Sendable, Hashable, Codable {
        package var round: Int
        package var maxExposure: Double
        package var maxSelectionRate: Double
        package var controlledItems: Int
        package var meanLength: Double

        enum CodingKeys: String, CodingKey {
            case round, maxExposure = "max_exposure", maxSelectionRate = "max_selection_rate"
            case controlledItems = "controlled_items", meanLength = "mean_length"
        }
    }

    package var parameters: ExposureParameters
    package var rounds: [Round]
    package var converged: Bool
    package var target: Double
    package var margin: Double
    package var simulees: Int
    package var elapsedSeconds: Double

    /// Calibrates with the pool's configuration (`exposure_target`, `exposure_margin`,
    /// `exposure_calibration_simulees`, `exposure_calibration_iterations`). Reproducible from `seed` for any
    /// thread count.
    /// - Throws: `AssemblyError.invalidConfiguration` when the configuration has no `exposure_target`.
    package static func calibrate(pool: CATItemPool, seed: UInt64, threads: Int = WorkerThreads.all) throws(AssemblyError) -> SympsonHetter {
        let config = pool.configuration
        guard let target = config.exposureTarget else {
            throw AssemblyError(.invalidConfiguration, "Sympson–Hetter calibration needs an exposure_target in the CAT configuration")
        }
        return try calibrate(
            pool: pool, target: target, margin: config.exposureMargin, simulees: config.exposureCalibrationSimulees,
            maxRounds: config.exposureCalibrationIterations, seed: seed, threads: threads)
    }

    package static func calibrate(
        pool: CATItemPool, target: Double, margin: Double, simulees: Int, maxRounds: Int, seed: UInt64,
        threads: Int = WorkerThreads.all
    ) throws(AssemblyError) -> SympsonHetter {
        var problems: [String] = []
        if !(target > 0 && target <= 1) { problems.append("the exposure target must be in (0, 1], got \(target.formatted6)") }
        if !(margin >= 0 && margin < target) { problems.append("the exposure margin must be in [0, target), got \(margin.formatted6)") }
        if let p = SimulationStudy.allowedSimulees.problem(simulees, "exposure_calibration_simulees") { problems.append(p) }
        if let p = CATConfiguration.allowedCalibrationIterations.problem(maxRounds, "exposure_calibration_iterations") { problems.append(p) }
        problems += WorkerThreads.validationProblems(threads)
        guard problems.isEmpty else { throw AssemblyError(.invalidConfiguration, problems: problems) }
        let started = Date()
        let aim = target - margin
        var parameters = ExposureParameters(uncontrolled: pool.itemCount)
        var rounds: [Round] = []
        var converged = false
        for round in 1...maxRounds {
            let run = CATSimulation.runSimulees(
                pool: pool, exposure: parameters, count: simulees, seed: seed, stream: UInt64(round),
                thetaMean: pool.estimator.priorMean, thetaSD: pool.estimator.priorSD, threads: threads)
            let n = Double(simulees)
            let maxExposure = Double(run.administered.max() ?? 0) / n
            let maxSelection = Double(run.selected.max() ?? 0) / n
            rounds.append(
                Round(
                    round: round, maxExposure: maxExposure, maxSelectionRate: maxSelection,
                    controlledItems: parameters.controlledCount, meanLength: Double(run.totalLength) / n))
            if maxExposure <= target { converged = true; break }
            if round == maxRounds { break }
            for i in parameters.probabilities.indices {
                let selected = Double(run.selected[i]) / n
                parameters.probabilities[i] = selected > aim ? aim / selected : 1
            }
        }
        return SympsonHetter(
            parameters: parameters, rounds: rounds, converged: converged, target: target, margin: margin,
            simulees: simulees, elapsedSeconds: Date().timeIntervalSince(started))
    }
}
