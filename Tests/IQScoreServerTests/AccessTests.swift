import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import IQScoreServer
import Logging
import NIOCore
import Psychometrics
import Testing

/// What operators run the server with (issue 25): bearer tokens, rate limits, request ids, the instance header,
/// readiness and the drain, the metrics' help and process figures, and the JSON log lines.
@Suite("iqscore serve: access, identity and operations")
struct AccessTests {
    static let good = Fixtures.scoreBody(id: "s", items: ["i0001", "i0002", "i0003"], responses: [1, 0, 1])

    // MARK: Tokens

    @Test("a tokens file: scopes, comments, an admin token counting once; bad lines located without echoing the token")
    func tokensFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("tokens").path
        try Data("# operators\nscoring  aaaaaaaaaaaaaaaa1\n\n  admin\tbbbbbbbbbbbbbbbb2\r\nscoring bbbbbbbbbbbbbbbb2\n".utf8).write(
            to: URL(fileURLWithPath: file))
        let tokens = try AccessTokens.load(file: file, environment: [AccessTokens.scoringVariable: " cccccccccccccccc3 ,dddddddddddddddd4"])
        #expect(tokens.scoringCount == 3 && tokens.adminCount == 1)
        #expect(tokens.identify(authorization: "Bearer aaaaaaaaaaaaaaaa1")?.scope == .scoring)
        #expect(tokens.identify(authorization: "bearer bbbbbbbbbbbbbbbb2")?.scope == .admin)
        #expect(tokens.identify(authorization: "Bearer dddddddddddddddd4")?.scope == .scoring)
        #expect(tokens.identify(authorization: "Bearer cccccccccccccccc3")?.id.count == 12)
        for refused in [nil, "Basic aaaaaaaaaaaaaaaa1", "Bearer aaaaaaaaaaaaaaaa", "Bearer", "aaaaaaaaaaaaaaaa1"] {
            #expect(tokens.identify(authorization: refused) == nil, "\(refused ?? "nil")")
        }

