import Foundation

/// The χ² distribution's upper tail, for fit-test p-values.
package enum ChiSquare {
    /// P(X ≥ x) for X ~ χ²(df): the regularised upper incomplete gamma function Q(df/2, x/2), by its series for
    /// x < a + 1 and Lentz's continued fraction otherwise (Numerical Recipes, §6.2), to ~1e-14 relative.
    ///
    /// Whole degrees of freedom up to `finiteSumLimit` (the person-fit and preknowledge statistics, every session)
    /// take the finite sums instead, exact and a few times faster: with z = x/2, for even df = 2m
    /// Q(m, z) = e^(−z) Σ_{k<m} z^k / k!, and for odd df = 2m + 1
    /// Q(m + ½, z) = erfc(√z) + e^(−z) Σ_{k=1…m} z^(k−½) / Γ(k + ½) (Abramowitz & Stegun 1964, 26.4.4 and 26.4.5).
    package static func upperTail(_ x: Double, degreesOfFreedom df: Double) -> Double {
        precondition(df > 0, "degrees of freedom must be positive, got \(df)")
        guard x > 0 else { return 1 }
        if df <= finiteSumLimit, df == df.rounded() { return finiteSumUpperTail(x, degreesOfFreedom: Int(df)) }
        return incompleteGammaUpperTail(x, degreesOfFreedom: df)
    }

    /// `upperTail` for any df > 0 and x > 0 by the series or the continued fraction.
    package static func incompleteGammaUpperTail(_ x: Double, degreesOfFreedom df: Double) -> Double {
        let a = df / 2, z = x / 2
        let logPrefix = a * log(z) - z - lgamma(a)
        if z < a + 1 {
            // P(a, z) = e^(−z) z^a / Γ(a) Σ zⁿ / (a (a+1) … (a+n)); Q = 1 − P.
            var term = 1 / a, sum = term, ap = a
            for _ in 0..<1000 {
                ap += 1
                term *= z / ap
                sum += term
                if abs(term) < abs(sum) * 1e-16 { break }
            }
            return max(0, 1 - exp(logPrefix) * sum)
        }
        // Q(a, z) by the continued fraction (modified Lentz).
        let tiny = 1e-300
        var b = z + 1 - a, c = 1 / tiny, d = 1 / b, h = d
        for i in 1..<1000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-16 { break }
        }
        return exp(logPrefix) * h
    }

    /// Degrees of freedom up to which `upperTail` sums the closed forms (at most 100 terms).
    static let finiteSumLimit = 200.0

    /// `upperTail` for whole df ≥ 1 by the finite sums (see there); terms are all positive, so the sum is accurate
    /// to a few ulps per term.
    static func finiteSumUpperTail(_ x: Double, degreesOfFreedom df: Int) -> Double {
        let z = x / 2, m = df / 2
        let decay = exp(-z)
        var sum = 0.0
        if df % 2 == 0 {
            var term = 1.0
            for k in 0..<m {
                sum += term
                term *= z / Double(k + 1)
            }
            return min(1, decay * sum)
        }
        var term = 2 * (z / Double.pi).squareRoot() // z^½ / Γ(3/2)
        var k = 1
        while k <= m {
            sum += term
            term *= z / (Double(k) + 0.5)
            k += 1
        }
        return min(1, erfc(z.squareRoot()) + decay * sum)
    }

    /// P(X ≤ x) for X ~ χ²(df, λ), the non-central χ²: the Poisson(λ/2) mixture of central χ²(df + 2k)
    /// distribution functions (Johnson, Kotz & Balakrishnan 1995, eq. 29.2), summed over k from 0 until the
    /// Poisson weights beyond the mean are below 1e-15.
    package static func noncentralLowerTail(_ x: Double, degreesOfFreedom df: Double, noncentrality lambda: Double) -> Double {
        guard x > 0 else { return 0 }
        guard lambda > 0 else { return 1 - upperTail(x, degreesOfFreedom: df) }
        let half = lambda / 2
        var total = 0.0
        let last = Int(half + 12 * half.squareRoot() + 60)
        for k in 0...last {
            let logWeight = -half + Double(k) * log(half) - lgamma(Double(k) + 1)
            let weight = exp(logWeight)
            if weight > 0 { total += weight * (1 - upperTail(x, degreesOfFreedom: df + 2 * Double(k))) }
            if Double(k) > half && weight < 1e-15 { break }
        }
        return min(1, max(0, total))
    }

    /// The (1 − level)/2 and (1 + level)/2 confidence limits of the non-centrality λ of an observed χ²(df, λ)
    /// statistic x: λ_L with P(X ≤ x | λ_L) = (1 + level)/2 and λ_U with P(X ≤ x | λ_U) = (1 − level)/2, each 0
    /// when even λ = 0 puts x below it (Steiger & Lind's RMSEA interval; mirt's RMSEA_5/RMSEA_95). By bisection
    /// (the distribution function falls as λ grows) to 1e-8 relative.
    package static func noncentralityInterval(_ x: Double, degreesOfFreedom df: Double, level: Double) -> (lower: Double, upper: Double) {
        func limit(_ target: Double) -> Double {
            guard noncentralLowerTail(x, degreesOfFreedom: df, noncentrality: 0) > target else { return 0 }
            var low = 0.0, high = max(10.0, 2 * x)
            while noncentralLowerTail(x, degreesOfFreedom: df, noncentrality: high) > target { high *= 2 }
            while high - low > 1e-8 * max(1, high) {
                let mid = (low + high) / 2
                if noncentralLowerTail(x, degreesOfFreedom: df, noncentrality: mid) > target { low = mid } else { high = mid }
            }
            return (low + high) / 2
        }
        return (limit((1 + level) / 2), limit((1 - level) / 2))
    }
}
