import Foundation

extension BifactorItem {
    /// The item's Fisher information about θ_g and about θ_s at (θ_g, θ_s): the diagonal of its information
    /// matrix, each the information along that factor's axis with the other factor held (Reckase 2009, §5.3,
    /// directional information in the axis directions),
    /// ```
    /// I_k(θ_g, θ_s) = a_k² (P − c)² (1 − P) / ((1 − c)² P),   P = P(u = 1 | θ_g, θ_s),  k = g or s
    /// ```
    /// (`ItemResponseFunction.information`). Summed over a domain's items at θ_g = 0 it is the information the
    /// domain's items carry about its specific factor; the general factor's information with the specific factors
    /// unknown is that of `generalMarginal`.
    package func information(general: Double, specific s: Double) -> (general: Double, specific: Double) {
        let p = probability(general: general, specific: s)
        return (
            ItemResponseFunction.information(probability: p, slope: generalSlope, guessing: guessing),
            ItemResponseFunction.information(probability: p, slope: specificSlope, guessing: guessing)
        )
    }
}
