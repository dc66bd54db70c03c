import Foundation
import Psychometrics

/// A seeded simulation study of fixed forms: simulees θ ~ N(μ, σ²) each take a form assembled to the blueprint
/// (their own form, from a seed derived from the study seed and their index — the app's per-request assembly —
/// or one of a fixed set of parallel forms, in turn), answer with probability P(θ), and are scored by EAP.
/// The report gives recovery (bias, RMSE, by θ bin), precision, exposure, overlap and content figures, in the
/// same terms as the CAT study. Results depend on the seed only, not on the number of threads.
package enum FormSimulation {
    package struct Options: Sendable, Hashable {
        package var simulees: Int
        package var seed: UInt64
        package var thetaMean = 0.0
        package var thetaSD = 1.0
        /// Share of simulees with SE ≤ this is reported (nil: not reported).
        package var seTarget: Double?
        /// Use this many parallel forms, assigned in turn; nil assembles a form per simulee.
        package var fixedForms: Int?
        package var binWidth = 0.5
        package var binBound = 3.0
        package var threads = WorkerThreads.all
        package init(simulees: Int, seed: UInt64) { self.simulees = simulees; self.seed = seed }
    }

    package static func run(assembler: FormAssembler, options: Options) throws -> FormSimulationReport {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw AssemblyError(.invalidConfiguration, problems: problems) }
        let started = Date()
        let bank = assembler.bank
        let estimator =
            bank.hasCategoryItems
            ? try AbilityEstimator(items: bank.items.map(\.responseModel), latentScale: bank.latentScale)
            : try AbilityEstimator(parameters: bank.items.map(\.parameters), latentScale: bank.latentScale)
        let fixed: [AssembledForm]? = try options.fixedForms.map { count in
            var blueprint = assembler.blueprint
            blueprint.forms = count
            return try FormAssembler(bank: bank, blueprint: blueprint).assemble(options: AssemblyOptions(seed: options.seed))
        }
        // Per-simulee forms: check feasibility once, so a bad blueprint fails before the study.
        if fixed == nil { _ = try assembler.assemble(options: AssemblyOptions(seed: options.seed)) }

        struct Outcome { var theta = 0.0, estimate = 0.0, se = 0.0, length = 0, relaxed = false }
        let n = options.simulees, J = bank.items.count
        let workers = max(1, min(options.threads, n))
        var outcomes = [Outcome](repeating: Outcome(), count: n)
        var counts = [Int](repeating: 0, count: workers * J)
        var failure: [String?] = [String?](repeating: nil, count: workers)
        parallelFor(workers, mutating: &outcomes, &counts, &failure) { w, out, cnt, fail in
            for i in stride(from: w, to: n, by: workers) {
                var rng = SeededGenerator(seed: CATSimulation.simuleeSeed(options.seed, stream: 7, index: i))
                let theta = RandomVariate.normal(mean: options.thetaMean, sd: options.thetaSD, using: &rng)
                let form: AssembledForm
                if let fixed {
                    form = fixed[i % fixed.count]
                } else {
                    do { form = try assembler.assemble(options: AssemblyOptions(seed: rng.next()))[0] } catch {
                        fail[w] = "\(error)"
                        return
                    }
                }
                let responses = form.items.map { k -> UInt8 in
                    bank.items[k].response(at: theta, uniform: RandomVariate.uniform(using: &rng))
                }
                let e = form.items.withUnsafeBufferPointer { i in responses.withUnsafeBufferPointer { r in estimator.estimate(i, r) } }
                for k in form.items { cnt[w * J + k] += 1 }
                out[i] = Outcome(theta: theta, estimate: e.theta, se: e.standardError, length: form.items.count, relaxed: !form.relaxed.isEmpty)
            }
        }
        if let message = failure.compactMap({ $0 }).first { throw AssemblyError.infeasibleBlueprint([message]) }
        var administered = [Int](repeating: 0, count: J)
        for w in 0..<workers { for j in 0..<J { administered[j] += counts[w * J + j] } }

        var recovery = RecoveryStatistics(binWidth: options.binWidth, binBound: options.binBound)
        var violations = 0
        for o in outcomes {
            recovery.add(
                theta: o.theta, estimate: o.estimate, standardError: o.se, length: o.length,
                seReached: options.seTarget.map { o.se <= $0 } ?? false)
            if o.relaxed { violations += 1 }
        }
        let length = Double(administered.reduce(0, +)) / Double(n)
        let eligible = Set(assembler.blueprint.statuses ?? [.active])
        return FormSimulationReport(
            simulees: n, seed: options.seed,
            mode: options.fixedForms.map { "\($0) parallel forms, assigned in turn" } ?? "a form assembled per simulee",
            length: assembler.blueprint.length, meanLength: length,
            figures: SimulationFigures(
                recovery: recovery, seTarget: options.seTarget, administered: administered,
                eligible: bank.items.map { eligible.contains($0.status) }, simulees: n, meanLength: length),
            contentViolations: violations, bins: recovery.binReports(seTarget: options.seTarget), elapsedSeconds: Date().timeIntervalSince(started))
    }
}

/// Figures of a fixed-form simulation study (JSON keys in snake_case; the same meanings as the CAT report:
/// overlap is the mean share of items two simulees' forms have in common, content violations count forms with a
/// relaxed rule).
package struct FormSimulationReport: Sendable, Encodable {
    package var simulees: Int
    package var seed: UInt64
    package var mode: String
    package var length: Int
    package var meanLength: Double
    /// Recovery and exposure (over the items of the blueprint's statuses, default active).
    package var figures: SimulationFigures
    package var contentViolations: Int
    package var bins: [CATSimulationReport.Bin]
    package var elapsedSeconds: Double

    enum CodingKeys: String, CodingKey {
        case simulees, seed, mode, length, meanLength = "mean_length", contentViolations = "content_violations", bins
        case elapsedSeconds = "elapsed_seconds"
    }

    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(simulees, forKey: .simulees)
        try c.encode(seed, forKey: .seed)
        try c.encode(mode, forKey: .mode)
        try c.encode(length, forKey: .length)
        try c.encode(meanLength, forKey: .meanLength)
        try c.encode(contentViolations, forKey: .contentViolations)
        try c.encode(bins, forKey: .bins)
        try c.encode(elapsedSeconds, forKey: .elapsedSeconds)
        try figures.encode(to: encoder)
    }
}
