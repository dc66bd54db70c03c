import Foundation
import Testing
@testable import Psychometrics

@Suite("Bifactor online calibration (fixed items)")
struct BifactorOnlineCalibrationTests {
    /// Three specific factors of four items; factor f2's specific slopes are negative (its sign is the fixed
    /// items' to give).
    static let truth: [BifactorItem] = (0..<12).map { j in
        let f = j / 4
        return BifactorItem(
            generalSlope: 0.9 + 0.1 * Double(j % 5), specificSlope: (f == 2 ? -1 : 1) * (0.7 + 0.15 * Double(j % 4)),
            specific: f, intercept: -1.2 + 0.22 * Double(j))
    }
    static let ids = (0..<12).map { String(format: "i%02d", $0) }
    /// Items 0, 1, 4, 5, 8, 9 (two per factor) held at their true values.
    static let held = [0, 1, 4, 5, 8, 9]

    static func sample(seed: UInt64, count: Int = 4_000) throws -> (ResponseMatrix, FactorStructure) {
        var rng = SeededGenerator(seed: seed)
        let (data, _) = BifactorSimulator(items: truth, specificFactorCount: 3).matrix(count: count, itemIDs: ids, using: &rng)
        return (data, try FactorStructure(items: ids.enumerated().map { ($1, "f\($0 / 4)") }))
    }

    /// Fixed items keep their values to the bit and get no standard errors; the free items are recovered on the
    /// fixed items' scale (RMSE of a_g, a_s, d each below 0.15; every estimate within 4 SEs of the truth), factor
    /// f2 keeps the negative sign its fixed items give it, and only the free items' parameters are counted.
    @Test func freeItemsOnTheFixedScale() throws {
        let (data, structure) = try Self.sample(seed: 71)
        let fixed = Dictionary(uniqueKeysWithValues: Self.held.map { (Self.ids[$0], Self.truth[$0]) })
        var options = BifactorCalibrator.defaultOptions
        options.tolerance = 1e-5
        let result = try BifactorCalibrator(options: options).calibrate(data, structure: structure, fixed: fixed)
        #expect(result.converged)
        #expect(result.parameterCount == 6 * 3)
        var squares = [0.0, 0.0, 0.0]
        for (j, entry) in result.items.enumerated() {
            let truth = Self.truth[j]
            if Self.held.contains(j) {
                #expect(entry.isFixed && entry.item == truth && entry.generalSlopeStandardError == nil)
                continue
            }
            #expect(!entry.isFixed)
            let estimates = [entry.item.generalSlope, entry.item.specificSlope, entry.item.intercept]
            let truths = [truth.generalSlope, truth.specificSlope, truth.intercept]
            let ses = [entry.generalSlopeStandardError, entry.specificSlopeStandardError, entry.interceptStandardError]
            for k in 0..<3 {
                squares[k] += (estimates[k] - truths[k]) * (estimates[k] - truths[k])
                let se = try #require(ses[k])
                #expect(abs(estimates[k] - truths[k]) < 4 * se, "\(entry.itemID) parameter \(k): \(estimates[k]) vs \(truths[k]) (SE \(se))")
            }
            if truth.specific == 2 { #expect(entry.item.specificSlope < 0) }
        }
        for k in 0..<3 { #expect((squares[k] / 6).squareRoot() < 0.15, "RMSE of parameter \(k): \((squares[k] / 6).squareRoot())") }
        // Holding items can only lower the likelihood against the free fit of the same data.
        let free = try BifactorCalibrator(options: options).calibrate(data, structure: structure)
        #expect(result.logLikelihood <= free.logLikelihood + 1e-6)
    }

    /// Refusals: the testlet model with fixed items, a fixed item on another factor than the structure's, every
    /// item fixed; fixed ids not in the data are named.
    @Test func refusalsAndWarnings() throws {
        let (data, structure) = try Self.sample(seed: 72, count: 600)
        let fixed = Dictionary(uniqueKeysWithValues: Self.held.map { (Self.ids[$0], Self.truth[$0]) })
        #expect(throws: PsychometricsError.self) { try BifactorCalibrator(testlet: true).calibrate(data, structure: structure, fixed: fixed) }
        var moved = fixed
        moved["i00"]!.specific = 1
        do {
            _ = try BifactorCalibrator().calibrate(data, structure: structure, fixed: moved)
            Issue.record("a fixed item on another factor was accepted")
        } catch let error as PsychometricsError {
            #expect(error.code == .invalidOptions && error.message.contains("fixed item i00's specific factor (f1) is not the structure's (f0)"))
        }
        let all = Dictionary(uniqueKeysWithValues: Self.ids.enumerated().map { ($1, Self.truth[$0]) })
        #expect(throws: PsychometricsError.self) { try BifactorCalibrator().calibrate(data, structure: structure, fixed: all) }
        var options = BifactorCalibrator.defaultOptions
        options.standardErrors = false
        options.maxCycles = 30
        var extra = fixed
        extra["not_in_data"] = BifactorItem(generalSlope: 1, intercept: 0)
        let result = try BifactorCalibrator(options: options).calibrate(data, structure: structure, fixed: extra)
        #expect(result.fixedItemsNotInData == ["not_in_data"])
        #expect(result.warnings.contains { $0.contains("1 fixed item is not among the calibrated items of the data (not written): not_in_data") })
    }
}
