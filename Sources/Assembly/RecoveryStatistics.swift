/// Recovery figures of a simulation study (CAT or fixed forms), accumulated one simulee at a time:
/// bias = mean(θ̂ − θ), RMSE = √mean(θ̂ − θ)², mean SE, Pearson r(θ, θ̂), share reaching the SE target, and the
/// same per θ bin (width `binWidth` over [−`binBound`, `binBound`], plus an open bin at each end).
struct RecoveryStatistics {
    let binWidth: Double
    let binBound: Double
    let interior: Int
    private(set) var count = 0
    private var sumError = 0.0, sumSquared = 0.0, sumSE = 0.0, reached = 0
    private var sumT = 0.0, sumE = 0.0, sumTT = 0.0, sumEE = 0.0, sumTE = 0.0
    private var bins: [Bin]

    private struct Bin {
        var count = 0
        var sumError = 0.0, sumSquared = 0.0, sumSE = 0.0, sumLength = 0.0, reached = 0
    }

    init(binWidth: Double, binBound: Double) {
        precondition(binWidth > 0 && binBound > 0, "bins need a positive width and bound")
        self.binWidth = binWidth
        self.binBound = binBound
        interior = Int((2 * binBound / binWidth).rounded(.up))
        bins = [Bin](repeating: Bin(), count: interior + 2)
    }

    mutating func add(theta: Double, estimate: Double, standardError: Double, length: Int, seReached: Bool) {
        let error = estimate - theta
        count += 1
        sumError += error
        sumSquared += error * error
        sumSE += standardError
        sumT += theta; sumE += estimate
        sumTT += theta * theta; sumEE += estimate * estimate; sumTE += theta * estimate
        if seReached { reached += 1 }
        let b: Int
        if theta < -binBound {
            b = 0
        } else if theta >= binBound {
            b = interior + 1
        } else {
            b = 1 + min(interior - 1, Int(((theta + binBound) / binWidth).rounded(.down)))
        }
        bins[b].count += 1
        bins[b].sumError += error
        bins[b].sumSquared += error * error
        bins[b].sumSE += standardError
        bins[b].sumLength += Double(length)
        if seReached { bins[b].reached += 1 }
    }

    var bias: Double { sumError / Double(count) }
    var rmse: Double { (sumSquared / Double(count)).squareRoot() }
    var meanSE: Double { sumSE / Double(count) }
    var shareSEReached: Double { Double(reached) / Double(count) }
    var correlation: Double {
        let n = Double(count)
        let covariance = sumTE / n - (sumT / n) * (sumE / n)
        let varianceT = sumTT / n - (sumT / n) * (sumT / n), varianceE = sumEE / n - (sumE / n) * (sumE / n)
        return varianceT > 0 && varianceE > 0 ? covariance / (varianceT * varianceE).squareRoot() : 0
    }

    /// Per-bin figures; `shareSEReached` only when the study has an SE target.
    func binReports(seTarget: Double?) -> [CATSimulationReport.Bin] {
        bins.enumerated().map { k, b in
            let lower: Double? = k == 0 ? nil : -binBound + Double(k - 1) * binWidth
            let upper: Double? = k == interior + 1 ? nil : min(binBound, -binBound + Double(k) * binWidth)
            guard b.count > 0 else {
                return .init(lower: lower, upper: upper, count: 0, bias: nil, rmse: nil, meanSE: nil, meanLength: nil, shareSEReached: nil)
            }
            let n = Double(b.count)
            return .init(
                lower: lower, upper: upper, count: b.count, bias: b.sumError / n, rmse: (b.sumSquared / n).squareRoot(),
                meanSE: b.sumSE / n, meanLength: b.sumLength / n, shareSEReached: seTarget == nil ? nil : Double(b.reached) / n)
        }
    }

    /// Overlap rate: the mean number of items two distinct simulees share, Σᵢ cᵢ(cᵢ − 1) / (N(N − 1)), over the
    /// mean length (cᵢ = times item i was administered). With a fixed length L this equals Chen, Ankenmann &
    /// Spray's (2003) T = N Σ rᵢ² / ((N − 1) L) − 1/(N − 1) with exposure rates rᵢ = cᵢ/N.
    static func overlapRate(administered: [Int], simulees: Int, meanLength: Double) -> Double {
        guard simulees > 1, meanLength > 0 else { return 0 }
        var pairs = 0.0
        for c in administered { pairs += Double(c) * Double(c - 1) }
        let n = Double(simulees)
        return pairs / (n * (n - 1)) / meanLength
    }
}
