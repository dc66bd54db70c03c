import Foundation

/// Degrees of the four SHASH parameters as polynomials in standardised age (`AgePolynomial`). `nil` for the
/// skewness fixes ε ≡ 0 (symmetric); `nil` for the tail weight fixes δ ≡ 1 (normal tails). (d, d', nil, nil) is a
/// normal distribution whose mean and log-SD are polynomials in age.
package struct SHASHDegrees: Sendable, Hashable, Codable, CustomStringConvertible {
    package var location: Int
    package var logScale: Int
    package var skewness: Int?
    package var logTailWeight: Int?

    package init(location: Int, logScale: Int, skewness: Int? = nil, logTailWeight: Int? = nil) {
        self.location = location
        self.logScale = logScale
        self.skewness = skewness
        self.logTailWeight = logTailWeight
    }

    /// Coefficients estimated.
    package var parameterCount: Int { location + 1 + logScale + 1 + (skewness.map { $0 + 1 } ?? 0) + (logTailWeight.map { $0 + 1 } ?? 0) }

    /// Coefficient counts of μ, log σ, ε, log δ (0 for a fixed parameter).
    var counts: [Int] { [location + 1, logScale + 1, skewness.map { $0 + 1 } ?? 0, logTailWeight.map { $0 + 1 } ?? 0] }

    /// "μ 3, log σ 1, ε –, log δ –".
    package var description: String {
        "μ \(location), log σ \(logScale), ε \(skewness.map(String.init) ?? "–"), log δ \(logTailWeight.map(String.init) ?? "–")"
    }

    /// Degrees allowed: μ 0–8, log σ 0–6, ε 0–4, log δ 0–2 (beyond, a polynomial over one age range chases noise).
    package static let limits = SHASHDegrees(location: 8, logScale: 6, skewness: 4, logTailWeight: 2)

    /// Problems with these degrees as maxima or fixed degrees.
    package func validationProblems(what: String) -> [String] {
        var problems: [String] = []
        let limits = Self.limits
        if !(0...limits.location).contains(location) { problems.append("\(what): the μ degree must be 0–\(limits.location), got \(location)") }
        if !(0...limits.logScale).contains(logScale) { problems.append("\(what): the log σ degree must be 0–\(limits.logScale), got \(logScale)") }
        if let e = skewness, !(0...limits.skewness!).contains(e) {
            problems.append("\(what): the ε degree must be 0–\(limits.skewness!) or none, got \(e)")
        }
        if let d = logTailWeight, !(0...limits.logTailWeight!).contains(d) {
            problems.append("\(what): the log δ degree must be 0–\(limits.logTailWeight!) or none, got \(d)")
        }
        return problems
    }
}

/// Continuous norms: the distribution of θ at each age is a SHASH (`SinhArcsinh`) whose parameters are
/// polynomials in standardised age (`AgePolynomial`) — the LMS/GAMLSS approach (Cole & Green 1992; Rigby &
/// Stasinopoulos 2005) with the sinh–arcsinh family of Jones & Pewsey (2009).
///
/// ```
/// θ | age ~ SHASH(μ(t), σ(t) = exp(s(t)), ε(t), δ(t) = exp(τ(t))),   t = standardised age
/// F_age(θ) = Φ(sinh(δ(t) · asinh((θ − μ(t))/σ(t)) − ε(t)))
/// ```
/// For every age F_age is a continuous, strictly increasing cdf, so percentile curves Q(p | age) cannot cross.
package struct ContinuousNorms: Sendable, Hashable {
    /// The covered age range; ages outside are evaluated at the nearest covered age.
    package var ages: AgeStandardization
    package var location: AgePolynomial
    package var logScale: AgePolynomial
    /// nil: ε ≡ 0.
    package var skewness: AgePolynomial?
    /// nil: δ ≡ 1.
    package var logTailWeight: AgePolynomial?

    package init(
        ages: AgeStandardization, location: AgePolynomial, logScale: AgePolynomial, skewness: AgePolynomial? = nil,
        logTailWeight: AgePolynomial? = nil
    ) {
        self.ages = ages
        self.location = location
        self.logScale = logScale
        self.skewness = skewness
        self.logTailWeight = logTailWeight
    }

    package var degrees: SHASHDegrees {
        SHASHDegrees(location: location.degree, logScale: logScale.degree, skewness: skewness?.degree, logTailWeight: logTailWeight?.degree)
    }

    /// The distribution of θ at `age` (clamped to the covered range).
    package func distribution(age: Double) -> SinhArcsinh {
        let t = ages.standardized(age)
        return SinhArcsinh(
            location: location.value(at: t), scale: exp(logScale.value(at: t)),
            skewness: skewness?.value(at: t) ?? 0, tailWeight: exp(logTailWeight?.value(at: t) ?? 0))
    }

    /// F_age(θ).
    package func cdf(theta: Double, age: Double) -> Double { distribution(age: age).cdf(theta) }

    /// Whether every parameter is finite and σ, δ are representable at every age of the range (checked on a grid
    /// of 201 ages; the polynomials are smooth, and a NORMS.json document is checked with this before use).
    var isUsable: Bool {
        (0...200).allSatisfy { k in
            let t = -1 + Double(k) / 100
            let s = logScale.value(at: t), tau = logTailWeight?.value(at: t) ?? 0
            return location.value(at: t).isFinite && abs(s) < 20 && abs(tau) < 20 && (skewness?.value(at: t) ?? 0).isFinite
        }
    }
}
