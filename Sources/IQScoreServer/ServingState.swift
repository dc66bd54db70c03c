import Assembly
import Foundation
import Norming
import NIOCore
import Psychometrics
import PsychometricsIO

/// Everything a request is answered from, loaded once from the configured files: the bank, its version, the
/// scorers, the adaptive-testing pool, the default blueprint, exposure parameters. Immutable, so a request that
/// started on one snapshot finishes on it while a reload installs the next (`ServingStateStore`).
///
/// Loading does the work a request should not: reading and hashing the files, building the item-id table, the
/// estimators (one per method), the CAT information table and the default form assembler, and the bank
/// description that `GET /v1/bank` returns.
package final class ServingState: Sendable {
    /// The first 16 hexadecimal digits of the SHA-256 of the bank file (`BankVersion`).
    package let bankVersion: String
    /// The whole SHA-256 of the bank file, 64 hexadecimal digits.
    package let bankSHA256: String
    /// The files and settings this state was loaded from.
    package let configuration: ServerConfiguration
    /// When it was loaded.
    package let loadedAt: Date
    /// The bank as read (`ItemBank.load(csv:)`); of a battery bank, its unidimensional view (`BatteryBank.bank`:
    /// each item's marginal on the full-scale factor: a bifactor bank's general factor, a correlated bank's
    /// composite), which adaptive steps and forms use.
    package let bank: ItemBank
    /// A battery bank (bifactor, testlet or correlated factors) as a battery (`Battery`): scores are its
    /// full-scale factor's EAP or MAP with the reported domain indexes; nil for a unidimensional bank.
    package let battery: Battery?
    /// The added value of each of the battery's indexes (`IndexAddedValue`, the bank as one form).
    package let indexAddedValue: [IndexAddedValue]
    /// The `model` of `GET /v1/bank`: the items' model (`rasch`, `1pl`, `2pl`, `3pl`), `mixed`, or for a battery
    /// bank `bifactor` (also a testlet bank) or `correlated`.
    package let model: String
    /// Domains in order of first appearance in the bank (empty without a `domain` column).
    package var domains: [String] { defaultWriter.scorer.domains }

    /// Scores with the configured method, and with each method a request may name.
    let defaultWriter: ScoreJSONWriter
    let writers: [AbilityMethod: ScoreJSONWriter]
    /// The bank prepared for adaptive tests and forms (a bank without domains is one domain).
    package let assemblyBank: AssemblyBank
    package let pool: CATItemPool
    package let exposure: ExposureParameters?
    /// How adaptive steps control exposure, in words (`/healthz`, `/v1/bank`, the logs): `sympson-hetter r_max 0.25
    /// calibrated at load (…)`, `sympson-hetter from FILE`, or `off (…)`.
    package let exposureControl: String
    /// The seed of the start-up calibration: fixed, so instances with the same files serve the same items.
    static let exposureCalibrationSeed: UInt64 = 1
    /// The default blueprint and its assembler (`--blueprint`), checked at load.
    package let defaultBlueprint: Blueprint?
    let defaultAssembler: FormAssembler?
    /// Age-specific norms (a NORMS.json document); nil for linear norms, which need no age.
    package var ageNorms: AgeNormScale? { defaultWriter.ageNorms }
    /// Who may call which endpoint (`ServerConfiguration.tokensPath`, `tokenEnvironment`).
    package let access: AccessTokens
    /// The body of `GET /v1/bank`, built once.
    let bankDescription: ByteBuffer

    /// Reads and checks every configured file. A problem throws the loader's error (`InputError`, `InputErrors`,
    /// `PsychometricsError`, `AssemblyError`), naming the file: the caller reports it and keeps what it had.
    package static func load(_ configuration: ServerConfiguration) throws -> ServingState {
        try ServingState(configuration)
    }

    private init(_ configuration: ServerConfiguration) throws {
        self.configuration = configuration
        access = try AccessTokens.load(file: configuration.tokensPath, environment: configuration.tokenEnvironment)
        let path = configuration.bankPath
        // The file is read once: its version hashes the bytes the bank is parsed from, so a file replaced while
        // it loads cannot give the version of one file and the items of another.
        let bytes = try Self.contents(of: path)
        let source = CSVSource.bytes(bytes, name: path)
        // A cut or changed file is refused before it is parsed (a number cut short still parses).
        let damage = BankIntegrity.problems(bankPath: path, bytes: bytes)
        if damage.count == 1 { throw damage[0] }
        if !damage.isEmpty { throw InputErrors(damage) }
        var batteryModel: String? = nil
        if BifactorBank.isMultidimensional(source) {
            guard [.eap, .map].contains(configuration.ability.method), configuration.ability.priorMean == nil, configuration.ability.priorSD == nil
            else {
                throw InputError(
                    file: path,
                    message:
                        "a multidimensional (battery) bank is scored by EAP or MAP with the model's factor distribution; the configuration asks for method \(configuration.ability.method.rawValue)"
                        + (configuration.ability.priorMean != nil || configuration.ability.priorSD != nil ? " and a prior of θ" : ""))
            }
            let points = configuration.batteryQuadraturePoints
            guard BifactorScorer.allowedPointCounts.contains(points) else {
                throw InputError(
                    file: path,
                    message:
                        "a battery bank is scored on a grid of \(BifactorScorer.allowedPointCounts.text) points per factor; the configuration asks for \(points)"
                )
            }
            let file = try BatteryBank.load(source, quadraturePoints: configuration.batteryQuadraturePoints, bound: configuration.ability.thetaBound)
            let battery = file.battery, itemCount = battery.itemCount
            batteryModel = file.model
            if let k = configuration.indexFormLength, !(1...itemCount).contains(k) {
                throw InputError(file: path, message: "the configured index form length \(k) is not 1…\(itemCount), the bank's items")
            }
            if configuration.indexes == .addingValue && configuration.indexFormLength == nil && itemCount > Battery.maximumFixedFormItems {
                throw InputError(
                    file: path,
                    message:
                        "\(itemCount) items are a pool tests are drawn from, not one form: choosing the indexes that add value needs the tests' length (\(configuration.naming.name("index_form_length"))), or name the indexes"
                )
            }
            indexAddedValue = try battery.addedValue(formLength: configuration.indexFormLength)
            do {
                self.battery = try battery.reporting(configuration.indexes, addedValue: indexAddedValue)
            } catch {
                throw InputError(file: path, message: "the configured indexes: \(error.message)")
            }
            bank = file.bank
        } else {
            bank = try ItemBank.load(source, categoryItems: .read())
            battery = nil
            indexAddedValue = []
        }
        bankSHA256 = BankVersion.sha256Hex(bytes)
        bankVersion = String(bankSHA256.prefix(16))
        loadedAt = Date()
        let models = Set(bank.items.map(\.modelName))
        model = batteryModel ?? (models.count == 1 ? models.first! : "mixed")

        let norms = try configuration.normsPath.map { try AgeNorms.load(json: $0) } ?? .linear(.calibrationPopulation)
        let linear: Norms = if case .linear(let n) = norms.model { n } else { .calibrationPopulation }
        let scale = try IQScale(
            norms: linear, confidenceLevel: configuration.confidenceLevel,
            lowPrecisionSE: configuration.lowPrecisionSE, minimumItems: configuration.minimumItems)
        // Age-specific norms report with the scale as the bank's scorers use it (`IQScale.expressed(on:)`).
        let ageNorms =
            norms.isAgeSpecific
            ? AgeNormScale(norms: norms, transformation: configuration.iqTransformation, settings: scale.expressed(on: bank.latentScale)) : nil
        var writers: [AbilityMethod: ScoreJSONWriter] = [:]
        if let battery {
            // Per reported index, its own norms (`indexNormsPaths`) or none (the calibration population).
            let names = battery.reportedNames
            if let unknown = configuration.indexNormsPaths.keys.sorted().first(where: { !names.contains($0) }) {
                throw InputError(
                    file: path,
                    message:
                        "index norms are configured for \(unknown), which is not a reported index (reported: \(names.isEmpty ? "none" : names.joined(separator: ", ")))"
                )
            }
            let indexScale = try Battery.indexScale(scale)
            let indexScales: [AgeNormScale?] =
                try configuration.indexNormsPaths.isEmpty
                ? []
                : names.map { name in
                    try configuration.indexNormsPaths[name].map {
                        AgeNormScale(norms: try AgeNorms.load(json: $0), transformation: configuration.iqTransformation, settings: indexScale)
                    }
                }
            for method in [AbilityMethod.eap, .map] {
                var ability = configuration.ability
                ability.method = method
                writers[method] = ScoreJSONWriter(
                    scorer: try SessionScorer(battery: battery, bank: bank, ability: ability, scale: scale), ageNorms: ageNorms,
                    indexScales: indexScales)
            }
        } else {
            if let name = configuration.indexNormsPaths.keys.sorted().first {
                throw InputError(file: path, message: "index norms are configured (\(name)) but the bank is unidimensional: it has no indexes")
            }
            for method in AbilityMethod.allCases {
                var ability = configuration.ability
                ability.method = method
                writers[method] = ScoreJSONWriter(scorer: try SessionScorer(bank: bank, ability: ability, scale: scale), ageNorms: ageNorms)
            }
        }
        self.writers = writers
        defaultWriter = writers[configuration.ability.method]!

        // A bank without a domain column is one domain (`AssemblyBank.singleDomain`).
        let assemblyBank = try AssemblyBank(bank: bank)
        let catConfiguration =
            try configuration.catConfigurationPath.map { try CATConfiguration.load(json: $0) }
            ?? ServerConfiguration.defaultCATConfiguration
        let pool: CATItemPool
        do {
            pool = try CATItemPool(bank: assemblyBank, configuration: catConfiguration)
        } catch let error as AssemblyError {
            throw InputError(file: configuration.catConfigurationPath ?? "the default CAT configuration", message: error.message)
        }
        if let exposurePath = configuration.exposurePath {
            exposure = try ExposureParameters.load(csv: exposurePath, bank: assemblyBank)
            exposureControl = "sympson-hetter from \(exposurePath)"
        } else if !configuration.exposureControl {
            exposure = nil
            exposureControl = "off (\(configuration.naming == .option ? "--exposure none" : "exposure control turned off"))"
        } else if let target = pool.configuration.exposureTarget {
            let calibration: SympsonHetter
            do {
                calibration = try SympsonHetter.calibrate(pool: pool, seed: Self.exposureCalibrationSeed)
            } catch {
                throw InputError(file: configuration.catConfigurationPath ?? "the default CAT configuration", message: error.message)
            }
            exposure = calibration.parameters
            let last = calibration.rounds.last
            exposureControl =
                "sympson-hetter r_max \(target) calibrated at load (\(calibration.rounds.count) rounds of \(calibration.simulees) simulees, "
                + "max exposure \(String(format: "%.3f", last?.maxExposure ?? 0))\(calibration.converged ? "" : ", not converged"), \(String(format: "%.1f", calibration.elapsedSeconds)) s)"
                + (pool.exposureTargetNote.map { " (\($0))" } ?? "")
        } else {
            exposure = nil
            exposureControl =
                pool.exposureTargetNote.map { "off (\($0))" }
                ?? "off (exposure_target is null in \(configuration.catConfigurationPath ?? "the CAT configuration"))"
        }
        if let blueprintPath = configuration.blueprintPath {
            let blueprint = try Blueprint.load(json: blueprintPath)
            guard (blueprint.forms ?? 1) == 1 else {
                throw InputError(
                    file: blueprintPath,
                    message: "\"forms\" is \(blueprint.forms ?? 1); POST /v1/forms assembles one form per request (ask again with another seed)")
            }
            do {
                defaultAssembler = try FormAssembler(bank: assemblyBank, blueprint: blueprint)
                _ = try defaultAssembler!.assemble(options: AssemblyOptions(seed: 1))
            } catch let error as AssemblyError {
                throw InputError(file: blueprintPath, message: error.message)
            }
            defaultBlueprint = blueprint
        } else {
            defaultBlueprint = nil
            defaultAssembler = nil
        }
        self.assemblyBank = assemblyBank
        self.pool = pool

        var json = JSONWriter()
        json.beginObject()
        json.key("bank_version"); json.string(bankVersion)
        json.key("sha256"); json.string(bankSHA256)
        json.key("n_items"); json.integer(bank.items.count)
        json.key("n_scored"); json.integer(bank.items.filter(\.isScored).count)
        json.key("model"); json.string(model)
        json.key("domains"); json.beginArray()
        for domain in defaultWriter.scorer.domains { json.string(domain) }
        json.endArray()
        if let battery {
            json.key("factors"); json.beginObject()
            json.key("general"); json.string(battery.structure.generalFactor)
            json.key("specific"); json.beginArray()
            for name in battery.structure.specificFactors { json.string(name) }
            json.endArray()
            json.endObject()
            json.key("indexes"); json.beginArray()
            for name in battery.reportedNames { json.string(name) }
            json.endArray()
        }
        json.key("method"); json.string(defaultWriter.method)
        json.key("norms"); json.string(defaultWriter.norms)
        json.key("response_times"); json.bool(defaultWriter.timedScorer != nil)
        json.key("adaptive"); json.bool(true)
        json.key("default_blueprint"); json.bool(defaultBlueprint != nil)
        json.key("exposure_control"); json.bool(exposure != nil)
        json.key("exposure"); json.optionalString(exposureControl)
        json.key("loaded_at"); json.string(ISO8601DateFormatter().string(from: loadedAt))
        json.endObject()
        bankDescription = json.buffer
    }

    /// The scorer writer for a request's method (nil: the configured one); nil for a method this bank is not
    /// scored by (a battery is scored by EAP or MAP).
    func writer(for method: AbilityMethod?) -> ScoreJSONWriter? {
        guard let method else { return defaultWriter }
        return writers[method]
    }

    /// The bytes of the bank file, at most 256 MiB (`readBoundedFile`, as JSON files are read).
    static func contents(of path: String) throws -> [UInt8] {
        try readBoundedFile(path, limit: 256 << 20, tooLarge: "the file is larger than 256 MiB; a bank of 100,000 items is about 10 MB")
    }
}
