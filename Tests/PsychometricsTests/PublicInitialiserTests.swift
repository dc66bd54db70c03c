import Foundation
import Psychometrics
import Testing

/// Caller mistakes throw, as the DocC overview promises (issue 26, item 14): these initialisers trapped with
/// SIGILL (preconditions), and `JSONDecoder` skipped their checks (a slope of −2 decoded and computed silently).
@Suite("Public initialisers throw on bad values, and decoding checks what they check")
struct PublicInitialiserTests {
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    @Test("ScaleTransformation: a slope that is not positive and finite, an intercept that is not finite")
    func scaleTransformation() throws {
        for (slope, intercept) in [(-1.0, 0.0), (0, 0), (.nan, 0), (.infinity, 0), (1, .nan), (1, -.infinity)] {
            #expect(throws: PsychometricsError.self) { try ScaleTransformation(slope: slope, intercept: intercept) }
        }
        #expect(throws: DecodingError.self) { try Self.decode(ScaleTransformation.self, #"{"slope": -2, "intercept": 0}"#) }
        let t = try Self.decode(ScaleTransformation.self, #"{"slope": 1.25, "intercept": 0.5}"#)
        #expect(t == (try ScaleTransformation(slope: 1.25, intercept: 0.5)))
        #expect(t.inverse.slope == 0.8 && t.inverse.intercept == -0.4)
    }

    @Test("BetaPrior and LogNormalPrior: shapes below 1, a zero SD, an option count of 1")
    func priors() throws {
        do {
            _ = try BetaPrior(alpha: 0.5, beta: 0.5)
            Issue.record("Beta(0.5, 0.5) was accepted")
        } catch {
            #expect(
                error.message
                    == "invalid Beta prior: the Beta prior's alpha must be in [1, 1000], got 0.5; the Beta prior's beta must be in [1, 1000], got 0.5"
            )
        }
        #expect(throws: PsychometricsError.self) { try BetaPrior.centred(onOptions: 1) }
        #expect(throws: PsychometricsError.self) { try BetaPrior.centred(onOptions: 4, weight: -10) }
        #expect(try BetaPrior.centred(onOptions: 5).mode.isApproximatelyEqual(to: 0.2))
        #expect(throws: PsychometricsError.self) { try LogNormalPrior(meanLog: 0, sdLog: 0) }
        #expect(throws: PsychometricsError.self) { try LogNormalPrior(meanLog: .nan, sdLog: 1) }
        #expect(throws: DecodingError.self) { try Self.decode(BetaPrior.self, #"{"alpha": 0.5, "beta": 3}"#) }
        #expect(throws: DecodingError.self) { try Self.decode(LogNormalPrior.self, #"{"meanLog": 0, "sdLog": -1}"#) }
        #expect(try Self.decode(BetaPrior.self, #"{"alpha": 5, "beta": 17}"#) == .standard)
    }

    @Test("QuadratureGrid and LinkingQuadrature: one point, a zero bound or SD, mismatched or negative weights")
    func grids() throws {
        for (count, bound, sd) in [(1, 6.0, 1.0), (0, 6, 1), (-5, 6, 1), (61, 0, 1), (61, .infinity, 1), (61, 6, 0), (200_000, 6, 1)] {
            #expect(throws: PsychometricsError.self) { try QuadratureGrid(count: count, bound: bound, sd: sd) }
        }
        #expect(try QuadratureGrid(count: 2, bound: 1).points == [-1, 1])
        #expect(throws: PsychometricsError.self) { try LinkingQuadrature(points: [], weights: []) }
        #expect(throws: PsychometricsError.self) { try LinkingQuadrature(points: [0, 1], weights: [1]) }
        #expect(throws: PsychometricsError.self) { try LinkingQuadrature(points: [0, 1], weights: [1, -1]) }
        #expect(throws: PsychometricsError.self) { try LinkingQuadrature(points: [0, .nan], weights: [1, 1]) }
        #expect(throws: PsychometricsError.self) { try LinkingQuadrature(points: [0, 1], weights: [0, 0]) }
        #expect(throws: PsychometricsError.self) { try LinkingQuadrature.standardNormal(count: 1) }
        #expect(throws: DecodingError.self) { try Self.decode(LinkingQuadrature.self, #"{"points": [0, 1], "weights": [1, -1]}"#) }
        #expect(try LinkingQuadrature(points: [0, 1], weights: [1, 3]).weights == [0.25, 0.75])
    }
}
