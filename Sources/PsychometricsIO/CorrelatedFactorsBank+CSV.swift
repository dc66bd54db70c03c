import Foundation
import Psychometrics

extension CorrelatedFactorsResult {
    /// The bank columns before the metadata, for factors `names`:
    /// `item_id,model,a_<factor>…,d,c,se_a_<factor>…,se_d,se_c,factor,r_<factor>…,n_responses,p_value,flags`.
    static func bankColumns(_ names: [String]) -> [String] {
        ["item_id", "model"] + names.map { "a_" + $0 } + ["d", "c"] + names.map { "se_a_" + $0 } + ["se_d", "se_c", "factor"]
            + names.map { "r_" + $0 } + ["n_responses", "p_value", "flags"]
    }

    /// The calibrated bank as CSV, one row per item in slope–intercept form (mirt's `coef(simplify = TRUE)` of a
    /// `mirt()` fit with the slope columns named after the factors):
    /// ```
    /// P(u = 1 | θ) = c + (1 − c) / (1 + exp(−(a_<factor> θ_<factor> + d)))
    /// ```
    /// an item's slopes on the other factors written 0 and their standard errors empty; `factor` names the item's
    /// factor and `r_<factor>…` its row of the factor correlation matrix (so the bank carries the matrix); then
    /// `metadata`'s columns (except a bank's own, `a_…`, `se_…` and `r_…`).
    package func bankCSV(metadata: ItemMetadata? = nil) -> String {
        Self.bankCSV(items: items, factors: factors, correlations: correlations, metadata: metadata)
    }

    /// `bankCSV` of any items on `factors` with correlation matrix `correlations` (K × K row-major): a true bank
    /// of `simulate`, whose items have no standard errors or responses (empty cells).
    package static func bankCSV(items: [Item], factors: [String], correlations: [Double], metadata: ItemMetadata? = nil) -> String {
        let own = Set(bankColumns(factors)), k = factors.count
        let extra = (metadata?.columns ?? []).filter { !own.contains($0) && !$0.hasPrefix("a_") && !$0.hasPrefix("se_") && !$0.hasPrefix("r_") }
        var out = (bankColumns(factors) + extra).map(csvField).joined(separator: ",") + "\n"
        func num(_ v: Double?) -> String {
            guard let v, v.isFinite else { return "" }
            return String(format: "%.6f", v)
        }
        for item in items {
            var slopes = [String](repeating: num(0), count: k), ses = [String](repeating: "", count: k)
            slopes[item.factor] = num(item.slope)
            ses[item.factor] = num(item.slopeStandardError)
            var row = [csvField(item.itemID), item.estimatesGuessing ? "3pl" : "2pl"] + slopes + [num(item.intercept), num(item.guessing)]
            row += ses + [num(item.interceptStandardError), num(item.guessingStandardError), csvField(factors[item.factor])]
            row += (0..<k).map { num(correlations[item.factor * k + $0]) }
            row += [
                item.responses > 0 ? String(item.responses) : "", num(item.proportionCorrect),
                ((item.isFixed ? ["fixed"] : []) + (item.atSlopeBound ? ["slope at bound"] : [])).joined(separator: ";")
            ]
            let values = metadata?.values[item.itemID]
            row += extra.map { csvField(values?[$0] ?? "") }
            out += row.joined(separator: ",") + "\n"
        }
        return out
    }
}
