import Foundation

/// A polynomial in standardised age, written in Legendre polynomials so that the coefficients of different
/// degrees are nearly uncorrelated over the covered range (monomials 1, t, t², … are not, and their normal
/// equations are badly conditioned from degree 4 on).
///
/// ```
/// t = 2 · (age − ageMin) / (ageMax − ageMin) − 1          ∈ [−1, 1] over the covered range
/// p(age) = Σ_{k=0…d} c_k · P_k(t)
/// P_0 = 1, P_1 = t, (k + 1) P_{k+1} = (2k + 1) t P_k − k P_{k−1}   (Bonnet's recursion)
/// ```
/// Ages outside [ageMin, ageMax] are clamped to it before t is computed: a polynomial fitted on the range is
/// never extrapolated.
package struct AgePolynomial: Sendable, Hashable, Codable {
    /// c_0 … c_d.
    package var coefficients: [Double]

    package init(coefficients: [Double]) {
        precondition(!coefficients.isEmpty, "an age polynomial needs at least one coefficient")
        self.coefficients = coefficients
    }

    /// The degree d (number of coefficients − 1).
    package var degree: Int { coefficients.count - 1 }

    /// A constant.
    package static func constant(_ value: Double) -> AgePolynomial { AgePolynomial(coefficients: [value]) }

    /// p(t) at standardised age t.
    @inlinable package func value(at t: Double) -> Double {
        var sum = coefficients[0]
        guard coefficients.count > 1 else { return sum }
        var previous = 1.0, current = t
        sum += coefficients[1] * t
        var k = 1
        while k + 1 < coefficients.count {
            let next = (Double(2 * k + 1) * t * current - Double(k) * previous) / Double(k + 1)
            previous = current
            current = next
            k += 1
            sum += coefficients[k] * current
        }
        return sum
    }

    /// P_0(t) … P_degree(t) into `basis` (which must hold degree + 1 values).
    @inlinable static func legendre(_ t: Double, degree: Int, into basis: inout [Double], offset: Int = 0) {
        basis[offset] = 1
        guard degree >= 1 else { return }
        basis[offset + 1] = t
        var k = 1
        while k < degree {
            basis[offset + k + 1] = (Double(2 * k + 1) * t * basis[offset + k] - Double(k) * basis[offset + k - 1]) / Double(k + 1)
            k += 1
        }
    }
}

/// The map from age to standardised age t ∈ [−1, 1] over the covered range (ages outside are clamped).
package struct AgeStandardization: Sendable, Hashable, Codable {
    package var minimum: Double
    package var maximum: Double

    /// - Precondition: minimum < maximum, both finite.
    package init(minimum: Double, maximum: Double) {
        precondition(minimum.isFinite && maximum.isFinite && minimum < maximum, "an age range needs minimum < maximum, got \(minimum)–\(maximum)")
        self.minimum = minimum
        self.maximum = maximum
    }

    /// t = 2·(clamp(age) − minimum)/(maximum − minimum) − 1.
    @inlinable package func standardized(_ age: Double) -> Double {
        let a = min(max(age, minimum), maximum)
        return 2 * (a - minimum) / (maximum - minimum) - 1
    }
}
