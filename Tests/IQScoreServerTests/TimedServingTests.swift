import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Integrity
import IQScoreServer
import Psychometrics
import PsychometricsIO
import Testing

/// `iqscore serve` with response times (issue 30): `seconds` in `POST /v1/score` (both readers), the batch and the
/// adaptive step; the score's `times` member is `TimedSessionScorer`'s; bad times and times for a bank without a
/// time model are 422s naming the field.
@Suite("iqscore serve with response times", .timeLimit(.minutes(2)))
struct TimedServingTests {
    /// The shared bank with a response-time model (items' β, α drawn with a fixed seed; σ_τ 0.3, ρ 0.4).
    static func timedDirectory() throws -> (URL, ItemBank) {
        let directory = try Fixtures.copyOfData()
        var bank = try ItemBank.load(csv: directory.appendingPathComponent("bank.csv").path)
        var rng = SeededGenerator(seed: 30)
        let items = ResponseTimeSimulator.drawItems(count: bank.items.count, using: &rng)
        for j in bank.items.indices { bank.items[j].timeModel = items[j] }
        bank.speedPopulation = try SpeedAccuracyPopulation(speedSD: 0.3, correlation: 0.4)
        try Data(bank.csv().utf8).write(to: directory.appendingPathComponent("timed.csv"))
        return (directory, try ItemBank.load(csv: directory.appendingPathComponent("timed.csv").path))
    }

    static func timedBody(id: String, items: [String], responses: [Int], seconds: [String]) -> String {
        #"{"session_id":"\#(id)","item_ids":[\#(items.map { "\"\($0)\"" }.joined(separator: ","))],"responses":[\#(responses.map(String.init).joined(separator: ","))],"seconds":[\#(seconds.joined(separator: ","))]}"#
    }

    @Test("scores with times equal TimedSessionScorer's, by the fast and the strict reader alike; bad times are 422s at their position")
    func score() async throws {
        let (directory, bank) = try Self.timedDirectory()
        let service = try Fixtures.service(in: directory, bank: "timed.csv")
        let timed = try TimedSessionScorer(scorer: SessionScorer(bank: bank, scale: IQScale()))
        let items = Array(bank.items.prefix(12).map(\.itemID)), responses = [1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0]
        let seconds = ["12.5", "30", "null", "8.25", "44.125", "17", "21.5", "9", "0.9", "60", "15.75", "27"]
        try await Fixtures.application(service).test(.router) { client in
            let (_, info, _) = try await client.get("/v1/bank")
            #expect(info["response_times"] == .bool(true))
            let fastBody = Self.timedBody(id: "t1", items: items, responses: responses, seconds: seconds)
            let (status, json, _) = try await client.post("/v1/score", fastBody)
            #expect(status == .ok, "\(json)")
            let expected = try timed.score(itemIDs: items, responses: responses, seconds: seconds.map { Double($0) })
            func rounded(_ x: Double) -> Double { (x * 10_000).rounded(.toNearestOrAwayFromZero) / 10_000 }
            #expect(json["theta"]?.double == rounded(expected.score.estimate.theta))
            #expect(json["se"]?.double == rounded(expected.score.estimate.standardError))
            let times = json["times"]
            #expect(times?["n_timed"]?.int == 11 && times?["rapid_guesses"]?.int == expected.times.rapidGuesses)
            #expect(times?["speed"]?.double == rounded(expected.times.speed!))
            #expect(times?["lt_p"]?.double == rounded(expected.times.timeFitPValue!))
            // The same session by the strict reader (an escaped character in the id): the same body.
            let strictBody = fastBody.replacingOccurrences(of: #""t1""#, with: #""\u00741""#)
            let strict = try await client.execute(uri: "/v1/score", method: .post, body: Fixtures.body(strictBody))
            let fast = try await client.execute(uri: "/v1/score", method: .post, body: Fixtures.body(fastBody))
            #expect(strict.status == .ok && strict.body == fast.body)
            // Times lower θ's SE (ρ = 0.4: collateral information) against the same session without them.
            let (_, plain, _) = try await client.post("/v1/score", Fixtures.scoreBody(id: "t1", items: items, responses: responses))
            #expect(plain["times"] == nil && json["se"]!.double! < plain["se"]!.double!)

            try await ProblemTests.expectProblem(
                client, "/v1/score", Self.timedBody(id: "x", items: items, responses: responses, seconds: ["1", "2"]),
                status: .unprocessableContent, kind: "length-mismatch", field: "/seconds")
            for bad in ["0", "-2", "100000", "\"12\"", "true"] {
                var list = seconds
                list[3] = bad
                try await ProblemTests.expectProblem(
                    client, "/v1/score", Self.timedBody(id: "x", items: items, responses: responses, seconds: list),
                    status: .unprocessableContent, kind: "invalid-request", field: "/seconds/3")
            }
            // The batch: each session with its own times, one with a bad time rejected alone.
            let batch =
                #"{"sessions":[\#(fastBody),\#(Self.timedBody(id: "b", items: items, responses: responses, seconds: seconds.map { $0 == "30" ? "-1" : $0 }))]}"#
            let (batchStatus, batchJSON, _) = try await client.post("/v1/score/batch", batch)
            #expect(batchStatus == .ok, "\(batchJSON)")
            #expect(batchJSON["scores"]?[0]?["times"]?["speed"]?.double == rounded(expected.times.speed!))
            #expect(batchJSON["rejects"]?[0]?["field"]?.string == "/sessions/1/seconds/1")
        }
    }

    @Test("times for a bank without a response-time model are a 422 naming seconds; the adaptive step carries times into its final score")
    func untimedBankAndAdaptive() async throws {
        let service = try Fixtures.service()
        try await Fixtures.application(service).test(.router) { client in
            let (_, info, _) = try await client.get("/v1/bank")
            #expect(info["response_times"] == .bool(false))
            try await ProblemTests.expectProblem(
                client, "/v1/score", Self.timedBody(id: "x", items: ["i0001"], responses: [1], seconds: ["3"]),
                status: .unprocessableContent, kind: "invalid-request", field: "/seconds")
            try await ProblemTests.expectProblem(
                client, "/v1/cat/next", #"{"session_id":"c","administered":[{"item_id":"i0001","response":1,"seconds":4.5}]}"#,
                status: .unprocessableContent, kind: "invalid-request", field: "/administered/0/seconds")
        }
        let (directory, _) = try Self.timedDirectory()
        let timedService = try Fixtures.service(in: directory, bank: "timed.csv")
        try await Fixtures.application(timedService).test(.router) { client in
            var administered: [String] = []
            var final: TestJSON?
            for step in 0..<60 {
                let body = #"{"session_id":"cat-times","administered":[\#(administered.joined(separator: ","))]}"#
                let (status, json, _) = try await client.post("/v1/cat/next", body)
                #expect(status == .ok, "\(json)")
                if json["action"]?.string == "stop" { final = json; break }
                guard let item = json["item_id"]?.string else { break }
                administered.append(
                    #"{"item_id":"\#(item)","response":\#(step % 3 == 0 ? 0 : 1),"seconds":\#(step % 4 == 0 ? "null" : "\(20 + step).5")}"#)
            }
            let score = try #require(final?["score"])
            #expect(score["times"]?["n_timed"]?.int == administered.filter { !$0.contains("null") }.count)
            try await ProblemTests.expectProblem(
                client, "/v1/cat/next", #"{"session_id":"c","administered":[{"item_id":"i0001","response":1,"seconds":0}]}"#,
                status: .unprocessableContent, kind: "invalid-request", field: "/administered/0/seconds")
        }
    }
}
