import Psychometrics
import PsychometricsIO
import Testing

@Suite("EM calibration: degenerate input and non-convergence")
struct EMDegenerateInputTests {
    func data(_ rows: [[UInt8?]]) -> ResponseMatrix {
        try! ResponseMatrix(itemIDs: (1...rows[0].count).map { "q\($0)" }, rows: rows)
    }

    @Test("items everybody got right or wrong, or with too few responses, are excluded with a reason")
    func degenerateItemsExcluded() throws {
        var rows: [[UInt8?]] = []
        var rng = SeededGenerator(seed: 9)
        for i in 0..<400 {
            let x: [UInt8?] = (0..<4).map { _ in RandomVariate.uniform(using: &rng) < 0.6 ? 1 : 0 }
            // q5 always right, q6 always wrong, q7 answered by only 3 persons.
            rows.append(x + [1, 0, i < 3 ? 1 : nil])
        }
        let result = try EMCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(data(rows))
        #expect(result.items.map(\.itemID) == ["q1", "q2", "q3", "q4"])
        #expect(result.excludedItems.map(\.itemID) == ["q5", "q6", "q7"])
        #expect(result.excludedItems[0].reason == "all 400 responses correct: the difficulty has no finite estimate")
        #expect(result.excludedItems[1].reason == "all 400 responses incorrect: the difficulty has no finite estimate")
        #expect(result.excludedItems[2].reason == "only 3 responses (minimum 10)")
        #expect(result.warnings.contains("item q5 excluded: all 400 responses correct: the difficulty has no finite estimate"))
        #expect(result.logLikelihood.isFinite)
    }

    @Test("persons left without responses after item exclusion are counted")
    func personsDropped() throws {
        var rows: [[UInt8?]] = []
        for i in 0..<200 {
            let row: [UInt8?] = [UInt8(i % 2), i % 3 == 0 ? 1 : 0, i % 5 == 0 ? 1 : 0, nil]
            rows.append(row)
        }
        rows += [[nil, nil, nil, 1], [nil, nil, nil, 1]]
        var options = CalibrationOptions(model: .rasch)
        options.minimumItemResponses = 5
        let result = try EMCalibrator(options: options).calibrate(data(rows))
        #expect(result.excludedItems.map(\.itemID) == ["q4"])
        #expect(result.excludedPersons == ["201", "202"])
        #expect(result.personCount == 200)
    }

    @Test("no calibratable items is an error that names the reasons")
    func nothingToCalibrate() {
        let rows: [[UInt8?]] = (0..<50).map { _ in [1, 0] }
        #expect {
            try EMCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(data(rows))
        } throws: { error in
            (error as? PsychometricsError)?.message
                == "only 0 of 2 items can be calibrated (at least 2 needed); excluded: q1: all 50 responses correct: the difficulty has no finite estimate; q2: all 50 responses incorrect: the difficulty has no finite estimate"
        }
    }

    @Test("empty data is an error, not a NaN")
    func emptyData() throws {
        let empty = try ResponseMatrix(personIDs: [], itemIDs: ["q1"], rowOffsets: [0], itemIndices: [], responses: [])
        #expect(throws: PsychometricsError.self) { try EMCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(empty) }
    }

    @Test("hitting the cycle limit is a result with converged = false and a warning")
    func nonConvergence() throws {
        let sim = Simulated(model: .threePL, items: 10, persons: 500, seed: 1)
        var options = CalibrationOptions(model: .threePL)
        options.maxCycles = 3
        let result = try EMCalibrator(options: options).calibrate(sim.data)
        #expect(!result.converged)
        #expect(result.cycles == 3)
        #expect(result.warnings.first?.hasPrefix("EM did not converge in 3 cycles") == true)
        #expect(result.items.allSatisfy { $0.parameters.difficulty.isFinite })
    }

    @Test("invalid options are rejected with the reason")
    func invalidOptions() {
        var options = CalibrationOptions(model: .twoPL)
        options.quadraturePoints = 2
        options.guessingPrior = .standard
        #expect {
            try EMCalibrator(options: options).calibrate(LSAT7.matrix)
        } throws: { error in
            (error as? PsychometricsError)?.message
                == "invalid options: quadrature points must be 5…401, got 2; a guessing prior applies to the 3PL model only"
        }
    }
}
