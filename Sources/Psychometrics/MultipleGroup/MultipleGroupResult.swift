import Foundation

/// One group's latent distribution in a multiple-group calibration: N(0, 1) for the reference group (the
/// scale), estimated for the others.
package struct GroupDistribution: Sendable, Hashable, Codable {
    package var group: String
    package var isReference: Bool
    /// Persons of the group with at least one calibrated response, and their responses.
    package var persons: Int
    package var responses: Int
    package var mean: Double
    package var sd: Double
    /// Standard errors of the mean and SD (nil for the reference group, or when standard errors were not computed).
    package var meanStandardError: Double?
    package var sdStandardError: Double?
    /// The group's part of the marginal log-likelihood.
    package var logLikelihood: Double
}

/// One specific factor's distribution in one group of a multiple-group bifactor calibration (the reference group's
/// N(0, 1)): estimated, with standard errors when they were computed.
package struct FactorDistribution: Sendable, Hashable, Codable {
    package var factor: String
    package var mean: Double
    package var sd: Double
    package var meanStandardError: Double?
    package var sdStandardError: Double?
}

/// One item parameter set of a multiple-group calibration and the groups whose responses it describes: every
/// group that answered the item when the item is invariant, otherwise the groups it was freed in (one set each)
/// and the rest (one shared set).
package struct GroupItem: Sendable, Hashable, Codable {
    package var groups: [String]
    /// Parameters, standard errors, flags; `responses` and `pValue` over these groups' responses.
    package var item: CalibratedItem
}

/// Responses of one item left out for some groups only: a freed parameter set those groups' responses cannot
/// estimate (too few responses, all correct or all incorrect). The item stays calibrated on the other groups.
package struct GroupItemExclusion: Sendable, Hashable, Codable {
    package var itemID: String
    package var groups: [String]
    package var responses: Int
    package var correct: Int
    package var reason: String
}

/// The outcome of `MultipleGroupCalibrator.calibrate`.
package struct MultipleGroupResult: Sendable, Hashable {
    package var model: IRTModel
    /// The reference group first, then the others in the order given (`MultipleGroupCalibrator`).
    package var groups: [GroupDistribution]
    /// Parameter sets in item order; an item freed in some groups has several consecutive entries.
    package var items: [GroupItem]
    package var excludedItems: [ExcludedItem]
    package var excludedGroupItems: [GroupItemExclusion]
    /// Ids of persons left out: no responses to any calibrated item (after the exclusions).
    package var excludedPersons: [String]
    package var personCount: Int
    package var cellCount: Int
    /// Σ_g Σ_{i ∈ g} log ∫ Πⱼ P(uᵢⱼ | θ) N(θ; μ_g, σ_g²) dθ at the estimates (priors not included).
    package var logLikelihood: Double
    /// Estimated parameters: each parameter set's, plus μ and σ of every non-reference group.
    package var parameterCount: Int
    package var aic: Double
    package var bic: Double
    package var cycles: Int
    package var eSteps: Int
    package var converged: Bool
    package var lastChange: Double
    package var standardErrorMethod: String
    package var options: CalibrationOptions
    package var warnings: [String]
    package var elapsedSeconds: Double
    /// The covariance of the working parameters (per parameter set s, d[, γ], then μ and log σ per non-reference
    /// group: `MultipleGroupEngine`'s layout), row-major; nil without standard errors.
    package var workingCovariance: [Double]?
    /// Per parameter set of `items`, the offset of its working parameters in `workingCovariance`'s layout.
    package var workingOffsets: [Int]
    /// The working parameters themselves, in the same layout.
    package var workingParameters: [Double]

    /// The parameters of `item` for the responses of `group`, nil when that group's responses to it were not
    /// calibrated.
    package func parameters(item: String, group: String) -> ItemParameters? {
        items.first { $0.item.itemID == item && $0.groups.contains(group) }?.item.parameters
    }

    /// Ids of the items with more than one parameter set.
    package var freedItemIDs: [String] {
        var counts: [String: Int] = [:]
        for entry in items { counts[entry.item.itemID, default: 0] += 1 }
        var seen = Set<String>()
        return items.map(\.item.itemID).filter { counts[$0]! > 1 && seen.insert($0).inserted }
    }

    /// The distribution of `group`, nil for a name not in the fit.
    package func distribution(of group: String) -> GroupDistribution? { groups.first { $0.group == group } }
}
