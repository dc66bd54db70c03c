import Foundation
import Psychometrics

/// Whether a bank reader takes rows of items in more than two categories (`CategoryBankItem`).
public enum CategoryItemReading: Sendable, Hashable {
    /// Such a row is an error: the use reads 0/1 items only.
    case refused
    /// Such rows are read; `thresholdsModel` is the model of a row whose thresholds `b1`, `b2`, … name none
    /// (mirt's `coef(IRTpars = TRUE)` tables for graded and gpcm items look alike; nil: the row must say).
    case read(thresholdsModel: ItemModelKind? = nil)
}

/// One bank row's cells for an item in more than two categories, read from `BankLayout.categoryColumns`:
///
/// | model | IRT form (native; mirt `IRTpars = TRUE`) | mirt slope–intercept `coef()` |
/// |---|---|---|
/// | graded | `a, b1 … b_{K−1}` (increasing) | `a1, d1 … d_{K−1}`: b_k = −d_k/a1 |
/// | gpcm | `a, b1 … b_{K−1}` (steps) | `a1, ak0 … ak_{K−1}, d0 … d_{K−1}` with ak_k = k, d0 = 0: b_k = −(d_k − d_{k−1})/a1 |
/// | pcm | `a` = 1, `b1 … b_{K−1}` | as gpcm with a1 = 1 |
/// | nominal | `a_0 … a_{K−1}, c_0 … c_{K−1}` | `a1, ak0 …, d0 …`: a_k = a1·ak_k, c_k = d_k |
///
/// K is the number of filled threshold cells plus one (cells after the last filled one are empty or `NA`: a bank
/// holds items with different K). Standard errors: `se_a`, `se_b1` …, `se_a_0` …, `se_c_0` …; response labels:
/// `categories`, separated by `;`. Every problem names the line, the column and what the item allows.
struct CategoryRow {
    let path: String
    let line: Int
    let id: String
    let layout: BankLayout
    let decimalCommas: Bool
    let cell: (Int) -> String

    private func error(_ column: Int?, _ message: String) -> InputError {
        InputError(file: path, line: line, column: column.map { $0 + 1 }, message: "item '\(id)': " + message)
    }

    private func text(_ c: Int) -> String { BankNumberCell.text(cell(c)) }

    private func number(_ c: Int, _ name: String) -> Result<Double?, InputError> {
        switch BankNumberCell(cell(c), decimalCommas: decimalCommas) {
        case .empty: .success(nil)
        case .number(let v): .success(v)
        case .invalid(let t): .failure(error(c, "\(name) '\(t.escapingControlCharacters)' is not a number"))
        }
    }

    /// The filled cells `prefix + k` for k = first, first + 1, …: a run from the first with nothing filled after
    /// an empty cell.
    private func run(_ prefix: String, from first: Int) -> Result<[Double], InputError> {
        var values: [Double] = [], gap: String?
        var k = first
        while let c = layout.categoryColumns[prefix + String(k)] {
            switch number(c, prefix + String(k)) {
            case .failure(let e): return .failure(e)
            case .success(nil): if gap == nil { gap = prefix + String(k) }
            case .success(let v?):
                if let gap {
                    return .failure(
                        error(c, "\(prefix)\(k) is filled after the empty \(gap): an item's values run from \(prefix)\(first) without gaps"))
                }
                values.append(v)
            }
            k += 1
        }
        return .success(values)
    }

    private func filled(_ prefix: String, from first: Int) -> Bool {
        layout.categoryColumns[prefix + String(first)].map { !text($0).isEmpty } ?? false
    }

