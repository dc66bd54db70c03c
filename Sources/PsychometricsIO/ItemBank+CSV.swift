import Foundation
import Psychometrics

extension ItemBank {
    /// Slopes a bank may hold: −50 ≤ a ≤ 50 (item analysis reads negative slopes to flag them). The calibrator
    /// stops slopes at ±20 (`CalibrationOptions.maximumSlope`) because larger ones are not estimable from any
    /// realistic sample; 50 leaves room for a linking transformation (a/A with A ≥ 0.4). Beyond that,
    /// a(θ − b) overflows exp long before θ leaves the scale, and the value is a unit error.
    package static let allowedSlopes = NumberRange.closed(-50, 50)
    /// Slopes a bank for scoring, assembly or linking may hold: 0 < a ≤ 50.
    package static let allowedPositiveSlopes = NumberRange.aboveUpTo(0, 50)
    /// Difficulties a bank may hold: −100 ≤ b ≤ 100. Every θ estimate lies within ±20 (`--theta-bound`); an item
    /// 100 SDs away answers the same for everybody, and such a b is a unit error (a percentage, an IQ).
    package static let allowedDifficulties = NumberRange.closed(-100, 100)
    /// A nearly flat item (|a| < `flatSlope`) may hold a difficulty beyond `allowedDifficulties` as long as its
    /// intercept a·b stays within ±`flatItemIntercept` (and |b| ≤ 10⁶): with a = 0.003 the fit puts b at 164, yet
    /// P(θ) = 1/(1 + exp(−a(θ − b))) is an ordinary curve (intercept −0.49). Calibration writes such items; a
    /// reader must read them back. A unit error (an IQ of 115 as b with a = 1.2) stays an error.
    package static let flatSlope = 0.2
    package static let flatItemIntercept = 20.0

    /// Whether b is a difficulty a bank may hold for an item of slope a (see `flatSlope`).
    package static func allowsDifficulty(_ b: Double, slope a: Double) -> Bool {
        allowedDifficulties.contains(b) || (b.isFinite && abs(b) <= 1e6 && abs(a) < flatSlope && abs(a * b) <= flatItemIntercept)
    }

    /// "allowed -100 ≤ b ≤ 100", with the flat-item allowance when it applies to a.
    static func allowedDifficultyText(slope a: Double) -> String {
        "allowed \(allowedDifficulties.inequality("b"))"
            + (abs(a) < flatSlope ? " (or |a·b| ≤ \(flatItemIntercept.formatted6) for a nearly flat item, |a| < \(flatSlope.formatted6))" : "")
    }

    /// Lower asymptotes: 0 ≤ c < 1 (c = 1 is an item everybody answers correctly).
    package static let allowedGuessing = NumberRange(lower: 0, upper: 1, includesUpper: false)
    /// p-values: 0 ≤ p_value ≤ 1.
    package static let allowedPValues = NumberRange.closed(0, 1)

    /// Items whose parameters lie outside what `load(csv:)` accepts (positive slopes), one sentence each, e.g.
    /// "item 'q1': a = 9183.5; allowed 0 < a ≤ 50". A command that computes a bank (linking divides slopes by
    /// its constant) checks it before writing a file that could not be read back.
    package func parameterProblems() -> [String] {
        var problems: [String] = []
        for item in items {
            if let m = item.categoryModel {
                // A slope a (graded, gpcm, pcm) or a_k (nominal) and thresholds b_k or intercepts c_k.
                for (name, value) in zip(m.names, m.values) {
                    let range = name == "a" ? Self.allowedPositiveSlopes : name.hasPrefix("a_") ? Self.allowedSlopes : Self.allowedDifficulties
                    if !range.contains(value) {
                        problems.append("item '\(item.itemID)': \(name) = \(value.formatted6); allowed \(range.inequality(name))")
                    }
                }
                continue
            }
            let p = item.parameters
            for (value, symbol, range) in [(p.discrimination, "a", Self.allowedPositiveSlopes), (p.guessing, "c", Self.allowedGuessing)]
            where !range.contains(value) {
                problems.append("item '\(item.itemID)': \(symbol) = \(value.formatted6); allowed \(range.inequality(symbol))")
            }
            if !Self.allowsDifficulty(p.difficulty, slope: p.discrimination) {
                problems.append("item '\(item.itemID)': b = \(p.difficulty.formatted6); \(Self.allowedDifficultyText(slope: p.discrimination))")
            }
        }
        return problems
    }

