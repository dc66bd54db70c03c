import Dispatch
import Foundation
import Psychometrics

/// A seeded simulation study of a CAT: simulees θ ~ N(μ, σ²) take adaptive tests from a pool, answering each
/// item correctly with probability P(θ); the report gives recovery (bias, RMSE, overall and by θ bin), length,
/// precision, exposure, overlap and content figures.
///
/// Reproducibility: simulee i draws its θ, its randomesque choices, its exposure lotteries and its responses
/// from its own `SeededGenerator`, seeded from (seed, i) by a SplitMix64 mix, so a report depends on the seed
/// only, never on the number of threads; totals are summed in simulee order.
package enum CATSimulation {
    /// Study settings.
    package struct Options: Sendable, Hashable {
        package var simulees: Int
        package var seed: UInt64
        package var thetaMean = 0.0
        package var thetaSD = 1.0
        /// θ bins for conditional bias and RMSE: width `binWidth` over [−`binBound`, `binBound`], plus an open
        /// bin below and above.
        package var binWidth = 0.5
        package var binBound = 3.0
        package var threads = WorkerThreads.all

        package init(simulees: Int, seed: UInt64) {
            self.simulees = simulees
            self.seed = seed
        }
    }

    /// A battery bank behind a pool of its items' marginals on the full-scale factor: the simulees are drawn from
    /// the battery's model and answer by it, the CAT selects and stops on the marginal items (the rule
    /// `iqscore serve` uses), and each finished test is scored by the full model (EAP of the full-scale factor over
    /// every factor), so the report shows what the marginal selection achieves under the true model.
    /// - A bifactor bank (`BifactorItem.generalMarginal`): θ_g is the simulee's θ, every specific θ_s an
    ///   independent N(0, 1) draw after it.
    /// - A correlated-factors bank (`CorrelatedFactorsScorer.fullScaleMarginal`): the simulee's θ is its full-scale
    ///   composite θ_FS = wᵀθ, and its factors are drawn from N(0, R) given it: θ = e + Rw (θ_FS − wᵀe) with
    ///   e ~ N(0, R) (Cov = R − Rw wᵀR, the conditional covariance, since wᵀRw = 1).
    package struct Battery: Sendable {
        package enum Model: Sendable {
            case bifactor(BifactorScorer)
            case correlated(CorrelatedFactorsScorer, cholesky: [Double])
        }
        package var model: Model
        /// Per pool item, its index in the model's items.
        package var poolItem: [Int]

        package init(scorer: BifactorScorer, poolItem: [Int]) {
            self.model = .bifactor(scorer)
            self.poolItem = poolItem
        }

        package init(correlated scorer: CorrelatedFactorsScorer, poolItem: [Int]) {
            var l = scorer.correlations
            let positive = choleskyInPlace(&l, n: scorer.factorCount)
            precondition(positive, "the scorer's R is positive definite")
            self.model = .correlated(scorer, cholesky: l)
            self.poolItem = poolItem
        }

        /// The factors beside the full-scale θ (specific factors, or correlated factors).
        var factorCount: Int {
            switch model {
            case .bifactor(let s): s.specificFactorCount
            case .correlated(let s, _): s.factorCount
            }
        }

        var modelName: String {
            if case .bifactor = model { return "bifactor" }
            return "correlated"
        }

        /// Points per factor of the scoring rule (for quasi–Monte Carlo, the fine grid's).
        var quadraturePoints: Int {
            switch model {
            case .bifactor(let s): s.grid.count
            case .correlated(let s, _): s.grid.count
            }
        }

        /// The simulee's other factors given its full-scale θ, drawn from `rng` after θ.
        func drawFactors(theta: Double, using rng: inout SeededGenerator) -> [Double] {
            switch model {
            case .bifactor(let s):
                return (0..<s.specificFactorCount).map { _ in RandomVariate.normal(using: &rng) }
            case .correlated(let s, let l):
                let k = s.factorCount, z = (0..<k).map { _ in RandomVariate.normal(using: &rng) }
                let e = (0..<k).map { f in (0...f).reduce(0.0) { $0 + l[f * k + $1] * z[$1] } }
                let w = s.compositeWeight, shift = theta - w * e.reduce(0, +)
                return (0..<k).map { f in e[f] + w * (0..<k).reduce(0.0) { $0 + s.correlations[f * k + $1] } * shift }
            }
        }

        /// P(u = 1) of pool item `j` for a simulee at full-scale `theta` with `factors` (`drawFactors`).
        func probability(poolItem j: Int, theta: Double, factors: [Double]) -> Double {
            switch model {
            case .bifactor(let s):
                let item = s.items[poolItem[j]]
                return item.probability(general: theta, specific: item.specific.map { factors[$0] } ?? 0)
            case .correlated(let s, _):
                let m = poolItem[j]
                return s.items[m].probability(general: factors[s.itemFactor[m]], specific: 0)
            }
        }

        /// The full model's EAP of the full-scale factor and its posterior SD from the pool items answered.
        func fullScale(items: [Int], responses: [UInt8]) -> (Double, Double)? {
            let answers = zip(items, responses).map { (item: poolItem[$0], response: $1) }
            let estimate: BifactorEstimate?
            switch model {
            case .bifactor(let s): estimate = try? s.eap(answers)
            case .correlated(let s, _): estimate = try? s.eap(answers)
            }
            return estimate.map { ($0.means[0], $0.standardErrors[0]) }
        }
    }

    /// Runs the study with Sympson–Hetter control calibrated by `SympsonHetter.calibrate` (its record goes into
    /// the report's `exposureControl`), or with none when `exposure` is nil; with `battery`, from a bifactor bank
    /// (`Battery`).
    /// - Throws: `AssemblyError.invalidConfiguration` for settings outside `SimulationStudy`'s ranges.
    package static func run(pool: CATItemPool, exposure: SympsonHetter?, options: Options, battery: Battery? = nil) throws(AssemblyError)
        -> CATSimulationReport
    {
        var report = try run(pool: pool, parameters: exposure?.parameters, options: options, battery: battery)
        if let exposure {
            report.exposureControl = .init(
                method: "sympson_hetter", target: exposure.target, margin: exposure.margin,
                simulees: exposure.simulees, converged: exposure.converged,
                controlledItems: exposure.parameters.controlledCount,
                minParameter: exposure.parameters.probabilities.min() ?? 1,
                rounds: exposure.rounds, elapsedSeconds: exposure.elapsedSeconds)
        }
        return report
    }

    /// Runs the study with Sympson–Hetter parameters calibrated earlier (`ExposureParameters.load(csv:bank:)`
    /// reads those `cat simulate --exposure-out` wrote): the report's `exposureControl` names them but has no
    /// calibration record. Checks how a stored set of parameters holds up, e.g. on a changed bank or rules.
    /// - Throws: `AssemblyError.invalidConfiguration` for settings outside `SimulationStudy`'s ranges;
    ///   `AssemblyError.invalidExposure` when the parameters are not one per bank item.
    package static func run(pool: CATItemPool, given parameters: ExposureParameters, options: Options, battery: Battery? = nil) throws(AssemblyError)
        -> CATSimulationReport
    {
        var report = try run(pool: pool, parameters: parameters, options: options, battery: battery)
        report.exposureControl = .init(
            method: "sympson_hetter", target: nil, margin: nil, simulees: nil, converged: nil,
            controlledItems: parameters.controlledCount,
            minParameter: parameters.probabilities.min() ?? 1, rounds: nil, elapsedSeconds: nil)
        return report
    }

    private static func run(pool: CATItemPool, parameters: ExposureParameters?, options: Options, battery: Battery?) throws(AssemblyError)
        -> CATSimulationReport
    {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw AssemblyError(.invalidConfiguration, problems: problems) }
        if let parameters, parameters.probabilities.count != pool.itemCount {
            throw AssemblyError(
                .invalidExposure, "exposure parameters for \(parameters.probabilities.count) items given for a bank of \(pool.itemCount)")
        }
        let started = Date()
        let run = runSimulees(
            pool: pool, exposure: parameters, count: options.simulees, seed: options.seed, stream: 0,
            thetaMean: options.thetaMean, thetaSD: options.thetaSD, threads: options.threads, battery: battery)
        let elapsed = Date().timeIntervalSince(started)
        let config = pool.configuration
        let n = Double(options.simulees)
        let outcomes = run.outcomes

        var recovery = RecoveryStatistics(binWidth: options.binWidth, binBound: options.binBound)
        var interim = RecoveryStatistics(binWidth: options.binWidth, binBound: options.binBound)
        var violations = 0
        var minLength = Int.max, maxLength = 0
        var lengthCounts = [Int](repeating: 0, count: config.maxItems + 1)
        var reasons: [String: Int] = [:]
        for reason in AdaptiveSession.StopReason.allCases { reasons[reason.rawValue] = 0 }
        for o in outcomes {
            recovery.add(theta: o.theta, estimate: o.estimate, standardError: o.standardError, length: o.length, seReached: o.seReached)
            interim.add(theta: o.theta, estimate: o.interimEstimate, standardError: o.interimStandardError, length: o.length, seReached: o.seReached)
            if !o.contentMet { violations += 1 }
            minLength = min(minLength, o.length)
            maxLength = max(maxLength, o.length)
            lengthCounts[min(o.length, config.maxItems)] += 1
            reasons[o.stop.rawValue, default: 0] += 1
        }
        let meanLength = Double(run.totalLength) / n

        // Exposure over the items the CAT may select (active items).
        let eligible = pool.eligible.reduce(0) { $0 + ($1 ? 1 : 0) }
        var domainMeans: [String: Double] = [:]
        for (d, domain) in pool.bank.domains.enumerated() { domainMeans[domain] = Double(run.domainTotals[d]) / n }
        var lengths: [String: Int] = [:]
        for (length, count) in lengthCounts.enumerated() where count > 0 { lengths[String(length)] = count }

        let report = CATSimulationReport(
            simulees: options.simulees, seed: options.seed, thetaMean: options.thetaMean, thetaSD: options.thetaSD,
            bankItems: pool.itemCount, eligibleItems: eligible, domains: pool.bank.domains,
            meanLength: meanLength, minLength: minLength, maxLength: maxLength, lengthCounts: lengths,
            figures: SimulationFigures(
                recovery: recovery, seTarget: config.seTarget, administered: run.administered, eligible: pool.eligible,
                simulees: options.simulees, meanLength: meanLength),
            itemsAboveExposureTarget: config.exposureTarget.map { r in run.administered.reduce(0) { $0 + (Double($1) / n > r ? 1 : 0) } },
            contentViolations: violations, stopReasons: reasons, domainMeanItems: domainMeans,
            bins: recovery.binReports(seTarget: config.seTarget), exposureControl: nil, configuration: config,
            elapsedSeconds: elapsed, steps: run.totalLength, threads: max(1, min(options.threads, options.simulees)),
            battery: battery.map { b in
                .init(
                    model: b.modelName, specificFactors: b.factorCount, quadraturePoints: b.quadraturePoints,
                    marginalRMSE: interim.rmse, marginalBias: interim.bias, marginalMeanSE: interim.meanSE, marginalCorrelation: interim.correlation)
            })
        return report
    }

    // MARK: engine

    struct Outcome {
        var theta: Double
        var estimate: Double
        var standardError: Double
        var length: Int
        var stop: AdaptiveSession.StopReason
        var contentMet: Bool
        var seReached: Bool
        /// The CAT's own estimate and SE at the stop (equal to `estimate`/`standardError` without a battery).
        var interimEstimate: Double
        var interimStandardError: Double
    }

    struct Run {
        var outcomes: [Outcome]
        /// Per item: times selected (entered the exposure lottery) and administered.
        var selected: [Int]
        var administered: [Int]
        /// Per domain: items administered in total.
        var domainTotals: [Int]
        var totalLength: Int
    }

    /// Seed of simulee `index` in `stream` (0 = the study, 1, 2, … = calibration rounds): SplitMix64 finalisers
    /// of the mixed inputs, so neighbouring indices get unrelated generators.
    static func simuleeSeed(_ seed: UInt64, stream: UInt64, index: Int) -> UInt64 {
        func mix(_ x: UInt64) -> UInt64 {
            var z = x &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return mix(mix(mix(seed) ^ stream) ^ UInt64(truncatingIfNeeded: index))
    }

    /// Runs `count` simulated tests, simulee i on worker i mod W.
    static func runSimulees(
        pool: CATItemPool, exposure: ExposureParameters?, count: Int, seed: UInt64, stream: UInt64,
        thetaMean: Double, thetaSD: Double, threads: Int, battery: Battery? = nil
    ) -> Run {
        let J = pool.itemCount, D = pool.bank.domains.count
        let workers = max(1, min(threads, count))
        let stride = 2 * J + D
        let outcomes = UnsafeMutableBufferPointer<Outcome>.allocate(capacity: count)
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: workers * stride)
        counts.initialize(repeating: 0)
        defer {
            counts.deallocate()
            outcomes.deallocate()
        }
        let shared = UncheckedSendableBox((outcomes, counts))
        let items = pool.bank.items
        parallelFor(workers) { w in
            let (outcomes, counts) = shared.value
            let selected = counts.baseAddress! + w * stride, administered = selected + J, domains = administered + J
            for i in Swift.stride(from: w, to: count, by: workers) {
                var rng = SeededGenerator(seed: simuleeSeed(seed, stream: stream, index: i))
                let theta = RandomVariate.normal(mean: thetaMean, sd: thetaSD, using: &rng)
                // A battery's simulee: its other factors after θ (the unidimensional draws are unchanged).
                let factors = battery?.drawFactors(theta: theta, using: &rng) ?? []
                var session = AdaptiveSession(validatedPool: pool, exposure: exposure)
                while true {
                    switch session.nextItem(using: &rng, onSelected: { selected[$0] += 1 }) {
                    case .administer(let j):
                        let u: UInt8
                        if let battery {
                            let p = battery.probability(poolItem: j, theta: theta, factors: factors)
                            u = RandomVariate.uniform(using: &rng) < p ? 1 : 0
                        } else {
                            u = items[j].response(at: theta, uniform: RandomVariate.uniform(using: &rng))
                        }
                        session.recordUnchecked(item: j, response: u)
                        administered[j] += 1
                        continue
                    case .stop(let reason):
                        for d in 0..<D { domains[d] += session.domainCounts[d] }
                        var estimate = session.estimate.theta, standardError = session.estimate.standardError
                        if let battery, let full = battery.fullScale(items: session.items, responses: session.responses) {
                            (estimate, standardError) = full
                        }
                        (outcomes.baseAddress! + i).initialize(
                            to: Outcome(
                                theta: theta, estimate: estimate, standardError: standardError,
                                length: session.items.count, stop: reason, contentMet: session.meetsDomainMinimums,
                                seReached: session.reachedSETarget, interimEstimate: session.estimate.theta,
                                interimStandardError: session.estimate.standardError))
                    }
                    break
                }
            }
        }
        var selected = [Int](repeating: 0, count: J), administered = selected, domainTotals = [Int](repeating: 0, count: D)
        for w in 0..<workers {
            let base = w * stride
            for j in 0..<J {
                selected[j] += counts[base + j]
                administered[j] += counts[base + J + j]
            }
            for d in 0..<D { domainTotals[d] += counts[base + 2 * J + d] }
        }
        let list = Array(outcomes)
        return Run(
            outcomes: list, selected: selected, administered: administered, domainTotals: domainTotals,
            totalLength: administered.reduce(0, +))
    }

}

