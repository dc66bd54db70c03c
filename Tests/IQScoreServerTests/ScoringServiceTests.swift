import Foundation
import Hummingbird
import HummingbirdTesting
@testable import IQScoreServer
import Testing

@Suite("iqscore serve: every endpoint answers", .timeLimit(.minutes(2)))
struct ScoringServiceTests {
    @Test("GET /v1/bank: version = first 16 hex digits of the bank file's SHA-256, items, model, domains")
    func bank() async throws {
        let service = try Fixtures.service()
        let bytes = try Data(contentsOf: try Fixtures.dataDirectory().appendingPathComponent("bank.csv"))
        try await Fixtures.application(service).test(.router) { client in
            let (status, json, headers) = try await client.get("/v1/bank")
            #expect(status == .ok)
            #expect(json["sha256"]?.string == BankVersion.sha256Hex(Array(bytes)))
            #expect(json["bank_version"]?.string == String(BankVersion.sha256Hex(Array(bytes)).prefix(16)))
            #expect(headers[.init("X-Bank-Version")!] == json["bank_version"]?.string)
            #expect(json["n_items"]?.int == 120)
            #expect(json["model"]?.string == "2pl")
            #expect(json["domains"] == .array([.string("a"), .string("b"), .string("c")]))
            #expect(json["adaptive"] == .bool(true))
            #expect(json["default_blueprint"] == .bool(true))
        }
    }

    @Test("GET /healthz and GET /metrics: bank-version info, request counts by route and status, latency histogram, problems by kind")
    func healthAndMetrics() async throws {
        let service = try Fixtures.service()
        let version = service.state.bankVersion
        try await Fixtures.application(service).test(.router) { client in
            let (status, json, _) = try await client.get("/healthz")
            #expect(status == .ok)
            let exposure = service.state.exposureControl
            #expect(exposure == "off (exposure control turned off)")
            #expect(json == .object([("status", .string("ok")), ("bank_version", .string(version)), ("exposure", .string(exposure))]))
            _ = try await client.post("/v1/score", Fixtures.scoreBody(id: "m", items: ["i0001"], responses: [1]))
            _ = try await client.post("/v1/score", Fixtures.scoreBody(id: "m", items: ["nope"], responses: [1]))
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = String(buffer: response.body)
            #expect(text.contains(#"iqscore_bank_info{bank_version="\#(version)",n_items="120"} 1"#))
            #expect(text.contains(#"iqscore_http_requests_total{route="/v1/score",status="200"} 1"#))
            #expect(text.contains(#"iqscore_http_requests_total{route="/v1/score",status="422"} 1"#))
            #expect(text.contains(#"iqscore_http_requests_total{route="/healthz",status="200"} 1"#))
            #expect(text.contains(#"iqscore_http_request_duration_seconds_count{route="/v1/score"} 2"#))
            #expect(text.contains(#"iqscore_problems_total{kind="unknown-item"} 1"#))
        }
    }