    /// Reads a bank CSV (as written by `iqscore calibrate`, or any file with `item_id,a,b` and optionally `c`,
    /// `model`, SE columns and metadata such as `domain`), or one of the foreign layouts of `BankLayout` (mirt's
    /// `a,b,g,u` and `a1,d,g,u`, catR's `a,b,c,d`, girth's names), converted as `layout` states.
    ///
    /// Every problem is an error naming the line and column: a missing or repeated column, a number that is not
    /// plain decimal notation (`DecimalNumber`: no `inf`, `nan`, hexadecimal or out-of-range values), a slope
    /// outside `allowedSlopes` (scoring: `allowedPositiveSlopes`), a difficulty outside `allowedDifficulties`, c
    /// outside [0, 1), an unknown model or one the parameters contradict (`rasch` needs a = 1 and c = 0, `1pl` and
    /// `2pl` need c = 0), a bad standard error, response count or p-value, a duplicated item id, a row of the
    /// wrong width. An empty bank is an error.
    ///
    /// Items scored in more than two categories (`CategoryBankItem`: model graded, gpcm, pcm, rsm or nominal) are read
    /// from their own columns (`BankLayout.categoryColumns`, `ItemBank+CategoryColumns.swift`) when
    /// `categoryItems` allows them; otherwise such a row is an error saying that this use reads 0/1 items only.
    /// A cell `NA` (as R writes a missing value) is an empty cell.
    /// - Parameters:
    ///   - requirePositiveSlopes: scoring needs a > 0; item analysis reads any finite slope so that a negative
    ///     one can be flagged.
    ///   - categoryItems: whether rows of items in more than two categories are read, and the model of rows
    ///     whose thresholds (`b1`, `b2`, …) say neither (mirt's `coef(IRTpars = TRUE)` graded and gpcm tables
    ///     look the same; nil: such a row must name its model).
    /// - Throws: `InputError`/`InputErrors` naming the file, line and column, as listed above.
    public static func load(csv path: String, requirePositiveSlopes: Bool = true, categoryItems: CategoryItemReading = .refused) throws -> ItemBank {
        try load(.path(path), requirePositiveSlopes: requirePositiveSlopes, categoryItems: categoryItems)
    }

    /// `load(csv:requirePositiveSlopes:categoryItems:)` from a file or from its bytes already read; messages name
    /// settings as `naming` says (the command line: `--bank-model`).
    package static func load(
        _ source: CSVSource, requirePositiveSlopes: Bool = true, categoryItems: CategoryItemReading = .refused,
        naming: SettingNaming = .words
    ) throws -> ItemBank {
        var bank = try loadRows(source, requirePositiveSlopes: requirePositiveSlopes, categoryItems: categoryItems, naming: naming)
        bank.sourcePath = source.name
        return bank
    }

