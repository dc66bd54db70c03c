import Foundation
import Psychometrics

/// An item bank prepared for adaptive testing under one `CATConfiguration`: the θ estimator, item information
/// on a θ grid, domain minima and weights, and a-strata. Built once (a few milliseconds for 1,500 items) and
/// shared by every session: an immutable reference, `Sendable`, safe to read from many threads.
///
/// Information table: for grid points θ_g = −5 + 0.05 g (g = 0…200) it stores Iⱼ(θ_g) (Birnbaum's formula,
/// `ItemParameters.information(at:)`; for items in more than two categories Σ_k P_k′²/P_k,
/// `AssemblyItem.information(at:)`) grid-major, so a selection step reads two contiguous rows and
/// interpolates linearly:
/// ```
/// Iⱼ(θ) ≈ (1 − w) Iⱼ(θ_g) + w Iⱼ(θ_{g+1}),   w = (θ − θ_g) / 0.05
/// ```
/// with θ clamped to [−5, 5]. The interpolation error is at most h²/8 · max|I″| ≈ 3·10⁻⁴ · a⁴/8 (under 10⁻³
/// for a ≤ 2.5), far below the differences that decide a selection in practice.
public final class CATItemPool: Sendable {
    public let bank: AssemblyBank
    public let configuration: CATConfiguration
    /// Estimator over all bank items (indices are bank positions).
    package let estimator: AbilityEstimator
    /// Items the session may select (status active).
    let eligible: [Bool]
    /// Per item: index into `bank.domains`.
    let domainOfItem: [Int32]
    /// Per domain: the minimum count, the target share (weights normalised; empty without `domain_weights`).
    let minimumPerDomain: [Int]
    let targetShare: [Double]
    /// Per domain: number of eligible items.
    let eligiblePerDomain: [Int]
    /// Per item: difficulty b (a-stratified selection matches b to θ̂).
    let difficulty: [Double]
    /// Per item: a-stratum 0…K−1 (empty without a-stratification).
    let stratum: [Int32]
    let strata: Int

    let gridLow = -5.0, gridStep = 0.05, gridCount = 201
    /// Iⱼ(θ_g) at `g * itemCount + j`.
    let information: [Double]

    package var itemCount: Int { bank.items.count }

    /// What `CATConfiguration.adaptingDefaultExposureTarget(to:)` changed for this bank, as a sentence (nil:
    /// the configuration as given). `configuration` is the adapted one.
    public let exposureTargetNote: String?

    /// Prepares `bank` for `configuration` (a default exposure target adapted to the bank,
    /// `exposureTargetNote`); throws `AssemblyError` `.invalidConfiguration` listing every problem of the
    /// configuration (alone or on this bank).
    /// - Throws: `AssemblyError` `.invalidConfiguration` listing every problem of the configuration, alone or on
    ///   this bank.
    public init(bank: AssemblyBank, configuration given: CATConfiguration) throws {
        let (configuration, note) = given.adaptingDefaultExposureTarget(to: bank)
        let problems = configuration.validationProblems() + configuration.validationProblems(for: bank)
        guard problems.isEmpty else { throw AssemblyError(.invalidConfiguration, problems: problems) }
        self.bank = bank
        self.configuration = configuration
        exposureTargetNote = note
        let parameters = bank.items.map(\.parameters)
        estimator =
            bank.hasCategoryItems
            ? try AbilityEstimator(items: bank.items.map(\.responseModel), options: configuration.abilityOptions, latentScale: bank.latentScale)
            : try AbilityEstimator(parameters: parameters, options: configuration.abilityOptions, latentScale: bank.latentScale)
        let eligible = bank.items.map { $0.status == .active }
        self.eligible = eligible
        domainOfItem = bank.domainIndex.map { Int32($0) }
        minimumPerDomain = bank.domains.map { configuration.minPerDomain.minimum(for: $0) }
        if let weights = configuration.domainWeights {
            let total = weights.values.reduce(0, +)
            targetShare = bank.domains.map { (weights[$0] ?? 0) / total }
        } else {
            targetShare = []
        }
        eligiblePerDomain = bank.activeCountByDomain
        difficulty = bank.items.map(\.location)

        // a-strata within each domain (content blocking, Yi & Chang 2003): the domain's eligible items sorted by
        // a (ties by b, then position) and cut into K groups of near-equal size, lowest a first.
        let k = configuration.aStratification ?? 0
        strata = k
        if k > 1 {
            var stratum = [Int32](repeating: 0, count: bank.items.count)
            for d in bank.domains.indices {
                let members = bank.items.indices.filter { eligible[$0] && bank.domainIndex[$0] == d }
                    .sorted { (bank.items[$0].slope, bank.items[$0].location, $0) < (bank.items[$1].slope, bank.items[$1].location, $1) }
                for (rank, j) in members.enumerated() { stratum[j] = Int32(rank * k / members.count) }
            }
            self.stratum = stratum
        } else {
            stratum = []
        }

        let J = bank.items.count
        var table = [Double](repeating: 0, count: gridCount * J)
        for g in 0..<gridCount {
            let theta = gridLow + Double(g) * gridStep
            for j in 0..<J { table[g * J + j] = bank.items[j].information(at: theta) }
        }
        information = table
    }
}
