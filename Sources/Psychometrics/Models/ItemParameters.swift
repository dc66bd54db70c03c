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

    /// The logit z = a(θ − b) at ability θ.
    @inlinable public func logit(at theta: Double) -> Double {
        ItemResponseFunction.logit(slope: discrimination, difficulty: difficulty, at: theta)
    }

    /// Probability of a correct response at ability θ (`ItemResponseFunction.probability(logit:guessing:)`).
    @inlinable public func probability(at theta: Double) -> Double {
        ItemResponseFunction.probability(logit: logit(at: theta), guessing: guessing)
    }

    /// log P(θ) and log(1 − P(θ)), stable in both tails (`ItemResponseFunction.logProbabilities(logit:guessing:)`).
    @inlinable public func logProbabilities(at theta: Double) -> (logP: Double, logQ: Double) {
        ItemResponseFunction.logProbabilities(logit: logit(at: theta), guessing: guessing)
    }

    /// Fisher information at θ (Birnbaum 1968; Lord 1980, eq. 4-43):
    /// ```
    /// I(θ) = a² (P − c)² (1 − P) / ((1 − c)² P)
    /// ```
    /// which reduces to a² P (1 − P) when c = 0 (`ItemResponseFunction.information(probability:slope:guessing:)`).
    @inlinable public func information(at theta: Double) -> Double {
        ItemResponseFunction.information(probability: probability(at: theta), slope: discrimination, guessing: guessing)
    }
}
