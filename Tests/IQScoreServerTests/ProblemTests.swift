import Foundation
import HTTPTypes
import InputSupport
import Hummingbird
import HummingbirdTesting
@testable import IQScoreServer
import Testing
import TestSupport

/// Every error status of the API, as application/problem+json naming the field; and no input that gets a 5xx.
@Suite("iqscore serve: errors are problems, never a crash or a 500", .timeLimit(.minutes(2)))
struct ProblemTests {
    /// Posts `body` and checks the status, the problem's kind and field, and the problem's required members.
    static func expectProblem(
        _ client: any TestClientProtocol, _ uri: String, _ body: String, method: HTTPRequest.Method = .post,
        status: HTTPResponse.Status, kind: String, field: String? = nil, detail: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let response = try await client.execute(uri: uri, method: method, body: Fixtures.body(body))
        #expect(response.status == status, "\(uri) \(body.prefix(120))", sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        let json = try TestJSON.parse(response.body)
        #expect(json["type"]?.string == "urn:iqscore:problem:" + kind, "\(json)", sourceLocation: sourceLocation)
        #expect(json["status"]?.int == status.code, sourceLocation: sourceLocation)
        #expect(json["title"]?.string?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(json["field"]?.string == field, "\(json)", sourceLocation: sourceLocation)
        if let detail { #expect(json["detail"]?.string == detail, sourceLocation: sourceLocation) }
        #expect(json["bank_version"]?.string == response.headers[HTTPField.Name("X-Bank-Version")!], sourceLocation: sourceLocation)
    }

    @Test("400 for bodies that are not JSON: syntax, trailing comma, a key twice, empty, nesting over 64")
    func malformed() async throws {
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            for body in [
                "{", "", "not json", #"{"item_ids": ["i0001"], "responses": [1],}"#,
                #"{"item_ids": ["i0001"], "item_ids": ["i0002"], "responses": [1]}"#,
                String(repeating: "[", count: 100) + String(repeating: "]", count: 100), "{\"item_ids\": [\"i0001\"]} x", "\u{0}"
            ] {
                try await Self.expectProblem(client, "/v1/score", body, status: .badRequest, kind: "malformed-json")
            }
            try await Self.expectProblem(
                client, "/v1/score", #"{"item_ids": [], "responses": [],}"#, status: .badRequest, kind: "malformed-json",
                detail: "line 1, column 34: not valid JSON: expected a key in double quotes, found '}'")
        }
    }

