import Foundation

/// Model-based reliability of a bifactor battery from its standardized loadings (Rodriguez, Reise & Haviland 2016,
/// "Evaluating bifactor models", Psychological Methods 21(2); Hancock & Mueller 2001 for H): how much of the
/// total score's variance the general factor explains, how much each domain's subscale holds beyond it, and how
/// well each factor is defined by its items.
///
/// Loadings: an item's logistic slopes on the normal-ogive metric (D = 1.702) standardized by its total variance,
/// as mirt's `summary()` reports them (the guessing parameter is ignored, as there):
/// ```
/// λ_k = (a_k / D) / √(1 + (a_g / D)² + (a_s / D)²),   u = 1 − λ_g² − λ_s²   (the uniqueness)
/// ```
/// With the sums over all items (Σ_s over the specific factors, each inner sum over its items):
/// ```
/// ω   = [(Σ λ_g)² + Σ_s (Σ λ_s)²] / [(Σ λ_g)² + Σ_s (Σ λ_s)² + Σ u]       (total score's reliability)
/// ω_H = (Σ λ_g)² / [same denominator]                                     (the general factor's share)
/// ECV = Σ λ_g² / (Σ λ_g² + Σ λ_s²)                                        (explained common variance)
/// H   = 1 / (1 + 1 / Σ λ² / (1 − λ²))                                     (per factor, over its items)
/// ```
/// and per domain (its items only) ω_S = [(Σ λ_g)² + (Σ λ_s)²] / [(Σ λ_g)² + (Σ λ_s)² + Σ u] (the subscale's
/// reliability) and ω_HS = (Σ λ_s)² / [same] (what the domain's factor holds once the general factor is
/// accounted for: a subscale score with a small ω_HS mostly repeats the total).
package struct BifactorReliability: Sendable, Hashable, Codable {
    package struct Domain: Sendable, Hashable, Codable {
        package var factor: String
        package var items: Int
        package var omega: Double
        package var omegaHierarchical: Double
        /// H of the domain's specific factor.
        package var construct: Double
    }

    package var omega: Double
    package var omegaHierarchical: Double
    package var explainedCommonVariance: Double
    /// H of the general factor.
    package var construct: Double
    /// In the structure's order (factors without items left out).
    package var domains: [Domain]

    /// The normal-ogive scaling constant of the loadings (mirt's `summary()`).
    package static let normalOgiveScale = 1.702

    /// An item's standardized loadings (general, specific) as above.
    package static func loadings(_ item: BifactorItem) -> (general: Double, specific: Double) {
        let g = item.generalSlope / normalOgiveScale, s = item.specificSlope / normalOgiveScale
        let scale = (1 + g * g + s * s).squareRoot()
        return (g / scale, s / scale)
    }

    /// - Parameters:
    ///   - items: the battery's items (each `specific` indexes `structure.specificFactors`).
    package init(items: [BifactorItem], structure: FactorStructure) {
        let l = items.map(Self.loadings)
        func h(_ values: [Double]) -> Double {
            let sum = values.reduce(0) { $0 + $1 * $1 / max(1e-12, 1 - $1 * $1) }
            return sum > 0 ? 1 / (1 + 1 / sum) : 0
        }
        let generalSum = l.reduce(0) { $0 + $1.general }, uniqueness = l.reduce(0) { $0 + 1 - $1.general * $1.general - $1.specific * $1.specific }
        var specificSquares = 0.0, domains: [Domain] = []
        for (f, name) in structure.specificFactors.enumerated() {
            let members = items.indices.filter { items[$0].specific == f }
            guard !members.isEmpty else { continue }
            let g = members.reduce(0) { $0 + l[$1].general }, s = members.reduce(0) { $0 + l[$1].specific }
            let u = members.reduce(0) { $0 + 1 - l[$1].general * l[$1].general - l[$1].specific * l[$1].specific }
            specificSquares += s * s
            let denominator = g * g + s * s + u
            domains.append(
                Domain(
                    factor: name, items: members.count, omega: (g * g + s * s) / denominator, omegaHierarchical: s * s / denominator,
                    construct: h(members.map { l[$0].specific })))
        }
        let denominator = generalSum * generalSum + specificSquares + uniqueness
        omega = (generalSum * generalSum + specificSquares) / denominator
        omegaHierarchical = generalSum * generalSum / denominator
        let generalCommon = l.reduce(0) { $0 + $1.general * $1.general }, specificCommon = l.reduce(0) { $0 + $1.specific * $1.specific }
        explainedCommonVariance = generalCommon / (generalCommon + specificCommon)
        construct = h(l.map(\.general))
        self.domains = domains
    }
}