/// The figures of a CAT simulation study (JSON keys in snake_case).
package struct CATSimulationReport: Sendable, Encodable {
    package var simulees: Int
    package var seed: UInt64
    package var thetaMean: Double
    package var thetaSD: Double
    package var bankItems: Int
    /// Items the CAT may select (status active).
    package var eligibleItems: Int
    package var domains: [String]
    package var meanLength: Double
    package var minLength: Int
    package var maxLength: Int
    /// Number of tests per length ("12": 803, …).
    package var lengthCounts: [String: Int]
    /// Recovery (of the final score) and exposure (over the eligible, active items).
    package var figures: SimulationFigures
    /// Items whose exposure rate exceeds `exposure_target` (null without one).
    package var itemsAboveExposureTarget: Int?
    /// Tests that ended without every domain's `min_per_domain`.
    package var contentViolations: Int
    package var stopReasons: [String: Int]
    package var domainMeanItems: [String: Double]
    package var bins: [Bin]
    package var exposureControl: ExposureControlSummary?
    package var configuration: CATConfiguration
    package var elapsedSeconds: Double
    /// Items administered in all (one step = one record + one selection).
    package var steps: Int
    package var threads: Int
    /// From a bifactor bank (`CATSimulation.Battery`): the recovery `figures` above are of
    /// the full model's EAP of θ_g; these are of the CAT's own estimate on the marginal items.
    package var battery: BatteryRecovery?

    package struct BatteryRecovery: Sendable, Codable {
        /// "bifactor" (θ is θ_g; `specificFactors` specific factors) or "correlated" (θ is the full-scale
        /// composite; `specificFactors` correlated factors).
        package var model: String
        package var specificFactors: Int
        package var quadraturePoints: Int
        package var marginalRMSE: Double
        package var marginalBias: Double
        package var marginalMeanSE: Double
        package var marginalCorrelation: Double
        enum CodingKeys: String, CodingKey {
            case model, specificFactors = "specific_factors", quadraturePoints = "quadrature_points", marginalRMSE = "marginal_rmse"
            case marginalBias = "marginal_bias", marginalMeanSE = "marginal_mean_se", marginalCorrelation = "marginal_correlation"
        }
    }

    /// Conditional recovery in one θ bin [lower, upper) (nil bound = open).
    package struct Bin: Sendable, Codable {
        package var lower: Double?
        package var upper: Double?
        package var count: Int
        package var bias: Double?
        package var rmse: Double?
        package var meanSE: Double?
        package var meanLength: Double?
        package var shareSEReached: Double?

        enum CodingKeys: String, CodingKey {
            case lower, upper, count, bias, rmse, meanSE = "mean_se", meanLength = "mean_length", shareSEReached = "share_se_reached"
        }

        package func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(lower, forKey: .lower)
            try c.encode(upper, forKey: .upper)
            try c.encode(count, forKey: .count)
            try c.encode(bias, forKey: .bias)
            try c.encode(rmse, forKey: .rmse)
            try c.encode(meanSE, forKey: .meanSE)
            try c.encode(meanLength, forKey: .meanLength)
            try c.encode(shareSEReached, forKey: .shareSEReached)
        }
    }

    package struct ExposureControlSummary: Sendable, Codable {
        package var method: String
        /// The calibration's target r_max, margin, simulees, convergence, rounds and time; nil when the
        /// parameters were given (`run(pool:given:options:)`).
        package var target: Double?
        package var margin: Double?
        package var simulees: Int?
        package var converged: Bool?
        package var controlledItems: Int
        package var minParameter: Double
        package var rounds: [SympsonHetter.Round]?
        package var elapsedSeconds: Double?
        /// Where given parameters came from (set by the caller, e.g. the file `cat simulate --exposure` read).
        package var source: String?

        enum CodingKeys: String, CodingKey {
            case method, target, margin, simulees, converged, controlledItems = "controlled_items", minParameter = "min_parameter"
            case rounds, elapsedSeconds = "elapsed_seconds", source
        }
    }

    enum CodingKeys: String, CodingKey {
        case simulees, seed, thetaMean = "theta_mean", thetaSD = "theta_sd", bankItems = "bank_items", eligibleItems = "eligible_items"
        case domains, meanLength = "mean_length", minLength = "min_length", maxLength = "max_length", lengthCounts = "length_counts"
        case itemsAboveExposureTarget = "items_above_exposure_target"
        case contentViolations = "content_violations", stopReasons = "stop_reasons", domainMeanItems = "domain_mean_items", bins
        case exposureControl = "exposure_control", configuration, elapsedSeconds = "elapsed_seconds", steps, threads, battery
    }

    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(simulees, forKey: .simulees)
        try c.encode(seed, forKey: .seed)
        try c.encode(thetaMean, forKey: .thetaMean)
        try c.encode(thetaSD, forKey: .thetaSD)
        try c.encode(bankItems, forKey: .bankItems)
        try c.encode(eligibleItems, forKey: .eligibleItems)
        try c.encode(domains, forKey: .domains)
        try c.encode(meanLength, forKey: .meanLength)
        try c.encode(minLength, forKey: .minLength)
        try c.encode(maxLength, forKey: .maxLength)
        try c.encode(lengthCounts, forKey: .lengthCounts)
        try c.encode(itemsAboveExposureTarget, forKey: .itemsAboveExposureTarget)
        try c.encode(contentViolations, forKey: .contentViolations)
        try c.encode(stopReasons, forKey: .stopReasons)
        try c.encode(domainMeanItems, forKey: .domainMeanItems)
        try c.encode(bins, forKey: .bins)
        try c.encode(exposureControl, forKey: .exposureControl)
        try c.encode(configuration, forKey: .configuration)
        try c.encode(elapsedSeconds, forKey: .elapsedSeconds)
        try c.encode(steps, forKey: .steps)
        try c.encode(threads, forKey: .threads)
        try c.encodeIfPresent(battery, forKey: .battery)
        try figures.encode(to: encoder)
    }

    /// The report as pretty-printed JSON with sorted keys (stable across runs except `elapsed_seconds`).
    package func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    }
}
