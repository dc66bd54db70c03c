import Foundation
import Psychometrics

/// A correlated-factors bank read from a file (`calibrate --model correlated`, `CorrelatedFactorsResult.bankCSV`):
/// `item_id`, one `a_<factor>` slope column per factor, `d`, `c`, `factor` (the item's factor), one `r_<factor>`
/// column per factor (the item's factor's row of the correlation matrix R); `model` (2pl/3pl) when present; the
/// standard errors, counts and flags are not read and other columns are metadata. Every item loads on one factor:
/// its `factor` cell names it, its slope on that factor is nonzero and its other slopes are 0 or empty.
package struct CorrelatedFactorsBank: Sendable {
    /// The factors, in the slope columns' order.
    package var factors: [String]
    /// R, K × K row-major.
    package var correlations: [Double]
    /// The items in file order (`factor` indexing `factors`).
    package var items: [CorrelatedFactorsResult.Item]
    package var metadataColumns: [String] = []
    /// Per item, its metadata cells (empty cells left out).
    package var metadata: [[String: String]] = []

    /// Whether `header` (trimmed names) is a correlated-factors bank's: a `factor` column and `r_<factor>` columns.
    package static func isCorrelated(header: [String]) -> Bool {
        header.contains("factor") && header.contains { $0.hasPrefix("r_") && $0.count > 2 }
    }

    /// Whether the file at `path` has a correlated-factors bank's header (`isCorrelated(header:)`); false for a
    /// file that cannot be read or is empty (its reader names the problem).
    package static func isCorrelated(csv path: String) -> Bool {
        guard let reader = try? CSVSource.path(path).reader(), (try? reader.nextRow()) == true else { return false }
        return isCorrelated(header: reader.strings().map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// - Throws: `InputError` naming the file, line and column for a header without the model's columns, `r_`
    ///   columns that are not the slope columns' factors, a repeated item id, a cell that is not a plain number, a
    ///   value outside its range (slopes on the item's factor in `ItemBank.allowedPositiveSlopes`, |d| ≤ 100, c in
    ///   [0, 1), correlations in [−1, 1]), an item with a slope on a factor other than its own, a `factor` cell that
    ///   is not one of the factors, rows of R that disagree between items of one factor or with R's symmetry, a
    ///   factor without items, or a matrix that is not a positive-definite correlation matrix.
    package static func load(csv path: String) throws -> CorrelatedFactorsBank { try load(.path(path)) }

    /// `load(csv:)` from a file or from its bytes already read.
    package static func load(_ source: CSVSource) throws -> CorrelatedFactorsBank {
        let path = source.name
        let reader = try source.reader()
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a correlated-factors bank's header") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        try CSVHeader.checkUnique(header, file: path, line: reader.line)
        let found = "(found: \(header.joined(separator: ",").prefix(200)))"
        func column(_ name: String) throws -> Int {
            guard let c = header.firstIndex(of: name) else {
                throw InputError(file: path, line: 1, message: "the correlated-factors bank header lacks \(name) \(found)")
            }
            return c
        }
        let idColumn = try column("item_id"), dColumn = try column("d"), factorColumn = try column("factor")
        let cColumn = header.firstIndex(of: "c"), modelColumn = header.firstIndex(of: "model")
        let slopeColumns = header.indices.filter { header[$0].hasPrefix("a_") && header[$0].count > 2 }
        let factors = slopeColumns.map { String(header[$0].dropFirst(2)) }
        guard factors.count >= 2 else {
            throw InputError(file: path, line: 1, message: "a correlated-factors bank needs a_<factor> slope columns for 2 or more factors \(found)")
        }
        let rNames = header.filter { $0.hasPrefix("r_") && $0.count > 2 }.map { String($0.dropFirst(2)) }
        guard Set(rNames) == Set(factors), rNames.count == factors.count else {
            throw InputError(
                file: path, line: 1,
                message:
                    "the r_<factor> columns (\(rNames.joined(separator: ", ").prefix(120))) must name the slope columns' factors (\(factors.joined(separator: ", ").prefix(120)))"
            )
        }
        let rColumns = factors.map { header.firstIndex(of: "r_" + $0)! }
        let k = factors.count
        let own = Set(slopeColumns + rColumns + [idColumn, dColumn, factorColumn] + [cColumn, modelColumn].compactMap { $0 })
        let bankColumns: Set<String> = ["n_responses", "p_value", "flags"]
        let metadataIndices = header.indices.filter {
            !own.contains($0) && !bankColumns.contains(header[$0]) && !header[$0].hasPrefix("se_") && !header[$0].isEmpty
        }

        let row = BankRowChecker(reader: reader, path: path, header: header, idColumn: idColumn)
        var items: [CorrelatedFactorsResult.Item] = [], metadata: [[String: String]] = []
        var rows = [[Double]?](repeating: nil, count: k), rowLine = [Int](repeating: 0, count: k)
        while try row.nextItem() {
            let named = row.text(factorColumn)
            guard let f = factors.firstIndex(of: named) else {
                row.fail(
                    factorColumn,
                    "factor \(TextFidelity.quoted(named)) is not one of the slope columns' factors (\(factors.joined(separator: ", ").prefix(120)))");
                continue
            }
            guard let slope = row.number(slopeColumns[f], ItemBank.allowedPositiveSlopes), let d = row.number(dColumn, .closed(-100, 100)) else {
                continue
            }
            if let other = slopeColumns.indices.first(where: {
                $0 != f && (row.number(slopeColumns[$0], ItemBank.allowedSlopes, emptyAs: 0) ?? 0) != 0
            }) {
                row.fail(
                    slopeColumns[other], "a slope on \(factors[other]) besides its factor \(named); a correlated-factors item loads on one factor");
                continue
            }
            let c = cColumn.flatMap { row.number($0, ItemBank.allowedGuessing, emptyAs: 0) } ?? 0
            guard let model = row.model(modelColumn, guessing: c, cColumn: cColumn, bank: "correlated-factors") else { continue }
            let r = rColumns.map { row.number($0, .closed(-1, 1)) }
            guard r.allSatisfy({ $0 != nil }) else { continue }
            let values = r.map { $0! }
            if let known = rows[f] {
                if let g = (0..<k).first(where: { abs(known[$0] - values[$0]) > 1e-6 }) {
                    row.fail(rColumns[g], "r_\(factors[g]) = \(values[g]) but the row of factor \(named) on line \(rowLine[f]) has \(known[g])");
                    continue
                }
            } else {
                rows[f] = values
                rowLine[f] = row.line
            }
            items.append(
                CorrelatedFactorsResult.Item(
                    itemID: row.id, factor: f, slope: slope, intercept: d, guessing: c, estimatesGuessing: model == "3pl" || c > 0))
            metadata.append(row.cells(metadataIndices))
        }
        try row.errors.throwIfAny()
        guard !items.isEmpty else { throw InputError(file: path, message: "the bank has no items") }
        if let f = rows.firstIndex(where: { $0 == nil }) {
            throw InputError(
                file: path,
                message: "factor \(factors[f]) has no items, so its row of the correlation matrix is not given; remove its a_ and r_ columns")
        }
        let correlations = rows.flatMap { $0! }
        for f in 0..<k {
            if correlations[f * k + f] != 1 {
                throw InputError(
                    file: path, line: rowLine[f],
                    message: "r_\(factors[f]) = \(correlations[f * k + f]) for an item of \(factors[f]); a factor correlates 1 with itself")
            }
            for g in 0..<f where abs(correlations[f * k + g] - correlations[g * k + f]) > 1e-6 {
                throw InputError(
                    file: path, line: rowLine[f],
                    message:
                        "the correlation of \(factors[f]) and \(factors[g]) is \(correlations[f * k + g]) here but \(correlations[g * k + f]) on line \(rowLine[g]); R must be symmetric"
                )
            }
        }
        return CorrelatedFactorsBank(
            factors: factors, correlations: correlations, items: items, metadataColumns: metadataIndices.map { header[$0] }, metadata: metadata)
    }

    /// The bank as unidimensional items on the full-scale composite (`CorrelatedFactorsScorer.fullScaleMarginal`),
    /// with the bank's metadata, in bank order: what a `SessionScorer(battery:bank:)` sees of the battery.
    package func scoringBank(_ scorer: CorrelatedFactorsScorer) -> ItemBank {
        ItemBank(
            items: items.indices.map { j in
                BankItem(
                    itemID: items[j].itemID, model: items[j].estimatesGuessing ? .threePL : .twoPL, parameters: scorer.fullScaleMarginal(item: j),
                    metadata: metadata[j])
            }, metadataColumns: metadataColumns)
    }
}

/// A battery's bank file read for scoring, whichever multidimensional model wrote it: a bifactor or testlet bank
/// (`BifactorBank`) or a correlated-factors bank (`CorrelatedFactorsBank`), as the battery (`Battery`, every index
/// reported) and its unidimensional view.
public struct BatteryBank: Sendable {
    public var battery: Battery
    /// The unidimensional view `SessionScorer(battery:bank:)` takes: item ids, metadata and each item's marginal on
    /// the full-scale factor.
    public var bank: ItemBank
    /// "iqscore", or mirt's slope–intercept layout (`BifactorBank.layout`).
    public var layout: String
    /// "bifactor" or "correlated".
    public var model: String

    /// Reads the battery bank at `path`: a bifactor bank scored on `quadraturePoints` points per dimension (nil:
    /// 31), a correlated-factors bank by `CorrelatedFactorsScorer`'s rule for its factors (`quadraturePoints` per
    /// factor on a product grid of up to 3 factors, nil: the calibration's; quasi–Monte Carlo beyond, which takes
    /// no points).
    /// - Throws: `InputError` from the readers, or naming the file for a model the bank's values do not make
    ///   (`PsychometricsError` from the scorers).
    public static func load(csv path: String, quadraturePoints: Int?, bound: Double) throws -> BatteryBank {
        try load(.path(path), quadraturePoints: quadraturePoints, bound: bound)
    }

    /// `load(csv:quadraturePoints:bound:)` from a file or from its bytes already read.
    package static func load(_ source: CSVSource, quadraturePoints: Int?, bound: Double) throws -> BatteryBank {
        let path = source.name
        let reader = try source.reader()
        let header = try reader.nextRow() ? reader.strings().map { $0.trimmingCharacters(in: .whitespaces) } : []
        do {
            if CorrelatedFactorsBank.isCorrelated(header: header) {
                let file = try CorrelatedFactorsBank.load(source)
                let scorer = try CorrelatedFactorsScorer(
                    items: file.items, correlations: file.correlations, quadraturePoints: quadraturePoints, bound: bound)
                return BatteryBank(
                    battery: try Battery(correlated: scorer, factors: file.factors), bank: file.scoringBank(scorer), layout: "iqscore",
                    model: "correlated")
            }
            let file = try BifactorBank.load(source, requirePositiveGeneralSlopes: true)
            let battery = try Battery(items: file.items, structure: file.structure, quadraturePoints: quadraturePoints ?? 31, bound: bound)
            return BatteryBank(battery: battery, bank: file.scoringBank, layout: file.layout, model: "bifactor")
        } catch let error as PsychometricsError {
            throw InputError(file: path, message: error.message)
        }
    }
}
