import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("Wilson binomial interval: known values")
struct BinomialIntervalTests {
    @Test("7/20 at 95% equals the closed form evaluated by hand to 1e-9")
    func sevenOfTwenty() {
        // Hand computation at 40 digits (Python decimal): z = Φ⁻¹(0.975) = 1.959963984540054235…, p̂ = 0.35,
        // centre = (p̂ + z²/40)/(1 + z²/20), half = z/(1 + z²/20)·√(p̂(1 − p̂)/20 + z²/1600).
        // Published for comparison: Brown, Cai & DasGupta (2001) style tables give [0.1812, 0.5671].
        let ci = BinomialInterval.wilson(successes: 7, trials: 20)
        #expect(ci.lower.isApproximatelyEqual(to: 0.1811918241010820495, absoluteTolerance: 1e-9))
        #expect(ci.upper.isApproximatelyEqual(to: 0.5671457233147637667, absoluteTolerance: 1e-9))
        #expect(ci.confidenceLevel == 0.95)
        #expect(ci.contains(0.35) && !ci.contains(0.18) && !ci.contains(0.57))
    }

    @Test("bounds at 0 and n are exactly 0 and 1; 90% is narrower than 99%")
    func edges() {
        let none = BinomialInterval.wilson(successes: 0, trials: 10)
        #expect(none.lower == 0)
        // Upper bound at k = 0: z²/(n + z²) (the closed form with p̂ = 0).
        let z = 1.959963984540054
        #expect(none.upper.isApproximatelyEqual(to: z * z / (10 + z * z), absoluteTolerance: 1e-12))
        let all = BinomialInterval.wilson(successes: 10, trials: 10)
        #expect(all.upper == 1)
        #expect(all.lower.isApproximatelyEqual(to: 10 / (10 + z * z), absoluteTolerance: 1e-12))
        let narrow = BinomialInterval.wilson(successes: 30, trials: 100, confidenceLevel: 0.90)
        let wide = BinomialInterval.wilson(successes: 30, trials: 100, confidenceLevel: 0.99)
        #expect(narrow.lower > wide.lower && narrow.upper < wide.upper)
    }
}
