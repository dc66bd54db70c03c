import Foundation
import Norming
import Psychometrics
import Testing

@Suite("Norm samples: ranges checked")
struct NormSampleTests {
    @Test("ages, θ, SEs, weights and categories out of range are errors naming the person, the value and the range")
    func validation() {
        #expect(throws: PsychometricsError(.invalidOptions, "norm sample: person 2: age 131.0 is outside 0 ≤ age ≤ 130")) {
            try NormSample(ages: [20, 131], thetas: [0, 0])
        }
        #expect(throws: PsychometricsError(.invalidOptions, "norm sample: person 1: θ nan is outside -10 ≤ θ ≤ 10")) {
            try NormSample(ages: [20, 30], thetas: [.nan, 0])
        }
        #expect(throws: PsychometricsError(.invalidOptions, "norm sample: person 2: weight 0.0 is outside 0 < weight ≤ 1000000000000")) {
            try NormSample(ages: [20, 30], thetas: [0, 0], weights: [1, 0])
        }
        #expect(throws: PsychometricsError(.invalidOptions, "norm sample: person 1: se inf is outside 0 < se ≤ 10")) {
            try NormSample(ages: [20, 30], thetas: [0, 0], standardErrors: [.infinity, 0.3])
        }
        #expect(throws: PsychometricsError(.invalidOptions, "norm sample: person 2: education is empty")) {
            try NormSample(ages: [20, 30], thetas: [0, 0], variables: ["education": ["high", ""]])
        }
        #expect(throws: PsychometricsError(.invalidOptions, "norm sample: 1 θ values for 2 ages")) {
            try NormSample(ages: [20, 30], thetas: [0])
        }
        #expect(throws: PsychometricsError(.insufficientData, "the norm sample is empty")) {
            try NormSample(ages: [], thetas: [])
        }
    }
}