    /// The row's model when it is an item in more than two categories (nil: a 0/1 item), from the `model` cell or,
    /// when that is empty, from the filled columns.
    func kind(modelText: String, modelColumn: Int?, reading: CategoryItemReading, naming: SettingNaming) -> Result<ItemModelKind?, InputError> {
        // A 3pl row is a 0/1 row (its a, b, c columns), not a category row.
        var kind = ItemModelKind(rawValue: modelText).flatMap { $0 == .threePL ? nil : $0 }
        if modelText == ItemModelKind.threePL.rawValue { return .success(nil) }
        if kind == nil && modelText.isEmpty {
            if filled("a_", from: 0) || filled("c_", from: 0) {
                kind = .nominal
            } else if filled("ak", from: 0) {
                guard case .success(let ak) = run("ak", from: 0) else { kind = .nominal; return .success(kind) }
                kind = ak.enumerated().allSatisfy({ $0.element == Double($0.offset) }) ? .generalizedPartialCredit : .nominal
            } else if filled("d", from: 1) {
                kind = .graded
            } else if filled("b", from: 1) {
                guard case .read(let model?) = reading else {
                    return .failure(
                        error(
                            modelColumn ?? layout.categoryColumns["b1"],
                            "thresholds b1, b2, … but no model: graded and gpcm items are written alike (mirt's coef(IRTpars = TRUE)); give the row a model column (graded, gpcm or pcm)"
                                + (reading == .refused
                                    ? "" : " or say which for the whole bank (\(naming.name("bank_model", words: "the thresholds model")))")))
                }
                kind = model
            }
        }
        guard let kind else { return .success(nil) }
        if reading == .refused {
            return .failure(
                error(
                    modelColumn,
                    "model \(kind.rawValue) is an item in more than two categories; this use reads 0/1 items only (rasch, 1pl, 2pl, 3pl); score reads such banks"
                ))
        }
        return .success(kind)
    }

    /// A filled parameter cell of items in more than two categories on a 0/1 item's row, as an error.
    func strayCategoryCell() -> InputError? {
        for (name, c) in layout.categoryColumns.sorted(by: { $0.value < $1.value }) where !name.hasPrefix("se_") && name != "categories" {
            if !text(c).isEmpty {
                return error(
                    c,
                    "\(name) = \(text(c).escapingControlCharacters) belongs to an item in more than two categories, but the row is a 0/1 item (give its model: graded, gpcm, pcm, rsm or nominal, or empty the cell)"
                )
            }
        }
        return nil
    }

