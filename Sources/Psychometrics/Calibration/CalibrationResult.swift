/// Standard errors of one item's parameters in the slope–difficulty parameterisation; `nil` where the model
/// fixes the parameter (a in Rasch, c outside 3PL) or the information matrix could not be inverted.
public struct ItemStandardErrors: Sendable, Hashable, Codable {
    public var discrimination: Double?
    public var difficulty: Double?
    public var guessing: Double?

    public init(discrimination: Double? = nil, difficulty: Double? = nil, guessing: Double? = nil) {
        self.discrimination = discrimination
        self.difficulty = difficulty
        self.guessing = guessing
    }
}

/// An item left out of calibration and why.
public struct ExcludedItem: Sendable, Hashable, Codable {
    public var itemID: String
    public var responses: Int
    public var correct: Int
    public var reason: String
}

/// One calibrated item: parameters, standard errors, classical statistics and flags.
public struct CalibratedItem: Sendable, Hashable, Codable {
    public var itemID: String
    public var parameters: ItemParameters
    public var standardErrors: ItemStandardErrors
    /// Number of responses used.
    public var responses: Int
    /// Proportion correct among those responses.
    public var pValue: Double
    /// Problems with the estimate (e.g. "slope at bound", "negative slope"); `fixed` on fixed items.
    public var flags: [String]
    /// True when the item was held at its bank values (`CalibrationOptions.fixedItems`); its parameters are then
    /// exactly the given ones and it has no standard errors.
    public var isFixed = false
}

/// The outcome of a calibration: an immutable value, safe to share across threads.
public struct CalibrationResult: Sendable, Hashable, Codable {
    public var model: IRTModel
    public var items: [CalibratedItem]
    public var excludedItems: [ExcludedItem]
    /// Ids of persons left out because they had no responses to any calibrated item.
    public var excludedPersons: [String]
    public var personCount: Int
    package var cellCount: Int
    /// SD of θ: estimated for Rasch (the latent variance is σ²) and with fixed items, 1 otherwise.
    public var latentSD: Double
    public var latentSDStandardError: Double?
    /// Mean of θ: estimated with fixed items (on their scale), 0 otherwise.
    public var latentMean = 0.0
    public var latentMeanStandardError: Double?
    /// Ids of the calibrated items held at their bank values, and of those estimated, in item order.
    public var fixedItemIDs: [String] = []
    public var freeItemIDs: [String] = []
    /// Ids of `CalibrationOptions.fixedItems` that no person answered (not in the data), sorted.
    public var fixedItemsNotInData: [String] = []
    /// Marginal log-likelihood Σᵢ log ∫ Πⱼ P(uᵢⱼ | θ) dG(θ) at the final estimates (priors not included).
    public var logLikelihood: Double
    /// Estimated parameters: the free items' parameters (+ μ and σ with fixed items; fixed items count 0).
    public var parameterCount: Int
    /// AIC = −2 logL + 2k; BIC = −2 logL + k log N (k free parameters, N persons).
    public var aic: Double
    public var bic: Double
    /// EM cycles: each one E-step and one M-step (one application of the EM map), with or without acceleration.
    public var cycles: Int
    /// E-steps of the EM iterations: one per cycle, plus the E-steps of the extrapolations SQUAREM rejected
    /// (`options.acceleration`); without acceleration equal to `cycles`. The final E-step at the estimates (for
    /// the log-likelihood and standard errors) is not counted.
    package var eSteps = 0
    /// SQUAREM extrapolations kept, and rejected by its safeguard (the penalised log-likelihood would have
    /// dropped; the iteration then went on from plain EM's point). 0 without acceleration.
    package var extrapolations = 0
    package var rejectedExtrapolations = 0
    public var converged: Bool
    /// Largest parameter change in the last cycle.
    package var lastChange: Double
    /// Marginal log-likelihood at the start of each cycle (its E-step's).
    public var logLikelihoodTrace: [Double]
    /// The same plus the log prior densities of the estimated parameters: the objective EM increases (the log
    /// posterior up to a constant; equal to `logLikelihoodTrace` without priors). Never decreases, with or
    /// without SQUAREM, beyond what the M-step's own rounding allows.
    package var logPosteriorTrace: [Double] = []
    package var eStep: EStepStrategy
    /// How the standard errors were computed, or why there are none.
    public var standardErrorMethod: String
    public var options: CalibrationOptions
    public var warnings: [String]
    /// Wall time of the whole calibration, and of the standard-error step within it.
    public var elapsedSeconds: Double
    package var standardErrorSeconds: Double
    /// Where the EM cycles spent their time.
    package var timing: CalibrationTiming

    /// The calibrated item parameters in item order, convenient for scoring.
    public var parameters: [ItemParameters] { items.map(\.parameters) }
}

/// Time spent in the EM cycles (wall clock, summed over cycles; the final E-step and the standard errors are
/// not included). `blasSeconds` is the part of the dense E-step spent inside its BLAS products (the slowest
/// worker's sum): the machine's limit for the matrix work of each cycle. 0 for the sparse E-step.
package struct CalibrationTiming: Sendable, Hashable, Codable {
    package var eStepSeconds = 0.0
    package var mStepSeconds = 0.0
    package var blasSeconds = 0.0
    package init() {}
}

/// Where a running calibration is, reported after every EM cycle and before the standard errors (for a
/// progress display such as `iqscore calibrate`'s, which mirt's "Iteration: 12, Log-Lik: …, Max-Change: …"
/// line inspired).
public struct CalibrationProgress: Sendable, Hashable {
    public enum Phase: Sendable, Hashable {
        /// An EM cycle finished.
        case cycle
        /// EM has stopped; the observed information and standard errors are being computed.
        case standardErrors
    }
    public var phase: Phase
    /// EM cycles done.
    public var cycle: Int
    /// The marginal log-likelihood at the start of the cycle (the E-step's), priors excluded.
    public var logLikelihood: Double
    /// The largest absolute change of any parameter (a, d, c; μ, σ where estimated) in the cycle.
    public var largestChange: Double
    /// Seconds since the calibration started.
    public var elapsedSeconds: Double
}
