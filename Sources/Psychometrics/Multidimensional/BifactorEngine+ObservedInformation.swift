import Foundation

extension BifactorEngine {
    /// The gradient of the log posterior (the marginal log-likelihood plus the log priors) in the working
    /// parameters (the free items', `BifactorEngine.fixed`), by Fisher's identity: the E-step's expected counts at x give Σ_j ∇Q_j(x), which equals
    /// ∇ log L(x) (Louis 1982, eq. 3.1); the testlet ratios' after the items' (`workingParameters`' order).
    func gradient(_ e: Expectation) -> [Double] {
        var out: [Double] = []
        out.reserveCapacity(items.count * 4)
        for j in freeItems { out += fit.scoreAndInformation(items[j], counts: itemCounts(e, item: j)).gradient }
        for f in testletFactors { out.append(testletRatioScore(f, e).gradient) }
        return out
    }
}

extension BifactorEngine: FisherIdentityGradient {}
