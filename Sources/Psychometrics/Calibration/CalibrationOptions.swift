import Foundation

/// Beta(α, β) prior on the lower asymptote c: log density (α − 1)·log c + (β − 1)·log(1 − c) (constant
/// dropped). The default Beta(5, 17) has mode 0.2 = 1/5 options and the weight of 20 pseudo-responses, as
/// BILOG-MG's default for 3PL calibration.
public struct BetaPrior: Sendable, Hashable, Codable, CustomStringConvertible {
    public var alpha: Double
    public var beta: Double
    /// Shape parameters a prior may have: [1, 1000]. Below 1 the log density is not concave (the M-step's
    /// Newton steps need it); α + β − 2 is the prior's weight in pseudo-responses, and 1000 of them would
    /// overrule any realistic sample.
    package static let allowedShapes = NumberRange.closed(1, 1000)

    /// Problems with prior parameters (the initialiser throws them; `CalibrationOptions` checks them again).
    package static func validationProblems(alpha: Double, beta: Double) -> [String] {
        [allowedShapes.problem(alpha, "the Beta prior's alpha"), allowedShapes.problem(beta, "the Beta prior's beta")].compactMap { $0 }
    }

    /// - Throws: `PsychometricsError.invalidOptions` unless both shapes are in `allowedShapes` (Beta(0.5, 0.5) is
    ///   not log-concave, and the M-step's Newton steps need it).
    public init(alpha: Double, beta: Double) throws(PsychometricsError) {
        let problems = Self.validationProblems(alpha: alpha, beta: beta)
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid Beta prior: " + problems.joined(separator: "; ")) }
        self.init(checkedAlpha: alpha, beta: beta)
    }

    private init(checkedAlpha alpha: Double, beta: Double) {
        self.alpha = alpha
        self.beta = beta
    }

    /// Decoding checks what the initialiser checks.
    /// - Throws: `DecodingError`, also for shapes `init(alpha:beta:)` refuses.
    public init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case alpha, beta }
        let c = try decoder.container(keyedBy: Keys.self)
        let alpha = try c.decode(Double.self, forKey: .alpha), beta = try c.decode(Double.self, forKey: .beta)
        self = try PsychometricsError.decoding(at: c.codingPath) { () throws(PsychometricsError) in try BetaPrior(alpha: alpha, beta: beta) }
    }

    /// Beta(5, 17): mode 0.2, the weight of 20 pseudo-responses (the 3PL default).
    public static let standard = BetaPrior(checkedAlpha: 5, beta: 17)
    /// Option counts K of `centred(onOptions:)` a setting may ask for: 2…100. Beyond 100 options the mode 1/K
    /// is indistinguishable from no guessing: use no prior.
    package static let allowedOptionCounts = 2...100

    /// A prior centred (mode) on 1/`options` with weight `weight` pseudo-responses.
    /// - Throws: `PsychometricsError.invalidOptions` for `options` outside `allowedOptionCounts` or a weight
    ///   that gives shapes outside `allowedShapes` (0 ≤ weight, and at most about 1,000).
    public static func centred(onOptions options: Int, weight: Double = 20) throws(PsychometricsError) -> BetaPrior {
        if let problem = allowedOptionCounts.problem(options, "the number of options") { throw PsychometricsError(.invalidOptions, problem) }
        return try BetaPrior(alpha: weight / Double(options) + 1, beta: weight * (1 - 1 / Double(options)) + 1)
    }
    public var mode: Double { (alpha - 1) / (alpha + beta - 2) }
    public var description: String { "Beta(\(alpha.formatted6), \(beta.formatted6))" }
}

/// Log-normal prior on the slope a: log a ~ N(meanLog, sdLog²). With it the slope is estimated on the log
/// scale, so a stays positive.
public struct LogNormalPrior: Sendable, Hashable, Codable, CustomStringConvertible {
    public var meanLog: Double
    public var sdLog: Double
    /// Means of log a a prior may have: [−3, 3], i.e. a median slope between e⁻³ ≈ 0.05 and e³ ≈ 20, the
    /// calibrator's slope bound.
    package static let allowedMeanLogs = NumberRange.closed(-3, 3)

