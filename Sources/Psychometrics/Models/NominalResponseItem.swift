import Foundation

/// Bock's (1972) nominal response model for an item whose K categories are unordered (the options of a
/// multiple-choice item): every option k has a slope a_k and an intercept c_k,
/// ```
/// P_k(θ) = exp(a_k θ + c_k) / Σ_m exp(a_m θ + c_m)
/// ```
/// Probabilities do not change when a constant is added to every a_k or to every c_k; the working parameters fix
/// a_0 = c_0 = 0 (category 0's option is the reference), and the bank stores the values as given. mirt's
/// `coef(IRTpars = TRUE)` for `nominal` prints Bock's centred form (Σ a_k = Σ c_k = 0) as a1…aK, c1…cK, read as
/// they are. Probabilities through `DivideByTotal`.
///
/// A multiple-choice item may name its correct option (`key`, a category): the raw score then counts 1 for the
/// key and 0 for the other options (`points(category:)`); without a key an option counts nothing. The key does
/// not enter the probabilities.
public struct NominalResponseItem: CalibratableItemModel, DivideByTotalModel, Hashable, Codable {
    /// a_k per category.
    public let slopes: [Double]
    /// c_k per category.
    public let intercepts: [Double]
    /// The category of the correct option, or nil.
    public let key: Int?
    var categorySlopes: [Double] { slopes }
    var categoryIntercepts: [Double] { intercepts }

    /// - Precondition: equal counts, at least two; a key among the categories.
    public init(slopes: [Double], intercepts: [Double], key: Int? = nil) {
        precondition(
            slopes.count == intercepts.count && slopes.count >= 2, "a nominal item has one slope and one intercept per category, at least two")
        precondition(key.map { (0..<slopes.count).contains($0) } ?? true, "the key is one of the item's categories")
        self.slopes = slopes
        self.intercepts = intercepts
        self.key = key
    }

    /// - Throws: `PsychometricsError.invalidParameters` unless there are as many finite slopes as finite
    ///   intercepts, at least two.
    public init(validating slopes: [Double], intercepts: [Double], key: Int? = nil) throws(PsychometricsError) {
        guard slopes.count == intercepts.count, slopes.count >= 2 else {
            throw PsychometricsError(
                .invalidParameters,
                "a nominal item needs one slope and one intercept per category, at least two; got \(slopes.count) and \(intercepts.count)")
        }
        guard slopes.allSatisfy(\.isFinite), intercepts.allSatisfy(\.isFinite) else {
            throw PsychometricsError(.invalidParameters, "a nominal item's slopes and intercepts must be finite")
        }
        if let key, !(0..<slopes.count).contains(key) {
            throw PsychometricsError(.invalidParameters, "a nominal item's key is one of its categories 0…\(slopes.count - 1), got \(key)")
        }
        self.init(slopes: slopes, intercepts: intercepts, key: key)
    }

    private enum CodingKeys: String, CodingKey { case slopes, intercepts, key }

    /// Decodes and checks (`init(validating:intercepts:key:)`).
    /// - Throws: `DecodingError`, also for parameters `init(validating:intercepts:key:)` refuses.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            validating: container.decode([Double].self, forKey: .slopes), intercepts: container.decode([Double].self, forKey: .intercepts),
            key: container.decodeIfPresent(Int.self, forKey: .key))
    }

    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(slopes, forKey: .slopes)
        try container.encode(intercepts, forKey: .intercepts)
        try container.encodeIfPresent(key, forKey: .key)
    }

    public var categoryCount: Int { slopes.count }

    public var parameterNames: [String] { ItemModelKind.nominal.parameterNames(categories: slopes.count) }
    /// An option is no score (the categories are labels); the key, when there is one, counts 1.
    public var categoriesAreScores: Bool { false }
    public func points(category k: Int) -> Int { k == key ? 1 : 0 }
    public var maximumScore: Int { key == nil ? 0 : 1 }
    public var parameterValues: [Double] { slopes + intercepts }

    /// (a_1 − a_0, …, a_{K−1} − a_0, c_1 − c_0, …, c_{K−1} − c_0).
    public var workingParameters: [Double] {
        slopes.dropFirst().map { $0 - slopes[0] } + intercepts.dropFirst().map { $0 - intercepts[0] }
    }

    /// The item with a_0 = c_0 = 0 and the rest from x, nil unless every value is finite.
    public func withWorkingParameters(_ x: [Double]) -> NominalResponseItem? {
        let m = categoryCount - 1
        guard x.count == 2 * m, x.allSatisfy(\.isFinite) else { return nil }
        return NominalResponseItem(slopes: [0] + x[0..<m], intercepts: [0] + x[m...], key: key)
    }

    /// For x = (a_1 … a_{K−1}, c_1 … c_{K−1}):
    /// ```
    /// ∂ log P_k/∂a_m = θ ([k = m] − P_m)      ∂ log P_k/∂c_m = [k = m] − P_m
    /// ```
    public func workingLogGradient(at theta: Double, into g: UnsafeMutableBufferPointer<Double>) {
        let k = categoryCount, m = k - 1, width = 2 * m
        withUnsafeTemporaryAllocation(of: Double.self, capacity: k) { p in
            logCategoryProbabilities(at: theta, into: p)
            for c in 0..<k { p[c] = exp(p[c]) }
            for c in 0..<k {
                for v in 1..<k {
                    let e = (c == v ? 1 : 0) - p[v]
                    g[c * width + v - 1] = theta * e
                    g[c * width + m + v - 1] = e
                }
            }
        }
    }
}
