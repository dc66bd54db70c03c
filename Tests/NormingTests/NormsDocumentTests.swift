import Foundation
@testable import Norming
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("NORMS.json: round trip and strict reading")
struct NormsDocumentTests {
    static func build(_ method: NormingMethod) throws -> NormsBuild {
        var rng = SeededGenerator(seed: 77)
        let sample = NormingRecoveryPopulation.sample(count: 1500, selective: true, using: &rng)
        var options = NormsBuildOptions(name: "adults", version: "2026-11")
        options.method = method
        options.extrapolation = 1.5
        options.continuous.maximumDegrees = SHASHDegrees(location: 3, logScale: 1, skewness: 0, logTailWeight: nil)
        options.bands.minimumEffectiveN = 300
        return try NormsBuilder.build(sample, margins: NormingRecoveryPopulation.margins, options: options)
    }

    static func temporary(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("norms-\(UUID().uuidString).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("continuous and banded documents round-trip exactly: decode(encode(d)) == d and the text is identical", arguments: NormingMethod.allCases)
    func roundTrip(method: NormingMethod) throws {
        let build = try Self.build(method)
        let text = try build.document.jsonText()
        let decoded = try NormsDocument.decode(from: Data(text.utf8), file: "NORMS.json")
        #expect(decoded == build.document)
        #expect(try decoded.jsonText() == text)
        #expect(try decoded.ageNorms() == build.norms)
        #expect(build.document.format == "iqscore-norms/1")
        #expect(build.document.createdBy == "iqscore \(iqscoreVersion)")
        #expect(build.document.weighting.method == "raking")
        #expect(build.document.sample.n == 1500)
        #expect(build.document.ages.extrapolation == 1.5)
        // The loader of either kind reads it from a file.
        let path = try Self.temporary(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try AgeNorms.load(json: path) == build.norms)
    }

    @Test("the linear {name, version, mean, sd} norms still load, as linear AgeNorms; Norms.load refuses a document with a reason")
    func linearStillLoads() throws {
        let path = try Self.temporary(#"{"name": "adults", "version": "2024", "mean": 0.1, "sd": 0.95}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try AgeNorms.load(json: path) == .linear(Norms(name: "adults", version: "2024", mean: 0.1, sd: 0.95)))
        let document = try Self.temporary(try Self.build(.bands).document.jsonText())
        defer { try? FileManager.default.removeItem(atPath: document) }
        #expect(
            throws: InputError(
                file: document,
                message:
                    #"this is an age-specific norms document ("format", as `iqscore norms build` writes); here linear norms are needed, e.g. {"name": "adults", "version": "2024", "mean": 0, "sd": 1}"#
            )
        ) {
            try Norms.load(json: document)
        }
    }

    /// The document's text with `old` replaced by `new` (which must occur once).
    static func edited(_ text: String, _ old: String, _ new: String) throws -> Data {
        #expect(text.components(separatedBy: old).count == 2, "'\(old)' must occur once")
        return Data(text.replacingOccurrences(of: old, with: new).utf8)
    }

    @Test("strict: an unknown key, a wrong type, a fraction for a count, out-of-range values and inconsistent coefficients are errors naming the key")
    func strictRejection() throws {
        let text = try Self.build(.continuous).document.jsonText()
        func problem(_ data: Data) -> String {
            do { _ = try NormsDocument.decode(from: data, file: "N.json"); return "accepted" } catch { return "\(error)" }
        }
        let unknown = problem(try Self.edited(text, #""extrapolation" : 1.5"#, #""extrapolation" : 1.5, "extrapolate" : 2"#))
        #expect(
            unknown.hasPrefix("N.json:") && unknown.hasSuffix(#"error: unknown key "extrapolate" in ages (known: minimum, maximum, extrapolation)"#),
            "\(unknown)")
        #expect(
            problem(try Self.edited(text, #""name" : "adults""#, #""name" : 7"#)) == #"N.json: error: "name" has the wrong type: expected a string"#)
        let fraction = problem(try Self.edited(text, #""n" : 1500"#, #""n" : 1500.5"#))
        #expect(fraction.hasSuffix(#"error: "sample.n" must be a whole number, got 1500.5"#), "\(fraction)")
        #expect(
            problem(try Self.edited(text, #""extrapolation" : 1.5"#, #""extrapolation" : -1"#))
                == #"N.json: error: "ages.extrapolation" must be in [0, 130], got -1.0"#)
        #expect(
            problem(
                try Self.edited(text, #""format" : "iqscore-norms\/1""#.replacingOccurrences(of: "\\/", with: "/"), #""format" : "iqscore-norms/9""#))
                == #"N.json: error: "format" is 'iqscore-norms/9'; this iqscore reads iqscore-norms/1"#)
        #expect(problem(try Self.edited(text, #""method" : "continuous""#, #""method" : "bands""#)).contains(#"method bands needs "bands""#))
        // One μ coefficient too many for degree 3.
        let degrees = try NormsDocument.decode(from: Data(text.utf8), file: "N.json").model!.degrees
        #expect(degrees.mu == 3 || degrees.mu < 3)
        let mu = try NormsDocument.decode(from: Data(text.utf8), file: "N.json").model!.coefficients.mu
        var longer = try NormsDocument.decode(from: Data(text.utf8), file: "N.json")
        longer.model!.coefficients.mu = mu + [0.01]
        #expect(
            problem(Data(try longer.jsonText().utf8))
                == "N.json: error: \"model.coefficients.mu\" must have \(mu.count) values (degree \(degrees.mu)), got \(mu.count + 1)")
        var reversed = try NormsDocument.decode(from: Data(text.utf8), file: "N.json")
        reversed.ages.maximum = 10
        let reversedText = try reversed.jsonText()
        #expect(
            problem(Data(reversedText.utf8))
                == "N.json: error: \"ages.maximum\" must be greater than \"ages.minimum\", got \(reversed.ages.minimum)–10.0")
    }
}
