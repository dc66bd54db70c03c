import Foundation

/// The item models a calibration can fit to an item, by the name the bank's `model` column writes.
///
/// - `graded`: Samejima's graded response model (`GradedResponseItem`); with two categories, the 2PL.
/// - `gpcm`: Muraki's generalized partial credit model (`GeneralizedPartialCreditItem`); two categories: the 2PL.
/// - `pcm`: Masters' partial credit model, the Rasch case of the GPCM: a = 1 for every item and the latent SD
///   estimated (mirt's `Rasch` item type on polytomous items); two categories: the Rasch model.
/// - `nominal`: Bock's nominal response model (`NominalResponseItem`), for unordered options.
public enum ItemModelKind: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case graded
    case generalizedPartialCredit = "gpcm"
    case partialCredit = "pcm"
    case nominal

    public var description: String { rawValue }

    /// The starting item for `proportions` (the observed share of each category, all positive):
    /// - graded: a = 1, d_k = logit P(u ≥ k) (decreasing in k as the cumulative shares fall);
    /// - partial credit: a = 1, d_k = log(p_k / p_0) (the category odds at θ = 0);
    /// - nominal: slopes 0, 1/(K−1), …, 1 (mirt's default scoring start) and c_k = log(p_k / p_0).
    func startingItem(proportions p: [Double]) -> any CalibratableItemModel {
        let k = p.count
        switch self {
        case .graded:
            var above = 1.0, d: [Double] = []
            for c in 1..<k {
                above -= p[c - 1]
                d.append(Logistic.logit(min(max(above, 1e-4), 1 - 1e-4)))
            }
            // Strictly decreasing even where rounding made two equal.
            for c in 1..<d.count where d[c] >= d[c - 1] { d[c] = d[c - 1] - 1e-3 }
            return GradedResponseItem(discrimination: 1, thresholds: d.map { -$0 })
        case .generalizedPartialCredit, .partialCredit:
            let d = (0..<k).map { log(p[$0] / p[0]) }
            return GeneralizedPartialCreditItem(discrimination: 1, steps: (1..<k).map { -(d[$0] - d[$0 - 1]) })
        case .nominal:
            return NominalResponseItem(slopes: (0..<k).map { Double($0) / Double(k - 1) }, intercepts: (0..<k).map { log(p[$0] / p[0]) })
        }
    }
}
