import Foundation

/// One bifactor item's M-step, shared by the engines whose items are `BifactorItem`s (`BifactorEngine`, and
/// `CorrelatedFactorsEngine`, whose items load on one factor each, held as general-only items on that factor's
/// grid): Fisher scoring of
/// ```
/// Q_j(x) = Σ_n [r_j1(n) log P_j(n; x) + r_j0(n) log(1 − P_j(n; x))]   (+ log priors)
/// ```
/// over the item's nodes, Q of them (θ_q, 0) for an item without a specific factor or Q² pairs (θ_g,q, θ_s,t),
/// n = q·Q + t. With z = a_g θ_g + a_s θ_s + d, ψ = σ(z), P = c + (1 − c)ψ, N = r_0 + r_1 and
/// v = (ψ/P · ∂z/∂(a_g, a_s, d), c/P),
/// ```
/// ∇Q_j = Σ_n (r_1 − N P) v,     F_j = Σ_n N P (1 − P) v vᵀ
/// ```
/// the step F⁻¹∇ halved until Q_j increases (`FisherScoring`). A slope prior (log-normal) applies to a_g, a
/// guessing prior (Beta) to c, as in the unidimensional engines; slopes stay within ±`maximumSlope`.
struct BifactorItemFit: Sendable {
    let grid: QuadratureGrid
    let maximumSlope: Double
    /// The log-normal prior on every item's general slope a_g, or nil.
    let slopePrior: LogNormalPrior?
    /// The Beta prior on a 3PL item's c, or nil.
    let guessingPrior: BetaPrior?

    var q: Int { grid.count }

    /// One item's expected counts over its nodes (a view into the E-step's rows), and the distributions N(μ, σ²) of
    /// the general factor and of the item's specific factor they were counted under: the coordinate of grid point z
    /// is μ + σz (a group of a multiple-group fit; 0 and 1 otherwise).
    struct Counts {
        let counts: [Double]
        let wrongOffset: Int
        let rightOffset: Int
        let nodes: Int
        let specific: Bool
        var generalMean = 0.0
        var generalSD = 1.0
        var specificMean = 0.0
        var specificSD = 1.0

        /// The factors' values at node n: (μ_g + σ_g z_q, μ_s + σ_s z_t), θ_s = 0 for a general-only item.
        @inline(__always) func coordinates(_ n: Int, on fit: BifactorItemFit) -> (general: Double, specific: Double) {
            let (g, s) = fit.coordinates(n, specific: specific)
            return (generalMean + generalSD * g, specific ? specificMean + specificSD * s : 0)
        }
    }

    /// Item j's Q_j maximised by Fisher scoring from its current parameters (see the type's documentation).
    func maximize(_ item: BifactorItem, counts: Counts) -> BifactorItem { maximize(item, pooled: [counts]) }

    /// Σ_g Q_jg over the counts of several groups (a multiple-group fit's invariant item: one parameter set, each
    /// group's counts at its own general nodes), the priors counted once, maximised by Fisher scoring.
    func maximize(_ item: BifactorItem, pooled: [Counts]) -> BifactorItem {
        FisherScoring.maximize(
            item, objective: { objective($0, pooled: pooled) },
            direction: { current in
                let (g, f) = scoreAndInformation(current, pooled: pooled)
                return (current.workingParameters, solveSmallSPD(f, g, n: g.count))
            }, candidate: { bounded(item, $0) })
    }

    /// The item at working parameters `y` with its slopes inside ±`maximumSlope`; nil outside the domain.
    func bounded(_ item: BifactorItem, _ y: [Double]) -> BifactorItem? {
        var y = y
        y[0] = min(max(y[0], -maximumSlope), maximumSlope)
        if item.hasFreeSpecificSlope { y[1] = min(max(y[1], -maximumSlope), maximumSlope) }
        return item.withWorkingParameters(y)
    }