        try Data("scoring short\nSECRETSECRETSECRET99\nscoring ok-token-of-16-chars\nadmin \u{7F}xxxxxxxxxxxxxxxxx\n".utf8).write(
            to: URL(fileURLWithPath: file))
        do {
            _ = try AccessTokens.load(file: file, environment: [:])
            Issue.record("a bad tokens file loaded")
        } catch let errors as InputErrors {
            let text = errors.description
            #expect(text.contains("\(file):1:9"), "\(text)")
            #expect(text.contains("16…512 characters"), "\(text)")
            #expect(text.contains("\(file):2:1"), "\(text)")
            #expect(text.contains("\(file):4:7"), "\(text)")
            #expect(!text.contains("SECRET"), "a token was echoed: \(text)")
        }
        #expect(throws: InputError.self) { try AccessTokens.load(file: nil, environment: [AccessTokens.adminVariable: "too-short"]) }
    }

    @Test("with scoring tokens the API needs one (401 with WWW-Authenticate); probes stay open; an admin token does everything")
    func scoringTokens() async throws {
        try await Fixtures.application(try Fixtures.service(scoringToken: true)).test(.router) { client in
            for (path, method) in [
                ("/v1/score", HTTPRequest.Method.post), ("/v1/score/batch", .post), ("/v1/cat/next", .post), ("/v1/forms", .post), ("/v1/bank", .get)
            ] {
                let response = try await client.execute(uri: path, method: method, body: Fixtures.body("{}"))
                #expect(response.status == .unauthorized, "\(path)")
                #expect(response.headers[.wwwAuthenticate] == "Bearer realm=\"iqscore\"", "\(path)")
                #expect(try TestJSON.parse(response.body)["type"]?.string == "urn:iqscore:problem:unauthorized")
            }
            let wrong = try await client.execute(
                uri: "/v1/score", method: .post, headers: [.authorization: "Bearer not-a-token-we-know-1"], body: Fixtures.body(Self.good))
            #expect(wrong.status == .unauthorized)
            #expect(try TestJSON.parse(wrong.body)["detail"]?.string?.contains("does not carry a bearer token this server accepts") == true)
            for path in ["/livez", "/readyz", "/healthz", "/metrics", "/openapi.json"] {
                #expect(try await client.execute(uri: path, method: .get).status == .ok, "\(path)")
            }
            let (status, json, _) = try await client.post("/v1/score", Self.good, headers: Fixtures.scoringHeaders)
            #expect(status == .ok && json["theta"] != nil)
            #expect(try await client.post("/v1/score", Self.good, headers: Fixtures.adminHeaders).0 == .ok)
            // A scoring token may not reload.
            let (forbidden, problem, _) = try await client.post("/v1/admin/reload", "", headers: Fixtures.scoringHeaders)
            #expect(forbidden == .forbidden)
            #expect(problem["detail"]?.string?.contains("needs an admin token") == true)
            #expect(try await client.post("/v1/admin/reload", "", headers: Fixtures.adminHeaders).0 == .ok)
        }
    }

    @Test("without an admin token, reloading over HTTP is off (403), whatever the peer; SIGHUP's reload still works")
    func noAdminToken() async throws {
        let dir = try Fixtures.dataDirectory()
        var configuration = ServerConfiguration(bankPath: dir.appendingPathComponent("bank.csv").path)
        configuration.exposureControl = false
        let service = try ScoringService(configuration: configuration, logger: Fixtures.quietLogger)
        try await Fixtures.application(service).test(.live) { client in
            let (status, problem, _) = try await client.post("/v1/admin/reload", "")
            #expect(status == .forbidden)
            #expect(problem["detail"]?.string?.contains("no admin token is configured") == true, "\(problem)")
            #expect(try await client.post("/v1/score", Self.good).0 == .ok)
        }
        _ = try await service.reload(trigger: "test")
    }

    @Test("tokens are read again at reload: a new token works and a revoked one stops, without a restart")
    func tokenRotation() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("tokens")
        try Data("scoring first-token-0000000001\nadmin \(Fixtures.adminToken)\n".utf8).write(to: file)
        var configuration = ServerConfiguration(bankPath: dir.appendingPathComponent("bank.csv").path)
        configuration.exposureControl = false
        configuration.tokensPath = file.path
        let service = try ScoringService(configuration: configuration, logger: Fixtures.quietLogger)
        try await Fixtures.application(service).test(.router) { client in
            let first: HTTPFields = [.authorization: "Bearer first-token-0000000001"]
            let second: HTTPFields = [.authorization: "Bearer second-token-000000002"]
            #expect(try await client.post("/v1/score", Self.good, headers: first).0 == .ok)
            #expect(try await client.post("/v1/score", Self.good, headers: second).0 == .unauthorized)
            try Data("scoring second-token-000000002\nadmin \(Fixtures.adminToken)\n".utf8).write(to: file)
            #expect(try await client.post("/v1/admin/reload", "", headers: Fixtures.adminHeaders).0 == .ok)
            #expect(try await client.post("/v1/score", Self.good, headers: first).0 == .unauthorized)
            #expect(try await client.post("/v1/score", Self.good, headers: second).0 == .ok)
            // A broken tokens file is refused like a broken bank: the previous tokens keep working.
            try Data("scoring x\n".utf8).write(to: file)
            #expect(try await client.post("/v1/admin/reload", "", headers: Fixtures.adminHeaders).0 == .unprocessableContent)
            #expect(try await client.post("/v1/score", Self.good, headers: second).0 == .ok)
        }
    }

    // MARK: Rate limits

    @Test("the token bucket: known values (rate 2/s, burst 3), per-client buckets, and a bounded table")
    func tokenBucket() {
        let limiter = RateLimiter(rate: 2, burst: 3)
        let second: UInt64 = 1_000_000_000
        // Three at once, then the fourth waits: (1 − 0) / 2 = 0.5 s, written as 1 whole second.
        #expect((0..<3).map { _ in limiter.admit("a", at: 10 * second) } == [nil, nil, nil])
        #expect(limiter.admit("a", at: 10 * second) == 1)
        #expect(limiter.admit("b", at: 10 * second) == nil, "another client has its own bucket")
        // 0.5 s later one token is back (2/s), and only one.
        #expect(limiter.admit("a", at: 10 * second + second / 2) == nil)
        #expect(limiter.admit("a", at: 10 * second + second / 2) != nil)
        // After a long pause the bucket holds the burst, not more.
        #expect((0..<4).map { _ in limiter.admit("a", at: 100 * second) == nil } == [true, true, true, false])
        // Slow refill: 0.1/s with an empty bucket waits 10 s.
        let slow = RateLimiter(rate: 0.1, burst: 1)
        #expect(slow.admit("c", at: 0) == nil)
        #expect(slow.admit("c", at: 0) == 10)

        let bounded = RateLimiter(rate: 1, burst: 1, maxClients: 6_400)
        for k in 0..<100_000 { _ = bounded.admit("client \(k)", at: 5 * second + UInt64(k)) }
        #expect(bounded.clientCount <= 6_400, "\(bounded.clientCount)")
        #expect(bounded.clientCount >= 1_000, "\(bounded.clientCount)")
    }

    @Test("over --rate-limit a client gets 429 with Retry-After; clients (tokens, addresses) count apart; probes are not limited")
    func rateLimited() async throws {
        var limits = ServerLimits()
        // One request in 100 s after a burst of 2: a busy test machine cannot refill a token between requests.
        limits.rateLimit = 0.01
        limits.rateBurst = 2
        try await Fixtures.application(try Fixtures.service(limits: limits, scoringToken: true)).test(.live) { client in
            #expect(try await client.post("/v1/score", Self.good, headers: Fixtures.scoringHeaders).0 == .ok)
            #expect(try await client.post("/v1/score", Self.good, headers: Fixtures.scoringHeaders).0 == .ok)
            let response = try await client.execute(uri: "/v1/score", method: .post, headers: Fixtures.scoringHeaders, body: Fixtures.body(Self.good))
            #expect(response.status == .tooManyRequests)
            let retry = Int(response.headers[.retryAfter] ?? "") ?? 0
            // (1 − tokens) / 0.01 rounded up: 100 s less the time since the burst (a busy machine takes seconds).
            #expect((60...100).contains(retry), "\(retry)")
            #expect(try TestJSON.parse(response.body)["type"]?.string == "urn:iqscore:problem:rate-limited")
            // The admin token is another client.
            #expect(try await client.post("/v1/score", Self.good, headers: Fixtures.adminHeaders).0 == .ok)
            for _ in 0..<5 { #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok) }
        }
        // Without tokens a client is its address; behind a proxy, the address the proxy adds.
        var forwarded = limits
        forwarded.clientFromForwardedFor = true
        try await Fixtures.application(try Fixtures.service(limits: forwarded)).test(.live) { client in
            var statuses: [HTTPResponse.Status] = []
            for address in ["203.0.113.1", "203.0.113.1", "203.0.113.1", "203.0.113.2"] {
                statuses.append(
                    try await client.post("/v1/score", Self.good, headers: [HTTPField.Name("X-Forwarded-For")!: "198.51.100.1, \(address)"]).0)
            }
            #expect(statuses == [.ok, .ok, .tooManyRequests, .ok])
        }
    }

    // MARK: Identity

    @Test("X-Request-Id: a client's acceptable id comes back, anything else is replaced by a made one; X-IQScore-Instance names the instance")
    func requestIDs() async throws {
        try await Fixtures.application(try Fixtures.service(instance: "pod-7")).test(.router) { client in
            let own = try await client.execute(uri: "/healthz", method: .get, headers: [.requestID: "3f2a-ULID:01HZ/abc+=~_."])
            #expect(own.headers[.requestID] == "3f2a-ULID:01HZ/abc+=~_.")
            #expect(own.headers[.instance] == "pod-7")
            var made: Set<String> = []
            for bad in ["", "has space", "new\u{7F}line", String(repeating: "x", count: 129), "é"] {
                let response = try await client.execute(uri: "/v1/score", method: .post, headers: [.requestID: bad], body: Fixtures.body("{"))
                let id = try #require(response.headers[.requestID])
                #expect(id != bad && id.range(of: #"^[0-9a-f]{16}-[0-9]+$"#, options: .regularExpression) != nil, "\(id)")
                #expect(response.headers[.instance] == "pod-7", "problems carry it too")
                made.insert(id)
            }
            #expect(made.count == 5)
        }
    }

    // MARK: Readiness

    @Test("/livez and /readyz: ready with a bank; draining makes /readyz 503 (Retry-After) and iqscore_ready 0 while the API still answers")
    func readiness() async throws {
        let service = try Fixtures.service()
        try await Fixtures.application(service).test(.router) { client in
            let (live, liveJSON, _) = try await client.get("/livez")
            #expect(live == .ok && liveJSON["status"]?.string == "live")
            let (ready, readyJSON, _) = try await client.get("/readyz")
            #expect(ready == .ok && readyJSON["bank_version"]?.string == service.state.bankVersion && readyJSON["n_items"]?.int == 120)
            service.beginDraining()
            let draining = try await client.execute(uri: "/readyz", method: .get)
            #expect(draining.status == .serviceUnavailable && draining.headers[.retryAfter] == "1")
            #expect(try TestJSON.parse(draining.body)["type"]?.string == "urn:iqscore:problem:not-ready")
            #expect(try await client.get("/livez").0 == .ok)
            #expect(try await client.post("/v1/score", Self.good).0 == .ok)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains("iqscore_ready 0"), "\(metrics)")
        }
    }

    // MARK: Metrics

    @Test("/metrics: HELP for every family, process figures, build version, last reload status")
    func metrics() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let service = try Fixtures.service(in: dir)
        try await Fixtures.application(service).test(.live) { client in
            _ = try await client.post("/v1/score", Self.good)
            var text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            let families = Set(
                text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: "{").first?.split(separator: " ").first }
                    .map { String($0).replacingOccurrences(of: #"_(bucket|sum|count)$"#, with: "", options: .regularExpression) })
            #expect(families.count >= 15, "\(families.sorted())")
            for family in families { #expect(text.contains("# HELP \(family) "), "\(family) has no HELP") }
            func value(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
            }
            #expect((value("process_resident_memory_bytes") ?? 0) > 10e6)
            #expect((value("process_open_fds") ?? 0) >= 3)
            #expect((value("process_max_fds") ?? 0) >= (value("process_open_fds") ?? .infinity))
            #expect((value("process_cpu_seconds_total") ?? 0) > 0)
            #expect(abs((value("process_start_time_seconds") ?? 0) - Date().timeIntervalSince1970) < 3_600 * 24)
            #expect(text.contains("iqscore_build_info{version=\"\(iqscoreVersion)\"} 1"))
            #expect(value("iqscore_last_reload_success") == 1)
            try Data("item_id,a,b\ni0001,abc,0\n".utf8).write(to: dir.appendingPathComponent("bank.csv"))
            #expect(try await client.post("/v1/admin/reload", "", headers: Fixtures.adminHeaders).0 == .unprocessableContent)
            text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(value("iqscore_last_reload_success") == 0)
            #expect(text.contains(#"iqscore_reloads_total{result="refused"} 1"#))
        }
    }

    // MARK: Logs

    @Test("log lines: JSON objects with time, level, logger, message and metadata; text lines; the time formatted by hand")
    func logLines() throws {
        #expect(ServerLogHandlerProbe.iso8601(seconds: 0, milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        // date -u -d @1795731744 → Thu Nov 26 22:22:24 UTC 2026; 2000-02-29 (a leap day) is 951782400.
        #expect(ServerLogHandlerProbe.iso8601(seconds: 1_795_731_744, milliseconds: 709) == "2026-11-26T22:22:24.709Z")
        #expect(ServerLogHandlerProbe.iso8601(seconds: 951_782_400 + 86_399, milliseconds: 5) == "2000-02-29T23:59:59.005Z")

        let metadata: Logger.Metadata = ["request_id": "r-1", "status": .stringConvertible(200), "message": "shadow", "tags": ["a", "b"]]
        let json = ServerLogHandlerProbe.line(message: "POST \"/v1/score\"\n200", metadata: metadata, format: .json)
        #expect(json.hasSuffix("}\n") && json.filter { $0 == "\n" }.count == 1)
        let parsed = try TestJSON.parse(ByteBuffer(string: json))
        #expect(parsed["time"]?.string == "2026-11-26T22:22:24.709Z")
        #expect(parsed["level"]?.string == "info" && parsed["logger"]?.string == "iqscore.serve")
        #expect(parsed["message"]?.string == "POST \"/v1/score\"\n200")
        #expect(parsed["request_id"]?.string == "r-1" && parsed["status"]?.int == 200 && parsed["meta_message"]?.string == "shadow")
        #expect(parsed["tags"]?.array?.count == 2)
        let text = ServerLogHandlerProbe.line(message: "reloaded", metadata: ["b": "2", "a": "1"], format: .text)
        #expect(text == "2026-11-26T22:22:24.709Z info iqscore.serve: reloaded a=1 b=2\n")

        // A request's line written directly is the line the metadata route writes, byte for byte.
        for format in ServerLogHandler.Format.allCases {
            for (token, problem) in [(nil, nil), ("0d78f3311f84", "rate-limited") as (String?, String?)] {
                var metadata: Logger.Metadata = [
                    "request_id": "7a3b-8", "route": "/v1/bank", "status": .stringConvertible(429),
                    "duration_us": .stringConvertible(Int64(195)), "client": "127.0.0.1"
                ]
                if let token { metadata["token"] = .string(token) }
                if let problem { metadata["problem"] = .string(problem) }
                let viaMetadata = ServerLogHandlerProbe.line(message: "GET '/v1/bank' 429", metadata: metadata, format: format)
                let direct = String(
                    buffer: ServerLogHandler.requestLine(
                        time: "2026-11-26T22:22:24.709Z", label: "iqscore.serve", format: format, method: "GET",
                        path: "'/v1/bank'", status: 429, durationMicroseconds: 195, requestID: "7a3b-8",
                        route: "/v1/bank", client: "127.0.0.1", token: token, problem: problem))
                #expect(direct == viaMetadata, "\(format)")
            }
        }
    }
}

/// The log handler's formatting, reached through its public type for the known values above.
enum ServerLogHandlerProbe {
    static func iso8601(seconds: Int, milliseconds: Int) -> String {
        ServerLogHandler.iso8601(seconds: seconds, milliseconds: milliseconds)
    }

    static func line(message: String, metadata: Logger.Metadata, format: ServerLogHandler.Format) -> String {
        String(
            buffer: ServerLogHandler.line(
                time: iso8601(seconds: 1_795_731_744, milliseconds: 709), level: .info, label: "iqscore.serve",
                message: message, metadata: metadata, format: format))
    }
}
