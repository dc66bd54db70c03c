import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection that sends exactly the bytes it is given, when it is told (a slow, silent or broken client).
final class RawConnection {
    let fd: Int32

    /// `receiveBuffer` shrinks the socket's receive buffer (before connecting, so the window says so): a client
    /// that reads slowly fills it at once.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else { close(fd); throw TestJSON.ParseError(description: "connect failed: errno \(errno)") }
    }

    deinit { close(fd) }

    /// Sends `text`; false when the server has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Bytes available now without waiting (nil: the server closed the connection).
    private func readAvailable() -> [UInt8]? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else { return received }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return received.isEmpty ? nil : received }
            received += buffer[0..<n]
        }
    }

    /// What the server sends until it closes the connection or `seconds` pass, and whether it closed. Polls
    /// without blocking a thread (the tests share two), sleeping 10 ms between looks.
    func receive(within seconds: Double) async throws -> (text: String, closed: Bool, elapsed: Double) {
        let start = Date()
        var received: [UInt8] = []
        while Date().timeIntervalSince(start) < seconds {
            guard let bytes = readAvailable() else { return (String(decoding: received, as: UTF8.self), true, Date().timeIntervalSince(start)) }
            received += bytes
            try await Task.sleep(for: .milliseconds(10))
        }
        return (String(decoding: received, as: UTF8.self), false, Date().timeIntervalSince(start))
    }

    /// The first response's status line and body once the server has sent a whole response (`Content-Length`).
    func response(within seconds: Double) async throws -> (status: String, body: String, raw: String) {
        let start = Date()
        var text = ""
        while Date().timeIntervalSince(start) < seconds {
            if let headEnd = text.range(of: "\r\n\r\n") {
                let head = text[..<headEnd.lowerBound].lowercased()
                if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                    let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)),
                    text.utf8.count - text[..<headEnd.upperBound].utf8.count >= length
                {
                    break
                }
            }
            guard let bytes = readAvailable() else { break }
            text += String(decoding: bytes, as: UTF8.self)
            try await Task.sleep(for: .milliseconds(10))
        }
        let status = text.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body, text)
    }
}

/// The connection guard of `iqscore serve` against clients that are slow, silent, broken or many (issue 25's
/// defects 1–5), on the real process.
@Suite("iqscore serve: hostile and broken connections", .serialized, .timeLimit(.minutes(5)))
struct ConnectionGuardTests {
    typealias Server = ServeCommandTests.Server

    static func start(_ extra: [String]) async throws -> (Server, Int, URL) {
        let dir = try Fixtures.copyOfData()
        let server = try Server(["--bank", "bank.csv", "--port", "0", "--log-level", "info", "--exposure", "none"] + extra, in: dir)
        return (server, try await server.port(), dir)
    }

    static let scoreBody = Fixtures.scoreBody(id: "g", items: ["i0001", "i0002", "i0003"], responses: [1, 0, 1])

