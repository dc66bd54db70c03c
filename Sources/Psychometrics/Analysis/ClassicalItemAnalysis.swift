import Foundation

/// Classical test theory statistics of a response matrix.
///
/// Missing responses (items not administered): every statistic uses the persons who answered what it needs.
/// - p-value: correct / answered.
/// - Corrected point-biserial of item j: Pearson correlation between the item score and the rest score (number
///   correct on the *other* items the person answered) over the persons who answered j.
/// - Cronbach's α from the pairwise-complete covariance matrix (each variance and covariance over the persons
///   who answered both items): α = k/(k − 1) · (1 − Σⱼ σⱼ² / Σⱼₖ σⱼₖ). With complete data this is the usual α.
///   SEM = σ_X √(1 − α) with σ_X² = Σⱼₖ σⱼₖ, the total-score variance the covariances imply.
/// - α if item deleted: the same formula without item j (O(J) each from the row sums of the covariances).
///
/// α, SEM and α-if-deleted describe the total score on *all* the items. With incidental omissions (most cells
/// answered) the pairwise covariances estimate that score's reliability; in a missing-by-design bank (each
/// person answers 25 of 1,500 items) nobody has such a score, and α of a 1,500-item composite (≈ 0.996) says
/// nothing about the 25-item forms people took. They are therefore computed only when at least
/// `minimumDensityForAlpha` (50%) of the person × item cells are answered, and otherwise left nil with the
/// reason in `undefined`; the model's reliabilities (`ModelFit`) are defined for any design.
package struct ClassicalItemAnalysis: Sendable, Hashable {
    package struct Item: Sendable, Hashable {
        package var itemID: String
        package var responses: Int
        package var correct: Int
        package var pValue: Double
        /// nil when undefined (constant item or rest score).
        package var pointBiserial: Double?
        package var alphaIfDeleted: Double?
    }

    /// The share of answered cells below which α, SEM and α-if-deleted are not computed: 0.5.
    package static let minimumDensityForAlpha = 0.5

    package var items: [Item]
    package var personCount: Int
    /// Persons who answered every item (listwise-complete).
    package var completePersons: Int
    package var alpha: Double?
    package var sem: Double?
    /// Mean and SD of the number-correct score over complete persons (nil with fewer than 2).
    package var meanScore: Double?
    package var sdScore: Double?
    /// Statistic → why it is undefined.
    package var undefined: [String: String] = [:]

    package init(_ data: ResponseMatrix) {
        let J = data.itemCount, N = data.personCount
        let density = N > 0 && J > 0 ? Double(data.cellCount) / (Double(N) * Double(J)) : 0
        let pairwise = density >= Self.minimumDensityForAlpha
        // Pairwise sums over persons answering both j and k: n, Σx_j, Σx_k, Σx_j x_k (x ∈ {0, 1}); only when α
        // is computed (J² values each).
        let size = pairwise ? J * J : 0
        var n = [Double](repeating: 0, count: size), sj = n, sk = n, sjk = n
        var restSum = [Double](repeating: 0, count: J), restSq = restSum, itemRest = restSum
        var complete = 0
        var completeScores: [Double] = []
        for i in 0..<N {
            let cells = data.cells(ofPerson: i)
            let total = cells.reduce(0) { $0 + Int(data.responses[$1]) }
            if cells.count == J { complete += 1; completeScores.append(Double(total)) }
            for a in cells {
                let j = Int(data.itemIndices[a]), x = Double(data.responses[a])
                let rest = Double(total) - x
                restSum[j] += rest; restSq[j] += rest * rest; itemRest[j] += x * rest
                guard pairwise else { continue }
                for b in cells {
                    let k = Int(data.itemIndices[b]), y = Double(data.responses[b])
                    n[j * J + k] += 1; sj[j * J + k] += x; sk[j * J + k] += y; sjk[j * J + k] += x * y
                }
            }
        }
        func cov(_ j: Int, _ k: Int) -> Double? {
            let m = n[j * J + k]
            guard m > 1 else { return nil }
            return (sjk[j * J + k] - sj[j * J + k] * sk[j * J + k] / m) / (m - 1)
        }
        // Σ σⱼⱼ, Σⱼₖ σⱼₖ and the row sums Σₖ σⱼₖ; nil when some pair has fewer than 2 persons.
        var sumVar = 0.0, sumAll = 0.0, rowSum = [Double](repeating: 0, count: J), variances = rowSum
        var missingPairs = 0
        if pairwise {
            for j in 0..<J {
                for k in 0..<J {
                    if let c = cov(j, k) { rowSum[j] += c } else if k >= j { missingPairs += 1 }
                }
                variances[j] = cov(j, j) ?? 0
                sumVar += variances[j]
                sumAll += rowSum[j]
            }
        }
        let covariancesDefined = pairwise && missingPairs == 0
        func alpha(_ k: Int, _ sumVar: Double, _ sumAll: Double) -> Double? {
            guard covariancesDefined, k > 1, sumAll > 0 else { return nil }
            return Double(k) / Double(k - 1) * (1 - sumVar / sumAll)
        }
        let totals = data.itemTotals()
        items = (0..<J).map { j in
            let m = Double(totals.responses[j]), r = Double(totals.correct[j])
            var pbis: Double?
            if m > 1 {
                let sxy = itemRest[j] - r * restSum[j] / m
                let sxx = r - r * r / m
                let syy = restSq[j] - restSum[j] * restSum[j] / m
                if sxx > 0 && syy > 0 { pbis = sxy / (sxx * syy).squareRoot() }
            }
            let deleted = J > 2 ? alpha(J - 1, sumVar - variances[j], sumAll - 2 * rowSum[j] + variances[j]) : nil
            return Item(
                itemID: data.itemIDs[j], responses: totals.responses[j], correct: totals.correct[j],
                pValue: m > 0 ? r / m : .nan, pointBiserial: pbis, alphaIfDeleted: deleted)
        }
        personCount = N
        completePersons = complete
        let a = alpha(J, sumVar, sumAll)
        self.alpha = a
        sem = a.map { (sumAll * (1 - $0)).squareRoot() }.flatMap { $0.isFinite ? $0 : nil }
        if completeScores.count > 1 {
            let mean = completeScores.reduce(0, +) / Double(completeScores.count)
            meanScore = mean
            sdScore = (completeScores.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(completeScores.count - 1)).squareRoot()
        }

        if !pairwise {
            let perPerson = N > 0 ? Double(data.cellCount) / Double(N) : 0
            undefined["alpha"] =
                "missing by design: persons answered \(String(format: "%.1f", perPerson)) of the \(J) items on average (\(String(format: "%.1f", 100 * density))% of the cells, below the \(Int(100 * Self.minimumDensityForAlpha))% at which α is computed); α describes the total score on all \(J) items, which nobody took. The model's reliabilities (marginal_rxx, mean_error_variance_reliability) apply to any design"
        } else if missingPairs > 0 {
            undefined["alpha"] =
                "\(missingPairs) item pairs (or items) were answered together by fewer than 2 persons, so their covariance is undefined"
        } else if a == nil {
            undefined["alpha"] = J < 2 ? "needs at least 2 items" : "the total-score variance is 0"
        }
        if let reason = undefined["alpha"] {
            undefined["sem"] = "SEM = σ_X √(1 − α) and α is undefined: " + reason
            undefined["alpha_if_deleted"] = "α is undefined: " + reason
        }
        if meanScore == nil { undefined["mean_score"] = complete == 0 ? "no person answered every item" : "only 1 person answered every item" }
        if meanScore == nil { undefined["sd_score"] = undefined["mean_score"] }
        let constant = items.filter { $0.pointBiserial == nil }.count
        if constant > 0 {
            undefined["point_biserial"] =
                "\(constant) item\(constant == 1 ? "" : "s"): the item or its rest score is constant over the persons who answered it (or fewer than 2 did)"
        }
    }
}