    private static func loadRows(
        _ source: CSVSource, requirePositiveSlopes: Bool, categoryItems: CategoryItemReading,
        naming: SettingNaming
    ) throws -> ItemBank {
        let path = source.name
        // R's write.csv2 and European Excel separate fields by ';' and write decimal commas; tab- and
        // '|'-separated exports happen too. The first line says which (`FieldSeparatorSniffer`).
        let separator = source.sniffSeparator(expected: UInt8(ascii: ","))?.separator ?? UInt8(ascii: ",")
        let decimalCommas = separator == UInt8(ascii: ";")
        let reader = try source.reader(delimiter: separator)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the bank file is empty; expected a header with item_id,a,b") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        let headerLine = reader.line
        try CSVHeader.checkUnique(header, file: path, line: headerLine)
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        var layout: BankLayout
        switch BankLayout.detect(header) {
        case .success(let detected): layout = detected
        case .failure(let error): throw InputError(file: path, line: headerLine, message: error.message)
        }
        if separator != UInt8(ascii: ",") {
            layout.isNative = false
            let how =
                "fields separated by \(FieldSeparatorSniffer.name(separator))"
                + (decimalCommas ? " with decimal commas (1,25 = 1.25) as R's write.csv2 writes them" : "")
            layout.conversion = layout.conversion.isEmpty ? how : layout.conversion + "; " + how
        }
        let idColumn = layout.idColumn, aColumn = layout.slopeColumn, locationColumn = layout.locationColumn
        let cColumn = layout.guessingColumn, modelColumn = column("model")
        let seColumns = [column("se_a"), column("se_b"), column("se_c")]
        let nColumn = column("n_responses"), pColumn = column("p_value"), flagsColumn = column("flags")
        let known = Set(coreColumns + latentScaleColumns + timeColumns + speedColumns)
        let timeIndex = timeColumns.map(column), speedIndex = speedColumns.map(column)
        if (timeIndex[0] == nil) != (timeIndex[1] == nil) || (speedIndex[0] == nil) != (speedIndex[1] == nil) {
            throw InputError(
                file: path, line: headerLine,
                message:
                    "the bank has \(timeIndex[0] == nil && timeIndex[1] == nil ? "" : "only one of time_intensity, time_discrimination")\((timeIndex[0] == nil) != (timeIndex[1] == nil) && (speedIndex[0] == nil) != (speedIndex[1] == nil) ? " and " : "")\((speedIndex[0] == nil) != (speedIndex[1] == nil) ? "only one of speed_sd, speed_correlation" : ""): a bank's response-time model needs both columns of each pair"
            )
        }
        var speed: (sd: Double, correlation: Double, line: Int)?
        let latentColumns = latentScaleColumns.map(column)
        if (latentColumns[0] == nil) != (latentColumns[1] == nil) {
            throw InputError(
                file: path, line: headerLine,
                message:
                    "the bank has \(latentColumns[0] == nil ? "latent_sd but no latent_mean" : "latent_mean but no latent_sd"): a bank's latent scale needs both (latent_mean 0 and the latent SD for a Rasch bank)"
            )
        }
        // The latent scale: the same latent_mean and latent_sd on every row (`LatentScale`).
        var latent: (mean: Double, sd: Double, line: Int)?
        let metadataIndex = header.indices.filter { !known.contains(header[$0]) && !header[$0].isEmpty && !layout.consumedColumns.contains($0) }
        let metadataColumns = metadataIndex.map { header[$0] }

        var errors = ErrorCollector()
        var items: [BankItem] = []
        var firstLine: [String: Int] = [:]
        while try reader.nextRow(fields: header.count, collecting: &errors) {
            let line = reader.line
            let id = reader.string(idColumn).trimmingCharacters(in: .whitespaces)
            if id.isEmpty {
                errors.add(InputError(file: path, line: line, column: idColumn + 1, message: "empty item_id"))
                continue
            }
            if let previous = firstLine[id] {
                errors.add(InputError(file: path, line: line, column: idColumn + 1, message: "item '\(id)' already defined on line \(previous)"))
                continue
            }
            firstLine[id] = line
            func number(_ c: Int?, _ name: String, allowEmpty: Bool) -> Double?? {
                guard let c else { return .some(nil) }
                switch BankNumberCell(reader.string(c), decimalCommas: decimalCommas) {
                case .empty:
                    if allowEmpty { return .some(nil) }
                    errors.add(InputError(file: path, line: line, column: c + 1, message: "item '\(id)': \(name) is empty"))
                    return nil
                case .invalid(let text):
                    errors.add(
                        InputError(
                            file: path, line: line, column: c + 1,
                            message: "item '\(id)': \(name) '\(text.escapingControlCharacters)' is not a number"))
                    return nil
                case .number(let v):
                    return .some(v)
                }
            }
            /// n_responses, flags, the latent scale's cells and the metadata: the columns every row has, whatever its model.
            func rowTail(line: Int, id: String) -> (
                responses: Int?, flags: [String], metadata: [String: String], time: LognormalTimeItem?, timeSE: [Double?]
            )? {
                var responses: Int?
                if let nColumn {
                    let text = reader.string(nColumn).trimmingCharacters(in: .whitespaces)
                    if !text.isEmpty {
                        guard let n = DecimalNumber.parseInteger(text), n >= 0 else {
                            errors.add(
                                InputError(
                                    file: path, line: line, column: nColumn + 1,
                                    message: "item '\(id)': n_responses '\(text.escapingControlCharacters)' is not a whole number ≥ 0"))
                            return nil
                        }
                        responses = n
                    }
                }
                if let meanColumn = latentColumns[0], let sdColumn = latentColumns[1] {
                    guard let m = number(meanColumn, "latent_mean", allowEmpty: false), let sd = number(sdColumn, "latent_sd", allowEmpty: false)
                    else { return nil }
                    if let first = latent {
                        if m! != first.mean || sd! != first.sd {
                            errors.add(
                                InputError(
                                    file: path, line: line, column: (m! != first.mean ? meanColumn : sdColumn) + 1,
                                    message:
                                        "item '\(id)': latent_mean, latent_sd = \(m!.formatted6), \(sd!.formatted6) differ from \(first.mean.formatted6), \(first.sd.formatted6) on line \(first.line): the latent scale is the bank's, the same on every row"
                                ))
                            return nil
                        }
                    } else {
                        let problems = LatentScale.validationProblems(mean: m!, sd: sd!, naming: .jsonKey)
                        if !problems.isEmpty {
                            errors.add(
                                InputError(
                                    file: path, line: line, column: (LatentScale.allowedMeans.contains(m!) ? sdColumn : meanColumn) + 1,
                                    message: "item '\(id)': " + problems.joined(separator: "; ")))
                            return nil
                        }
                        latent = (m!, sd!, line)
                    }
                }
                // Response-time parameters: both cells or neither; their SEs ≥ 0; the speed population the same on every row.
                var time: LognormalTimeItem?
                var timeSE: [Double?] = [nil, nil]
                if let betaColumn = timeIndex[0], let alphaColumn = timeIndex[1] {
                    guard let beta = number(betaColumn, "time_intensity", allowEmpty: true),
                        let alpha = number(alphaColumn, "time_discrimination", allowEmpty: true)
                    else { return nil }
                    switch (beta, alpha) {
                    case (nil, nil): break
                    case (let beta?, let alpha?):
                        do throws(PsychometricsError) { time = try LognormalTimeItem(timeIntensity: beta, timeDiscrimination: alpha) } catch {
                            errors.add(
                                InputError(
                                    file: path, line: line,
                                    column: (LognormalTimeItem.allowedTimeIntensities.contains(beta) ? alphaColumn : betaColumn) + 1,
                                    message: "item '\(id)': \(error.message)"))
                            return nil
                        }
                    default:
                        errors.add(
                            InputError(
                                file: path, line: line, column: (beta == nil ? betaColumn : alphaColumn) + 1,
                                message:
                                    "item '\(id)': \(beta == nil ? "time_intensity" : "time_discrimination") is empty but \(beta == nil ? "time_discrimination" : "time_intensity") is not: an item's time model needs both (or neither)"
                            ))
                        return nil
                    }
                    for (k, name) in [(2, "se_time_intensity"), (3, "se_time_discrimination")] {
                        guard let v = number(timeIndex[k], name, allowEmpty: true) else { return nil }
                        if let v, !(v >= 0) {
                            errors.add(
                                InputError(
                                    file: path, line: line, column: timeIndex[k]! + 1,
                                    message: "item '\(id)': \(name) = \(v.formatted6); allowed \(name) ≥ 0"))
                            return nil
                        }
                        timeSE[k - 2] = v
                    }
                }
                if let sdColumn = speedIndex[0], let rhoColumn = speedIndex[1] {
                    guard let sd = number(sdColumn, "speed_sd", allowEmpty: false),
                        let rho = number(rhoColumn, "speed_correlation", allowEmpty: false)
                    else { return nil }
                    if let first = speed {
                        if sd! != first.sd || rho! != first.correlation {
                            errors.add(
                                InputError(
                                    file: path, line: line, column: (sd! != first.sd ? sdColumn : rhoColumn) + 1,
                                    message:
                                        "item '\(id)': speed_sd, speed_correlation = \(sd!.formatted6), \(rho!.formatted6) differ from \(first.sd.formatted6), \(first.correlation.formatted6) on line \(first.line): the speed population is the bank's, the same on every row"
                                ))
                            return nil
                        }
                    } else {
                        do throws(PsychometricsError) { _ = try SpeedAccuracyPopulation(speedSD: sd!, correlation: rho!) } catch {
                            errors.add(
                                InputError(
                                    file: path, line: line,
                                    column: (SpeedAccuracyPopulation.allowedSpeedSDs.contains(sd!) ? rhoColumn : sdColumn) + 1,
                                    message: "item '\(id)': \(error.message)"))
                            return nil
                        }
                        speed = (sd!, rho!, line)
                    }
                }
                var metadata: [String: String] = [:]
                for (name, c) in zip(metadataColumns, metadataIndex) { metadata[name] = reader.string(c) }
                if let status = metadata["status"]?.trimmingCharacters(in: .whitespaces), !status.isEmpty,
                    !BankItem.statuses.contains(status.lowercased())
                {
                    errors.add(
                        InputError(
                            file: path, line: line, column: metadataIndex[metadataColumns.firstIndex(of: "status")!] + 1,
                            message: "item '\(id)': status \(TextFidelity.quoted(status)) is not one of \(BankItem.statuses.joined(separator: ", "))")
                    )
                    return nil
                }
                return (responses, flagsColumn.map { reader.string($0).split(separator: ";").map(String.init) } ?? [], metadata, time, timeSE)
            }
            let modelText = modelColumn.map { reader.string($0).trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            let row = CategoryRow(path: path, line: line, id: id, layout: layout, decimalCommas: decimalCommas, cell: { reader.string($0) })
            var categoryItem: CategoryBankItem?
            switch row.kind(modelText: modelText, modelColumn: modelColumn, reading: categoryItems, naming: naming) {
            case .failure(let error): errors.add(error); continue
            case .success(nil):
                if let problem = row.strayCategoryCell() { errors.add(problem); continue }
            case .success(let kind?):
                switch row.item(kind, standardErrorColumns: [seColumns[0]]) {
                case .failure(let error): errors.add(error); continue
                case .success(let item): categoryItem = item
                }
            }
            guard categoryItem == nil else {
                var statistics: [Double?] = []
                for (c, name) in [(pColumn, "p_value")] {
                    guard let v = number(c, name, allowEmpty: true) else { statistics.append(nil); continue }
                    if let v, !Self.allowedPValues.contains(v) {
                        errors.add(
                            InputError(
                                file: path, line: line, column: c! + 1,
                                message: "item '\(id)': \(name) = \(v.formatted6); allowed \(Self.allowedPValues.inequality(name))"))
                    }
                    statistics.append(v)
                }
                guard let tail = rowTail(line: line, id: id) else { continue }
                var item = BankItem(
                    itemID: id, model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0),
                    responses: tail.responses, pValue: statistics[0], flags: tail.flags, metadata: tail.metadata)
                // A nominal item's key column names its correct option (it counts 1 in the raw score).
                if let cell = tail.metadata["key"] {
                    do throws(PsychometricsError) { categoryItem = try categoryItem!.keyed(by: cell) } catch {
                        errors.add(
                            InputError(
                                file: path, line: line, column: metadataIndex[metadataColumns.firstIndex(of: "key")!] + 1,
                                message: "item '\(id)': " + error.message))
                        continue
                    }
                }
                item.categoryModel = categoryItem
                item.timeModel = tail.time
                item.timeIntensityStandardError = tail.timeSE[0]
                item.timeDiscriminationStandardError = tail.timeSE[1]
                item.sourceLine = line
                items.append(item)
                continue
            }
            guard let bColumn = locationColumn else {
                errors.add(
                    InputError(
                        file: path, line: line, column: (modelColumn ?? aColumn) + 1,
                        message:
                            "item '\(id)': a 0/1 item needs a difficulty, and the header has no b column (a bank of items in more than two categories only has thresholds b1, b2, …; give this row a model such as graded)"
                    ))
                continue
            }
            guard let a = number(aColumn, layout.slopeName, allowEmpty: false), let b = number(bColumn, layout.locationName, allowEmpty: false),
                let c = number(cColumn, layout.guessingName, allowEmpty: true), let u = number(layout.upperColumn, layout.upperName, allowEmpty: true)
            else { continue }
            let slope = a!, guessing = c ?? 0
            if let u, u != 1 {
                errors.add(
                    InputError(
                        file: path, line: line, column: layout.upperColumn! + 1,
                        message:
                            "item '\(id)': \(layout.upperName) = \(u.formatted6) is an upper asymptote below 1 (4PL); iqscore scores the Rasch, 1PL, 2PL and 3PL models (upper asymptote 1): refit without one"
                    ))
                continue
            }
            // Slope–intercept aθ + d = a(θ − b) with b = −d/a.
            let difficulty: Double
            if layout.locationIsIntercept {
                guard slope != 0 else {
                    errors.add(
                        InputError(
                            file: path, line: line, column: aColumn + 1,
                            message:
                                "item '\(id)': \(layout.slopeName) = 0, so the difficulty b = −d/\(layout.slopeName) is undefined; allowed \(Self.allowedSlopes.inequality("a")) without 0"
                        ))
                    continue
                }
                difficulty = -b! / slope
            } else {
                difficulty = b!
            }
            if requirePositiveSlopes, !Self.allowedPositiveSlopes.contains(slope) {
                errors.add(
                    InputError(
                        file: path, line: line, column: aColumn + 1,
                        message:
                            "item '\(id)': \(layout.slopeName) = \(slope.formatted6); allowed \(Self.allowedPositiveSlopes.inequality("a")) (scoring needs a positive slope)"
                    ))
                continue
            }
            if !Self.allowedSlopes.contains(slope) {
                errors.add(
                    InputError(
                        file: path, line: line, column: aColumn + 1,
                        message: "item '\(id)': \(layout.slopeName) = \(slope.formatted6); allowed \(Self.allowedSlopes.inequality("a"))"))
                continue
            }
            if !Self.allowsDifficulty(difficulty, slope: slope) {
                errors.add(
                    InputError(
                        file: path, line: line, column: bColumn + 1,
                        message:
                            "item '\(id)': b = \(difficulty.formatted6)\(layout.locationIsIntercept ? " (−d/\(layout.slopeName) with d = \(b!.formatted6))" : ""); \(Self.allowedDifficultyText(slope: slope))"
                    ))
                continue
            }
            if !Self.allowedGuessing.contains(guessing) {
                errors.add(
                    InputError(
                        file: path, line: line, column: cColumn! + 1,
                        message: "item '\(id)': \(layout.guessingName) = \(guessing.formatted6); allowed \(Self.allowedGuessing.inequality("c"))"))
                continue
            }
            var model: IRTModel = guessing > 0 ? .threePL : .twoPL
            if let modelColumn {
                let text = modelText
                if !text.isEmpty {
                    guard let m = IRTModel(rawValue: text) else {
                        if text == "4pl" {
                            errors.add(
                                InputError(
                                    file: path, line: line, column: modelColumn + 1,
                                    message:
                                        "item '\(id)': model '4pl' has an upper asymptote below 1, which iqscore does not model; allowed rasch, 1pl, 2pl, 3pl (refit as 3pl)"
                                ))
                            continue
                        }
                        errors.add(
                            InputError(
                                file: path, line: line, column: modelColumn + 1,
                                message:
                                    "item '\(id)': model '\(text.escapingControlCharacters)' is not one of rasch, 1pl, 2pl, 3pl, \(ItemModelKind.categoryRowKinds.map(\.rawValue).joined(separator: ", "))"
                            ))
                        continue
                    }
                    if m == .rasch && slope != 1 {
                        errors.add(
                            InputError(
                                file: path, line: line, column: aColumn + 1,
                                message:
                                    "item '\(id)': \(layout.slopeName) = \(slope.formatted6), but a rasch item has a = 1: the model column contradicts the parameters (use model 1pl or 2pl for other slopes)"
                            ))
                        continue
                    }
                    if !m.hasGuessing && guessing != 0 {
                        errors.add(
                            InputError(
                                file: path, line: line, column: cColumn! + 1,
                                message:
                                    "item '\(id)': \(layout.guessingName) = \(guessing.formatted6), but a \(m.rawValue) item has no lower asymptote (c = 0): the model column contradicts the parameters (use model 3pl, or drop the \(layout.guessingName) value)"
                            ))
                        continue
                    }
                    model = m
                }
            }
            var se = ItemStandardErrors()
            var statistics: [Double?] = []
            // Standard errors: any finite value ≥ 0 (they are reported and carried, never computed with); p-values
            // in [0, 1].
            for (c, name) in [(seColumns[0], "se_a"), (seColumns[1], "se_b"), (seColumns[2], "se_c"), (pColumn, "p_value")] {
                guard let v = number(c, name, allowEmpty: true) else { statistics.append(nil); continue }
                if let v, name == "p_value" ? !Self.allowedPValues.contains(v) : !(v >= 0) {
                    let allowed = name == "p_value" ? Self.allowedPValues.inequality(name) : "\(name) ≥ 0"
                    errors.add(
                        InputError(file: path, line: line, column: c! + 1, message: "item '\(id)': \(name) = \(v.formatted6); allowed \(allowed)"))
                }
                statistics.append(v)
            }
            se.discrimination = statistics[0]; se.difficulty = statistics[1]; se.guessing = statistics[2]
            guard let tail = rowTail(line: line, id: id) else { continue }
            var item = BankItem(
                itemID: id, model: model, parameters: ItemParameters(discrimination: slope, difficulty: difficulty, guessing: guessing),
                standardErrors: se, responses: tail.responses, pValue: statistics[3], flags: tail.flags, metadata: tail.metadata)
            item.timeModel = tail.time
            item.timeIntensityStandardError = tail.timeSE[0]
            item.timeDiscriminationStandardError = tail.timeSE[1]
            item.sourceLine = line
            items.append(item)
        }
        try errors.throwIfAny()
        guard !items.isEmpty else { throw InputError(file: path, line: headerLine, message: "the bank has no items") }
        var bank = ItemBank(
            items: items, metadataColumns: metadataColumns,
            latentScale: try latent.map { try LatentScale(mean: $0.mean, sd: $0.sd) } ?? .standard)
        bank.layout = layout
        if let speed {
            bank.speedPopulation = try SpeedAccuracyPopulation(speedSD: speed.sd, correlation: speed.correlation)
        } else if bank.hasTimeModels {
            throw InputError(
                file: path, line: headerLine,
                message:
                    "the bank has time_intensity and time_discrimination but no speed_sd, speed_correlation: a bank's response-time model needs its speed population (a calibration with response times writes both)"
            )
        }
        return bank
    }
}

