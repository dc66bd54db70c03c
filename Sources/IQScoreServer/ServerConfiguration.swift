import Assembly
import Norming
import Psychometrics

/// The files a server loads and the scoring settings it applies: read at start-up and again at every reload
/// (SIGHUP, `POST /v1/admin/reload`), so an operator changes a file and reloads.
public struct ServerConfiguration: Sendable, Hashable {
    /// The item bank CSV (`ItemBank.load(csv:)`: iqscore's layout or a foreign one). Adaptive testing and forms
    /// need a `domain` column; without one, only scoring is served.
    public var bankPath: String
    /// CAT rules JSON (`CATConfiguration.load(json:)`); default `defaultCATConfiguration`.
    public var catConfigurationPath: String?
    /// The default blueprint of `POST /v1/forms` (`Blueprint.load(json:)`); without it, a request must carry one.
    public var blueprintPath: String?
    /// Sympson–Hetter exposure parameters `item_id,k` (`ExposureParameters.load(csv:bank:)`, as
    /// `iqscore cat simulate --exposure-out` writes them), applied to every adaptive step. Without a file, the
    /// parameters are calibrated when the bank loads (`exposureControl`).
    public var exposurePath: String?
    /// Without `exposurePath`: true (the default) calibrates Sympson–Hetter parameters when the bank loads, to the
    /// CAT configuration's `exposure_target` (0.25 unless it says otherwise; `null` there turns control off), with
    /// a fixed seed so every instance gets the same parameters; false serves adaptive tests without exposure
    /// control (`iqscore serve --exposure none`), which lets the best items reach most examinees.
    public var exposureControl = true
    /// How messages name a setting: in words for a program that configures the server in code, as options for
    /// `iqscore serve` ("--index-form-length").
    package var naming = SettingNaming.words
    /// Norms of the IQ scale (`AgeNorms.load(json:)`): linear `{"name","version","mean","sd"}` norms, or a
    /// NORMS.json document from `iqscore norms build`, age-specific, with which `POST /v1/score` needs `"age"`.
    /// Default the calibration population.
    public var normsPath: String?
    /// How θ becomes an IQ under age-specific norms: the area transformation 100 + 15·Φ⁻¹(F_age(θ)) (default)
    /// or linear z at the person's age. Linear norms give the same IQ either way.
    public var iqTransformation: IQTransformation
    /// Bearer tokens (`AccessTokens.load(file:environment:)`): a file of `scoring TOKEN` / `admin TOKEN` lines, read
    /// again at every reload so tokens are added and revoked without a restart.
    public var tokensPath: String?
    /// Tokens from the environment (`IQSCORE_SCORING_TOKENS`, `IQSCORE_ADMIN_TOKENS`), as the process found them at
    /// start-up.
    public var tokenEnvironment: [String: String] = [:]
    /// The default estimator; a request may name another (`"method"`).
    public var ability: AbilityOptions
    /// Confidence level of the IQ interval, flag thresholds (as `iqscore score`'s options).
    public var confidenceLevel: Double
    public var lowPrecisionSE: Double
    public var minimumItems: Int
    /// On a bifactor bank: the domain indexes every score carries (default: those that add value over the
    /// full-scale score, `IndexAddedValue` on the bank as one form) and the scoring grid's points per factor
    /// (`BifactorScorer.allowedPointCounts`, default 31).
    public var indexes = IndexReporting.addingValue
    public var batteryQuadraturePoints = 31
    /// Items per test for the indexes' added value (`Battery.addedValue(formLength:)`); nil: the bank as one form,
    /// which `indexes` `.addingValue` allows up to `Battery.maximumFixedFormItems` items.
    public var indexFormLength: Int?
    /// On a battery bank: per reported index (by name), the norms its IQ is on (`AgeNorms.load(json:)`: linear, or
    /// age-specific, with which `POST /v1/score` needs `"age"`); an index not named is on the calibration
    /// population. Read again at every reload.
    public var indexNormsPaths: [String: String] = [:]

    /// The adaptive test without `--cat-config`: at most 25 items, the library's defaults otherwise (EAP, N(0, 1)
    /// prior, no SE target).
    package static var defaultCATConfiguration: CATConfiguration { CATConfiguration(maxItems: 25) }

    public init(
        bankPath: String, catConfigurationPath: String? = nil, blueprintPath: String? = nil, exposurePath: String? = nil,
        normsPath: String? = nil, ability: AbilityOptions = AbilityOptions(), confidenceLevel: Double = 0.95,
        lowPrecisionSE: Double = 0.5, minimumItems: Int = 10, iqTransformation: IQTransformation = .area
    ) {
        self.bankPath = bankPath
        self.catConfigurationPath = catConfigurationPath
        self.blueprintPath = blueprintPath
        self.exposurePath = exposurePath
        self.normsPath = normsPath
        self.ability = ability
        self.confidenceLevel = confidenceLevel
        self.lowPrecisionSE = lowPrecisionSE
        self.minimumItems = minimumItems
        self.iqTransformation = iqTransformation
    }
}