    static func post(_ path: String, _ body: String, extraHeaders: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\(extraHeaders)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("slow heads and bodies get 408 problems at their timeouts; silent and idle connections are closed")
    func timeouts() async throws {
        let (server, port, dir) = try await Self.start(["--header-timeout", "1", "--body-timeout", "2", "--idle-timeout", "3"])
        defer { try? FileManager.default.removeItem(at: dir) }

        // A head that never ends, one byte at a time (slowloris): 408 at about 1 s, then closed.
        let slowHead = try RawConnection(port: port)
        slowHead.send("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: ")
        let start = Date()
        var answer = ""
        // Until the server closes, or 10 s (by the clock, so that a loaded machine's slow receives do not end the
        // loop early). The 408's text names the timer that fired (--header-timeout, not the 3 s idle timer), so
        // the upper bound on the time only has to catch a connection that is never closed: it was 3.5 s, which a
        // suite holding both cores with subprocesses once exceeded.
        while Date().timeIntervalSince(start) < 10 {
            if !slowHead.send("a") { break }
            let got = try await slowHead.receive(within: 0.1)
            answer += got.text
            if got.closed { break }
        }
        let slowHeadSeconds = Date().timeIntervalSince(start)
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout"), "\(answer)")
        #expect(answer.contains(#""type":"urn:iqscore:problem:request-timeout""#))
        #expect(answer.contains("--header-timeout"))
        #expect(slowHeadSeconds > 0.8 && slowHeadSeconds < 8, "closed after \(slowHeadSeconds) s")

        // A body one byte a second: 408 at about 2 s after the head.
        let slowBody = try RawConnection(port: port)
        slowBody.send("POST /v1/score HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\n{")
        let bodyAnswer = try await slowBody.receive(within: 10)
        #expect(bodyAnswer.closed)
        #expect(bodyAnswer.text.hasPrefix("HTTP/1.1 408 Request Timeout"), "\(bodyAnswer.text)")
        // The text names the body timer; the bound on the time only catches a connection left open.
        #expect(bodyAnswer.text.contains("--body-timeout"))
        #expect(bodyAnswer.elapsed > 1.5 && bodyAnswer.elapsed < 8, "\(bodyAnswer.elapsed) s")

        // A connection that never says anything: closed, without a response, at the header timeout.
        let silent = try RawConnection(port: port)
        let silentEnd = try await silent.receive(within: 5)
        #expect(silentEnd.closed && silentEnd.text.isEmpty)
        #expect(silentEnd.elapsed > 0.8 && silentEnd.elapsed < 3.5, "\(silentEnd.elapsed) s")

        // A kept-alive connection is answered, then closed after 3 s of silence (not at the 1 s header timeout).
        let idle = try RawConnection(port: port)
        idle.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await idle.response(within: 5).status == "HTTP/1.1 200 OK")
        let idleEnd = try await idle.receive(within: 8)
        #expect(idleEnd.closed)
        #expect(idleEnd.elapsed > 2.5 && idleEnd.elapsed < 5.5, "\(idleEnd.elapsed) s")

        let metrics = try await ServeCommandTests.text(port, "/metrics")
        for reason in ["header-timeout", "body-timeout", "idle-timeout"] {
            #expect(!metrics.contains(#"iqscore_connections_closed_total{reason="\#(reason)"} 0"#), "\(reason) not counted:\n\(metrics)")
        }
        #expect(!server.log.contains(" error "), "\(server.log)")
    }

    @Test("at --max-connections a new client gets in by closing the stalest silent connection")
    func connectionLimit() async throws {
        let (server, port, dir) = try await Self.start(["--max-connections", "4"])
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = server
        var silent: [RawConnection] = []
        for _ in 0..<4 {
            silent.append(try RawConnection(port: port))
            try await Task.sleep(for: .milliseconds(50))
        }
        // A fifth that behaves is answered at once, though the server is full of silent ones.
        let client = try RawConnection(port: port)
        client.send(Self.post("/v1/score", Self.scoreBody))
        let started = Date()
        let answer = try await client.response(within: 5)
        #expect(answer.status == "HTTP/1.1 200 OK", "\(answer.raw)")
        #expect(Date().timeIntervalSince(started) < 1)
        // The oldest silent connection was the one closed.
        let oldest = try await silent[0].receive(within: 2)
        let newest = try await silent[3].receive(within: 0.2)
        #expect(oldest.closed)
        #expect(!newest.closed)
    }