    /// SDs of log a a prior may have: (0, 10]. Beyond 10 the prior is flat over every slope the calibrator
    /// allows (log a between log 0.001 and log 20).
    package static let allowedSDLogs = NumberRange.aboveUpTo(0, 10)

    /// Problems with prior parameters (the initialiser throws them; `CalibrationOptions` checks them again).
    package static func validationProblems(meanLog: Double, sdLog: Double) -> [String] {
        [allowedMeanLogs.problem(meanLog, "the log-normal prior's MEANLOG"), allowedSDLogs.problem(sdLog, "the log-normal prior's SDLOG")].compactMap
        { $0 }
    }

    /// - Throws: `PsychometricsError.invalidOptions` unless `meanLog` is in `allowedMeanLogs` and `sdLog` in
    ///   `allowedSDLogs` (an SD of 0 would divide by zero in the log density).
    public init(meanLog: Double, sdLog: Double) throws(PsychometricsError) {
        let problems = Self.validationProblems(meanLog: meanLog, sdLog: sdLog)
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid log-normal prior: " + problems.joined(separator: "; ")) }
        self.init(checkedMeanLog: meanLog, sdLog: sdLog)
    }

    private init(checkedMeanLog meanLog: Double, sdLog: Double) {
        self.meanLog = meanLog
        self.sdLog = sdLog
    }

    /// Decoding checks what the initialiser checks.
    /// - Throws: `DecodingError`, also for values `init(meanLog:sdLog:)` refuses.
    public init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case meanLog, sdLog }
        let c = try decoder.container(keyedBy: Keys.self)
        let meanLog = try c.decode(Double.self, forKey: .meanLog), sdLog = try c.decode(Double.self, forKey: .sdLog)
        self = try PsychometricsError.decoding(at: c.codingPath) { () throws(PsychometricsError) in try LogNormalPrior(meanLog: meanLog, sdLog: sdLog)
        }
    }

    /// LogNormal(0, 0.5): the 2PL/3PL slope prior's default for the 3PL.
    public static let standard = LogNormalPrior(checkedMeanLog: 0, sdLog: 0.5)
    public var description: String { "LogNormal(\(meanLog.formatted6), \(sdLog.formatted6))" }
}

/// How the E-step visits the data.
package enum EStepStrategy: String, Sendable, Hashable, Codable {
    /// Dense BLAS products when at least 15% of cells are answered, per-cell sparse accumulation otherwise.
    case automatic
    /// Persons × items matrices and BLAS `dgemm` (missing cells masked).
    case dense
    /// Visits answered cells only: cost ∝ answered cells × quadrature points.
    case sparse
}

/// How the EM iterations are accelerated (`CalibrationOptions.acceleration`).
public enum EMAcceleration: String, Sendable, Hashable, Codable, CaseIterable {
    /// SQUAREM (Varadhan & Roland 2008, scheme S3) with a monotonicity safeguard: two EM cycles, a squared
    /// extrapolation along them, then one EM cycle from the extrapolated point, which is kept only when it
    /// does not lower the penalised log-likelihood (see `EMCalibrator`).
    case squarem
    /// Plain EM: one E-step and one M-step per cycle.
    case none
}

/// See `CalibrationOptions.denseProductThreading`.
package enum DenseProductThreading: String, Sendable, Hashable, Codable {
    case personBlocks = "person_blocks"
    case blas
}