extension ItemBank {
    /// The bank as CSV text (header + one row per item). Numbers use up to 6 decimals; no NaN or infinity is
    /// ever written (non-finite values become empty cells). A latent scale other than N(0, 1) is written as
    /// `latent_mean` and `latent_sd` after the core columns, the same on every row (full precision, so that a
    /// bank read back scores exactly as the one written).
    public func csv() -> String {
        let latentCells = latentScale.isStandard ? [] : [latentScale.mean, latentScale.sd].map { "\($0)" }
        let categoryColumns = self.categoryColumns
        let categoryIndex = Dictionary(uniqueKeysWithValues: categoryColumns.enumerated().map { ($1, $0) })
        let timed = hasTimeModels || speedPopulation != nil
        let timeHeader = timed ? Self.timeColumns + (speedPopulation == nil ? [] : Self.speedColumns) : []
        var out =
            (Self.coreColumns + categoryColumns + (latentScale.isStandard ? [] : Self.latentScaleColumns) + timeHeader + metadataColumns).map(
                csvField
            ).joined(separator: ",") + "\n"
        func num(_ v: Double?) -> String {
            guard let v, v.isFinite else { return "" }
            return String(format: "%.6f", v)
        }
        for item in items {
            var row: [String]
            if let m = item.categoryModel {
                // The slope of a graded/gpcm/pcm item in a and se_a; every other value in its own column.
                var cells = [String](repeating: "", count: categoryColumns.count)
                var slope = "", slopeSE = ""
                for (name, (value, se)) in zip(m.names, zip(m.values, m.standardErrors)) {
                    if name == "a" { slope = num(value); slopeSE = num(se); continue }
                    cells[categoryIndex[name]!] = num(value)
                    cells[categoryIndex["se_" + name]!] = num(se)
                }
                cells[0] = csvField(m.responseLabels.joined(separator: ";"))
                row =
                    [
                        csvField(item.itemID), m.kind.rawValue, slope, "", "", slopeSE, "", "",
                        item.responses.map(String.init) ?? "", num(item.pValue), csvField(item.flags.joined(separator: ";"))
                    ] + cells
            } else {
                let p = item.parameters, e = item.standardErrors
                row = [
                    csvField(item.itemID), item.model.rawValue, num(p.discrimination), num(p.difficulty), num(p.guessing),
                    num(e.discrimination), num(e.difficulty), num(e.guessing),
                    item.responses.map(String.init) ?? "", num(item.pValue), csvField(item.flags.joined(separator: ";"))
                ]
                row += [String](repeating: "", count: categoryColumns.count)
            }
            row += latentCells
            if timed {
                row += [
                    num(item.timeModel?.timeIntensity), num(item.timeModel?.timeDiscrimination), num(item.timeIntensityStandardError),
                    num(item.timeDiscriminationStandardError)
                ]
                if let p = speedPopulation { row += ["\(p.speedSD)", "\(p.correlation)"] }
            }
            row += metadataColumns.map { csvField(item.metadata[$0] ?? "") }
            out += row.joined(separator: ",") + "\n"
        }
        return out
    }
}

/// A number cell of a bank file, as both bank readers (the 0/1 columns here, the category columns in
/// `CategoryRow`) read it: spaces around ignored, empty or `NA` for no value, a lone decimal comma (`0,85`) read as
/// a point when the file's separator is not a comma (`decimalCommas`), then `DecimalNumber.parse`.
enum BankNumberCell: Equatable {
    case empty
    case number(Double)
    /// Not a number: the cell's text as read (trimmed, a comma turned to a point).
    case invalid(String)

    init(_ raw: String, decimalCommas: Bool) {
        var t = Self.text(raw)
        if t.isEmpty { self = .empty; return }
        if decimalCommas, !t.contains("."), t.firstIndex(of: ",") == t.lastIndex(of: ",") { t = t.replacingOccurrences(of: ",", with: ".") }
        self = DecimalNumber.parse(t).map { .number($0) } ?? .invalid(t)
    }

    /// The cell trimmed, `NA` as empty.
    static func text(_ raw: String) -> String {
        let t = raw.trimmingCharacters(in: .whitespaces)
        return t == "NA" ? "" : t
    }
}
