import Foundation

/// A numerical check that the percentile curves of fitted norms do not cross: on a grid of ages over the covered
/// range, the θ of percentiles 1, 2, …, 99 must strictly increase with the percentile, and be finite.
///
/// ```
/// crossing at age a:  Q(p_{k+1} | a) − Q(p_k | a) ≤ 0   for some k
/// ```
/// For a SHASH at each age Q is strictly increasing in p by construction, so a crossing means a numerical failure
/// (an underflowed scale, a non-finite coefficient) — which is what the check is for: it tests the model as
/// fitted and stored, not the family.
package struct PercentileCurveCheck: Sendable, Hashable, Codable {
    /// Ages evaluated (evenly spaced over the covered range, ends included).
    package var ageCount: Int
    /// Percentiles evaluated (1…99).
    package var percentileCount: Int
    /// (age, k) pairs where Q(p_{k+1}) ≤ Q(p_k) or a quantile is not finite.
    package var crossings: Int
    /// The smallest Q(p_{k+1}) − Q(p_k) over the grid (θ units).
    package var minimumGap: Double
    /// The age at which the smallest gap occurs.
    package var minimumGapAge: Double

    package var passed: Bool { crossings == 0 }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case ageCount = "ages", percentileCount = "percentiles", crossings, minimumGap = "minimum_gap", minimumGapAge = "minimum_gap_age"
    }

    package init(ageCount: Int, percentileCount: Int, crossings: Int, minimumGap: Double, minimumGapAge: Double) {
        self.ageCount = ageCount
        self.percentileCount = percentileCount
        self.crossings = crossings
        self.minimumGap = minimumGap
        self.minimumGapAge = minimumGapAge
    }

    /// Checks `norms` on `ages` evenly spaced ages (401 by default: every 0.185 years over 16–90).
    package init(norms model: AgeNorms.Model, ages: Int = 401) {
        let norms = AgeNorms(name: "check", version: "1", model: model)
        let range = norms.coveredAges ?? 0...0
        var crossings = 0, gap = Double.infinity, gapAge = range.lowerBound
        for a in 0..<ages {
            let age = range.lowerBound + (range.upperBound - range.lowerBound) * Double(a) / Double(max(ages - 1, 1))
            let d = norms.distribution(age: age)
            var previous = d.quantile(0.01)
            if !previous.isFinite { crossings += 1 }
            for k in 2...99 {
                let q = d.quantile(Double(k) / 100)
                let step = q - previous
                if !(step > 0) || !q.isFinite { crossings += 1 }
                if step < gap { gap = step; gapAge = age }
                previous = q
            }
        }
        self.init(ageCount: ages, percentileCount: 99, crossings: crossings, minimumGap: gap.isFinite ? gap : 0, minimumGapAge: gapAge)
    }

    /// "no crossing: percentiles 1–99 at 401 ages, smallest gap 0.0123 θ at age 88.2".
    package var summary: String {
        let head = crossings == 0 ? "no crossing" : "\(crossings) crossing\(crossings == 1 ? "" : "s")"
        return
            "\(head): percentiles 1–\(percentileCount) at \(ageCount) ages, smallest gap \(String(format: "%.4g", minimumGap)) θ at age \(String(format: "%.1f", minimumGapAge))"
    }
}