    @Test("GET /openapi.json serves the committed document")
    func openAPI() async throws {
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == OpenAPIDocument.json)
            let json = try TestJSON.parse(response.body)
            #expect(json["openapi"]?.string == "3.1.0")
        }
    }

    @Test("POST /v1/score: the score command's fields, then bank_version; a method per request")
    func score() async throws {
        let service = try Fixtures.service()
        try await Fixtures.application(service).test(.router) { client in
            let (status, json, headers) = try await client.post(
                "/v1/score", Fixtures.scoreBody(id: "s1", items: ["i0001", "i0002", "i0003"], responses: [1, 0, 1]))
            #expect(status == .ok)
            #expect(headers[.contentType] == "application/json")
            #expect(
                json.keys == [
                    "session_id", "n_items", "n_correct", "theta", "se", "iq", "iq_low", "iq_high", "percentile", "method",
                    "flags", "norms", "domains", "bank_version"
                ])
            #expect(json["session_id"]?.string == "s1")
            #expect(json["n_items"]?.int == 3)
            #expect(json["n_correct"]?.int == 2)
            #expect(json["method"]?.string == "eap")
            #expect(json["bank_version"]?.string == service.state.bankVersion)
            let (_, ml, _) = try await client.post(
                "/v1/score", Fixtures.scoreBody(id: nil, items: ["i0001", "i0002", "i0003"], responses: [1, 0, 1], method: "ml"))
            #expect(ml["method"]?.string == "ml")
            #expect(ml["session_id"] == .null)
            #expect(ml["theta"] != json["theta"])
        }
    }

    @Test("a Python back end's JSON: true/false responses and integer session ids, in score, batch and cat/next (issue 26, item 15; were 422)")
    func pythonJSON() async throws {
        let service = try Fixtures.service()
        try await Fixtures.application(service).test(.router) { client in
            let (_, plain, _) = try await client.post(
                "/v1/score", #"{"session_id": "8812", "item_ids": ["i0001", "i0002", "i0003"], "responses": [1, 0, 1]}"#)
            let (status, json, _) = try await client.post(
                "/v1/score", #"{"session_id": 8812, "item_ids": ["i0001", "i0002", "i0003"], "responses": [true, false, true]}"#)
            #expect(status == .ok, "\(json)")
            #expect(json == plain)
            #expect(json["session_id"]?.string == "8812")
            let (batch, scores, _) = try await client.post(
                "/v1/score/batch",
                #"{"sessions": [{"session_id": -4, "item_ids": ["i0001"], "responses": [false]}, {"session_id": 7, "item_ids": ["i0001"], "responses": [2]}]}"#
            )
            #expect(batch == .ok)
            #expect(scores["scores"]?[0]?["session_id"]?.string == "-4", "\(scores)")
            #expect(scores["rejects"]?[0]?["session_id"]?.string == "7", "\(scores)")
            let history = #""administered": [{"item_id": "i0001", "response": true}]}"#
            let (_, byString, _) = try await client.post(
                "/v1/cat/next",
                #"{"session_id": "31", "#.replacingOccurrences(of: "true", with: "1") + history.replacingOccurrences(of: "true", with: "1"))
            let (next, byNumber, _) = try await client.post("/v1/cat/next", #"{"session_id": 31, "# + history)
            #expect(next == .ok && byNumber == byString, "\(byNumber)")
            // Still refused: fractions, exponents, strings for responses.
            for (body, field) in [
                (#"{"session_id": 1.5, "item_ids": ["i0001"], "responses": [1]}"#, "/session_id"),
                (#"{"session_id": 1e3, "item_ids": ["i0001"], "responses": [1]}"#, "/session_id"),
                (#"{"item_ids": ["i0001"], "responses": ["1"]}"#, "/responses/0")
            ] {
                let (status, problem, _) = try await client.post("/v1/score", body)
                #expect(status == .unprocessableContent && problem["field"]?.string == field, "\(body): \(problem)")
            }
        }
    }

    @Test("POST /v1/score/batch: scores in order with their index; one bad session is rejected alone")
    func batch() async throws {
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            let body = """
                {"sessions": [
                  {"session_id": "ok1", "item_ids": ["i0001", "i0002"], "responses": [1, 0]},
                  {"session_id": "bad-item", "item_ids": ["i0001", "x9"], "responses": [1, 0]},
                  {"session_id": "bad-response", "item_ids": ["i0001"], "responses": [1.0]},
                  {"session_id": "bad-shape", "item_ids": "i0001", "responses": [1]},
                  {"session_id": "ok2", "item_ids": ["i0003"], "responses": [0]},
                  {"session_id": "repeat", "item_ids": ["i0003", "i0003"], "responses": [0, 1]},
                  {"session_id": "too-large", "item_ids": ["i0001"], "responses": [1e400]}
                ]}
                """
            let response = try await client.execute(uri: "/v1/score/batch", method: .post, body: Fixtures.body(body))
            // 1e400 is not a number a double holds: the whole body is refused, as any malformed JSON.
            #expect(response.status == .badRequest)
            #expect(try TestJSON.parse(response.body)["type"]?.string == "urn:iqscore:problem:malformed-json")
            let fine = body.replacingOccurrences(of: "1e400", with: "2")
            let (status, json, _) = try await client.post("/v1/score/batch", fine)
            #expect(status == .ok)
            let scores = try #require(json["scores"]?.array)
            #expect(scores.map { $0["session_id"]?.string } == ["ok1", "ok2"])
            #expect(scores.map { $0["index"]?.int } == [0, 4])
            let rejects = try #require(json["rejects"]?.array)
            #expect(rejects.map { $0["index"]?.int } == [1, 2, 3, 5, 6])
            #expect(
                rejects.map { $0["kind"]?.string } == ["unknown-item", "invalid-response", "invalid-request", "repeated-item", "invalid-response"])
            #expect(
                rejects.map { $0["field"]?.string } == [
                    "/sessions/1/item_ids/1", "/sessions/2/responses/0", "/sessions/3/item_ids",
                    "/sessions/5/item_ids/1", "/sessions/6/responses/0"
                ])
            #expect(rejects[0]["session_id"]?.string == "bad-item")
            #expect(rejects[0]["reason"]?.string == "unknown item id 'x9' (not in the bank)")
        }
    }

    @Test("POST /v1/forms: the default blueprint, or one in the body; the same seed gives the same form")
    func forms() async throws {
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            let (status, json, _) = try await client.post("/v1/forms", #"{"seed": 7}"#)
            #expect(status == .ok)
            let items = try #require(json["items"]?.array)
            #expect(items.count == 12)
            for domain in ["a", "b", "c"] { #expect(items.filter { $0["domain"]?.string == domain }.count == 4) }
            #expect(items.first?.keys == ["item_id", "domain", "a", "b", "c"])
            #expect(json["seed"]?.int == 7)
            #expect(json["relaxed"] == .array([]))
            #expect(json["information"]?.array?.count == 5)
            let (_, again, _) = try await client.post("/v1/forms", #"{"seed": 7}"#)
            #expect(again == json)
            let excluded = items.prefix(3).compactMap { $0["item_id"]?.string }
            let (_, other, _) = try await client.post(
                "/v1/forms", #"{"seed": 7, "exclude": [\#(excluded.map { "\"\($0)\"" }.joined(separator: ","))]}"#)
            let otherIDs = Set(other["items"]?.array?.compactMap { $0["item_id"]?.string } ?? [])
            #expect(otherIDs.count == 12 && otherIDs.isDisjoint(with: excluded))
            let (bodyStatus, small, _) = try await client.post("/v1/forms", #"{"blueprint": {"length": 3, "domain_counts": {"b": 3}}, "seed": 1}"#)
            #expect(bodyStatus == .ok)
            #expect(small["items"]?.array?.map { $0["domain"]?.string } == ["b", "b", "b"])
            let (_, unseeded, _) = try await client.post("/v1/forms", "{}")
            #expect(unseeded["seed"]?.numberText != nil)
        }
    }

    @Test("mounted in a team's own router (basic context, its own routes): the API answers beside them; reload needs the admin token")
    func mounted() async throws {
        let service = try Fixtures.service()
        let router = Router(context: BasicRequestContext.self)
        router.get("/hello") { _, _ in "hi" }
        service.addRoutes(to: router)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Fixtures.quietLogger)
        try await app.test(.live) { client in
            let hello = try await client.execute(uri: "/hello", method: .get)
            #expect(String(buffer: hello.body) == "hi")
            let (status, json, _) = try await client.post("/v1/score", Fixtures.scoreBody(id: "t", items: ["i0001"], responses: [1]))
            #expect(status == .ok)
            #expect(json["bank_version"]?.string == service.state.bankVersion)
            let reload = try await client.execute(uri: "/v1/admin/reload", method: .post)
            #expect(reload.status == .unauthorized)
            let admitted = try await client.execute(uri: "/v1/admin/reload", method: .post, headers: Fixtures.adminHeaders)
            #expect(admitted.status == .ok)
        }
    }
}
