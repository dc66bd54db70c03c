import Foundation
import HummingbirdTesting
import IQScoreServer
import Testing
import TestSupport

/// A session scored by the server equals `iqscore score`'s row for it: the CLI binary is run on the same bank and
/// sessions, and every field is compared as text.
@Suite("iqscore serve: POST /v1/score equals iqscore score", .timeLimit(.minutes(2)))
struct ScoreParityTests {
    /// Runs `iqscore score` on the fixture's sessions; returns the CSV header and rows, and the JSON Lines objects.
    static func cliScores(_ extra: [String] = []) throws -> (header: [String], rows: [String: [String]], jsonl: [String: TestJSON]) {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let csv = try IQScoreCLI.run(["score", "responses.csv", "--bank", "bank.csv", "--out", "scores.csv"] + extra, in: dir)
        #expect(csv.status == 0, "\(csv.stderr)")
        let jsonl = try IQScoreCLI.run(
            ["score", "responses.csv", "--bank", "bank.csv", "--out", "scores.jsonl", "--format", "jsonl"] + extra, in: dir)
        #expect(jsonl.status == 0, "\(jsonl.stderr)")
        let lines = try String(contentsOf: dir.appendingPathComponent("scores.csv"), encoding: .utf8).split(separator: "\n").map(String.init)
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var rows: [String: [String]] = [:]
        for line in lines.dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            rows[fields[0]] = fields
        }
        var objects: [String: TestJSON] = [:]
        for line in try String(contentsOf: dir.appendingPathComponent("scores.jsonl"), encoding: .utf8).split(separator: "\n") {
            let object = try TestJSON.parse(String(line))
            objects[object["session_id"]?.string ?? ""] = object
        }
        return (header, rows, objects)
    }

    /// Each CSV column of `row` against the server's JSON, as text.
    static func compare(_ json: TestJSON, csvHeader header: [String], row: [String]) {
        for (column, value) in zip(header, row) {
            let fixed = [
                "session_id", "n_items", "n_correct", "theta", "se", "iq", "iq_low", "iq_high", "percentile", "method", "flags", "norms", "n_unscored"
            ]
            if !fixed.contains(column) {
                let domain = String(column[..<column.lastIndex(of: "_")!])
                let count = column.hasSuffix("_correct") ? "correct" : "answered"
                #expect(json["domains"]?[domain]?[count]?.numberText == value, "\(row[0]) \(column)")
            } else if column == "flags" {
                #expect(json["flags"]?.array?.compactMap(\.string).joined(separator: ";") == value, "\(row[0]) flags")
            } else if ["session_id", "method", "norms"].contains(column) {
                #expect(json[column]?.string == value, "\(row[0]) \(column)")
            } else {
                #expect(json[column]?.numberText == value, "\(row[0]) \(column): server \(json[column]?.description ?? "nil"), CLI \(value)")
            }
        }
    }

    @Test("every session of a 40-session file: the same fields and numbers as the CSV row, the JSON Lines object plus bank_version")
    func eachSession() async throws {
        let (header, rows, jsonl) = try Self.cliScores()
        let sessions = try Fixtures.sessions(try Fixtures.dataDirectory().appendingPathComponent("responses.csv"))
        #expect(sessions.count == 40 && rows.count == 40)
        let service = try Fixtures.service()
        try await Fixtures.application(service).test(.router) { client in
            for session in sessions {
                let (status, json, _) = try await client.post(
                    "/v1/score", Fixtures.scoreBody(id: session.id, items: session.items, responses: session.responses))
                #expect(status == .ok)
                Self.compare(json, csvHeader: header, row: try #require(rows[session.id]))
                #expect(json.removing("bank_version") == jsonl[session.id], "\(session.id)")
                #expect(json["bank_version"]?.string == service.state.bankVersion)
            }
        }
    }

    @Test("the batch endpoint scores the same sessions to the same numbers")
    func batch() async throws {
        let (header, rows, _) = try Self.cliScores()
        let sessions = try Fixtures.sessions(try Fixtures.dataDirectory().appendingPathComponent("responses.csv"))
        let body =
            #"{"sessions": ["# + sessions.map { Fixtures.scoreBody(id: $0.id, items: $0.items, responses: $0.responses) }.joined(separator: ",")
            + "]}"
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            let (status, json, _) = try await client.post("/v1/score/batch", body)
            #expect(status == .ok)
            let scores = try #require(json["scores"]?.array)
            #expect(scores.count == 40)
            #expect(json["rejects"] == .array([]))
            for (k, score) in scores.enumerated() {
                #expect(score["index"]?.int == k)
                Self.compare(score, csvHeader: header, row: try #require(rows[sessions[k].id]))
            }
        }
    }

    @Test("another estimator: \"method\": \"wle\" equals iqscore score --method wle")
    func method() async throws {
        let (header, rows, _) = try Self.cliScores(["--method", "wle"])
        let sessions = try Fixtures.sessions(try Fixtures.dataDirectory().appendingPathComponent("responses.csv")).prefix(5)
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            for session in sessions {
                let (_, json, _) = try await client.post(
                    "/v1/score", Fixtures.scoreBody(id: session.id, items: session.items, responses: session.responses, method: "wle"))
                Self.compare(json, csvHeader: header, row: try #require(rows[session.id]))
            }
        }
    }
}
