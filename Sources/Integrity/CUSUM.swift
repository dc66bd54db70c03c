import Psychometrics

/// Page's (1954) one-sided cumulative sum for an upward shift in the mean of standardised observations x (N(0, 1)
/// while nothing has changed):
/// ```
/// S₀ = 0,   S_n = max(0, S_{n−1} + x_n − k),   alarm when S_n > h
/// ```
/// k = δ/2 for a shift of δ SDs to detect fastest; h sets the false-alarm rate: the in-control average run length
/// (observations between false alarms) is about 930 for k = 0.5, h = 5 (Montgomery, *Introduction to Statistical
/// Quality Control*, 7th ed., table 9.3) and, by Siegmund's approximation ARL₀ ≈ (e^{2kb} − 2kb − 1)/(2k²) with
/// b = h + 1.166, about 19,000 for h = 8, the default: on a bank of 1,500 items watched daily, one false alarm in
/// about two weeks rather than one and a half a day. After an alarm the sum restarts from 0.
///
/// The change point: within the run of S > 0 that ended in the alarm (observations r … n), the maximum-likelihood
/// start of a shifted mean, argmax_d (Σ_{t=d}^{n} x_t)² / (n − d + 1) over d ≥ r with a positive sum (Pettitt-style
/// refinement of Page's estimator r, which a run that drifts above 0 before the change places too early).
package struct CUSUM: Sendable, Hashable {
    package let k: Double
    package let h: Double
    package private(set) var value = 0.0
    /// Observations added so far.
    package private(set) var count = 0
    /// The observation (0-based) at which the current run of S > 0 began.
    package private(set) var runStart = 0
    /// The current run's observations.
    private var run: [Double] = []

    package static let allowedReferences = NumberRange.closed(0, 5)
    package static let allowedThresholds = NumberRange.aboveUpTo(0, 100)

    package init(k: Double = 0.5, h: Double = 8) {
        self.k = k
        self.h = h
    }

    /// Adds x; returns the estimated change point (0-based observation index) when this observation raises an
    /// alarm (the sum then restarts), nil otherwise.
    package mutating func add(_ x: Double) -> Int? {
        if value == 0 { runStart = count; run.removeAll(keepingCapacity: true) }
        value = max(0, value + x - k)
        count += 1
        run.append(x)
        guard value > h else { return nil }
        value = 0
        var best = 0, bestScore = -Double.infinity, tail = 0.0
        for d in stride(from: run.count - 1, through: 0, by: -1) {
            tail += run[d]
            let score = tail > 0 ? tail * tail / Double(run.count - d) : -Double.infinity
            if score > bestScore { bestScore = score; best = d }
        }
        run.removeAll(keepingCapacity: true)
        return runStart + best
    }
}
