import Foundation

/// The χ² distribution's upper tail, for fit-test p-values.
package enum ChiSquare {
    /// P(X ≥ x) for X ~ χ²(df): the regularised upper incomplete gamma function Q(df/2, x/2), by its series for
    /// x < a + 1 and Lentz's continued fraction otherwise (Numerical Recipes, §6.2), to ~1e-14 relative.
    package static func upperTail(_ x: Double, degreesOfFreedom df: Double) -> Double {
        precondition(df > 0, "degrees of freedom must be positive, got \(df)")
        guard x > 0 else { return 1 }
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
}
