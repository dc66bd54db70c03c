import Foundation

/// Reliability from the mean error variance (Green, Bock, Humphreys, Linn & Reckase 1984; Thissen & Wainer 2001,
/// ch. 4): the latent variance over itself plus the error variance 1/I(θ) averaged over the latent distribution
/// g = N(0, σ²):
/// ```
/// ρ = σ² / (σ² + ∫ g(θ) / I(θ) dθ),   I(θ) = Σⱼ Iⱼ(θ) over the items of the form
/// ```
/// For a missing-by-design bank each person took their own form, so the error variance is averaged over the
/// persons' forms as well: ρ = σ² / (σ² + (1/N) Σₚ ∫ g(θ) / I_p(θ) dθ). It describes the model and the forms, not
/// the sample's scores.
///
/// Not mirt's `marginal_rxx`, which averages the conditional reliability I/(I + 1) instead (`MarginalRXX`; ICAR16,
/// 2PL: 0.793 here, 0.829 there). The empirical reliability from the EAP estimates (mirt's
/// `empirical_rxx`) is `ModelFit.empiricalReliability`.
///
/// The integral uses 161 equally spaced points on [−8σ, 8σ] with normalised normal weights (the integrand is
/// smooth; 1/I(θ) is capped at 10⁸ where the information vanishes, as mirt caps it).
package enum MeanErrorVarianceReliability {
    /// ρ for the forms the persons of `data` answered (every person with at least one response), or nil
    /// when no person answered anything.
    package static func compute(parameters: [ItemParameters], data: ResponseMatrix, latentSD: Double = 1) -> Double? {
        let points = 161
        let sd = latentSD > 0 ? latentSD : 1
        let nodes = (0..<points).map { -8 * sd + 16 * sd * Double($0) / Double(points - 1) }
        var weights = nodes.map { exp(-0.5 * ($0 / sd) * ($0 / sd)) }
        let total = weights.reduce(0, +)
        weights = weights.map { $0 / total }
        // Item information at every node, node-major per item.
        let J = parameters.count
        var table = [Double](repeating: 0, count: J * points)
        for j in 0..<J { for (g, theta) in nodes.enumerated() { table[j * points + g] = parameters[j].information(at: theta) } }
        var errorSum = 0.0, persons = 0
        var form = [Double](repeating: 0, count: points)
        if data.isComplete {
            // One form: every person has the same error variance.
            for j in 0..<J { for g in 0..<points { form[g] += table[j * points + g] } }
            guard data.personCount > 0, J > 0 else { return nil }
            let error = zip(weights, form).reduce(0) { $0 + $1.0 / max($1.1, 1e-8) }
            return sd * sd / (sd * sd + error)
        }
        for p in 0..<data.personCount {
            let cells = data.cells(ofPerson: p)
            guard !cells.isEmpty else { continue }
            for g in 0..<points { form[g] = 0 }
            for c in cells {
                let base = Int(data.itemIndices[c]) * points
                for g in 0..<points { form[g] += table[base + g] }
            }
            var error = 0.0
            for g in 0..<points { error += weights[g] / max(form[g], 1e-8) }
            errorSum += error
            persons += 1
        }
        guard persons > 0 else { return nil }
        return sd * sd / (sd * sd + errorSum / Double(persons))
    }
}
