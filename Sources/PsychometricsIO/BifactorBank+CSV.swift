import Foundation
import Psychometrics

extension BifactorCalibrationResult {
    /// The bank columns before the metadata, for the factor names `names` (general first):
    /// `item_id,model,a_<factor>…,d,c,se_a_<factor>…,se_d,se_c,specific_factor,n_responses,p_value,flags`.
    static func bankColumns(_ names: [String]) -> [String] {
        ["item_id", "model"] + names.map { "a_" + $0 } + ["d", "c"] + names.map { "se_a_" + $0 } + ["se_d", "se_c", "specific_factor", "n_responses", "p_value", "flags"]
    }

    /// The calibrated bank as CSV, one row per item in slope–intercept form (mirt's `coef(simplify = TRUE)` with
    /// the slope columns named after the factors):
    /// ```
    /// P(u = 1 | θ) = c + (1 − c) / (1 + exp(−(a_<general> θ_general + a_<specific> θ_specific + d)))
    /// ```
    /// An item's slope on a factor it does not load on is written 0 (as mirt writes it) and its standard error
    /// empty; `specific_factor` names the item's specific factor (empty: the general factor only). `model` is 2pl
    /// or 3pl (c written 0 for the 2pl). Then `metadata`'s columns for each item (empty where it has no row).
    public func bankCSV(metadata: ItemMetadata? = nil) -> String {
        let names = structure.factorNames, extra = (metadata?.columns ?? []).filter { $0 != "item_id" }
        var out = (Self.bankColumns(names) + extra).map(csvField).joined(separator: ",") + "\n"
        func num(_ v: Double?) -> String {
            guard let v, v.isFinite else { return "" }
            return String(format: "%.6f", v)
        }
        for entry in items {
            let item = entry.item, s = names.count - 1
            var slopes = [String](repeating: num(0), count: names.count), ses = [String](repeating: "", count: names.count)
            slopes[0] = num(item.generalSlope)
            ses[0] = num(entry.generalSlopeStandardError)
            if let f = item.specific, f < s {
                slopes[f + 1] = num(item.specificSlope)
                ses[f + 1] = num(entry.specificSlopeStandardError)
            }
            let flags = entry.atSlopeBound ? "slope at bound" : ""
            var row = [csvField(entry.itemID), item.estimatesGuessing ? "3pl" : "2pl"] + slopes + [num(item.intercept), num(item.guessing)]
            row += ses + [num(entry.interceptStandardError), num(entry.guessingStandardError)]
            row += [csvField(item.specific.map { structure.specificFactors[$0] } ?? ""), String(entry.responses), num(entry.proportionCorrect), flags]
            let values = metadata?.values[entry.itemID]
            row += extra.map { csvField(values?[$0] ?? "") }
            out += row.joined(separator: ",") + "\n"
        }
        return out
    }
}
