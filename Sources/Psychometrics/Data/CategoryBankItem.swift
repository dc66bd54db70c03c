import Foundation

/// The model of a bank item scored in more than two categories (graded, gpcm, pcm, rsm or nominal;
/// `ItemModelKind`), its parameters in the IRT form under their bank names, their standard errors and the
/// response each category stands for.
///
/// A bank row holds either the dichotomous parameters (`BankItem.parameters`: model rasch, 1pl, 2pl, 3pl) or
/// these (`BankItem.categoryModel`); `BankItem.responseModel` is the item's `ItemResponseModel` either way.
public struct CategoryBankItem: Sendable, Hashable, Codable {
    public let kind: ItemModelKind
    /// In the order of `names` (`ItemModelKind.parameterNames(categories:)`).
    public let values: [Double]
    /// Per value; nil where fixed by the model (a pcm item's a) or unavailable.
    public var standardErrors: [Double?]
    /// The response each category stands for, in category order: category k is scored from the cell
    /// `responseLabels[k]`. Empty: category k is the cell `k` (0 ..< K). A calibration that collapsed an unused
    /// category writes the data's categories here (e.g. `0;1;3`), so that the bank scores the data's cells.
    public let responseLabels: [String]
    /// A nominal item's correct option, as its category (nil: none, or not nominal): it counts 1 in the raw score
    /// (`NominalResponseItem.key`). The bank's `key` column names it by its response label.
    public let key: Int?
    /// The item as a model (built and checked once, at `init`).
    public let model: any ItemResponseModel

    /// - Throws: `PsychometricsError.invalidParameters` for values `ItemModelKind.item(values:)` refuses, standard
    ///   errors not one per value, or labels not one per category (or repeated, or empty).
    public init(
        kind: ItemModelKind, values: [Double], standardErrors: [Double?]? = nil, responseLabels: [String] = [],
        key: Int? = nil
    ) throws(PsychometricsError) {
        let key = kind == .nominal ? key : nil
        let model = try kind.item(values: values, key: key)
        let k = model.categoryCount
        let errors = standardErrors ?? [Double?](repeating: nil, count: values.count)
        guard errors.count == values.count else {
            throw PsychometricsError(.invalidParameters, "\(values.count) parameters but \(errors.count) standard errors")
        }
        if !responseLabels.isEmpty {
            guard responseLabels.count == k else {
                throw PsychometricsError(.invalidParameters, "a \(k)-category item needs \(k) response labels, got \(responseLabels.count)")
            }
            guard !responseLabels.contains(where: \.isEmpty), Set(responseLabels).count == k else {
                throw PsychometricsError(
                    .invalidParameters, "response labels must be distinct and not empty, got \(responseLabels.joined(separator: ";"))")
            }
        }
        self.kind = kind
        self.values = values
        self.standardErrors = errors
        self.responseLabels = responseLabels.enumerated().allSatisfy({ $0.element == String($0.offset) }) ? [] : responseLabels
        self.key = key
        self.model = model
    }

    /// The item keyed by the response a bank's `key` cell names (an option letter matches either case); a blank
    /// cell, or an item that is not nominal, leaves it as it is.
    /// - Throws: `PsychometricsError.invalidParameters` naming the cell and the item's responses when the key is
    ///   none of them.
    public func keyed(by cell: String) throws(PsychometricsError) -> CategoryBankItem {
        let text = cell.trimmingCharacters(in: .whitespaces)
        guard kind == .nominal, !text.isEmpty else { return self }
        guard let k = category(of: text) ?? category(of: text.uppercased()) ?? category(of: text.lowercased()) else {
            throw PsychometricsError(
                .invalidParameters, "key \(TextFidelity.quoted(text)) is none of the item's responses (allowed: \(allowedResponses))")
        }
        return try CategoryBankItem(kind: kind, values: values, standardErrors: standardErrors, responseLabels: responseLabels, key: k)
    }

    /// The number of categories K.
    public var categoryCount: Int { model.categoryCount }
    /// The parameters' bank names.
    public var names: [String] { kind.parameterNames(categories: categoryCount) }

    /// The category a response cell's text stands for (nil: not one of this item's responses).
    public func category(of cell: String) -> Int? {
        if responseLabels.isEmpty {
            guard let k = Int(cell), (0..<categoryCount).contains(k) else { return nil }
            return k
        }
        return responseLabels.firstIndex(of: cell)
    }

    /// What a response to this item may be, for messages: "0…3", or the labels.
    public var allowedResponses: String {
        responseLabels.isEmpty ? "0…\(categoryCount - 1)" : responseLabels.joined(separator: ", ")
    }

    private enum CodingKeys: String, CodingKey { case kind, values, standardErrors, responseLabels, key }

    /// - Throws: `DecodingError` for an unknown model kind or values the model refuses.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            kind: c.decode(ItemModelKind.self, forKey: .kind), values: c.decode([Double].self, forKey: .values),
            standardErrors: c.decode([Double?].self, forKey: .standardErrors),
            responseLabels: c.decode([String].self, forKey: .responseLabels), key: c.decodeIfPresent(Int.self, forKey: .key))
    }

    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        try c.encode(values, forKey: .values)
        try c.encode(standardErrors, forKey: .standardErrors)
        try c.encode(responseLabels, forKey: .responseLabels)
        try c.encodeIfPresent(key, forKey: .key)
    }

    public static func == (l: Self, r: Self) -> Bool {
        l.kind == r.kind && l.values == r.values && l.standardErrors == r.standardErrors && l.responseLabels == r.responseLabels && l.key == r.key
    }

    public func hash(into h: inout Hasher) {
        h.combine(kind)
        h.combine(values)
        h.combine(responseLabels)
        h.combine(key)
    }
}

