import Foundation

/// An ability estimate with its standard error.
public struct AbilityEstimate: Sendable, Hashable, Codable {
    public var theta: Double
    public var standardError: Double
    public var method: AbilityMethod
    public var itemCount: Int
    /// The raw score: the number correct of 0/1 items plus the categories (scores) of graded and partial-credit
    /// items (nominal options count nothing).
    public var correctCount: Int
    /// The highest raw score the answered items allow: `itemCount` for 0/1 items, K − 1 per graded or
    /// partial-credit item, 0 per nominal item.
    public var maximumScore: Int
    /// The estimate sits at ±thetaBound (ML for an all-correct/all-wrong pattern, or an extreme pattern).
    public var atBound: Bool

    package init(theta: Double, standardError: Double, method: AbilityMethod, itemCount: Int, correctCount: Int, atBound: Bool) {
        self.theta = theta
        self.standardError = standardError
        self.method = method
        self.itemCount = itemCount
        self.correctCount = correctCount
        self.maximumScore = itemCount
        self.atBound = atBound
    }

    /// The highest raw score the items allow (and at least one item scored).
    public var isPerfect: Bool { maximumScore > 0 && correctCount == maximumScore }
    /// A raw score of 0 on items that score.
    public var isZero: Bool { maximumScore > 0 && correctCount == 0 }
}
