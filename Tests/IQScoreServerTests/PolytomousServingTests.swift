import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IQScoreServer
import Psychometrics
import PsychometricsIO
import Testing

/// `iqscore serve` on a bank with items scored in more than two categories (issue 27): responses 0…K−1 per
/// item, the library's scores, problems naming the field and what the item allows, adaptive steps and forms.
@Suite("iqscore serve with graded items beside 0/1 items", .timeLimit(.minutes(2)))
struct PolytomousServingTests {
    /// The shared 2PL bank with its first ten items made graded (4 categories: thresholds b − 1, b, b + 1.2).
    static func mixedDirectory() throws -> URL {
        let directory = try Fixtures.copyOfData()
        var bank = try ItemBank.load(csv: directory.appendingPathComponent("bank.csv").path)
        for j in 0..<10 {
            let p = bank.items[j].parameters
            bank.items[j].categoryModel = try CategoryBankItem(
                kind: .graded, values: [p.discrimination, p.difficulty - 1, p.difficulty, p.difficulty + 1.2])
        }
        try Data(bank.csv().utf8).write(to: directory.appendingPathComponent("mixed.csv"))
        return directory
    }

    @Test("scores equal SessionScorer's; a category beyond the item's is a 422 naming /responses/k and the item's range")
    func score() async throws {
        let directory = try Self.mixedDirectory()
        let service = try Fixtures.service(in: directory, bank: "mixed.csv")
        let bank = try ItemBank.load(csv: directory.appendingPathComponent("mixed.csv").path, categoryItems: .read())
        let scorer = try SessionScorer(bank: bank, scale: IQScale())
        try await Fixtures.application(service).test(.router) { client in
            let (_, info, _) = try await client.get("/v1/bank")
            #expect(info["model"]?.string == "mixed")
            let items = ["i0001", "i0002", "i0011", "i0012"], responses = [3, 1, 1, 0]
            let (status, json, _) = try await client.post("/v1/score", Fixtures.scoreBody(id: "g", items: items, responses: responses))
            #expect(status == .ok, "\(json)")
            let expected = try scorer.score(itemIDs: items, responses: responses)
            #expect(json["theta"]?.double == (expected.estimate.theta * 10_000).rounded(.toNearestOrAwayFromZero) / 10_000)
            #expect(json["n_correct"]?.int == 5)
            try await ProblemTests.expectProblem(
                client, "/v1/score", Fixtures.scoreBody(id: "x", items: ["i0011", "i0001"], responses: [1, 4]),
                status: .unprocessableContent, kind: "invalid-response", field: "/responses/1",
                detail: "a response to item 'i0001' must be one of its categories 0…3; got 4")
            try await ProblemTests.expectProblem(
                client, "/v1/score", Fixtures.scoreBody(id: "x", items: ["i0001", "i0011"], responses: [2, 2]),
                status: .unprocessableContent, kind: "invalid-response", field: "/responses/1",
                detail: "a response to item 'i0011' must be 0 or 1; got 2")
            try await ProblemTests.expectProblem(
                client, "/v1/score", #"{"item_ids": ["i0001"], "responses": [256]}"#,
                status: .unprocessableContent, kind: "invalid-response", field: "/responses/0")
        }
    }

    @Test("an adaptive test takes a graded item's category; a form lists it as the 2PL of its peak information")
    func adaptiveAndForms() async throws {
        let directory = try Self.mixedDirectory()
        let service = try Fixtures.service(in: directory, bank: "mixed.csv")
        try await Fixtures.application(service).test(.router) { client in
            var history: [(String, Int)] = []
            for _ in 0..<8 {
                let (status, json, _) = try await client.post("/v1/cat/next", CATNextTests.body("poly", history))
                #expect(status == .ok, "\(json)")
                guard json["action"]?.string == "administer", let item = json["item_id"]?.string else { break }
                // The highest category of a graded item, 1 of a 0/1 item.
                history.append((item, Int(item.dropFirst())! <= 10 ? 3 : 1))
            }
            #expect(history.count == 8)
            try await ProblemTests.expectProblem(
                client, "/v1/cat/next", CATNextTests.body("bad", [("i0001", 4)]),
                status: .unprocessableContent, kind: "invalid-response", field: "/administered/0/response")
            let (status, form, _) = try await client.post("/v1/forms", "{}")
            #expect(status == .ok, "\(form)")
        }
    }
}