    @Test("request bodies are bounded for the process: over --max-buffered-body-bytes is 503 overloaded")
    func bodyBudget() async throws {
        let (server, port, dir) = try await Self.start(["--max-buffered-body-bytes", "1048576", "--body-timeout", "30"])
        defer { try? FileManager.default.removeItem(at: dir) }
        // One upload holds 800 KB of a 1 MiB budget, its last byte never sent.
        var holder: RawConnection? = try RawConnection(port: port)
        holder?.send("POST /v1/score HTTP/1.1\r\nHost: t\r\nContent-Length: 800001\r\n\r\n")
        holder?.send([UInt8](repeating: UInt8(ascii: " "), count: 800_000))
        try await Task.sleep(for: .milliseconds(300))
        let held = try await ServeCommandTests.text(port, "/metrics")
        #expect(server.process.isRunning, "\(server.log)")
        #expect(held.contains("iqscore_request_body_bytes_buffered 800000"), "\(held)")
        // A second that declares 400 KB is refused at its head, before its body is sent.
        let second = try RawConnection(port: port)
        second.send("POST /v1/score HTTP/1.1\r\nHost: t\r\nContent-Length: 400000\r\nExpect: 100-continue\r\n\r\n")
        let refused = try await second.response(within: 5)
        #expect(refused.status == "HTTP/1.1 503 Service Unavailable", "\(refused.raw)")
        #expect(refused.raw.lowercased().contains("retry-after: 1"))
        #expect(refused.body.contains("urn:iqscore:problem:overloaded"))
        #expect(refused.body.contains("--max-buffered-body-bytes"))
        // A small request still fits.
        let small = try RawConnection(port: port)
        small.send(Self.post("/v1/score", Self.scoreBody))
        #expect(try await small.response(within: 5).status == "HTTP/1.1 200 OK")
        // When the holder goes away its bytes are given back, and the 400 KB upload is invited.
        holder = nil
        try await Task.sleep(for: .milliseconds(300))
        let third = try RawConnection(port: port)
        third.send("POST /v1/score HTTP/1.1\r\nHost: t\r\nContent-Length: 400000\r\nExpect: 100-continue\r\n\r\n")
        #expect(try await third.receive(within: 2).text == "HTTP/1.1 100 Continue\r\n\r\n")
        let after = try await ServeCommandTests.text(port, "/metrics")
        #expect(after.contains("iqscore_request_body_bytes_buffered 0"), "\(after)")
    }

    @Test("protocol faults are the client's: 400/413/417/431 problems, 100 Continue, HTTP/1.0 closed, no 500 for a dropped upload")
    func protocolDetails() async throws {
        let (server, port, dir) = try await Self.start([])
        defer { try? FileManager.default.removeItem(at: dir) }
        let cases: [(String, String, String)] = [
            ("POST /v1/score HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n", "HTTP/1.1 400 Bad Request", "RFC 9112"),
            ("POST /v1/score HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n{}", "HTTP/1.1 400 Bad Request", "Transfer-Encoding"),
            ("POST /v1/score HTTP/1.1\r\nHost: t\r\nExpect: gold\r\nContent-Length: 2\r\n\r\n", "HTTP/1.1 417 Expectation Failed", "100-continue"),
            (
                "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n",
                "HTTP/1.1 431 Request Header Fields Too Large", "--max-header-bytes"
            ),
            ("POST /v1/score HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999\r\n\r\n", "HTTP/1.1 413 Payload Too Large", "--max-body-bytes"),
            ("\u{1}\u{2} nonsense\r\n\r\n", "HTTP/1.1 400 Bad Request", "RFC 9112")
        ]
        for (request, status, detail) in cases {
            let connection = try RawConnection(port: port)
            connection.send(request)
            let answer = try await connection.receive(within: 5)
            #expect(answer.text.hasPrefix(status + "\r\n"), "\(request.prefix(80)): \(answer.text)")
            #expect(answer.text.contains("application/problem+json"), "\(request.prefix(80))")
            #expect(answer.text.contains(detail), "\(request.prefix(80)): \(answer.text)")
            #expect(answer.closed, "\(request.prefix(80)) left open")
        }

        // Expect: 100-continue is answered before the body is sent, then the request is.
        let expecting = try RawConnection(port: port)
        expecting.send("POST /v1/score HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: \(Self.scoreBody.utf8.count)\r\n\r\n")
        let interim = try await expecting.receive(within: 2)
        #expect(interim.text == "HTTP/1.1 100 Continue\r\n\r\n", "\(interim.text)")
        expecting.send(Self.scoreBody)
        #expect(try await expecting.response(within: 5).status == "HTTP/1.1 200 OK")

        // HTTP/1.0 without keep-alive: answered and closed; with keep-alive: kept, and said so.
        let old = try RawConnection(port: port)
        old.send("GET /healthz HTTP/1.0\r\n\r\n")
        let oldAnswer = try await old.receive(within: 5)
        #expect(oldAnswer.closed && oldAnswer.text.contains(" 200 OK"), "\(oldAnswer.text)")
        let oldKept = try RawConnection(port: port)
        oldKept.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let kept = try await oldKept.response(within: 5)
        #expect(kept.raw.lowercased().contains("connection: keep-alive"))
        let stillOpen = try await oldKept.receive(within: 0.3)
        #expect(!stillOpen.closed)

        // Uploads the client abandons: no 500, no error in the log.
        for _ in 0..<20 {
            let dropped = try RawConnection(port: port)
            dropped.send("POST /v1/score HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n{\"session_id\": ")
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(300))
        let metrics = try await ServeCommandTests.text(port, "/metrics")
        // Every route has a 500 series (preallocated at 0); none may have counted one.
        #expect(metrics.range(of: #"status="500"\} [1-9]"#, options: .regularExpression) == nil, "\(metrics)")
        // Each dropped upload is counted as the client's doing.
        #expect(metrics.contains(#"iqscore_problems_total{kind="connection-closed"} 20"#), "\(metrics)")
        #expect(!server.log.contains(" error "), "\(server.log)")
    }

