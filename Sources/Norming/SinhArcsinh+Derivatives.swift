import Foundation

/// The SHASH log-density and its first and second derivatives in the working parameters η = (μ, s, ε, τ) with
/// σ = eˢ and δ = e^τ, for Newton's method.
///
/// ```
/// x = (y − μ)/σ,  A = asinh x,  q = 1 + x²,  r = 1/√q,  u = δA − ε,  S = sinh u,  C = cosh u
/// ℓ = τ − s + log C − ½ log q − ½ S² − ½ log 2π
/// g  = ∂ℓ/∂u   = S/C − S·C
/// g' = ∂²ℓ/∂u² = 1/C² − C² − S²
/// ℓ_x  = g δ r − x/q
/// ℓ_xx = g' δ² r² − g δ x r³ − (1 − x²)/q²
/// ℓ_μ = −ℓ_x/σ            ℓ_s = −1 − x ℓ_x          ℓ_ε = −g          ℓ_τ = 1 + g δ A
/// ℓ_μμ = ℓ_xx/σ²          ℓ_μs = (x ℓ_xx + ℓ_x)/σ    ℓ_ss = x ℓ_x + x² ℓ_xx
/// ℓ_με = g' δ r/σ         ℓ_sε = g' δ r x            ℓ_εε = g'
/// ℓ_xτ = δ r (g' δ A + g):  ℓ_μτ = −ℓ_xτ/σ,  ℓ_sτ = −x ℓ_xτ
/// ℓ_ετ = −g' δ A          ℓ_ττ = g' (δA)² + g δ A
/// ```
/// Derived by the chain rule from the density of Jones & Pewsey (2009), eq. (2); checked against finite
/// differences in `SinhArcsinhTests`.
package struct SHASHDerivatives {
    /// ℓ.
    package var logDensity: Double
    /// ∂ℓ/∂(μ, s, ε, τ).
    package var gradient: (Double, Double, Double, Double)
    /// ∂²ℓ in the order μμ, μs, με, μτ, ss, sε, sτ, εε, ετ, ττ.
    package var hessian: (Double, Double, Double, Double, Double, Double, Double, Double, Double, Double)

    /// The derivatives at y for η = (mu, s, epsilon, tau).
    @inlinable package init(y: Double, mu: Double, s: Double, epsilon: Double, tau: Double) {
        let sigma = exp(s), delta = exp(tau)
        let x = (y - mu) / sigma
        let q = 1 + x * x
        let r = 1 / q.squareRoot()
        let a = asinh(x)
        let u = delta * a - epsilon
        let sh = sinh(u), ch = cosh(u)
        let g = sh / ch - sh * ch
        let g2 = 1 / (ch * ch) - ch * ch - sh * sh
        let lx = g * delta * r - x / q
        let lxx = g2 * delta * delta * r * r - g * delta * x * r * r * r - (1 - x * x) / (q * q)
        logDensity = tau - s + logCosh(u) - 0.5 * log(q) - 0.5 * sh * sh - 0.5 * log(2 * Double.pi)
        gradient = (-lx / sigma, -1 - x * lx, -g, 1 + g * delta * a)
        let lxtau = delta * r * (g2 * delta * a + g)
        hessian = (
            lxx / (sigma * sigma), (x * lxx + lx) / sigma, g2 * delta * r / sigma, -lxtau / sigma,
            x * lx + x * x * lxx, g2 * delta * r * x, -x * lxtau,
            g2, -g2 * delta * a,
            g2 * delta * a * delta * a + g * delta * a
        )
    }

    /// Entry (i, j) of the 4×4 Hessian.
    @inlinable package func hessian(_ i: Int, _ j: Int) -> Double {
        let (a, b) = i <= j ? (i, j) : (j, i)
        switch (a, b) {
        case (0, 0): return hessian.0
        case (0, 1): return hessian.1
        case (0, 2): return hessian.2
        case (0, 3): return hessian.3
        case (1, 1): return hessian.4
        case (1, 2): return hessian.5
        case (1, 3): return hessian.6
        case (2, 2): return hessian.7
        case (2, 3): return hessian.8
        default: return hessian.9
        }
    }

    /// Entry i of the gradient.
    @inlinable package func gradient(_ i: Int) -> Double {
        switch i {
        case 0: gradient.0
        case 1: gradient.1
        case 2: gradient.2
        default: gradient.3
        }
    }
}
