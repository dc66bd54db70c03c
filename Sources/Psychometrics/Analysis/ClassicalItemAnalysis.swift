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
/// - α if item deleted: the same formula without item j.
public struct ClassicalItemAnalysis: Sendable, Hashable {
    public struct Item: Sendable, Hashable {
        public var itemID: String
        public var responses: Int
        public var correct: Int
        public var pValue: Double
        /// nil when undefined (constant item or rest score).
        public var pointBiserial: Double?
        public var alphaIfDeleted: Double?
    }

    public var items: [Item]
    public var personCount: Int
    /// Persons who answered every item (listwise-complete).
    public var completePersons: Int
    public var alpha: Double?
    public var sem: Double?
    /// Mean and SD of the number-correct score over complete persons (nil without any).
    public var meanScore: Double?
    public var sdScore: Double?

    public init(_ data: ResponseMatrix) {
        let J = data.itemCount, N = data.personCount
        // Pairwise sums over persons answering both j and k: n, Σx_j, Σx_k, Σx_j x_k (x ∈ {0, 1}).
        var n = [Double](repeating: 0, count: J * J), sj = n, sk = n, sjk = n
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
        func alpha(excluding skip: Int?) -> Double? {
            var sumVar = 0.0, sumAll = 0.0, k = 0
            for j in 0..<J where j != skip {
                guard let v = cov(j, j) else { return nil }
                sumVar += v
                k += 1
                for l in 0..<J where l != skip {
                    guard let c = cov(j, l) else { return nil }
                    sumAll += c
                }
            }
            guard k > 1, sumAll > 0 else { return nil }
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
            return Item(itemID: data.itemIDs[j], responses: totals.responses[j], correct: totals.correct[j],
                        pValue: m > 0 ? r / m : .nan, pointBiserial: pbis, alphaIfDeleted: J > 2 ? alpha(excluding: j) : nil)
        }
        personCount = N
        completePersons = complete
        let a = alpha(excluding: nil)
        self.alpha = a
        var total = 0.0
        var defined = true
        for j in 0..<J { for k in 0..<J { if let c = cov(j, k) { total += c } else { defined = false } } }
        sem = (a != nil && defined && total > 0) ? (total * (1 - a!)).squareRoot() : nil
        if completeScores.count > 1 {
            let mean = completeScores.reduce(0, +) / Double(completeScores.count)
            meanScore = mean
            sdScore = (completeScores.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(completeScores.count - 1)).squareRoot()
        }
    }
}
