import Foundation

/// The distribution of θ in a bank's calibration population, on the bank's own metric: θ ~ N(mean, sd²).
///
/// Most banks are written on the N(0, 1) metric (`standard`): calibration fixes the population's mean at 0 and
/// its SD at 1 and lets the slopes carry the scale. The Rasch model fixes every slope at 1 instead, so its
/// metric is the logit and the population SD is estimated (mirt's `COV_11`, 1.38 on the ICAR16 responses):
/// such a bank carries its latent scale, in the bank file as the columns `latent_mean` and `latent_sd` (the
/// same value on every row). A Rasch bank with latent SD σ is the 1PL bank with a = σ and b/σ on the N(0, 1)
/// metric (θ_standard = (θ − mean)/sd); both give the same IQ, interval and flags, and θ on the Rasch bank is
/// θ_standard·σ, as mirt's `fscores` reports it for a Rasch model (Rasch 1960; de Ayala 2009, §3.2).
///
/// Every reader honours it: the scoring prior (`AbilityOptions` with no prior given), the calibration
/// population's IQ norms (`Norms.calibrationPopulation`), the low-precision threshold (in population SDs), the
/// CAT's prior and simulees, and the model-fit statistics of `analyze` and `report`.
public struct LatentScale: Sendable, Hashable, Codable {
    /// Mean of θ in the calibration population, on the bank's metric.
    public let mean: Double
    /// SD of θ in the calibration population, on the bank's metric.
    public let sd: Double

    /// N(0, 1): the metric of every bank calibrated with a free slope.
    public static let standard = LatentScale(validatedMean: 0, sd: 1)

    /// Means allowed: [−10, 10] (as `AbilityOptions.allowedPriorMeans`).
    package static let allowedMeans = NumberRange.closed(-10, 10)
    /// SDs allowed: [0.01, 100] (as `AbilityOptions.allowedPriorSDs`); the calibrator keeps its estimate in
    /// [0.001, 1000] only to stay finite, and a population SD of 0.01 logits is already degenerate.
    package static let allowedSDs = NumberRange.closed(0.01, 100)

    /// - Throws: `PsychometricsError.invalidOptions` when the mean or SD lies outside `allowedMeans` /
    ///   `allowedSDs` (NaN and infinities included).
    public init(mean: Double, sd: Double) throws(PsychometricsError) {
        let problems = Self.validationProblems(mean: mean, sd: sd)
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid latent scale: " + problems.joined(separator: "; ")) }
        self.mean = mean
        self.sd = sd
    }

    private init(validatedMean mean: Double, sd: Double) {
        self.mean = mean
        self.sd = sd
    }

    /// - Throws: `DecodingError`, also for a mean or SD `init(mean:sd:)` refuses.
    public init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case mean, sd }
        let c = try decoder.container(keyedBy: Keys.self)
        let mean = try c.decode(Double.self, forKey: .mean), sd = try c.decode(Double.self, forKey: .sd)
        self = try PsychometricsError.decoding(at: c.codingPath) { () throws(PsychometricsError) in try LatentScale(mean: mean, sd: sd) }
    }

    /// Problems with a mean and SD, naming them as `naming` says (`latent_mean`, `latent_sd` as bank columns).
    package static func validationProblems(mean: Double, sd: Double, naming: SettingNaming = .words) -> [String] {
        [
            allowedMeans.problem(mean, naming.name("latent_mean", words: "latent mean")),
            allowedSDs.problem(sd, naming.name("latent_sd", words: "latent SD"))
        ].compactMap { $0 }
    }

    /// Whether this is N(0, 1) (bank files then carry no latent columns).
    public var isStandard: Bool { mean == 0 && sd == 1 }

    /// The parameters of `item` on the N(0, 1) metric: a·sd, (b − mean)/sd, c, so that
    /// a(θ − b) = a·sd·(θ_standard − (b − mean)/sd) with θ_standard = (θ − mean)/sd.
    public func standardized(_ item: ItemParameters) -> ItemParameters {
        isStandard
            ? item : ItemParameters(discrimination: item.discrimination * sd, difficulty: (item.difficulty - mean) / sd, guessing: item.guessing)
    }

    /// θ on the bank's metric of a θ on the N(0, 1) metric: mean + sd·θ_standard.
    public func theta(fromStandard standard: Double) -> Double { mean + sd * standard }

    /// The calibration population as IQ norms: IQ = 100 + 15·(θ − mean)/sd.
    public var calibrationNorms: Norms {
        Norms(name: Norms.calibrationPopulation.name, version: Norms.calibrationPopulation.version, mean: mean, sd: sd)
    }
}