    /// The item of model `kind` from the row's cells (`standardErrorColumns[0]`: the bank's `se_a`).
    func item(_ kind: ItemModelKind, standardErrorColumns: [Int?]) -> Result<CategoryBankItem, InputError> {
        Result { () throws(InputError) -> CategoryBankItem in
            let slopeColumn = layout.slopeColumn, slopeName = layout.slopeName
            func required(_ c: Int, _ name: String) throws(InputError) -> Double {
                guard let v = try number(c, name).get() else { throw error(c, "\(name) is empty; a \(kind.rawValue) item needs it") }
                return v
            }
            var values: [Double]
            switch kind {
            case .graded, .generalizedPartialCredit, .partialCredit, .ratingScale:
                let a = try required(slopeColumn, slopeName)
                guard ItemBank.allowedPositiveSlopes.contains(a) else {
                    throw error(slopeColumn, "\(slopeName) = \(a.formatted6); allowed \(ItemBank.allowedPositiveSlopes.inequality("a"))")
                }
                var b = try run("b", from: 1).get()
                if b.isEmpty && kind == .graded {
                    b = try run("d", from: 1).get().map { -$0 / a }
                } else if b.isEmpty {
                    let ak = try run("ak", from: 0).get(), d = try run("d", from: 0).get()
                    if !ak.isEmpty || !d.isEmpty {
                        guard ak.count == d.count, ak.count >= 2 else {
                            throw error(
                                layout.categoryColumns["ak0"] ?? layout.categoryColumns["d0"],
                                "mirt's slope–intercept gpcm needs as many ak as d values (at least 2), got \(ak.count) and \(d.count)")
                        }
                        guard ak.enumerated().allSatisfy({ $0.element == Double($0.offset) }), d[0] == 0 else {
                            throw error(
                                layout.categoryColumns["ak0"],
                                "a \(kind.rawValue) item's scoring values ak0, ak1, … are 0, 1, 2, … and d0 is 0 (mirt's gpcm); got ak = \(ak.map(\.formatted6).joined(separator: ", ")), d0 = \(d[0].formatted6) (a nominal item has other scoring values: give it model nominal)"
                            )
                        }
                        b = (1..<d.count).map { -(d[$0] - d[$0 - 1]) / a }
                    }
                }
                guard !b.isEmpty else {
                    throw error(
                        layout.categoryColumns["b1"] ?? slopeColumn,
                        "a \(kind.rawValue) item needs thresholds b1, b2, …"
                            + (kind == .graded ? " (or mirt's intercepts d1, d2, …)" : " (or mirt's ak0, …, d0, …)"))
                }
                if let k = b.firstIndex(where: { !ItemBank.allowedDifficulties.contains($0) }) {
                    throw error(
                        layout.categoryColumns["b\(k + 1)"] ?? layout.categoryColumns["d\(k + 1)"] ?? slopeColumn,
                        "b\(k + 1) = \(b[k].formatted6); allowed \(ItemBank.allowedDifficulties.inequality("b"))")
                }
                values = [a] + b
            case .nominal:
                let slopes = try run("a_", from: 0).get(), intercepts = try run("c_", from: 0).get()
                if !slopes.isEmpty || !intercepts.isEmpty {
                    values = slopes + intercepts
                    guard slopes.count == intercepts.count, slopes.count >= 2 else {
                        throw error(
                            layout.categoryColumns["a_0"] ?? layout.categoryColumns["c_0"],
                            "a nominal item needs a slope a_k and an intercept c_k per category (at least 2), got \(slopes.count) and \(intercepts.count)"
                        )
                    }
                } else {
                    let a = try required(slopeColumn, slopeName)
                    let ak = try run("ak", from: 0).get(), d = try run("d", from: 0).get()
                    guard ak.count == d.count, ak.count >= 2 else {
                        throw error(
                            layout.categoryColumns["a_0"] ?? layout.categoryColumns["ak0"] ?? slopeColumn,
                            "a nominal item needs a_0, a_1, … and c_0, c_1, … (or mirt's a1, ak0, …, d0, …), got \(ak.count) scoring values and \(d.count) intercepts"
                        )
                    }
                    values = ak.map { a * $0 } + d
                }
                let k = values.count / 2
                if let i = values.indices.first(where: { !($0 < k ? ItemBank.allowedSlopes : ItemBank.allowedDifficulties).contains(values[$0]) }) {
                    let name = i < k ? "a_\(i)" : "c_\(i - k)"
                    throw error(
                        layout.categoryColumns[name] ?? slopeColumn,
                        "\(name) = \(values[i].formatted6); allowed \((i < k ? ItemBank.allowedSlopes : ItemBank.allowedDifficulties).inequality(name))"
                    )
                }
            case .threePL:
                // `kind(modelText:…)` reads a 3pl row as a 0/1 row; no category row has this kind.
                throw error(slopeColumn, "a 3pl item is a 0/1 row (model 3pl with a, b, c), not a category row")
            }
            let names = kind.parameterNames(categories: kind.categories(parameterCount: values.count) ?? 2)
            var standardErrors: [Double?] = []
            for name in names {
                guard let c = name == "a" ? standardErrorColumns[0] : layout.categoryColumns["se_" + name] else {
                    standardErrors.append(nil); continue
                }
                let v = try number(c, "se_" + name).get()
                if let v, !(v >= 0) { throw error(c, "se_\(name) = \(v.formatted6); allowed se_\(name) ≥ 0") }
                standardErrors.append(v)
            }
            let labelColumn = layout.categoryColumns["categories"]
            let labels =
                labelColumn.map { text($0) }.map {
                    $0.isEmpty ? [] : $0.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                } ?? []
            do throws(PsychometricsError) {
                return try CategoryBankItem(kind: kind, values: values, standardErrors: standardErrors, responseLabels: labels)
            } catch {
                throw self.error(error.message.contains("label") ? labelColumn : slopeColumn, error.message)
            }
        }
    }
}

extension ItemBank {
    /// The columns of items in more than two categories that `csv()` writes after the core columns when the bank
    /// has such items: `categories`, the thresholds `b1 … b_M` (M = the most any graded, gpcm or pcm item has),
    /// the nominal `a_0 …`, `c_0 …`, then the `se_` column of each.
    package var categoryColumns: [String] {
        var thresholds = 0, nominal = 0
        for item in items {
            guard let m = item.categoryModel else { continue }
            if m.kind == .nominal { nominal = max(nominal, m.categoryCount) } else { thresholds = max(thresholds, m.categoryCount - 1) }
        }
        guard thresholds + nominal > 0 else { return [] }
        let parameters = (0..<thresholds).map { "b\($0 + 1)" } + (0..<nominal).map { "a_\($0)" } + (0..<nominal).map { "c_\($0)" }
        return ["categories"] + parameters + parameters.map { "se_" + $0 }
    }
}