extension BankItem {
    /// The item's model: `categoryModel`'s for an item scored in more than two categories, else `parameters`.
    public var responseModel: any ItemResponseModel { categoryModel?.model ?? parameters }

    /// The number of response categories (2 for a 0/1 item).
    public var categoryCount: Int { categoryModel?.categoryCount ?? 2 }

    /// The name the bank's `model` column writes: rasch, 1pl, 2pl, 3pl, graded, gpcm, pcm, rsm or nominal.
    public var modelName: String { categoryModel?.kind.rawValue ?? model.rawValue }
}

extension ItemBank {
    /// Whether any item is scored in more than two categories (`BankItem.categoryModel`).
    public var hasCategoryItems: Bool { items.contains { $0.categoryModel != nil } }

    /// The bank of a calibration of items in several categories (`PolytomousCalibrator`), with metadata joined
    /// by item id.
    ///
    /// Items fitted with two categories are written as the 0/1 items they are: graded and gpcm as `2pl` (a and
    /// b = b1), pcm as `rasch`; nominal items keep their model. The p-value of an item in K categories is its mean
    /// score over K − 1 (its mean proportion of the maximum score). Data categories other than 0 ..< K (coded
    /// from 1, or with a collapsed category between) are written as the item's response labels (the data's
    /// categories in use, or the labels the calibration was given, such as option letters), a collapsed one also
    /// as the flag `categories collapsed`. With pcm items
    /// in, the latent scale is N(0, σ̂²).
    ///
    /// With `fixed` (a fixed-parameter calibration, `PolytomousCalibrator.calibrate(fixedItems:)`): the fixed
    /// items are that bank's rows (values, standard errors, metadata) with the data's counts and the flag `fixed`,
    /// the bank's items nobody answered are carried over (flags `fixed;not in data`), and the latent scale is the
    /// bank's.
    /// - Throws: `PsychometricsError` `.invalidParameters` when a fitted item's parameters or labels do not make a
    ///   `CategoryBankItem` (a fit that should not happen; the message names the item's values).
    public init(calibration: PolytomousCalibrationResult, metadata: ItemMetadata? = nil, fixed: ItemBank? = nil) throws(PsychometricsError) {
        let hasPCM = calibration.items.contains { !$0.isFixed && ($0.model == .partialCredit || $0.model == .ratingScale) }
        if let fixed {
            latentScale = fixed.latentScale
        } else if hasPCM, let scale = try? LatentScale(mean: 0, sd: calibration.latentSD) {
            latentScale = scale
        } else {
            latentScale = .standard
        }
        metadataColumns = Self.metadataColumns(metadata, fixed: fixed)
        let bankItems = Dictionary((fixed?.items ?? []).map { ($0.itemID, $0) }, uniquingKeysWith: { first, _ in first })
        var items: [BankItem] = []
        for fitted in calibration.items {
            let k = fitted.categoryResponses.count
            let scoreSum = fitted.categoryResponses.enumerated().reduce(0) { $0 + $1.offset * $1.element }
            let pValue = fitted.responses > 0 ? Double(scoreSum) / Double(fitted.responses * (k - 1)) : nil
            if fitted.isFixed, var row = bankItems[fitted.itemID] {
                row.responses = fitted.responses
                row.pValue = pValue
                row.flags = Self.fixedFlags(row, [])
                row.metadata = row.metadata.merging(metadata?.values[fitted.itemID] ?? [:]) { _, mine in mine }
                row.sourceLine = nil
                items.append(row)
                continue
            }
            let collapsed = fitted.categoryMap.last! - fitted.categoryMap.first! + 1 != k
            var row = BankItem(
                itemID: fitted.itemID, model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0),
                responses: fitted.responses, pValue: pValue, flags: collapsed ? ["categories collapsed"] : [],
                metadata: metadata?.values[fitted.itemID] ?? [:])
            if k == 2 && fitted.item.categoriesAreScores && fitted.categoryMap == [0, 1] {
                let threePL = fitted.model == .threePL
                row.model = fitted.model == .partialCredit || fitted.model == .ratingScale ? .rasch : threePL ? .threePL : .twoPL
                row.parameters = ItemParameters(
                    discrimination: fitted.parameters[0], difficulty: fitted.parameters[1], guessing: threePL ? fitted.parameters[2] : 0)
                row.standardErrors = ItemStandardErrors(
                    discrimination: fitted.standardErrors[0], difficulty: fitted.standardErrors[1],
                    guessing: threePL ? fitted.standardErrors[2] : nil)
            } else {
                row.categoryModel = try CategoryBankItem(
                    kind: fitted.model, values: fitted.parameters, standardErrors: fitted.standardErrors,
                    responseLabels: fitted.categoryLabels, key: (fitted.item as? NominalResponseItem)?.key)
            }
            items.append(row)
        }
        items += Self.carriedOver(fixed, calibrated: calibration.items.map(\.itemID), notInData: calibration.fixedItemsNotInData, metadata: metadata)
        self.items = items
    }
}
