import Foundation

/// Beta(α, β) prior on the lower asymptote c: log density (α − 1)·log c + (β − 1)·log(1 − c) (constant
/// dropped). The default Beta(5, 17) has mode 0.2 = 1/5 options and the weight of 20 pseudo-responses, as
/// BILOG-MG's default for 3PL calibration.
public struct BetaPrior: Sendable, Hashable, Codable, CustomStringConvertible {
    public var alpha: Double
    public var beta: Double
    public init(alpha: Double, beta: Double) {
        precondition(alpha >= 1 && beta >= 1, "Beta prior parameters must be ≥ 1 to be log-concave, got (\(alpha), \(beta))")
        self.alpha = alpha
        self.beta = beta
    }
    /// A prior centred (mode) on 1/`options` with weight `weight` pseudo-responses.
    public static func centred(onOptions options: Int, weight: Double = 20) -> BetaPrior {
        BetaPrior(alpha: weight / Double(options) + 1, beta: weight * (1 - 1 / Double(options)) + 1)
    }
    public var mode: Double { (alpha - 1) / (alpha + beta - 2) }
    public var description: String { "Beta(\(alpha.formatted6), \(beta.formatted6))" }
}

/// Log-normal prior on the slope a: log a ~ N(meanLog, sdLog²). With it the slope is estimated on the log
/// scale, so a stays positive.
public struct LogNormalPrior: Sendable, Hashable, Codable, CustomStringConvertible {
    public var meanLog: Double
    public var sdLog: Double
    public init(meanLog: Double, sdLog: Double) {
        precondition(sdLog > 0, "log-normal prior SD must be positive, got \(sdLog)")
        self.meanLog = meanLog
        self.sdLog = sdLog
    }
    public var description: String { "LogNormal(\(meanLog.formatted6), \(sdLog.formatted6))" }
}

/// How the E-step visits the data.
public enum EStepStrategy: String, Sendable, Hashable, Codable {
    /// Dense BLAS products when at least 15% of cells are answered, per-cell sparse accumulation otherwise.
    case automatic
    /// Persons × items matrices and BLAS `dgemm` (missing cells masked).
    case dense
    /// Visits answered cells only: cost ∝ answered cells × quadrature points.
    case sparse
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
    /// EM stops after this many cycles (then `converged` is false).
    public var maxCycles = 500
    /// Prior on c (3PL only). Default Beta(5, 17) for 3PL; nil = no prior (plain ML for c).
    public var guessingPrior: BetaPrior?
    /// Prior on slopes (2PL/3PL). Default LogNormal(0, 0.5) for 3PL, none for 2PL.
    public var slopePrior: LogNormalPrior?
    /// Items with fewer responses than this are excluded from calibration (reported).
    public var minimumItemResponses = 10
    /// Largest |a| the M-step allows; estimates at the bound are flagged.
    public var maximumSlope = 20.0
    public var eStep = EStepStrategy.automatic
    /// Worker threads for the E-step (used when OpenBLAS itself runs single-threaded).
    public var workers = ProcessInfo.processInfo.activeProcessorCount
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

    public init(model: IRTModel) {
        self.model = model
        if model == .threePL {
            guessingPrior = BetaPrior(alpha: 5, beta: 17)
            slopePrior = LogNormalPrior(meanLog: 0, sdLog: 0.5)
        }
    }

    /// Problems with the options themselves (not the data), as sentences.
    public func validationProblems() -> [String] {
        var problems: [String] = []
        if quadraturePoints < 5 || quadraturePoints > 401 { problems.append("quadrature points must be 5…401, got \(quadraturePoints)") }
        if !(thetaBound > 0 && thetaBound <= 20) { problems.append("theta bound must be in (0, 20], got \(thetaBound)") }
        if !(tolerance > 0 && tolerance < 1) { problems.append("tolerance must be in (0, 1), got \(tolerance)") }
        if maxCycles < 1 { problems.append("max cycles must be at least 1, got \(maxCycles)") }
        if minimumItemResponses < 1 { problems.append("minimum item responses must be at least 1, got \(minimumItemResponses)") }
        if workers < 1 { problems.append("workers must be at least 1, got \(workers)") }
        if guessingPrior != nil && model != .threePL { problems.append("a guessing prior applies to the 3PL model only") }
        if slopePrior != nil && !model.hasItemSlopes { problems.append("a slope prior applies to 2PL and 3PL only") }
        for id in fixedItems.keys.sorted() {
            let p = fixedItems[id]!
            if !(p.discrimination > 0 && p.discrimination.isFinite) { problems.append("fixed item '\(id)': a = \(p.discrimination) must be positive and finite") }
            if !p.difficulty.isFinite { problems.append("fixed item '\(id)': b = \(p.difficulty) must be finite") }
            if !(p.guessing >= 0 && p.guessing < 1) { problems.append("fixed item '\(id)': c = \(p.guessing) must be in [0, 1)") }
        }
        if model == .onePL, let slopes = fixedItems.values.map(\.discrimination).minAndMax(),
           slopes.max - slopes.min > 1e-6 * slopes.max {
            problems.append("1PL items calibrated onto fixed items take the fixed items' common slope, but the fixed slopes range from \(slopes.min.formatted6) to \(slopes.max.formatted6); use the 2PL or Rasch model for the new items")
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
    public var formatted6: String {
        var s = String(format: "%.6g", self)
        if s.contains(".") && !s.contains("e") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        return s
    }
}
