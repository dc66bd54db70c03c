import Foundation

/// One row of a calibrated item bank.
public struct BankItem: Sendable, Hashable, Codable {
    public var itemID: String
    /// The 0/1 model (rasch, 1pl, 2pl, 3pl) and parameters; for an item scored in more than two categories
    /// (`categoryModel` set) these are not used (`responseModel` is the item's model either way).
    public var model: IRTModel
    public var parameters: ItemParameters
    public var standardErrors: ItemStandardErrors
    /// For an item scored in more than two categories: its model, parameters and response labels
    /// (`CategoryBankItem`); nil for a 0/1 item.
    public var categoryModel: CategoryBankItem?
    public var responses: Int?
    public var pValue: Double?
    public var flags: [String]
    /// Extra columns (e.g. `domain`) in `ItemBank.metadataColumns` order.
    public var metadata: [String: String]
    /// The item's response-time parameters (`LognormalTimeItem`, columns `time_intensity`, `time_discrimination`),
    /// nil for an item without them; and their standard errors.
    public var timeModel: LognormalTimeItem?
    public var timeIntensityStandardError: Double?
    public var timeDiscriminationStandardError: Double?
    /// The line of the bank file this item came from, when it was read from one (for error messages).
    package var sourceLine: Int?

    /// The values a bank's `status` column may hold: `active` (scored; also an empty cell), `pretest` (being
    /// calibrated: administered, not scored) and `retired` (no longer used, not scored).
    package static let statuses = ["active", "pretest", "retired"]

    /// Whether responses to this item count towards θ and the IQ: its `status` is empty or `active`. Pretest
    /// and retired items are answered in real sessions (the app embeds new items in tests to calibrate them
    /// with `calibrate --fixed`) but must not move anybody's score.
    public var isScored: Bool {
        guard let status = metadata["status"]?.trimmingCharacters(in: .whitespaces).lowercased() else { return true }
        return status.isEmpty || status == "active"
    }

    public init(
        itemID: String, model: IRTModel, parameters: ItemParameters,
        standardErrors: ItemStandardErrors = ItemStandardErrors(), responses: Int? = nil,
        pValue: Double? = nil, flags: [String] = [], metadata: [String: String] = [:]
    ) {
        self.itemID = itemID
        self.model = model
        self.parameters = parameters
        self.standardErrors = standardErrors
        self.responses = responses
        self.pValue = pValue
        self.flags = flags
        self.metadata = metadata
    }
}

/// A calibrated item bank, as written to and read from `BANK.csv`:
/// ```
/// item_id,model,a,b,c,se_a,se_b,se_c,n_responses,p_value,flags[,metadata columns…]
/// ```
/// Parameters are slope–difficulty, P = c + (1 − c)/(1 + exp(−a(θ − b))). Empty SE cells mean "fixed by the
/// model" or "unavailable"; flags are separated by `;`.
public struct ItemBank: Sendable, Hashable, Codable {
    public var items: [BankItem]
    public var metadataColumns: [String]
    /// The file the bank was read from, if any (for error messages).
    package var sourcePath: String?
    /// How the file's header was read (`BankLayout`: native, or a foreign layout with its conversion), when the
    /// bank was read from a file.
    public var layout: BankLayout?
    /// θ in the calibration population on this bank's metric (`LatentScale`): N(0, 1) unless the bank was
    /// calibrated with a fixed slope (Rasch), whose population SD is estimated. Written as the columns
    /// `latent_mean` and `latent_sd`; scoring, norms, CATs and fit statistics honour it.
    public var latentScale: LatentScale
    /// The speed population of a bank calibrated with response times (`SpeedAccuracyPopulation`, columns
    /// `speed_sd` and `speed_correlation`, the same on every row); nil for a bank without times.
    public var speedPopulation: SpeedAccuracyPopulation?

    /// Whether any item has response-time parameters.
    public var hasTimeModels: Bool { items.contains { $0.timeModel != nil } }

    /// The response-time columns of a bank with times: per item, then the bank's speed population.
    package static let timeColumns = ["time_intensity", "time_discrimination", "se_time_intensity", "se_time_discrimination"]
    package static let speedColumns = ["speed_sd", "speed_correlation"]

    /// The bank of a joint calibration of responses and times (`SpeedAccuracyCalibrator`): the IRT items as
    /// `init(calibration:metadata:)` makes them, each with its time parameters, and the speed population.
    package init(speedAccuracy result: SpeedAccuracyResult, metadata: ItemMetadata? = nil) {
        self.init(calibration: result.irt, metadata: metadata)
        let times = Dictionary(uniqueKeysWithValues: result.timeItems.map { ($0.itemID, $0) })
        for k in items.indices {
            guard let t = times[items[k].itemID] else { continue }
            items[k].timeModel = t.parameters
            items[k].timeIntensityStandardError = t.timeIntensityStandardError
            items[k].timeDiscriminationStandardError = t.timeDiscriminationStandardError
        }
        speedPopulation = result.population
    }