    @Test("HTTP/1.1 without exactly one Host is 400; a client that stops reading responses is closed at --send-timeout")
    func hostAndSendTimeout() async throws {
        let (server, port, dir) = try await Self.start(["--send-timeout", "1"])
        defer { try? FileManager.default.removeItem(at: dir) }
        for head in ["GET /healthz HTTP/1.1\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"] {
            let connection = try RawConnection(port: port)
            connection.send(head)
            let answer = try await connection.receive(within: 5)
            #expect(answer.text.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && answer.text.contains("exactly one Host header"), "\(answer.text)")
            #expect(answer.closed)
        }
        // Sixty pipelined requests for the 60 KB OpenAPI document, never read: the response that cannot be handed to
        // the socket holds the connection in `sending` until the send timeout closes it.
        let reader = try RawConnection(port: port, receiveBuffer: 4_096)
        reader.send(String(repeating: "GET /openapi.json HTTP/1.1\r\nHost: t\r\n\r\n", count: 60))
        var closedBySendTimeout = false
        for _ in 0..<80 where !closedBySendTimeout {
            try await Task.sleep(for: .milliseconds(100))
            let metrics = try await ServeCommandTests.text(port, "/metrics")
            closedBySendTimeout = metrics.contains(#"iqscore_connections_closed_total{reason="send-timeout"} 1"#)
        }
        #expect(closedBySendTimeout, "\(server.log.suffix(2000))")
        let rest = try await reader.receive(within: 10)
        #expect(rest.closed, "the connection was left open")
        #expect(rest.text.components(separatedBy: "HTTP/1.1 200 OK").count - 1 < 60, "every response was taken")
        #expect(try await ServeCommandTests.text(port, "/livez").contains("live"))
    }

    @Test("SIGTERM with a slow upload under way exits within --shutdown-timeout")
    func shutdownDeadline() async throws {
        let (server, port, dir) = try await Self.start(["--shutdown-timeout", "2", "--body-timeout", "600"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let upload = try RawConnection(port: port)
        upload.send("POST /v1/score HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n{")
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        kill(server.process.processIdentifier, SIGTERM)
        // The upload keeps trickling; the server closes it at the deadline.
        for _ in 0..<10 where server.process.isRunning {
            upload.send(" ")
            try await Task.sleep(for: .milliseconds(500))
        }
        let status = try await server.exitStatus(within: 20)
        #expect(status == 0, "stderr:\n\(server.log)")
        let ended = try #require(server.ending.at.withLock { $0 })
        #expect(ended - started > .seconds(1.5) && ended - started < .seconds(6), "\(ended - started)")
        #expect(server.log.contains("shutting down"), "\(server.log)")
    }
}
