import Foundation

/// How one item's response categories depend on ability θ: the extension point of the engine's item models.
///
/// An item has K ≥ 2 response categories, 0 ..< K (for a dichotomous item 0 = wrong, 1 = right; for a graded or
/// partial-credit item the score; for a nominal item the option's index). A conformance says
/// ```
/// P(u = k | θ),  k = 0 ..< K,   Σ_k P_k(θ) = 1
/// ```
/// through its log category probabilities (stable in both tails: every table the estimators build goes through
/// `logCategoryProbabilities(at:into:)`), their θ-derivatives (ML/MAP/WLE, information, person fit) and its
/// parameters as named values (the bank's columns). Everything else follows from these:
/// ```
/// I(θ) = Σ_k P_k′(θ)² / P_k(θ)            (Fisher information; Samejima 1969, Lord 1980 eq. 4-43 for K = 2)
/// E(u | θ) = Σ_k k P_k(θ)                 (expected score)
/// ```
/// Conformances: `ItemParameters` (Rasch, 1PL, 2PL, 3PL; K = 2), `GradedResponseItem` (Samejima 1969),
/// `GeneralizedPartialCreditItem` (Muraki 1992, with the partial-credit Rasch case), `NominalResponseItem`
/// (Bock 1972). The calibrator's side (working parameters, their gradient) is `CalibratableItemModel`.
/// CONTRIBUTING.md walks through adding one.
public protocol ItemResponseModel: Sendable {
    /// The number of response categories K ≥ 2; responses are 0 ..< K.
    var categoryCount: Int { get }

    /// log P(u = k | θ) for k = 0 ..< K into `logProbabilities` (K values), accurate in both tails (no log of a
    /// probability that has lost its digits to 1 − p).
    func logCategoryProbabilities(at theta: Double, into logProbabilities: UnsafeMutableBufferPointer<Double>)

    /// P_k(θ), dP_k/dθ and d²P_k/dθ² for k = 0 ..< K, each into K values.
    func categoryThetaDerivatives(
        at theta: Double, probability: UnsafeMutableBufferPointer<Double>,
        first: UnsafeMutableBufferPointer<Double>, second: UnsafeMutableBufferPointer<Double>)

    /// The parameters' names, in the order of `parameterValues` (the bank's columns: `a`, `b1`, `b2`, …).
    var parameterNames: [String] { get }
    /// The parameters' values, in the IRT (slope–location) form the bank writes.
    var parameterValues: [Double] { get }

    /// Whether the category is a score (0/1, graded and partial-credit items: the raw score adds it) or only a
    /// label (a nominal item's option). Default true.
    var categoriesAreScores: Bool { get }

    /// The points a response in category k adds to the raw score: k where the categories are scores, else 0
    /// (default); a keyed nominal item gives 1 for its key and 0 for the other options.
    func points(category k: Int) -> Int
    /// The highest points a response can add to the raw score (default: K − 1, or 0 when the categories are no
    /// scores).
    var maximumScore: Int { get }
}

extension ItemResponseModel {
    public var categoriesAreScores: Bool { true }

    /// k where the categories are scores, else 0.
    public func points(category k: Int) -> Int { categoriesAreScores ? k : 0 }

    /// K − 1, or 0 when the categories are no scores.
    public var maximumScore: Int { categoriesAreScores ? categoryCount - 1 : 0 }

    /// P(u = k | θ) for k = 0 ..< K.
    public func categoryProbabilities(at theta: Double) -> [Double] {
        var out = [Double](repeating: 0, count: categoryCount)
        out.withUnsafeMutableBufferPointer { logCategoryProbabilities(at: theta, into: $0) }
        return out.map { exp($0) }
    }

    /// Fisher information at θ:
    /// ```
    /// I(θ) = Σ_k P_k′(θ)² / P_k(θ)
    /// ```
    /// (Samejima 1969; Lord 1980 eq. 4-43 for K = 2); categories with P_k = 0 contribute nothing.
    public func information(at theta: Double) -> Double {
        let k = categoryCount
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 3 * k) { buffer in
            let p = UnsafeMutableBufferPointer(rebasing: buffer[0..<k]), d1 = UnsafeMutableBufferPointer(rebasing: buffer[k..<(2 * k)])
            categoryThetaDerivatives(at: theta, probability: p, first: d1, second: UnsafeMutableBufferPointer(rebasing: buffer[(2 * k)...]))
            var total = 0.0
            for c in 0..<k where p[c] > 0 { total += d1[c] * d1[c] / p[c] }
            return total
        }
    }

    /// The expected score E(x | θ) = Σ_k x_k P_k(θ) with x_k = `points(category: k)` (for a dichotomous item,
    /// P(θ); for a keyed nominal item, the key's probability).
    public func expectedScore(at theta: Double) -> Double {
        categoryProbabilities(at: theta).enumerated().reduce(0) { $0 + Double(points(category: $1.offset)) * $1.element }
    }

    /// d/dθ log P_u(θ) and d²/dθ² log P_u(θ) of the response u, for the ML/MAP/WLE estimators:
    /// ```
    /// (log P)′ = P′/P        (log P)″ = P″/P − (P′/P)²
    /// ```
    public func logThetaDerivatives(at theta: Double, response u: Int) -> (first: Double, second: Double) {
        let k = categoryCount
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 3 * k) { buffer in
            let p = UnsafeMutableBufferPointer(rebasing: buffer[0..<k]), d1 = UnsafeMutableBufferPointer(rebasing: buffer[k..<(2 * k)])
            let d2 = UnsafeMutableBufferPointer(rebasing: buffer[(2 * k)...])
            categoryThetaDerivatives(at: theta, probability: p, first: d1, second: d2)
            let r = d1[u] / p[u]
            return (r, d2[u] / p[u] - r * r)
        }
    }
}

/// The calibrator's side of an item model: a vector of working parameters x (unconstrained where the model
/// allows: slopes and intercepts of the slope–intercept form) and the gradient of each category's log probability
/// in them, from which the EM engine's generic M-step (Newton on Σ_q Σ_k r_jkq log P_k(θ_q; x)) and the Louis
/// standard errors are built.
public protocol CalibratableItemModel: ItemResponseModel {
    /// The working parameters x (the slope–intercept form: a and intercepts d).
    var workingParameters: [Double] { get }
    /// The item with working parameters x, or nil where x is outside the model's domain (e.g. graded
    /// intercepts out of order): the M-step halves its step until it is inside.
    func withWorkingParameters(_ x: [Double]) -> Self?
    /// ∂ log P_k(θ) / ∂x for every category k into `gradient`, K rows of `workingParameters.count` values.
    func workingLogGradient(at theta: Double, into gradient: UnsafeMutableBufferPointer<Double>)
}
