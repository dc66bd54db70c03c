import Foundation
import Testing
import Psychometrics

/// Multiple-group calibration against mirt 1.47's `multipleGroup()` on `Fixtures/dif/two_groups.csv` (made by
/// `Fixtures/dif/make.R`: 1,000 reference persons N(0, 1), 1,000 focal N(−0.5, 1.2²), 12 2PL items, item i1
/// with uniform and i2 with non-uniform DIF; mirt at `TOL = 1e-6`, 61 points on ±6).
@Suite("Multiple-group calibration")
struct MultipleGroupCalibratorTests {
    /// The fixture's responses and group labels.
    static func twoGroups() throws -> (data: ResponseMatrix, groups: [String]) {
        let text = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures/dif/two_groups.csv"), encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        let header = lines[0].split(separator: ",").map(String.init)
        var persons: [String] = [], groups: [String] = [], rows: [[UInt8?]] = []
        for line in lines.dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            persons.append(fields[0]); groups.append(fields[1])
            rows.append(fields.dropFirst(2).map { $0.isEmpty ? nil : UInt8($0)! })
        }
        return (try ResponseMatrix(personIDs: persons, itemIDs: Array(header.dropFirst(2)), rows: rows), groups)
    }

    static func options(_ model: IRTModel = .twoPL) -> CalibrationOptions {
        var options = CalibrationOptions(model: model)
        options.tolerance = 1e-6
        options.guessingPrior = nil
        options.slopePrior = nil
        return options
    }

    @Test("2PL, all items invariant: log-likelihood, focal mean and SD and their SEs as mirt's")
    func invariantAgainstMirt() throws {
        let (data, groups) = try Self.twoGroups()
        let fit = try MultipleGroupCalibrator(options: Self.options()).calibrate(data, groups: groups, reference: "ref")
        #expect(fit.converged)
        #expect(abs(fit.logLikelihood - -13418.915184) < 1e-3, "log-likelihood \(fit.logLikelihood)")
        let focal = try #require(fit.distribution(of: "foc"))
        // mirt: MEAN_1 −0.57180782 (SE 0.06109843), COV_11 1.4884088 (SE 0.1466207) → SD √1.4884088, SE 0.1466207 / (2 SD).
        // The log-likelihoods agree to 2e-6; the estimates to mirt's own stopping rule and its fixed nodes weighted by
        // N(μ, σ²) where ours move with the distribution (measured: mean 1.0e-4, SD 2.1e-4 apart).
        #expect(abs(focal.mean - -0.57180782) < 5e-4, "mean \(focal.mean)")
        #expect(abs(focal.sd - 1.4884088.squareRoot()) < 5e-4, "sd \(focal.sd)")
        #expect(abs(try #require(focal.meanStandardError) - 0.06109843) < 1e-3)
        #expect(abs(try #require(focal.sdStandardError) - 0.1466207 / (2 * 1.4884088.squareRoot())) < 1e-3)
        #expect(fit.items.count == 12 && fit.items.allSatisfy { $0.groups == ["ref", "foc"] })
        // mirt's i1: a1 1.49790921806656, d 1.50494084984802.
        let i1 = fit.items[0].item.parameters
        #expect(abs(i1.discrimination - 1.49790921806656) < 1e-3 && abs(-i1.difficulty * i1.discrimination - 1.50494084984802) < 1e-3)
        #expect(fit.parameterCount == 26)
    }

    @Test("one item freed in the focal group: mirt's log-likelihood, two parameter sets for it")
    func freedItemAgainstMirt() throws {
        let (data, groups) = try Self.twoGroups()
        let fit = try MultipleGroupCalibrator(options: Self.options()).calibrate(data, groups: groups, reference: "ref", freeItems: ["i1": ["foc"]])
        #expect(abs(fit.logLikelihood - -13390.385480) < 1e-3, "log-likelihood \(fit.logLikelihood)")
        #expect(fit.freedItemIDs == ["i1"])
        let ref = try #require(fit.parameters(item: "i1", group: "ref")), foc = try #require(fit.parameters(item: "i1", group: "foc"))
        #expect(foc.difficulty > ref.difficulty, "uniform DIF against the focal group: b \(ref.difficulty) → \(foc.difficulty)")
        let two = try MultipleGroupCalibrator(options: Self.options()).calibrate(
            data, groups: groups, reference: "ref", freeItems: ["i1": ["foc"], "i2": ["foc"]])
        #expect(abs(two.logLikelihood - -13378.584835) < 1e-3, "log-likelihood \(two.logLikelihood)")
    }

    /// mirt reaches −13412.663522; ours −13412.664269 at the same tolerance (the 3PL's flat ridge in c).
    @Test("3PL without priors: mirt's log-likelihood")
    func threePLAgainstMirt() throws {
        let (data, groups) = try Self.twoGroups()
        let fit = try MultipleGroupCalibrator(options: Self.options(.threePL)).calibrate(data, groups: groups, reference: "ref")
        #expect(abs(fit.logLikelihood - -13412.663522) < 1e-3, "log-likelihood \(fit.logLikelihood)")
    }
}