/// Options for marginal maximum-likelihood calibration (Bock & Aitkin 1981 EM).
public struct CalibrationOptions: Sendable, Hashable, Codable {
    public var model: IRTModel
    /// Number of quadrature points (default 61, as mirt).
    public var quadraturePoints = 61
    /// Quadrature points span [−thetaBound, thetaBound] (default 6, as mirt's `theta_lim`).
    public var thetaBound = 6.0
    /// EM stops when the largest change of any parameter (a, d = −ab, c) in one cycle is below this.
    public var tolerance = 1e-4
    /// EM stops after this many cycles (then `converged` is false). A cycle is one E-step and one M-step (one
    /// application of the EM map), with or without acceleration.
    public var maxCycles = 500
    /// EM acceleration: `.squarem` (default) or `.none` (plain EM). Both stop by the same rule (`tolerance`).
    public var acceleration = EMAcceleration.squarem
    /// Prior on c (3PL only). Default Beta(5, 17) for 3PL; nil = no prior (plain ML for c).
    public var guessingPrior: BetaPrior?
    /// 3PL: guessing priors of single items by item id (e.g. Beta centred on 1/K for an item of K options,
    /// `BetaPrior.centred(onOptions:)`), in place of `guessingPrior` for those items. Ids not in the data are
    /// ignored.
    public var itemGuessingPriors: [String: BetaPrior] = [:]
    /// Prior on slopes (2PL/3PL). Default LogNormal(0, 0.5) for 3PL, none for 2PL.
    public var slopePrior: LogNormalPrior?
    /// Items with fewer responses than this are excluded from calibration (reported).
    public var minimumItemResponses = 10
    /// Largest |a| the M-step allows; estimates at the bound are flagged.
    public var maximumSlope = 20.0
    package var eStep = EStepStrategy.automatic
    /// Worker threads for the E-step, M-step and standard errors: 1…256, default every core within that cap.
    /// Each worker multiplies its own block of persons, so each BLAS call should run on one thread: set
    /// `OPENBLAS_NUM_THREADS=1` in the environment of a process that calibrates (the `iqscore` executable sets one
    /// BLAS thread at start-up); otherwise the two layers of threads compete (same results, slower). The library
    /// never changes OpenBLAS's process-wide thread count itself.
    public var workers = WorkerThreads.all
    /// How the dense E-step's matrix products are threaded — an explicit choice, because OpenBLAS's thread count
    /// is a process-wide setting the library never changes:
    /// - `.personBlocks` (default): `workers` threads each multiply their own block of persons, so each BLAS
    ///   call should run on one thread. Set `OPENBLAS_NUM_THREADS=1` in the environment of a
    ///   process that calibrates (the `iqscore` executable sets one BLAS thread at start-up); otherwise the two
    ///   layers of threads compete (same results, slower).
    /// - `.blas`: one worker, and OpenBLAS threads each product itself (for a process that keeps OpenBLAS
    ///   multi-threaded for other work). Measured slower on the E-step's tall-thin products (`../NOTES.md`).
    package var denseProductThreading = DenseProductThreading.personBlocks
    /// Compute standard errors (observed information by Louis' formula).
    public var standardErrors = true
    /// Memory budget of the fit in bytes: a fit whose estimated peak (`EMCalibrator.estimatedMemoryBytes`)
    /// exceeds it is refused before it starts. Nil: no limit.
    public var maxMemoryBytes: Int?
    /// Items held at known bank values (fixed-parameter, "online" calibration of pretest items), by item id.
    ///
    /// Empty (the default): every item is estimated and θ ~ N(0, 1) identifies the scale (Rasch: N(0, σ²)).
    /// Otherwise the fixed items define the scale: their a, b, c never change, the other items are estimated
    /// under `model` on the fixed items' θ scale, and the latent distribution θ ~ N(μ, σ²) is estimated
    /// (see `EMCalibrator`). Models may mix: a fixed item keeps its own parameters whatever its model (a 3PL
    /// bank item keeps its c in a 2PL calibration); the free items follow `model`, where Rasch free items
    /// have a = 1 and 1PL free items take the fixed items' common slope (they must share one).
    /// Fixed ids missing from the data are reported, not an error; data items not listed here are free.
    public var fixedItems: [String: ItemParameters] = [:]
    /// How runtime messages name a setting they suggest changing (a memory limit the fit does not fit in): in
    /// words for a program that calibrates in code, as options for the command line ("--max-memory"). Not part of
    /// the options' JSON.
    package var naming = SettingNaming.words

