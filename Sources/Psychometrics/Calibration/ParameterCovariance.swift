import Foundation

/// The covariance of a calibration's estimates, the inverse of the observed information, over the parameters
/// the fit estimated: entries of the layout that are held (a fixed-item calibration's common slope) are left out
/// before inverting and have covariance 0 with everything.
struct ParameterCovariance {
    /// The warning when the information cannot be inverted.
    static let notPositiveDefiniteWarning =
        "standard errors unavailable: the observed information matrix is not positive definite (the model may not be identified by these data)"

    private let inverse: CholeskyInverse
    /// Per layout index, its index in the inverted matrix (−1: held).
    private let position: [Int]

    /// - Parameters:
    ///   - information: the observed information, `count` × `count` row-major (its upper triangle is read).
    ///   - held: layout indices that were not estimated.
    /// Nil when an entry is not finite or the information of the estimated parameters is not positive definite.
    init?(information: [Double], count: Int, held: [Int], workers: Int) {
        guard information.allSatisfy(\.isFinite) else { return nil }
        var position = [Int](repeating: -1, count: count), kept: [Int] = []
        for a in 0..<count where !held.contains(a) { position[a] = kept.count; kept.append(a) }
        let n = kept.count
        var reduced: [Double]
        if n == count {
            reduced = information
        } else {
            reduced = [Double](repeating: 0, count: n * n)
            for (x, a) in kept.enumerated() { for (y, b) in kept.enumerated() { reduced[x * n + y] = information[a * count + b] } }
        }
        guard let inverse = CholeskyInverse(upperTriangleOf: &reduced, n: n, workers: workers) else { return nil }
        self.inverse = inverse
        self.position = position
    }

    /// Cov(x_a, x_b) for layout indices a and b (0 when either is held).
    func entry(_ a: Int, _ b: Int) -> Double {
        let x = position[a], y = position[b]
        return x < 0 || y < 0 ? 0 : inverse.entry(x, y)
    }
}
