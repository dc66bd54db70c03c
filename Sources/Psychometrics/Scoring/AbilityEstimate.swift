import Foundation

/// An ability estimate with its standard error.
public struct AbilityEstimate: Sendable, Hashable, Codable {
    public var theta: Double
    public var standardError: Double
    public var method: AbilityMethod
    public var itemCount: Int
    public var correctCount: Int
    /// The estimate sits at ±thetaBound (ML for an all-correct/all-wrong pattern, or an extreme pattern).
    public var atBound: Bool

    public init(theta: Double, standardError: Double, method: AbilityMethod, itemCount: Int, correctCount: Int, atBound: Bool) {
        self.theta = theta
        self.standardError = standardError
        self.method = method
        self.itemCount = itemCount
        self.correctCount = correctCount
        self.atBound = atBound
    }

    public var isPerfect: Bool { itemCount > 0 && correctCount == itemCount }
    public var isZero: Bool { itemCount > 0 && correctCount == 0 }
}
