import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import IQScoreServer
import NIOCore
import NIOHTTP1
import Testing

/// `FastLane` is a shorter way to the same answer: every request, sent to a server with it and to one without,
/// gets the same bytes back (the `Date` and the ids the servers make aside), one by one and pipelined, and the
/// metrics count the same requests.
@Suite("iqscore serve: the fast lane answers as the router does", .serialized, .timeLimit(.minutes(3)))
struct FastLaneTests {
    static let token = Fixtures.scoringToken
    static let good = Fixtures.scoreBody(id: "fl", items: ["i0001", "i0002", "i0003", "i0004"], responses: [1, 0, 1, 1])

    static func post(_ path: String, _ body: String, headers: [String] = ["Authorization: Bearer \(token)"], version: String = "1.1") -> String {
        "POST \(path) HTTP/\(version)\r\nHost: t\r\n" + headers.map { $0 + "\r\n" }.joined() + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static func get(_ path: String, headers: [String] = [], version: String = "1.1") -> String {
        "GET \(path) HTTP/\(version)\r\nHost: t\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// Requests the lane takes, and requests it must leave to the routes (by what they are, or by what their answer is).
    static let corpus: [String] = {
        let items = ["i0001", "i0002", "i0003", "i0004"]
        let chunked =
            "POST /v1/score HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\nTransfer-Encoding: chunked\r\n\r\n"
            + String(good.utf8.count, radix: 16) + "\r\n" + good + "\r\n0\r\n\r\n"
        return [
            get("/healthz"), get("/livez"), get("/readyz"), get("/healthz?verbose=1"), get("/healthz/"), get("/healthz", version: "1.0"),
            get("/healthz", headers: ["Connection: keep-alive"], version: "1.0"),
            get("/healthz", headers: ["X-Request-Id: client-id.1"]), get("/healthz", headers: ["X-Request-Id: not an id!"]),
            get("/healthz", headers: ["X-Request-Id: a", "X-Request-Id: b"]), get("/livez", headers: ["Content-Length: 0"]),
            "GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc",
            post("/v1/score", good), post("/v1/score", good, headers: ["authorization: bearer \(token)", "X-Request-Id: mine"]),
            post("/v1/score", good, headers: []), post("/v1/score", good, headers: ["Authorization: Bearer not-a-token-of-ours-1"]),
            post("/v1/score", good, headers: ["Authorization: Bearer \(token)", "Authorization: Bearer \(token)"]),
            post("/v1/score", good, headers: ["Authorization: Basic \(token)"]),
            post("/v1/score", Fixtures.scoreBody(id: "m", items: items, responses: [1, 0, 1, 1], method: "map")),
            post("/v1/score", Fixtures.scoreBody(id: "w", items: items, responses: [1, 0, 1, 1], method: "wizard")),
            post("/v1/score", Fixtures.scoreBody(id: nil, items: items, responses: [0, 0, 0, 0])),
            post("/v1/score", Fixtures.scoreBody(id: "u", items: ["i0001", "nope"], responses: [1, 0])),
            post("/v1/score", Fixtures.scoreBody(id: "r", items: ["i0001", "i0001"], responses: [1, 0])),
            post("/v1/score", Fixtures.scoreBody(id: "v", items: ["i0001", "i0002"], responses: [1, 2])),
            post("/v1/score", Fixtures.scoreBody(id: "l", items: ["i0001", "i0002"], responses: [1])),
            post("/v1/score", Fixtures.scoreBody(id: "e", items: [], responses: [])),
            post("/v1/score", #"{"session_id":"s\u0031","item_ids":["i0001"],"responses":[1]}"#),
            post("/v1/score", #"{"item_ids":["i0001"],"responses":[1],"age":30}"#),
            post("/v1/score", #"{"item_ids":["i0001"],"responses":[1],"extra":1}"#),
            post("/v1/score", #"{"item_ids":["i0001"],"#), post("/v1/score", ""),
            post("/v1/score", good, version: "1.0"), post("/v1/score", good, headers: ["Authorization: Bearer \(token)", "Connection: close"]),
            post("/v1/score", good, headers: ["Authorization: Bearer \(token)", "Expect: 100-continue"]),
            post("/v1/score", good, headers: ["Authorization: Bearer \(token)", "X-Forwarded-For: 10.0.0.1, 10.0.0.2"]),
            post("/v1/score?x=1", good), post("/v1/score/", good), chunked,
            post("/v1/score/batch", #"{"sessions":[\#(good)]}"#), get("/v1/score"), "PUT /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"
        ]
    }()

    /// The responses to `requests`, sent on one connection (all at once when `pipelined`, else each after the
    /// previous response), with the `Date` and the server-made request ids blanked. A connection the server
    /// closes (HTTP/1.0, `Connection: close`) is opened again for the next request.
    static func exchange(_ port: Int, _ requests: [String], pipelined: Bool) async throws -> [String] {
        var responses: [String] = []
        var connection = try RawConnection(port: port)
        if pipelined {
            connection.send(requests.joined())
            responses = try await read(connection, count: requests.count)
        } else {
            for request in requests {
                connection.send(request)
                responses += try await read(connection, count: 1)
                // The server closes after these (HTTP/1.0 without keep-alive, Connection: close).
                let head = request.components(separatedBy: "\r\n\r\n")[0]
                if (head.contains("HTTP/1.0") && !head.contains("keep-alive")) || head.contains("Connection: close") {
                    connection = try RawConnection(port: port)
                }
            }
        }
        return responses.map(normalized)
    }

    /// `count` whole responses (a `100 Continue` is kept with the response after it).
    static func read(_ connection: RawConnection, count: Int) async throws -> [String] {
        var text = ""
        var responses: [String] = []
        let deadline = Date().addingTimeInterval(20)
        while responses.count < count && Date() < deadline {
            let (more, closed, _) = try await connection.receive(within: 0.02)
            text += more
            while let response = Self.firstResponse(&text) { responses.append(response) }
            if closed { break }
        }
        #expect(responses.count == count, "\(responses.count) of \(count) responses: \(text.prefix(300))")
        return responses
    }

    /// Takes the first whole response off `text` (by its `Content-Length`).
    static func firstResponse(_ text: inout String) -> String? {
        var start = text.startIndex
        while true {
            guard let headEnd = text.range(of: "\r\n\r\n", range: start..<text.endIndex) else { return nil }
            let head = text[start..<headEnd.lowerBound]
            if head.hasPrefix("HTTP/1.1 100") { start = headEnd.upperBound; continue }
            let length =
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            guard text.utf8.distance(from: headEnd.upperBound.samePosition(in: text.utf8)!, to: text.utf8.endIndex) >= length else { return nil }
            let end = text.utf8.index(headEnd.upperBound.samePosition(in: text.utf8)!, offsetBy: length)
            let response = String(text[text.startIndex..<end])
            text = String(text[end...])
            return response
        }
    }

    /// `response` with its `Date` value and a request id the server made blanked.
    static func normalized(_ response: String) -> String {
        response.split(separator: "\r\n", omittingEmptySubsequences: false).map { line -> String in
            if line.lowercased().hasPrefix("date:") { return "Date: -" }
            if line.lowercased().hasPrefix("x-request-id:"),
                line.range(of: #"^x-request-id: [0-9a-f]{16}-[0-9]+$"#, options: [.regularExpression, .caseInsensitive]) != nil
            {
                return "X-Request-Id: (made)"
            }
            return String(line)
        }.joined(separator: "\r\n")
    }

    /// The request and problem counts of `/metrics`, without the zero ones.
    static func counts(_ port: Int) async throws -> [String] {
        let connection = try RawConnection(port: port)
        connection.send(get("/metrics"))
        let text = try await read(connection, count: 1).first ?? ""
        return text.split(separator: "\n").filter {
            ($0.hasPrefix("iqscore_http_requests_total") || $0.hasPrefix("iqscore_problems_total")) && !$0.hasSuffix(" 0")
        }.map(String.init).sorted()
    }

    static func fastLaneCount(_ port: Int) async throws -> Int {
        let connection = try RawConnection(port: port)
        connection.send(get("/metrics"))
        let text = try await read(connection, count: 1).first ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("iqscore_fast_lane_requests_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
    }

    /// Runs `body` with the ports of two servers on twin services, the first with the fast lane, the second without.
    static func twins(
        limits: ServerLimits = ServerLimits(), _ body: @escaping @Sendable (Int, Int, ScoringService, ScoringService) async throws -> Void
    ) async throws {
        let fast = try Fixtures.service(limits: limits, scoringToken: true), routed = try Fixtures.service(limits: limits, scoringToken: true)
        let off = {
            var options = IQScoreApplication.Options(host: "127.0.0.1", port: 0)
            options.fastLane = false
            return options
        }()
        try await IQScoreApplication.makeApplication(service: fast, options: IQScoreApplication.Options(host: "127.0.0.1", port: 0)).test(.live) {
            a in
            try await IQScoreApplication.makeApplication(service: routed, options: off).test(.live) { b in
                try await body(a.port!, b.port!, fast, routed)
            }
        }
    }

    @Test("every request of the corpus gets the same response with and without the lane, one by one and pipelined")
    func sameAnswers() async throws {
        try await Self.twins { fast, routed, _, _ in
            let one = try await Self.exchange(fast, Self.corpus, pipelined: false)
            let other = try await Self.exchange(routed, Self.corpus, pipelined: false)
            #expect(one.count == Self.corpus.count && other.count == Self.corpus.count)
            for (k, (a, b)) in zip(one, other).enumerated() {
                #expect(a == b, "request \(k): \(Self.corpus[k].prefix(120).debugDescription)\nfast lane:\n\(a)\nrouter:\n\(b)")
            }
            #expect(one.filter { $0.hasPrefix("HTTP/1.1 200") }.count >= 15, "the corpus answers 200 to the lane's plain requests")
            // Pipelined: the requests that close the connection last, each response in request order.
            let keptAlive = Self.corpus.filter { !$0.contains("HTTP/1.0") && !$0.contains("Connection: close") && !$0.contains("Expect:") }
            let pipelinedFast = try await Self.exchange(fast, keptAlive, pipelined: true)
            let pipelinedRouted = try await Self.exchange(routed, keptAlive, pipelined: true)
            #expect(pipelinedFast == pipelinedRouted)
            let fastCounts = try await Self.counts(fast), routedCounts = try await Self.counts(routed)
            #expect(
                fastCounts == routedCounts,
                "fast lane only: \(Set(fastCounts).subtracting(routedCounts).sorted()); router only: \(Set(routedCounts).subtracting(fastCounts).sorted())"
            )
            let alone = try await Self.exchange(fast, keptAlive, pipelined: false)
            #expect(pipelinedFast == alone, "pipelined responses differ from the same requests one by one")
            let taken = try await Self.fastLaneCount(fast)
            #expect(taken >= 30, "the lane answered \(taken) requests")
            #expect(try await Self.fastLaneCount(routed) == 0)
        }
    }

    @Test("a slow route before fast requests on one connection: answers leave in request order")
    func order() async throws {
        try await Self.twins { fast, _, _, _ in
            let forms = Self.post("/v1/forms", #"{"seed": 3}"#)
            let requests = [
                forms, Self.get("/healthz"), Self.post("/v1/score", Self.good), forms, Self.get("/livez"), Self.post("/v1/score", Self.good)
            ]
            let responses = try await Self.exchange(fast, requests, pipelined: true)
            let bodies = responses.map { $0.components(separatedBy: "\r\n\r\n").last ?? "" }
            #expect(bodies.count == 6)
            guard bodies.count == 6 else { return }
            #expect(bodies[0].contains("\"items\"") && bodies[3].contains("\"items\""), "\(bodies[0].prefix(200))")
            #expect(bodies[1].contains("\"status\":\"ok\"") && bodies[4].contains("\"status\":\"live\""))
            #expect(bodies[2].contains("\"session_id\":\"fl\"") && bodies[5].contains("\"session_id\":\"fl\""))
        }
    }

    @Test("the rate limit counts a request once, whichever way answers it; draining sends /readyz to the routes")
    func rateLimitAndDrain() async throws {
        var limits = ServerLimits()
        limits.rateLimit = 0.01
        limits.rateBurst = 3
        try await Self.twins(limits: limits) { fast, routed, fastService, routedService in
            let requests = Array(repeating: Self.post("/v1/score", Self.good), count: 5) + [Self.post("/v1/score", #"{"item_ids":[]}"#)]
            let one = try await Self.exchange(fast, requests, pipelined: false)
            let other = try await Self.exchange(routed, requests, pipelined: false)
            #expect(one == other)
            #expect(
                one.map { String($0.prefix(12)) } == ["HTTP/1.1 200", "HTTP/1.1 200", "HTTP/1.1 200", "HTTP/1.1 429", "HTTP/1.1 429", "HTTP/1.1 429"])
            fastService.beginDraining()
            routedService.beginDraining()
            let ready = try await Self.exchange(fast, [Self.get("/readyz")], pipelined: false)
            #expect(ready == (try await Self.exchange(routed, [Self.get("/readyz")], pipelined: false)))
            #expect(ready.first?.hasPrefix("HTTP/1.1 503") == true)
        }
    }

    @Test("the Date header is RFC 9110's IMF-fixdate")
    func date() {
        var t: time_t = 784_111_777 // RFC 9110 §5.6.7's example
        #expect(HTTPDate.format(&t) == "Sun, 06 Nov 1994 08:49:37 GMT")
        var leap: time_t = 951_782_400 // 2000-02-29 00:00:00
        #expect(HTTPDate.format(&leap) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }
}
