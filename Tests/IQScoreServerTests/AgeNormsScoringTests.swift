import Foundation
import HummingbirdTesting
import IQScoreServer
import Norming
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

/// `POST /v1/score` with `"age"` under norms built by `iqscore norms build`: the IQ is the one of the person's
/// age group, an age is required and checked, and linear norms echo it.
@Suite("iqscore serve: age-specific norms", .timeLimit(.minutes(2)))
struct AgeNormsScoringTests {
    /// 1,200 persons aged 20–80 whose θ falls by 0.025 a year (−0.75 at 80, +0.75 at 20); deterministic.
    static var sample: String {
        var text = "person,age,theta\n"
        for k in 0..<1200 {
            let age = 20 + Double((k * 53) % 601) / 10
            let theta = -0.025 * (age - 50) + 0.8 * sin(Double(k) * 1.3) + 0.25 * sin(Double(k) * 0.23)
            text += "p\(k),\(age),\(String(format: "%.4f", theta))\n"
        }
        return text
    }

    /// A copy of the server fixtures with NORMS.json built from `sample` (ages 20–80, 5 years of extrapolation).
    static func directoryWithNorms() throws -> URL {
        let dir = try Fixtures.copyOfData()
        try sample.write(to: dir.appendingPathComponent("sample.csv"), atomically: true, encoding: .utf8)
        let build = try IQScoreCLI.run(
            [
                "norms", "build", "sample.csv", "--age-column", "age", "--theta-column", "theta", "--max-degrees", "2,1,-,-",
                "--name", "adults", "--norms-version", "1", "--extrapolation", "5", "--out", "NORMS.json"
            ], in: dir)
        try #require(build.status == 0, "\(build.stderr)")
        try #"{"name": "flat", "version": "2", "mean": 0.2, "sd": 0.9}"#.write(
            to: dir.appendingPathComponent("linear.json"), atomically: true, encoding: .utf8)
        return dir
    }

    static func service(_ dir: URL, norms: String, transformation: IQTransformation = .area) throws -> ScoringService {
        var configuration = ServerConfiguration(
            bankPath: dir.appendingPathComponent("bank.csv").path,
            normsPath: dir.appendingPathComponent(norms).path, iqTransformation: transformation)
        configuration.exposureControl = false
        return try ScoringService(configuration: configuration, limits: ServerLimits(), logger: Fixtures.quietLogger)
    }

    static let items = ["i0001", "i0002", "i0003", "i0004", "i0005", "i0006", "i0007", "i0008", "i0009", "i0010"]
    static let responses = [1, 1, 0, 1, 0, 1, 1, 0, 1, 0]

    static func body(age: String?) -> String {
        var text = Fixtures.scoreBody(id: "s", items: items, responses: responses)
        if let age { text.removeLast(); text += #","age":\#(age)}"# }
        return text
    }

    @Test("the IQ, interval and percentile are the norms' at the given age; older people with the same answers score higher")
    func ageSpecificScores() async throws {
        let dir = try Self.directoryWithNorms()
        defer { try? FileManager.default.removeItem(at: dir) }
        let service = try Self.service(dir, norms: "NORMS.json")
        // What the library gives for the same session: θ from the bank, then the norms at each age.
        let norms = try AgeNorms.load(json: dir.appendingPathComponent("NORMS.json").path)
        let scale = try IQScale()
        let scorer = try SessionScorer(bank: try ItemBank.load(csv: dir.appendingPathComponent("bank.csv").path), scale: scale)
        let estimate = try scorer.score(itemIDs: Self.items, responses: Self.responses).estimate
        let ageScale = AgeNormScale(norms: norms, settings: scale)
        try await Fixtures.application(service).test(.router) { client in
            var iqs: [Int] = []
            for age in [25.0, 50.0, 77.5] {
                let (status, json, _) = try await client.post("/v1/score", Self.body(age: "\(age)"))
                #expect(status == .ok, "\(json)")
                let expected = try ageScale.score(estimate, age: age)
                #expect(json["iq"]?.int == expected.iq && json["iq_low"]?.int == expected.low && json["iq_high"]?.int == expected.high, "age \(age)")
                #expect(json["percentile"]?.double == expected.percentile, "age \(age)")
                #expect(json["age"]?.numberText == (age == 77.5 ? "77.5" : "\(Int(age))"))
                #expect(json["norms"]?.string == "adults@1")
                #expect(json["flags"]?.array?.compactMap(\.string).contains("age_outside_norms") == false)
                iqs.append(json["iq"]?.int ?? 0)
            }
            // θ falls by 0.025 a year in the norm sample: the same θ is 0.6 above the mean of 25-year-olds'
            // and of 77.5-year-olds' at quite different places, about 20 IQ points apart.
            #expect(iqs[0] < iqs[1] && iqs[1] < iqs[2], "\(iqs)")
            #expect(iqs[2] - iqs[0] >= 15, "\(iqs)")
            // Beyond 80 + 5 years: scored at 80 and flagged.
            let (status, old, _) = try await client.post("/v1/score", Self.body(age: "90"))
            #expect(status == .ok)
            #expect(old["flags"]?.array?.compactMap(\.string).last == "age_outside_norms")
            #expect(old["iq"]?.int == (try ageScale.score(estimate, age: 80)).iq)
            let (_, bank, _) = try await client.get("/v1/bank")
            #expect(bank["norms"]?.string == "adults@1")
        }
    }

    @Test("age missing, not a number or out of 0–130: 422 invalid-request at /age; in a batch only that session is rejected")
    func ageProblems() async throws {
        let dir = try Self.directoryWithNorms()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Fixtures.application(try Self.service(dir, norms: "NORMS.json")).test(.router) { client in
            for (age, detail) in [
                (nil, #""age" is required: the norms adults@1 are age-specific (ages 20–80)"#),
                ("\"40\"", "age must be a number of years; found a string"),
                ("131", "age must be a number of years in 0–130; got '131'"),
                ("-1", "age must be a number of years in 0–130; got '-1'")
            ] as [(String?, String)] {
                let (status, json, _) = try await client.post("/v1/score", Self.body(age: age))
                #expect(status == .unprocessableContent, "\(age ?? "nil")")
                #expect(json["type"]?.string == "urn:iqscore:problem:invalid-request")
                #expect(json["field"]?.string == "/age")
                #expect(json["detail"]?.string == detail)
            }
            let batch = """
                {"sessions": [
                  {"session_id": "a", "item_ids": ["i0001", "i0002"], "responses": [1, 0], "age": 33},
                  {"session_id": "b", "item_ids": ["i0001", "i0002"], "responses": [1, 0]},
                  {"session_id": "c", "item_ids": ["i0001", "i0002"], "responses": [1, 0], "age": 70.25}
                ]}
                """
            let (status, json, _) = try await client.post("/v1/score/batch", batch)
            #expect(status == .ok)
            #expect(json["scores"]?.array?.map { $0["session_id"]?.string } == ["a", "c"])
            #expect(json["scores"]?.array?.map { $0["age"]?.numberText } == ["33", "70.25"])
            #expect(json["rejects"]?.array?.map { $0["field"]?.string } == ["/sessions/1/age"])
        }
    }

    @Test("linear norms: the age is checked and echoed, and the IQ does not depend on it")
    func linearNormsEchoAge() async throws {
        let dir = try Self.directoryWithNorms()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Fixtures.application(try Self.service(dir, norms: "linear.json")).test(.router) { client in
            let (_, without, _) = try await client.post("/v1/score", Self.body(age: nil))
            let (status, with, _) = try await client.post("/v1/score", Self.body(age: "61"))
            #expect(status == .ok)
            #expect(without["age"] == nil && with["age"]?.numberText == "61")
            #expect(with["iq"] == without["iq"] && with["percentile"] == without["percentile"] && with["norms"]?.string == "flat@2")
            let (bad, problem, _) = try await client.post("/v1/score", Self.body(age: "200"))
            #expect(bad == .unprocessableContent && problem["field"]?.string == "/age")
        }
    }
}

extension AgeNormsScoringTests {
    @Test("POST /v1/cat/next under age-specific norms: 422 at /age without one; the finished test's score carries it")
    func adaptiveTestWithAge() async throws {
        let dir = try Self.directoryWithNorms()
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = ServerConfiguration(
            bankPath: dir.appendingPathComponent("bank.csv").path,
            catConfigurationPath: dir.appendingPathComponent("cat.json").path,
            normsPath: dir.appendingPathComponent("NORMS.json").path)
        configuration.exposureControl = false
        let service = try ScoringService(configuration: configuration, limits: ServerLimits(), logger: Fixtures.quietLogger)
        try await Fixtures.application(service).test(.router) { client in
            let (status, problem, _) = try await client.post("/v1/cat/next", #"{"session_id": "c", "administered": []}"#)
            #expect(status == .unprocessableContent && problem["field"]?.string == "/age")
            // Answer items alternately wrong and right until the test stops; the stop carries a score at age 44.
            var administered: [String] = []
            for _ in 0..<200 {
                let body = #"{"session_id": "c", "age": 44, "administered": [\#(administered.joined(separator: ","))]}"#
                let (status, step, _) = try await client.post("/v1/cat/next", body)
                #expect(status == .ok, "\(step)")
                if step["action"]?.string == "stop" {
                    #expect(step["score"]?["age"]?.numberText == "44")
                    #expect(step["score"]?["norms"]?.string == "adults@1")
                    return
                }
                let item = try #require(step["item_id"]?.string)
                administered.append(#"{"item_id": "\#(item)", "response": \#(administered.count % 2)}"#)
            }
            Issue.record("the adaptive test did not stop within 200 steps")
        }
    }
}