    @Test(
        "the parser: invalid UTF-8, a lone surrogate, control characters, numbers beyond a double are 400; an array longer than every limit is refused while parsing; 100,000 keys stay fast"
    )
    func parserEdges() async throws {
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            for body in [
                [UInt8](#"{"session_id": ""#.utf8) + [0xC3, 0x28] + Array(#"", "item_ids": ["i0001"], "responses": [1]}"#.utf8),
                Array(#"{"session_id": "\uD800", "item_ids": ["i0001"], "responses": [1]}"#.utf8),
                Array("{\"session_id\": \"a\tb\", \"item_ids\": [\"i0001\"], \"responses\": [1]}".utf8),
                Array(#"{"session_id": "a", "item_ids": ["i0001"], "responses": [1e999]}"#.utf8),
                Array(#"{"session_id": "a", "item_ids": ["i0001"], "responses": [01]}"#.utf8),
                Array(#"{"session_id": "a", "item_ids": ["i0001"], "responses": [+1]}"#.utf8),
                Array(#"{'item_ids': ['i0001'], 'responses': [1]}"#.utf8)
            ] {
                let response = try await client.execute(uri: "/v1/score", method: .post, body: ByteBuffer(bytes: body))
                #expect(response.status == .badRequest, "\(String(decoding: body, as: UTF8.self))")
            }
            let zeros = #"{"item_ids": [], "responses": ["# + Array(repeating: "0", count: 30_000).joined(separator: ",") + "]}"
            try await Self.expectProblem(client, "/v1/score", zeros, status: .unprocessableContent, kind: "too-many-items", field: "/responses")
            let keys = "{" + (0..<100_000).map { #""k\#($0)": 1"# }.joined(separator: ",") + "}"
            try await Self.expectProblem(client, "/v1/score", keys, status: .unprocessableContent, kind: "invalid-request", field: "/k0")
            // Linear in the keys (a pairwise check of repeated keys would take minutes): timed on the parser alone,
            // which no other test can hold up once it runs.
            let started = ContinuousClock.now
            _ = try StrictJSON.parse(Array(keys.utf8), input: .body, maximumArrayLength: 10)
            #expect(ContinuousClock.now - started < .seconds(5))
            let repeated = "{" + (0..<50).map { #""k\#($0)": 1"# }.joined(separator: ",") + #", "k7": 2}"#
            try await Self.expectProblem(client, "/v1/score", repeated, status: .badRequest, kind: "malformed-json")
            // Escapes decode, and ids come back escaped as JSON.
            let (status, json, _) = try await client.post(
                "/v1/score", #"{"session_id": "caf\u00e9 \"q\"\n\ud83d\ude00", "item_ids": ["i0001"], "responses": [1]}"#)
            #expect(status == .ok)
            #expect(json["session_id"]?.string == "café \"q\"\n😀")
        }
    }

    @Test("413 for a body over the limit, whether or not Content-Length announces it")
    func tooLarge() async throws {
        var limits = ServerLimits()
        limits.maxBodyBytes = 1024
        let big = Fixtures.scoreBody(id: String(repeating: "x", count: 2000), items: ["i0001"], responses: [1])
        try await Fixtures.application(try Fixtures.service(limits: limits)).test(.router) { client in
            try await Self.expectProblem(client, "/v1/score", big, status: .contentTooLarge, kind: "body-too-large")
            try await Self.expectProblem(client, "/v1/score/batch", #"{"sessions": [\#(big)]}"#, status: .contentTooLarge, kind: "body-too-large")
            let response = try await client.execute(uri: "/v1/score", method: .post, headers: [.contentLength: "5000"], body: Fixtures.body(big))
            #expect(response.status == .contentTooLarge)
        }
        // Over a real connection: refused, and the server goes on answering.
        try await Fixtures.application(try Fixtures.service(limits: limits)).test(.live) { client in
            let response = try await client.execute(uri: "/v1/score", method: .post, body: Fixtures.body(big))
            #expect(response.status == .contentTooLarge)
            let port = try #require(client.port)
            let fresh = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120)))
            fresh.connect()
            let ok = try await fresh.execute(TestClient.Request("/healthz", method: .get, authority: "127.0.0.1"))
            #expect(ok.status == .ok)
            try await fresh.shutdown()
        }
    }

    @Test("422 for a session the bank cannot score, naming the field")
    func unscorableSessions() async throws {
        var limits = ServerLimits()
        limits.maxItemsPerSession = 5
        limits.maxSessionsPerBatch = 2
        try await Fixtures.application(try Fixtures.service(limits: limits)).test(.router) { client in
            func score(_ body: String, _ kind: String, _ field: String?, detail: String? = nil, sourceLocation: SourceLocation = #_sourceLocation)
                async throws
            {
                try await Self.expectProblem(
                    client, "/v1/score", body, status: .unprocessableContent, kind: kind, field: field, detail: detail, sourceLocation: sourceLocation
                )
            }
            try await score(
                #"{"item_ids": ["i0001", "zz"], "responses": [1, 0]}"#, "unknown-item", "/item_ids/1",
                detail: "unknown item id 'zz' (not in the bank)")
            try await score(#"{"item_ids": ["i0001", "i0002"], "responses": [1, 2]}"#, "invalid-response", "/responses/1")
            try await score(
                #"{"item_ids": ["i0001", "i0002"], "responses": [1, 1.0]}"#, "invalid-response", "/responses/1",
                detail: "a response must be 0 or 1 (or false or true), or an item's category 0…K−1, written as a JSON integer or boolean; got '1.0'")
            // true/false are accepted (ScoringServiceTests.pythonJSON); other literals are not.
            try await score(#"{"item_ids": ["i0001", "i0002"], "responses": [1, "true"]}"#, "invalid-response", "/responses/1")
            try await score(#"{"item_ids": ["i0001", "i0002"], "responses": [1, "1"]}"#, "invalid-response", "/responses/1")
            try await score(#"{"item_ids": ["i0001", "i0002"], "responses": [1, -0]}"#, "invalid-response", "/responses/1")
            try await score(#"{"item_ids": ["i0001", "i0002"], "responses": [1, null]}"#, "invalid-response", "/responses/1")
            try await score(#"{"item_ids": ["i0001", "i0001"], "responses": [1, 0]}"#, "repeated-item", "/item_ids/1")
            try await score(
                #"{"item_ids": ["i0001", "i0002"], "responses": [1]}"#, "length-mismatch", "/responses", detail: "2 item ids but 1 responses")
            try await score(#"{"item_ids": [], "responses": []}"#, "no-responses", "/item_ids")
            try await score(
                #"{"item_ids": ["i0001","i0002","i0003","i0004","i0005","i0006"], "responses": [1,1,1,1,1,1]}"#, "too-many-items", "/item_ids")
            try await score(#"{"item_ids": ["i0001"], "responses": [1], "method": "bayes"}"#, "invalid-request", "/method")
            try await score(#"{"item_ids": ["i0001"], "responses": [1], "extra": 1}"#, "invalid-request", "/extra")
            try await score(#"{"item_ids": ["i0001"]}"#, "invalid-request", "/responses", detail: "'responses' is required")
            try await score(#"{"item_ids": "i0001", "responses": [1]}"#, "invalid-request", "/item_ids")
            try await score(#"{"item_ids": [7], "responses": [1]}"#, "invalid-request", "/item_ids/0")
            try await score(#"[1, 0]"#, "invalid-request", "")
            let three = Fixtures.scoreBody(id: nil, items: ["i0001"], responses: [1])
            try await Self.expectProblem(
                client, "/v1/score/batch", #"{"sessions": [\#(three), \#(three), \#(three)]}"#, status: .unprocessableContent,
                kind: "too-many-sessions", field: "/sessions")
            try await Self.expectProblem(
                client, "/v1/score/batch", #"{"sessions": 5}"#, status: .unprocessableContent, kind: "invalid-request", field: "/sessions")
            try await Self.expectProblem(
                client, "/v1/score/batch", #"{"session": []}"#, status: .unprocessableContent, kind: "invalid-request", field: "/session")
        }
    }

    @Test("422 for adaptive histories and blueprints that are wrong or that the bank cannot meet")
    func catAndForms() async throws {
        var limits = ServerLimits()
        limits.maxExcludedItems = 2
        try await Fixtures.application(try Fixtures.service(limits: limits)).test(.router) { client in
            func cat(_ body: String, _ kind: String, _ field: String?, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                try await Self.expectProblem(
                    client, "/v1/cat/next", body, status: .unprocessableContent, kind: kind, field: field, sourceLocation: sourceLocation)
            }
            try await cat(
                #"{"session_id": "s", "administered": [{"item_id": "i0001", "response": 1}, {"item_id": "q", "response": 0}]}"#, "unknown-item",
                "/administered/1/item_id")
            try await cat(
                #"{"session_id": "s", "administered": [{"item_id": "i0001", "response": 1}, {"item_id": "i0001", "response": 0}]}"#, "repeated-item",
                "/administered/1/item_id")
            try await cat(
                #"{"session_id": "s", "administered": [{"item_id": "i0001", "response": 3}]}"#, "invalid-response", "/administered/0/response")
            try await cat(
                #"{"session_id": "s", "administered": [{"item_id": "i0001", "response": 1.0}]}"#, "invalid-response", "/administered/0/response")
            try await cat(
                #"{"session_id": "s", "administered": [{"item_id": "i0001", "response": "true"}]}"#, "invalid-response", "/administered/0/response")
            try await cat(#"{"session_id": "s", "administered": [{"item_id": "i0001"}]}"#, "invalid-request", "/administered/0/response")
            try await cat(#"{"administered": []}"#, "invalid-request", "/session_id")
            try await cat(#"{"session_id": "s", "administered": [], "exclude": ["a", "b", "c"]}"#, "too-many-items", "/exclude")
            // Longer than the test's max_items (8): no client following the server sends it.
            let nine = (1...9).map { String(format: #"{"item_id": "i%04d", "response": 1}"#, $0) }.joined(separator: ",")
            try await cat(#"{"session_id": "s", "administered": [\#(nine)]}"#, "too-many-items", "/administered")
            func forms(_ body: String, _ kind: String, _ field: String?, sourceLocation: SourceLocation = #_sourceLocation) async throws {
                try await Self.expectProblem(
                    client, "/v1/forms", body, status: .unprocessableContent, kind: kind, field: field, sourceLocation: sourceLocation)
            }
            try await forms(#"{"blueprint": {"length": 50, "domain_counts": {"a": 50}}}"#, "infeasible-blueprint", "/blueprint")
            try await forms(#"{"blueprint": {"length": 3, "domain_counts": {"zebra": 3}}}"#, "infeasible-blueprint", "/blueprint")
            try await forms(#"{"blueprint": {"length": 0}}"#, "invalid-blueprint", "/blueprint")
            try await forms(#"{"blueprint": {"length": 3, "domain_counts": {"a": 2}}}"#, "invalid-blueprint", "/blueprint")
            try await forms(#"{"blueprint": {"length": 3, "forms": 2}}"#, "invalid-blueprint", "/blueprint/forms")
            try await forms(#"{"blueprint": {"length": 3, "lenght": 3}}"#, "invalid-request", "/blueprint/lenght")
            try await forms(#"{"blueprint": {"length": 2.5}}"#, "invalid-request", "/blueprint/length")
            try await forms(
                #"{"blueprint": {"length": 3, "target_information": [{"theta": 0, "info": 1}]}}"#, "invalid-request",
                "/blueprint/target_information/0/info")
            try await forms(#"{"blueprint": {"length": 3, "statuses": ["gone"]}}"#, "invalid-request", "/blueprint/statuses/0")
            try await forms(#"{"seed": -1}"#, "invalid-request", "/seed")
            try await forms(#"{"seed": 1.5}"#, "invalid-request", "/seed")
            try await forms(#"{"seed": 18446744073709551616}"#, "invalid-request", "/seed")
            try await forms(#"{"exclude": ["a", "b", "c"]}"#, "too-many-items", "/exclude")
        }
        // Without --blueprint, a request must bring one.
        try await Fixtures.application(try Fixtures.service(blueprint: false)).test(.router) { client in
            try await Self.expectProblem(client, "/v1/forms", "{}", status: .unprocessableContent, kind: "invalid-request", field: "/blueprint")
        }
    }

    @Test("503 busy with Retry-After when form requests wait beyond --max-queued-forms; scoring answers meanwhile")
    func busy() async throws {
        var limits = ServerLimits()
        limits.maxConcurrentForms = 1
        limits.maxQueuedForms = 0
        let service = try Fixtures.service(limits: limits)
        try await Fixtures.application(service).test(.router) { client in
            // The test takes the only place, as a long assembly would.
            #expect(await service.formGate.enter())
            let refused = try await client.execute(uri: "/v1/forms", method: .post, body: Fixtures.body(#"{"seed": 1}"#))
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.headers[.retryAfter] == "1")
            #expect(try TestJSON.parse(refused.body)["type"]?.string == "urn:iqscore:problem:busy")
            let (status, _, _) = try await client.post("/v1/score", Fixtures.scoreBody(id: "s", items: ["i0001"], responses: [1]))
            #expect(status == .ok)
            service.formGate.leave()
            let (formStatus, _, _) = try await client.post("/v1/forms", #"{"seed": 1}"#)
            #expect(formStatus == .ok)
            #expect(service.formGate.occupancy == (0, 0))
        }
    }

    @Test("the gate: width places, then a bounded queue served in order, then refusal")
    func gate() async throws {
        let gate = AsyncGate(width: 1, queueLimit: 1)
        #expect(await gate.enter())
        let waiter = Task { await gate.enter() }
        let deadline = ContinuousClock.now + .seconds(120)
        while gate.occupancy.waiting == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(gate.occupancy == (1, 1))
        #expect(await gate.enter() == false) // the queue is full
        gate.leave() // the place passes to the waiter
        #expect(await waiter.value)
        #expect(gate.occupancy == (1, 0))
        gate.leave()
        #expect(gate.occupancy == (0, 0))
        #expect(await gate.run { 42 } == 42)
        #expect(gate.occupancy == (0, 0))
    }

    @Test("404 for an unknown path, 405 with Allow for another method, 403 for a reload from outside the loopback interface")
    func routing() async throws {
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            try await Self.expectProblem(client, "/v2/score", "{}", status: .notFound, kind: "not-found")
            try await Self.expectProblem(client, "/", "", method: .get, status: .notFound, kind: "not-found")
            try await Self.expectProblem(client, "/v1/score", "", method: .get, status: .methodNotAllowed, kind: "method-not-allowed")
            try await Self.expectProblem(client, "/v1/bank", "{}", status: .methodNotAllowed, kind: "method-not-allowed")
            try await Self.expectProblem(client, "/v1/forms", "{}", method: .put, status: .methodNotAllowed, kind: "method-not-allowed")
            let response = try await client.execute(uri: "/v1/cat/next", method: .delete)
            #expect(response.headers[.allow] == "POST")
            let put = try await client.execute(uri: "/healthz", method: .put)
            #expect(put.headers[.allow] == "GET, HEAD")
            // A method no route lists (TRACE, CONNECT, an extension method) on an API path: 405 too, not 404
            // (schemathesis's "undeclared method" check).
            for method in [HTTPRequest.Method.trace, .connect, HTTPRequest.Method("PURGE")!] {
                let other = try await client.execute(uri: "/v1/score/batch", method: method)
                #expect(other.status == .methodNotAllowed, "\(method)")
                #expect(other.headers[.allow] == "POST")
            }
            try await Self.expectProblem(client, "/metrics", "", method: .trace, status: .methodNotAllowed, kind: "method-not-allowed")
            // HEAD on a GET endpoint: its status and headers, no body.
            let head = try await client.execute(uri: "/healthz", method: .head)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
            #expect(head.headers[HTTPField.Name("X-Bank-Version")!] != nil)
            // Reloading needs the admin token, wherever the request comes from (AccessTests covers the rest).
            try await Self.expectProblem(client, "/v1/admin/reload", "", status: .unauthorized, kind: "unauthorized")
        }
        // Over a real loopback connection too: the peer address proves nothing (a proxy on the host relays anyone).
        try await Fixtures.application(try Fixtures.service()).test(.live) { client in
            let response = try await client.execute(uri: "/v1/admin/reload", method: .post)
            #expect(response.status == .unauthorized)
        }
    }

    @Test("a bank without domains (girth's, catR's) is one domain: adaptive tests and forms are served (issue 26, item 11; was 503)")
    func bankWithoutDomains() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-server-nodomain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("item_id,a,b\ni1,1.2,0\ni2,1.0,0.5\ni3,0.8,-0.5\n".utf8).write(to: dir.appendingPathComponent("bank.csv"))
        let service = try Fixtures.service(in: dir, cat: false, blueprint: false)
        try await Fixtures.application(service).test(.router) { client in
            let (next, step, _) = try await client.post("/v1/cat/next", #"{"session_id": "s", "administered": [{"item_id": "i1", "response": 1}]}"#)
            #expect(next == .ok, "\(step)")
            #expect(step["action"] == .string("administer") && step["item_id"] != nil, "\(step)")
            let (form, assembled, _) = try await client.post("/v1/forms", #"{"blueprint": {"length": 2}}"#)
            #expect(form == .ok, "\(assembled)")
            let (status, json, _) = try await client.post("/v1/score", Fixtures.scoreBody(id: "x", items: ["i1", "i2"], responses: [1, 0]))
            #expect(status == .ok)
            #expect(json["domains"] == nil)
            let (_, bank, _) = try await client.get("/v1/bank")
            #expect(bank["adaptive"] == .bool(true))
            #expect(bank["exposure"]?.string != nil, "\(bank)")
        }
    }

    @Test("300 mutated requests to every POST endpoint: never a 5xx")
    func mutations() async throws {
        let valid = [
            ("/v1/score", Fixtures.scoreBody(id: "m", items: ["i0001", "i0002", "i0003"], responses: [1, 0, 1])),
            ("/v1/score/batch", #"{"sessions": [{"item_ids": ["i0001"], "responses": [1]}]}"#),
            ("/v1/cat/next", #"{"session_id": "m", "administered": [{"item_id": "i0001", "response": 1}], "exclude": ["i0002"]}"#),
            ("/v1/forms", #"{"blueprint": {"length": 3, "domain_counts": {"a": 1, "b": 1, "c": 1}}, "exclude": ["i0004"], "seed": 3}"#)
        ]
        var rng = SplitMix64(seed: 12)
        let alphabet = Array(#"{}[]":,.-0123456789eE truefalsnul\"#.utf8) + [0, 0xFF, 0xC3]
        var mutated: [(uri: String, bytes: [UInt8])] = []
        for _ in 0..<75 {
            for (uri, body) in valid {
                var bytes = Array(body.utf8)
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let at = Int(rng.next() % UInt64(bytes.count))
                    switch rng.next() % 3 {
                    case 0: bytes[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                    case 1: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                    default: if bytes.count > 1 { bytes.remove(at: at) }
                    }
                }
                mutated.append((uri, bytes))
            }
        }
        let requests = mutated
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            for (uri, bytes) in requests {
                let response = try await client.execute(uri: uri, method: .post, body: ByteBuffer(bytes: bytes))
                #expect([200, 400, 422].contains(response.status.code), "\(uri) \(String(decoding: bytes, as: UTF8.self)): \(response.status)")
            }
        }
    }
}
