import Foundation
import Norming
import Numerics
import Testing

@Suite("Kish design effect")
struct KishDesignEffectTests {
    @Test("weights 1, 1, 2, 4: Σw = 8, Σw² = 22 → deff = 4·22/64 = 1.375, n_eff = 64/22")
    func handExample() {
        let k = KishDesignEffect(weights: [1, 1, 2, 4])
        #expect(k.designEffect.isApproximatelyEqual(to: 1.375, absoluteTolerance: 1e-15))
        #expect(k.effectiveN.isApproximatelyEqual(to: 64.0 / 22, absoluteTolerance: 1e-14))
    }

    @Test("equal weights: deff 1 and n_eff = n, whatever the common weight")
    func equalWeights() {
        for w in [0.001, 1, 37.5] {
            let k = KishDesignEffect(weights: Array(repeating: w, count: 250))
            #expect(k.designEffect.isApproximatelyEqual(to: 1, absoluteTolerance: 1e-12))
            #expect(k.effectiveN.isApproximatelyEqual(to: 250, absoluteTolerance: 1e-9))
        }
    }
}
