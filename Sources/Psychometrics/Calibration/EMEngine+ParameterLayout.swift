import Foundation

extension EMEngine {
    /// Number of free working parameters: Rasch/1PL: 1 + J (shared slope first); 2PL: 2J; 3PL: 3J.
    /// With fixed items, over the F free items only, plus μ and σ last: Rasch/1PL F + 2 (the slope is
    /// fixed); 2PL 2F + 2; 3PL 3F + 2.
    var freeParameterCount: Int {
        if estimatesLatent {
            switch model {
            case .rasch, .onePL: return freeItemCount + 2
            case .twoPL: return 2 * freeItemCount + 2
            case .threePL: return 3 * freeItemCount + 2
            }
        }
        switch model {
        case .rasch, .onePL: return 1 + itemCount
        case .twoPL: return 2 * itemCount
        case .threePL: return 3 * itemCount
        }
    }

    /// Global indices of μ and σ (with fixed items only).
    var latentMeanIndex: Int { freeParameterCount - 2 }
    var latentSDIndex: Int { freeParameterCount - 1 }

    /// Working parameters per item as seen by the derivative code (slope, intercept[, γ]).
    var perItem: Int { model == .threePL ? 3 : 2 }

    /// Global index of item j's working parameter t (0 = slope, 1 = intercept, 2 = γ); −1 when the parameter
    /// is not estimated (a fixed item's, or the slope of Rasch/1PL items calibrated onto fixed items).
    @inline(__always) func globalIndex(item j: Int, parameter t: Int) -> Int {
        if estimatesLatent {
            let f = freeIndex[j]
            if f < 0 { return -1 }
            switch model {
            case .rasch, .onePL: return t == 1 ? f : -1
            case .twoPL, .threePL: return perItem * f + t
            }
        }
        switch model {
        case .rasch, .onePL: return t == 0 ? 0 : 1 + j
        case .twoPL, .threePL: return perItem * j + t
        }
    }
}

extension EMEngine {
    /// Bounds the M-step keeps the working parameters within, and SQUAREM's extrapolated points are projected
    /// into: a ≥ 10⁻³ (s = log a ≥ log 10⁻³ with a slope prior; the Rasch/1PL common slope), |a| ≤
    /// `maximumSlope`, |d| ≤ 100, γ = logit c in [−20, 10] (c from 2·10⁻⁹ to 0.99995); with fixed items
    /// μ and σ within `NormalLatentDistribution`'s bounds (the latent M-step keeps σ² ≥ 10⁻⁶).
    static let minimumSlope = 1e-3
    static let interceptBound = 100.0
    static let guessingLogitRange = -20.0...10.0

    @inline(__always) func clampedSlope(working s: Double) -> Double {
        logSlope ? min(max(s, log(Self.minimumSlope)), log(maximumSlope)) : min(max(s, -maximumSlope), maximumSlope)
    }
    @inline(__always) func clampedCommonSlope(_ a: Double) -> Double { min(max(a, Self.minimumSlope), maximumSlope) }
    @inline(__always) func clampedIntercept(_ d: Double) -> Double { min(max(d, -Self.interceptBound), Self.interceptBound) }
    @inline(__always) func clampedGuessingLogit(_ g: Double) -> Double {
        min(max(g, Self.guessingLogitRange.lowerBound), Self.guessingLogitRange.upperBound)
    }

    /// The free working parameters as one vector in the layout of `globalIndex`: the common slope and the
    /// intercepts (Rasch/1PL), or (s, d[, γ]) per item (2PL/3PL); with fixed items the free items' only, then μ
    /// and log σ (log σ rather than σ, so that any value is a valid SD). Fixed items have no entries.
    func workingParameters() -> [Double] {
        var x = [Double](repeating: 0, count: freeParameterCount)
        for j in 0..<itemCount where !isFixed(j) {
            for t in 0..<perItem {
                let index = globalIndex(item: j, parameter: t)
                if index >= 0 { x[index] = t == 0 ? s[j] : t == 1 ? d[j] : g[j] }
            }
        }
        if estimatesLatent {
            x[latentMeanIndex] = latentMean
            x[latentSDIndex] = log(latentSD)
        }
        return x
    }

    /// Sets the free working parameters from `x` (the layout of `workingParameters()`), each projected into its
    /// range above; the fixed items' parameters never change. With fixed items the nodes move with μ and σ.
    mutating func setWorkingParameters(_ x: [Double]) {
        precondition(x.count == freeParameterCount, "one value per free parameter, got \(x.count) for \(freeParameterCount)")
        let common = !estimatesLatent && (model == .rasch || model == .onePL)
        for j in 0..<itemCount where !isFixed(j) {
            for t in 0..<perItem {
                let index = globalIndex(item: j, parameter: t)
                guard index >= 0 else { continue }
                switch t {
                case 0: s[j] = common ? clampedCommonSlope(x[index]) : clampedSlope(working: x[index])
                case 1: d[j] = clampedIntercept(x[index])
                default: g[j] = clampedGuessingLogit(x[index])
                }
            }
        }
        if estimatesLatent {
            let latent = NormalLatentDistribution.projected(mean: x[latentMeanIndex], logSD: x[latentSDIndex])
            setLatentDistribution(mean: latent.mean, sd: latent.sd)
        }
    }

    /// The blocks of `workingParameters()`: each free item's parameters (Rasch/1PL: its intercept; the common
    /// slope is a block of its own), and μ with log σ.
    func parameterBlocks() -> [Range<Int>] {
        var blocks: [Range<Int>] = []
        if !estimatesLatent && (model == .rasch || model == .onePL) {
            blocks.append(0..<1)
            for j in 0..<itemCount { blocks.append((1 + j)..<(2 + j)) }
            return blocks
        }
        let width = model == .rasch || model == .onePL ? 1 : perItem
        for f in 0..<freeItemCount { blocks.append((width * f)..<(width * (f + 1))) }
        if estimatesLatent { blocks.append(latentMeanIndex..<(latentSDIndex + 1)) }
        return blocks
    }

    /// Σ log p(parameters) over the free items (`WorkingPriors.logDensity`; 0 without priors): added to the
    /// marginal log-likelihood it is the objective that EM with priors increases (the log posterior up to a
    /// constant).
    func logPrior() -> Double {
        guard !priors.isEmpty else { return 0 }
        var total = 0.0
        for j in 0..<itemCount where !isFixed(j) { total += priors.logDensity(s: s[j], g: g[j], item: j) }
        return total
    }
}