    /// θ_g and θ_s at node n of an item's counts (θ_s = 0 for a general-only item).
    @inline(__always) func coordinates(_ n: Int, specific: Bool) -> (general: Double, specific: Double) {
        specific ? (grid.points[n / q], grid.points[n % q]) : (grid.points[n], 0)
    }

    /// Q_j: Σ_n r_1 log P + r_0 log(1 − P), plus the item's log priors.
    func objective(_ item: BifactorItem, counts c: Counts) -> Double { objective(item, pooled: [c]) }

    /// Σ over the counts of Σ_n r_1 log P + r_0 log(1 − P), plus the item's log priors once.
    func objective(_ item: BifactorItem, pooled: [Counts]) -> Double {
        var total = logPrior(item)
        for c in pooled {
            c.counts.withUnsafeBufferPointer { r in
                for n in 0..<c.nodes {
                    let (g, s) = c.coordinates(n, on: self)
                    let lp = item.logProbabilities(logit: item.logit(general: g, specific: s))
                    total += r[c.wrongOffset + n] * lp.wrong + r[c.rightOffset + n] * lp.right
                }
            }
        }
        return total
    }

    /// The gradient ∇Q_j and the expected information F_j (m × m, row-major) at the item's working parameters.
    func scoreAndInformation(_ item: BifactorItem, counts c: Counts) -> (gradient: [Double], information: [Double]) {
        scoreAndInformation(item, pooled: [c])
    }

    /// ∇ and F of Σ over the counts of Q_j (each at its own general nodes), the priors' terms added once.
    func scoreAndInformation(_ item: BifactorItem, pooled: [Counts]) -> (gradient: [Double], information: [Double]) {
        let m = item.workingParameterCount, hasSpecific = item.hasFreeSpecificSlope, cc = item.guessing, ratio = item.testletRatio ?? 0
        var g = [Double](repeating: 0, count: m), f = [Double](repeating: 0, count: m * m)
        var v = [Double](repeating: 0, count: m)
        for c in pooled {
            c.counts.withUnsafeBufferPointer { r in
                for n in 0..<c.nodes {
                    let (tg, ts) = c.coordinates(n, on: self)
                    let r0 = r[c.wrongOffset + n], r1 = r[c.rightOffset + n], total = r0 + r1
                    let psi = Logistic.sigmoid(item.logit(general: tg, specific: ts))
                    let p = cc + (1 - cc) * psi
                    let uz = cc == 0 ? 1 : psi / p
                    var k = 0
                    v[k] = uz * (tg + ratio * ts); k += 1
                    if hasSpecific { v[k] = uz * ts; k += 1 }
                    v[k] = uz; k += 1
                    if item.estimatesGuessing { v[k] = cc / p }
                    let e = r1 - total * p, w = total * p * (1 - p)
                    for a in 0..<m {
                        g[a] += e * v[a]
                        for b in a..<m { f[a * m + b] += w * v[a] * v[b] }
                    }
                }
            }
        }
        for a in 0..<m { for b in 0..<a { f[a * m + b] = f[b * m + a] } }
        if let prior = slopePrior {
            let terms = prior.logDensityTerms(slope: item.generalSlope)
            g[0] += terms.gradient
            f[0] += max(0, -terms.curvature)
        }
        if item.estimatesGuessing, let prior = guessingPrior {
            let d = prior.logDensityDerivatives(logitGuessing: Logistic.logit(item.guessing))
            g[m - 1] += d.first
            f[(m - 1) * m + m - 1] += max(0, -d.second)
        }
        return (g, f)
    }

    /// The item's log prior density: log p(a_g) (log-normal, 0 for a_g ≤ 0) and log p(c) for a 3PL item.
    func logPrior(_ item: BifactorItem) -> Double {
        var total = 0.0
        if let prior = slopePrior { total += prior.logDensityTerms(slope: item.generalSlope).logDensity }
        if item.estimatesGuessing, let prior = guessingPrior { total += prior.logDensity(logitGuessing: Logistic.logit(item.guessing)) }
        return total
    }
}
