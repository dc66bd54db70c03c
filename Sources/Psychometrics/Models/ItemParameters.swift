import Foundation

/// Parameters of one dichotomous item in the slope–difficulty parameterisation, logistic metric (D = 1):
/// ```
/// P(θ) = c + (1 − c) / (1 + exp(−a(θ − b)))
/// ```
/// The slope–intercept form used internally by the calibrator is `z = aθ + d` with `d = −ab`.
public struct ItemParameters: Sendable, Hashable, Codable {
    /// Slope a (discrimination).
    public var discrimination: Double
    /// Location b (difficulty): the θ at which P is halfway between c and 1.
    public var difficulty: Double
    /// Lower asymptote c (guessing), 0 for Rasch/1PL/2PL.
    public var guessing: Double

    public init(discrimination: Double = 1, difficulty: Double, guessing: Double = 0) {
        self.discrimination = discrimination
        self.difficulty = difficulty
        self.guessing = guessing
    }

    /// Intercept d = −ab of the slope–intercept form aθ + d.
    @inlinable public var intercept: Double { -discrimination * difficulty }

    /// Probability of a correct response at ability θ.
    @inlinable public func probability(at theta: Double) -> Double {
        guessing + (1 - guessing) * Logistic.sigmoid(discrimination * (theta - difficulty))
    }

    /// Fisher information at θ (Birnbaum 1968; Lord 1980, eq. 4-43):
    /// ```
    /// I(θ) = a² (P − c)² (1 − P) / ((1 − c)² P)
    /// ```
    /// which reduces to a² P (1 − P) when c = 0.
    @inlinable public func information(at theta: Double) -> Double {
        let p = probability(at: theta)
        let a = discrimination, c = guessing
        guard p > 0, c < 1 else { return 0 }
        let num = (p - c) * (p - c) * (1 - p)
        return a * a * num / ((1 - c) * (1 - c) * p)
    }
}
