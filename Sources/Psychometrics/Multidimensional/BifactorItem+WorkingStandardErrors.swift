import Foundation

extension BifactorItem {
    /// The standard errors of this item's working parameters (the general slope, a free specific slope, the
    /// intercept, and a 3PL item's γ = logit c, `workingParameterCount` of them), whose block begins at `offset` in
    /// `covariance` (the free items' parameters in item order): the square roots of its diagonal, the last (γ)
    /// carried to c by the delta method, SE(c) = c (1 − c) SE(γ). All nil for a fixed item and without a covariance.
    /// The bifactor and the correlated-factors calibrations read their items' standard errors from it.
    func workingStandardErrors(covariance: ParameterCovariance?, offset: Int, isFixed: Bool) -> [Double?] {
        let m = workingParameterCount
        var se = [Double?](repeating: nil, count: m)
        if let covariance, !isFixed {
            for a in 0..<m { se[a] = covariance.entry(offset + a, offset + a).squareRoot() }
            if estimatesGuessing, let sg = se[m - 1] { se[m - 1] = guessing * (1 - guessing) * sg }
        }
        return se
    }
}
