import Foundation
import Psychometrics

/// One row of a bifactor bank file (`bifactorBankCSV`).
package struct BifactorBankRow {
    var itemID: String
    var item: BifactorItem
    var generalSlopeStandardError: Double? = nil
    var specificSlopeStandardError: Double? = nil
    var interceptStandardError: Double? = nil
    var guessingStandardError: Double? = nil
    var responses: Int? = nil
    var proportionCorrect: Double? = nil
    var flags: [String] = []

    package init(itemID: String, item: BifactorItem) {
        self.itemID = itemID
        self.item = item
    }
}

/// The bank columns before the metadata, for the factor names `names` (general first):
/// `item_id,model,a_<factor>…,d,c,se_a_<factor>…,se_d,se_c,specific_factor,n_responses,p_value,flags`.
func bifactorBankColumns(_ names: [String]) -> [String] {
    ["item_id", "model"] + names.map { "a_" + $0 } + ["d", "c"] + names.map { "se_a_" + $0 } + [
        "se_d", "se_c", "specific_factor", "n_responses", "p_value", "flags"
    ]
}

/// A bifactor bank as CSV, one row per item in slope–intercept form (mirt's `coef(simplify = TRUE)` with the slope
/// columns named after the factors):
/// ```
/// P(u = 1 | θ) = c + (1 − c) / (1 + exp(−(a_<general> θ_general + a_<specific> θ_specific + d)))
/// ```
/// An item's slope on a factor it does not load on is written 0 (as mirt writes it) and its standard error empty;
/// `specific_factor` names the item's specific factor (empty: the general factor only). `model` is 2pl or 3pl (c
/// written 0 for the 2pl). Then `metadata`'s columns for each item (empty where it has no row), except those of a bank
/// (the columns above, and any `a_…` or `se_…`).
package func bifactorBankCSV(_ rows: [BifactorBankRow], structure: FactorStructure, metadata: ItemMetadata? = nil) -> String {
    // Metadata columns that are a bank's (an items file that is itself a bank: the true bank of `simulate`) are
    // not carried: the bank's own are written.
    let names = structure.factorNames, own = Set(bifactorBankColumns(names))
    let extra = (metadata?.columns ?? []).filter { !own.contains($0) && !$0.hasPrefix("a_") && !$0.hasPrefix("se_") }
    var out = (bifactorBankColumns(names) + extra).map(csvField).joined(separator: ",") + "\n"
    func num(_ v: Double?) -> String {
        guard let v, v.isFinite else { return "" }
        return String(format: "%.6f", v)
    }
    for entry in rows {
        let item = entry.item, s = names.count - 1
        var slopes = [String](repeating: num(0), count: names.count), ses = [String](repeating: "", count: names.count)
        slopes[0] = num(item.generalSlope)
        ses[0] = num(entry.generalSlopeStandardError)
        if let f = item.specific, f < s {
            slopes[f + 1] = num(item.specificSlope)
            ses[f + 1] = num(entry.specificSlopeStandardError)
        }
        var row = [csvField(entry.itemID), item.estimatesGuessing ? "3pl" : "2pl"] + slopes + [num(item.intercept), num(item.guessing)]
        row += ses + [num(entry.interceptStandardError), num(entry.guessingStandardError)]
        row += [
            csvField(item.specific.map { structure.specificFactors[$0] } ?? ""), entry.responses.map(String.init) ?? "", num(entry.proportionCorrect),
            csvField(entry.flags.joined(separator: ";"))
        ]
        let values = metadata?.values[entry.itemID]
        row += extra.map { csvField(values?[$0] ?? "") }
        out += row.joined(separator: ",") + "\n"
    }
    return out
}

extension BifactorCalibrationResult {
    /// The calibrated bank as CSV (`bifactorBankCSV`): estimates, standard errors, responses and proportion correct,
    /// the flags `fixed` (held at its bank value) and `slope at bound` (a Heywood case), then `metadata`'s columns.
    package func bankCSV(metadata: ItemMetadata? = nil) -> String {
        bifactorBankCSV(
            items.map { entry in
                var row = BifactorBankRow(itemID: entry.itemID, item: entry.item)
                row.generalSlopeStandardError = entry.generalSlopeStandardError
                row.specificSlopeStandardError = entry.specificSlopeStandardError
                row.interceptStandardError = entry.interceptStandardError
                row.guessingStandardError = entry.guessingStandardError
                row.responses = entry.responses
                row.proportionCorrect = entry.proportionCorrect
                row.flags = (entry.isFixed ? ["fixed"] : []) + (entry.atSlopeBound ? ["slope at bound"] : [])
                return row
            }, structure: structure, metadata: metadata)
    }
}
