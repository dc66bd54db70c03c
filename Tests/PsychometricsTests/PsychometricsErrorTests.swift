import Foundation
import Psychometrics
import Testing

@Suite("PsychometricsError: one error type, a code per kind of mistake")
struct PsychometricsErrorTests {
    static func code(_ body: () throws -> Void) -> PsychometricsError.Code? {
        do { try body(); return nil } catch let error as PsychometricsError { return error.code } catch { return nil }
    }

    @Test("scoring a session: each client mistake has its code, and all are client errors")
    func scoring() throws {
        let bank = ItemBank(items: [
            BankItem(itemID: "q1", model: .twoPL, parameters: ItemParameters(discrimination: 1, difficulty: 0)),
            BankItem(itemID: "q2", model: .twoPL, parameters: ItemParameters(discrimination: 1.5, difficulty: 1))
        ])
        let scorer = try SessionScorer(bank: bank, scale: try IQScale())
        #expect(Self.code { _ = try scorer.score(itemIDs: ["q1", "zz"], responses: [1, 0]) } == .unknownItem)
        #expect(Self.code { _ = try scorer.score(itemIDs: ["q1"], responses: [2]) } == .invalidResponse)
        #expect(Self.code { _ = try scorer.score(itemIDs: ["q1", "q1"], responses: [1, 0]) } == .repeatedItem)
        #expect(Self.code { _ = try scorer.score(itemIDs: ["q1", "q2"], responses: [1]) } == .lengthMismatch)
        #expect(Self.code { _ = try scorer.score(itemIDs: [], responses: []) } == .noResponses)
        #expect(try scorer.score(itemIDs: ["q1", "q2"], responses: [1, 0]).score.iq > 0)
    }

    @Test("options, parameters and data: invalidOptions, invalidParameters, insufficientData")
    func library() throws {
        #expect(Self.code { _ = try IQScale(confidenceLevel: 1) } == .invalidOptions)
        #expect(Self.code { _ = try AbilityEstimator(parameters: [ItemParameters(difficulty: .nan)]) } == .invalidParameters)
        let one = try ResponseMatrix(itemIDs: ["a", "b"], rows: [[1, 0]])
        #expect(Self.code { _ = try EMCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(one) } == .insufficientData)
        // A response matrix built from a caller's arrays is checked, not trapped on.
        #expect(Self.code { _ = try ResponseMatrix(itemIDs: ["a", "b"], rows: [[1, 2]]) } == .invalidResponse)
        #expect(Self.code { _ = try ResponseMatrix(itemIDs: ["a", "b"], rows: [[1]]) } == .lengthMismatch)
        #expect(Self.code { _ = try ResponseMatrix(personIDs: ["p"], itemIDs: ["a"], rows: [[1], [0]]) } == .lengthMismatch)
        #expect(
            Self.code { _ = try ResponseMatrix(personIDs: ["p"], itemIDs: ["a"], rowOffsets: [0, 1], itemIndices: [3], responses: [1]) }
                == .unknownItem)
        #expect(
            Self.code { _ = try ResponseMatrix(personIDs: ["p"], itemIDs: ["a", "b"], rowOffsets: [0, 2], itemIndices: [1, 1], responses: [1, 0]) }
                == .repeatedItem)
        #expect(
            Self.code { _ = try ResponseMatrix(personIDs: ["p"], itemIDs: ["a", "b"], rowOffsets: [0, 2], itemIndices: [1, 0], responses: [1, 0]) }
                == .invalidOptions)
        #expect(
            Self.code { _ = try ResponseMatrix(personIDs: ["p", "q"], itemIDs: ["a"], rowOffsets: [0, 1, 0], itemIndices: [0], responses: [1]) }
                == .lengthMismatch)
        #expect(
            Self.code { _ = try ResponseMatrix(personIDs: ["p"], itemIDs: ["a"], rowOffsets: [0, 1], itemIndices: [0], responses: []) }
                == .lengthMismatch)
        #expect(!PsychometricsError(.invalidParameters, "x").isClientError && PsychometricsError(.unknownItem, "x").isClientError)
    }
}

@Suite("AbilityEstimator.estimate(items:responses:) throws instead of trapping")
struct AbilityEstimatorCheckedInputTests {
    @Test("an index out of range, a response of 2, unequal lengths")
    func checked() throws {
        let estimator = try AbilityEstimator(parameters: [ItemParameters(discrimination: 1, difficulty: 0)])
        #expect(throws: PsychometricsError(.unknownItem, "item index 3 is out of range 0..<1")) {
            _ = try estimator.estimate(items: [3], responses: [1])
        }
        #expect(throws: PsychometricsError(.invalidResponse, "the response to item index 0 is 2; allowed 0 or 1")) {
            _ = try estimator.estimate(items: [0], responses: [2])
        }
        #expect(throws: PsychometricsError.self) { _ = try estimator.estimate(items: [0, 0], responses: [1]) }
        #expect(try estimator.estimate(items: [0], responses: [1]).theta > 0)
    }
}