    public init(items: [BankItem], metadataColumns: [String] = [], latentScale: LatentScale = .standard) {
        self.items = items
        self.metadataColumns = metadataColumns
        self.latentScale = latentScale
    }

    /// The bank's columns for its latent scale (`latentScale`), written only when it is not N(0, 1).
    package static let latentScaleColumns = ["latent_mean", "latent_sd"]

    /// The native bank file's columns before any metadata (`ItemBank.csv()` in PsychometricsIO writes them).
    package static let coreColumns = ["item_id", "model", "a", "b", "c", "se_a", "se_b", "se_c", "n_responses", "p_value", "flags"]

    /// The bank of a calibration, with metadata joined by item id.
    ///
    /// With `fixed` (the bank whose items were held fixed, `CalibrationOptions.fixedItems`), the result is the
    /// updated bank: fixed items keep that bank's model, parameters and standard errors, get this data's
    /// `n_responses`/`p_value` and the flag `fixed`; bank items nobody answered are appended unchanged with the
    /// flags `fixed` and `not in data`; the bank's metadata columns are kept (`metadata` wins where both
    /// have a value).
    ///
    /// The latent scale: with `fixed`, that bank's (the fixed items define the metric, and their population the
    /// norms); a free Rasch calibration N(0, σ̂²) with its estimated latent SD; otherwise N(0, 1).
    public init(calibration: CalibrationResult, metadata: ItemMetadata? = nil, fixed: ItemBank? = nil) {
        if let fixed {
            latentScale = fixed.latentScale
        } else if calibration.model == .rasch, let scale = try? LatentScale(mean: 0, sd: calibration.latentSD) {
            latentScale = scale
        } else {
            latentScale = .standard
        }
        self.metadataColumns = Self.metadataColumns(metadata, fixed: fixed)
        let bankItems = Dictionary((fixed?.items ?? []).map { ($0.itemID, $0) }, uniquingKeysWith: { first, _ in first })
        var items = calibration.items.map { item in
            var row = BankItem(
                itemID: item.itemID, model: calibration.model, parameters: item.parameters,
                standardErrors: item.standardErrors, responses: item.responses, pValue: item.pValue,
                flags: item.flags, metadata: metadata?.values[item.itemID] ?? [:])
            if item.isFixed, let bank = bankItems[item.itemID] {
                row.model = bank.model
                row.standardErrors = bank.standardErrors
                row.flags = Self.fixedFlags(bank, [])
                row.metadata = bank.metadata.merging(row.metadata) { _, mine in mine }
            }
            return row
        }
        items += Self.carriedOver(fixed, calibrated: calibration.items.map(\.itemID), notInData: calibration.fixedItemsNotInData, metadata: metadata)
        self.items = items
    }

    /// The fixed bank's items nobody answered, carried over into the bank of a fixed-parameter calibration:
    /// flagged `fixed;not in data`, with the items file's metadata joined.
    static func carriedOver(_ fixed: ItemBank?, calibrated: [String], notInData: [String], metadata: ItemMetadata?) -> [BankItem] {
        let calibrated = Set(calibrated), notInData = Set(notInData)
        return (fixed?.items ?? []).filter { !calibrated.contains($0.itemID) && notInData.contains($0.itemID) }.map { bank in
            var row = bank
            row.flags = fixedFlags(bank, ["not in data"])
            row.metadata = bank.metadata.merging(metadata?.values[bank.itemID] ?? [:]) { _, mine in mine }
            row.sourceLine = nil
            return row
        }
    }

    /// The metadata columns of a calibration's bank: the items file's, then the fixed bank's not among them (core
    /// columns left out).
    static func metadataColumns(_ metadata: ItemMetadata?, fixed: ItemBank?) -> [String] {
        let reserved = Set(coreColumns + timeColumns + speedColumns + latentScaleColumns)
        var columns = (metadata?.columns ?? []).filter { !reserved.contains($0) }
        for column in fixed?.metadataColumns ?? [] where !columns.contains(column) && !reserved.contains(column) {
            columns.append(column)
        }
        return columns
    }

    /// A fixed item's flags in the bank of a fixed-parameter calibration: `fixed`, then `extra` (`not in data`),
    /// then the bank row's own flags.
    static func fixedFlags(_ bank: BankItem, _ extra: [String]) -> [String] {
        ["fixed"] + extra + bank.flags.filter { $0 != "fixed" && $0 != "not in data" }
    }
}

/// Item metadata from an items CSV: an `item_id` column plus any other columns (e.g. `domain`).
public struct ItemMetadata: Sendable, Hashable {
    public var columns: [String]
    public var values: [String: [String: String]]

    public init(columns: [String], values: [String: [String: String]]) {
        self.columns = columns
        self.values = values
    }
}
