import Foundation

/// A linear change of the θ scale that carries a new calibration onto an old (reference) one:
/// ```
/// θ_old = slope · θ_new + intercept
/// ```
/// Item parameters in the slope–difficulty form P = c + (1 − c)/(1 + exp(−a(θ − b))) (logistic metric, D = 1)
/// move with the scale so that every response probability is unchanged (Lord 1980, §3.5; Kolen & Brennan
/// 2014, eq. 6.2–6.4):
/// ```
/// a* = a / slope      b* = slope · b + intercept      c* = c
/// ```
/// Standard errors follow the same linear map: se(a*) = se(a)/slope, se(b*) = slope · se(b), se(c*) = se(c).
/// (The uncertainty of the linking constants themselves is not added.)
///
/// This is the contract of `iqscore link`: `slope` and `intercept` are the A and B of Kolen & Brennan and of
/// plink, with the new form as the "from" scale and the old form as the "to" scale.
package struct ScaleTransformation: Sendable, Hashable, Codable {
    /// A: the multiplier of θ_new. Always positive and finite.
    package let slope: Double
    /// B: the shift, in old-scale units. Always finite.
    package let intercept: Double

    /// - Throws: `PsychometricsError.invalidParameters` unless `slope > 0` and both are finite (a slope of −1
    ///   would mirror the scale, and every item's a would turn negative).
    package init(slope: Double, intercept: Double) throws(PsychometricsError) {
        var problems: [String] = []
        if !(slope > 0 && slope.isFinite) { problems.append("a scale transformation needs a positive, finite slope, got \(slope)") }
        if !intercept.isFinite { problems.append("a scale transformation needs a finite intercept, got \(intercept)") }
        guard problems.isEmpty else { throw PsychometricsError(.invalidParameters, problems.joined(separator: "; ")) }
        self.init(checkedSlope: slope, intercept: intercept)
    }

    /// For values known to be valid (a positive finite slope, a finite intercept), e.g. a minimiser's iterate
    /// that its line search keeps positive and finite.
    package init(checkedSlope slope: Double, intercept: Double) {
        self.slope = slope
        self.intercept = intercept
    }

    /// Decoding checks what the initialiser checks: `{"slope": -2, "intercept": 0}` is a `DecodingError`.
    package init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case slope, intercept }
        let c = try decoder.container(keyedBy: Keys.self)
        let slope = try c.decode(Double.self, forKey: .slope), intercept = try c.decode(Double.self, forKey: .intercept)
        self = try PsychometricsError.decoding(at: c.codingPath) { () throws(PsychometricsError) in
            try ScaleTransformation(slope: slope, intercept: intercept)
        }
    }

    /// θ_old = θ_new (slope 1, intercept 0).
    package static let identity = ScaleTransformation(checkedSlope: 1, intercept: 0)

    /// The map back, θ_new = (θ_old − intercept)/slope. (1/slope of a positive finite slope is positive; it is
    /// finite unless the slope is subnormal, where it saturates at the largest double.)
    package var inverse: ScaleTransformation {
        let a = min(1 / slope, Double.greatestFiniteMagnitude)
        return ScaleTransformation(
            checkedSlope: a, intercept: min(max(-intercept * a, -Double.greatestFiniteMagnitude), Double.greatestFiniteMagnitude))
    }

    /// θ on the old scale for a θ on the new scale.
    @inlinable package func theta(_ newTheta: Double) -> Double { slope * newTheta + intercept }

    /// New-scale parameters expressed on the old scale: a/slope, slope·b + intercept, c.
    @inlinable package func parameters(_ p: ItemParameters) -> ItemParameters {
        ItemParameters(discrimination: p.discrimination / slope, difficulty: slope * p.difficulty + intercept, guessing: p.guessing)
    }

    /// Standard errors on the old scale: se_a/slope, slope·se_b, se_c.
    package func standardErrors(_ e: ItemStandardErrors) -> ItemStandardErrors {
        ItemStandardErrors(
            discrimination: e.discrimination.map { $0 / slope }, difficulty: e.difficulty.map { slope * $0 },
            guessing: e.guessing)
    }

    /// The item on the old scale. Everything but the parameters and their standard errors is kept (id, counts,
    /// p-value, flags, metadata). A Rasch item becomes a 1PL item unless the slope is 1, because its common slope
    /// is then 1/slope rather than 1.
    package func item(_ item: BankItem) -> BankItem {
        var out = item
        out.parameters = parameters(item.parameters)
        out.standardErrors = standardErrors(item.standardErrors)
        if item.model == .rasch && slope != 1 { out.model = .onePL }
        if let m = item.categoryModel { out.categoryModel = categoryItem(m) }
        return out
    }

    /// An item in more than two categories on the old scale (`ItemModelKind.transformed`).
    package func categoryItem(_ m: CategoryBankItem) -> CategoryBankItem {
        let moved = m.kind.transformed(m.values, standardErrors: m.standardErrors, slope: slope, intercept: intercept)
        // The transformation keeps slopes positive and values finite (slope > 0, both finite), so the item is valid.
        return try! CategoryBankItem(kind: moved.kind, values: moved.values, standardErrors: moved.standardErrors, responseLabels: m.responseLabels)
    }

    /// Every item of `bank` on the old scale, in the same order, with the same metadata columns.
    package func bank(_ bank: ItemBank) -> ItemBank {
        var out = ItemBank(items: bank.items.map(item), metadataColumns: bank.metadataColumns)
        out.sourcePath = bank.sourcePath
        return out
    }
}