/// Seeded recovery and the named refusals of the multiple-group fit.
@Suite("Multiple-group calibration: recovery and bad input")
struct MultipleGroupRecoveryTests {
    /// Three groups of 1,500 (N(0, 1), N(−0.5, 0.8²), N(0.7, 1.3²)) on 20 2PL items, the third group missing items
    /// 16–20 by design.
    static func simulated(seed: UInt64 = 2929) throws -> (data: ResponseMatrix, groups: [String], items: [ItemParameters]) {
        var random = SeededGenerator(seed: seed)
        let items = (0..<20).map { j in ItemParameters(discrimination: 0.7 + 0.08 * Double(j % 10), difficulty: -1.8 + 0.19 * Double(j)) }
        let design: [(String, Double, Double)] = [("ref", 0, 1), ("low", -0.5, 0.8), ("high", 0.7, 1.3)]
        var rows: [[UInt8?]] = [], groups: [String] = []
        for (name, mean, sd) in design {
            for _ in 0..<1_500 {
                let theta = mean + sd * RandomVariate.normal(using: &random)
                rows.append(
                    items.enumerated().map { j, item in
                        if name == "high" && j >= 15 { return nil }
                        return RandomVariate.uniform(using: &random) < item.probability(at: theta) ? 1 : 0
                    })
                groups.append(name)
            }
        }
        return (try ResponseMatrix(itemIDs: (1...20).map { "q\($0)" }, rows: rows), groups, items)
    }

    @Test("group means and SDs and the items recovered, missing by design, within 3 standard errors")
    func recovery() throws {
        let (data, groups, truth) = try Self.simulated()
        let fit = try MultipleGroupCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(data, groups: groups, reference: "ref")
        #expect(fit.converged)
        for (name, mean, sd) in [("low", -0.5, 0.8), ("high", 0.7, 1.3)] {
            let g = try #require(fit.distribution(of: name))
            let meanSE = try #require(g.meanStandardError), sdSE = try #require(g.sdStandardError)
            #expect(abs(g.mean - mean) < 3 * meanSE, "\(name) mean \(g.mean) ± \(meanSE)")
            #expect(abs(g.sd - sd) < 3 * sdSE, "\(name) sd \(g.sd) ± \(sdSE)")
        }
        #expect(try #require(fit.distribution(of: "high")).responses == 1_500 * 15)
        let rmse = (zip(fit.items, truth).map { pow($0.item.parameters.difficulty - $1.difficulty, 2) }.reduce(0, +) / 20).squareRoot()
        #expect(rmse < 0.08, "difficulty RMSE \(rmse)")
    }

    @Test("a small group, an unknown freed item, a group without an anchor and an unestimable freed set: named")
    func badInput() throws {
        let (data, groups, _) = try Self.simulated()
        let calibrator = MultipleGroupCalibrator(options: CalibrationOptions(model: .twoPL))
        var small = groups
        for i in 0..<1_490 { small[1_500 + i] = "low2" }
        do {
            let error = try #require(refusal { () throws(PsychometricsError) in _ = try calibrator.calibrate(data, groups: small, reference: "ref") })
            #expect(error.message.contains("group 'low' has 10 persons") && error.message.contains("at least 20"), "\(error.message)")
        }
        do {
            let error = try #require(
                refusal { () throws(PsychometricsError) in
                    _ = try calibrator.calibrate(data, groups: groups, reference: "ref", freeItems: ["nope": ["low"]])
                })
            #expect(error.code == .unknownItem && error.message.contains("'nope'"), "\(error.message)")
        }
        do {
            let error = try #require(
                refusal { () throws(PsychometricsError) in _ = try calibrator.calibrate(data, groups: groups, reference: "nobody") })
            #expect(error.code == .insufficientData && error.message.contains("'nobody'"), "\(error.message)")
        }
        // Every item the 'high' group answered freed there: nothing ties it to the reference.
        let all = Dictionary(uniqueKeysWithValues: (1...15).map { ("q\($0)", Set(["high"])) })
        do {
            let error = try #require(
                refusal { () throws(PsychometricsError) in _ = try calibrator.calibrate(data, groups: groups, reference: "ref", freeItems: all) })
            #expect(error.message.contains("group 'high' shares no item parameters with the reference group"), "\(error.message)")
        }
        // q1 answered correctly by every 'low' person: its freed set there cannot be estimated; the rest is fitted.
        var rows: [[UInt8?]] = (0..<data.personCount).map { i in
            var row = [UInt8?](repeating: nil, count: 20)
            for c in data.cells(ofPerson: i) { row[Int(data.itemIndices[c])] = data.responses[c] }
            if groups[i] == "low" { row[0] = 1 }
            return row
        }
        rows[0][0] = 1
        let edited = try ResponseMatrix(itemIDs: data.itemIDs, rows: rows)
        var fast = calibrator
        fast.options.standardErrors = false
        let fit = try fast.calibrate(edited, groups: groups, reference: "ref", freeItems: ["q1": ["low"]])
        #expect(fit.excludedGroupItems.map(\.itemID) == ["q1"] && fit.excludedGroupItems[0].groups == ["low"])
        #expect(fit.excludedGroupItems[0].reason.contains("all 1500 responses correct"))
        #expect(fit.parameters(item: "q1", group: "low") == nil && fit.parameters(item: "q1", group: "ref") != nil)
    }
}

/// The error `body` throws, nil (and a recorded issue) when it returns.
func refusal(_ body: () throws(PsychometricsError) -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> PsychometricsError? {
    do { try body() } catch { return error }
    Issue.record("expected a PsychometricsError", sourceLocation: sourceLocation)
    return nil
}
