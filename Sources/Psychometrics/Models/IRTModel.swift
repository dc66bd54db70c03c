/// The dichotomous item response models iqscore fits.
///
/// All models use the logistic metric with D = 1 (as mirt and girth do) and the slope–difficulty
/// parameterisation
/// ```
/// P(u = 1 | θ) = c + (1 − c) / (1 + exp(−a(θ − b)))
/// ```
/// - `rasch`: a = 1 for every item, c = 0, θ ~ N(0, σ²) with σ² estimated.
/// - `onePL`: one common slope a shared by all items, c = 0, θ ~ N(0, 1).
/// - `twoPL`: a and b per item, c = 0, θ ~ N(0, 1).
/// - `threePL`: a, b and c per item, θ ~ N(0, 1); c is the lower asymptote ("guessing").
public enum IRTModel: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case rasch
    case onePL = "1pl"
    case twoPL = "2pl"
    case threePL = "3pl"

    public var description: String { rawValue }

    /// Whether every item has its own slope.
    public var hasItemSlopes: Bool { self == .twoPL || self == .threePL }
    /// Whether items have a lower asymptote c.
    public var hasGuessing: Bool { self == .threePL }

    /// Number of free parameters for `itemCount` items (the Rasch latent variance and the 1PL common slope
    /// count once).
    package func parameterCount(itemCount: Int) -> Int {
        switch self {
        case .rasch, .onePL: return itemCount + 1
        case .twoPL: return 2 * itemCount
        case .threePL: return 3 * itemCount
        }
    }
}
