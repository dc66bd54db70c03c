import Foundation

/// One item's parameters in van der Linden's (2006) lognormal response-time model:
/// ```
/// log Tᵢⱼ ~ N(βⱼ − τᵢ, 1/αⱼ²)
/// f(t; τ) = αⱼ / (t √(2π)) · exp(−½ αⱼ² (log t − (βⱼ − τ))²)
/// ```
/// βⱼ, the **time intensity**, is the mean log-seconds the item takes a person of speed τ = 0 (e^β is its median
/// time, in seconds); αⱼ, the **time discrimination**, is the inverse SD of the log-times around it (a large α: the
/// item's times say much about speed). τᵢ is the person's speed (larger: faster). Source: van der Linden, W. J.
/// (2006), A lognormal model for response times on test items, *Journal of Educational and Behavioral Statistics*
/// 31, 181–204.
public struct LognormalTimeItem: Sendable, Hashable, Codable {
    /// β, in log-seconds.
    public var timeIntensity: Double
    /// α > 0, per log-second.
    public var timeDiscrimination: Double

    /// Time intensities a bank may hold: log-seconds in [−7, 12] (1 ms … 45 hours: `ResponseTimes.allowedSeconds`
    /// with room for the speed's spread).
    package static let allowedTimeIntensities = NumberRange.closed(-7, 12)
    /// Time discriminations: (0, 100] (100: log-times within 1% of their mean — no item's times are that tight).
    package static let allowedTimeDiscriminations = NumberRange.aboveUpTo(0, 100)

    /// - Throws: `PsychometricsError.invalidParameters` for a value outside `allowedTimeIntensities` or
    ///   `allowedTimeDiscriminations`.
    public init(timeIntensity: Double, timeDiscrimination: Double) throws(PsychometricsError) {
        if let problem = Self.allowedTimeIntensities.problem(timeIntensity, "the time intensity β")
            ?? Self.allowedTimeDiscriminations.problem(timeDiscrimination, "the time discrimination α")
        {
            throw PsychometricsError(.invalidParameters, problem)
        }
        self.timeIntensity = timeIntensity
        self.timeDiscrimination = timeDiscrimination
    }

    /// The package's path for values an estimator produced inside the ranges.
    package init(checkedTimeIntensity beta: Double, timeDiscrimination alpha: Double) {
        timeIntensity = beta
        timeDiscrimination = alpha
    }

    /// log f(t; τ), the log-density of `seconds` at speed τ (per second, Jacobian 1/t included).
    public func logDensity(seconds t: Double, speed tau: Double) -> Double {
        let y = log(t), z = timeDiscrimination * (y - (timeIntensity - tau))
        return log(timeDiscrimination) - y - 0.5 * log(2 * Double.pi) - 0.5 * z * z
    }

    /// The standardised log-time residual αⱼ (log t − (βⱼ − τ)), N(0, 1) under the model.
    public func residual(seconds t: Double, speed tau: Double) -> Double {
        timeDiscrimination * (log(t) - (timeIntensity - tau))
    }

    /// The median time at speed τ, e^(β − τ) seconds.
    public func medianSeconds(speed tau: Double = 0) -> Double { exp(timeIntensity - tau) }
}

public extension LognormalTimeItem {
    private enum Keys: String, CodingKey { case timeIntensity, timeDiscrimination }

    /// Decodes and checks as `init(timeIntensity:timeDiscrimination:)`.
    /// - Throws: `DecodingError`, also for parameters `init(timeIntensity:timeDiscrimination:)` refuses.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let beta = try c.decode(Double.self, forKey: .timeIntensity), alpha = try c.decode(Double.self, forKey: .timeDiscrimination)
        self = try PsychometricsError.decoding(at: decoder.codingPath) { () throws(PsychometricsError) in
            try LognormalTimeItem(timeIntensity: beta, timeDiscrimination: alpha)
        }
    }
}