    private enum CodingKeys: String, CodingKey {
        case model, quadraturePoints, thetaBound, tolerance, maxCycles, acceleration, guessingPrior, itemGuessingPriors
        case slopePrior, minimumItemResponses, maximumSlope, eStep, workers, denseProductThreading, standardErrors
        case maxMemoryBytes, fixedItems
    }

    public init(model: IRTModel) {
        self.model = model
        if model == .threePL {
            guessingPrior = .standard
            slopePrior = .standard
        }
    }

    /// Convergence tolerances: (0, 1).
    package static let allowedTolerances = NumberRange.open(0, 1)

    /// EM cycle limits: 1…100,000. A calibration that has not converged in 100,000 cycles will not, and each
    /// cycle is a full pass over the data.
    package static let allowedMaxCycles = 1...100_000

    /// Minimum responses per item: at least 1.
    package static let allowedMinimumItemResponses = 1...Int.max

    /// Problems with the options themselves (not the data), as sentences naming each setting as `naming` says.
    package func validationProblems(naming: SettingNaming = .words) -> [String] {
        var problems: [String] = []
        problems += QuadratureGrid.validationProblems(points: quadraturePoints, bound: thetaBound, naming: naming)
        if let p = Self.allowedTolerances.problem(tolerance, naming.name("tolerance")) { problems.append(p) }
        if let p = Self.allowedMaxCycles.problem(maxCycles, naming.name("max_cycles")) { problems.append(p) }
        if let p = Self.allowedMinimumItemResponses.problem(minimumItemResponses, naming.name("min_item_responses", words: "minimum item responses"))
        {
            problems.append(p)
        }
        problems += WorkerThreads.validationProblems(workers, naming: naming)
        if let prior = guessingPrior { problems += BetaPrior.validationProblems(alpha: prior.alpha, beta: prior.beta) }
        if let prior = slopePrior { problems += LogNormalPrior.validationProblems(meanLog: prior.meanLog, sdLog: prior.sdLog) }
        if (guessingPrior != nil || !itemGuessingPriors.isEmpty) && model != .threePL {
            problems.append("a guessing prior applies to the 3PL model only")
        }
        for (id, prior) in itemGuessingPriors.sorted(by: { $0.key < $1.key }) {
            problems += BetaPrior.validationProblems(alpha: prior.alpha, beta: prior.beta).map { "item '\(id)': \($0)" }
        }
        if slopePrior != nil && !model.hasItemSlopes { problems.append("a slope prior applies to 2PL and 3PL only") }
        for id in fixedItems.keys.sorted() {
            let p = fixedItems[id]!
            if !(p.discrimination > 0 && p.discrimination.isFinite) {
                problems.append("fixed item '\(id)': a = \(p.discrimination.formatted6) must be positive and finite")
            }
            if !p.difficulty.isFinite { problems.append("fixed item '\(id)': b = \(p.difficulty.formatted6) must be finite") }
            if !(p.guessing >= 0 && p.guessing < 1) { problems.append("fixed item '\(id)': c = \(p.guessing.formatted6) must be in [0, 1)") }
        }
        if model == .onePL, let slopes = fixedItems.values.map(\.discrimination).minAndMax(),
            slopes.max - slopes.min > 1e-6 * slopes.max
        {
            problems.append(
                "1PL items calibrated onto fixed items take the fixed items' common slope, but the fixed slopes range from \(slopes.min.formatted6) to \(slopes.max.formatted6); use the 2PL or Rasch model for the new items"
            )
        }
        return problems
    }
}

extension Sequence where Element: Comparable {
    /// Smallest and largest element in one pass; nil when empty.
    func minAndMax() -> (min: Element, max: Element)? {
        var it = makeIterator()
        guard var lo = it.next() else { return nil }
        var hi = lo
        while let x = it.next() { if x < lo { lo = x }; if x > hi { hi = x } }
        return (lo, hi)
    }
}

extension Double {
    /// Up to 6 significant digits, no trailing zeros (for messages and summaries).
    package var formatted6: String {
        var s = String(format: "%.6g", self)
        if s.contains(".") && !s.contains("e") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        return s
    }
}
