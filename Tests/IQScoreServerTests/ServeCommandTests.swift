import Foundation
import HTTPTypes
import HummingbirdTesting
import IQScoreServer
import NIOCore
import Synchronization
import Testing
import TestSupport

/// The real `iqscore serve` process: start-up, SIGHUP reload, graceful shutdown, and start-up errors.
@Suite("iqscore serve: the process", .timeLimit(.minutes(2)))
struct ServeCommandTests {
    /// A running `iqscore serve`, stderr in a file.
    final class Server {
        let process = Process()
        let stderr: URL
        /// When the process ended, taken on the thread that reaps it (not the test's, which a busy test run may
        /// hold up), so a time measured from it is the server's.
        let ending = Ending()

        final class Ending: Sendable {
            let at = Mutex<ContinuousClock.Instant?>(nil)
        }

        init(_ arguments: [String], in directory: URL) throws {
            let binary = try #require(IQScoreCLI.executable, "iqscore executable not found; build it with `swift build --build-tests`")
            stderr = directory.appendingPathComponent("serve.stderr")
            _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
            process.executableURL = binary
            process.arguments = ["serve"] + arguments
            process.currentDirectoryURL = directory
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: stderr)
            process.terminationHandler = { [ending] _ in ending.at.withLock { $0 = ContinuousClock.now } }
            try process.run()
        }

        deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        var log: String { (try? String(contentsOf: stderr, encoding: .utf8)) ?? "" }

        /// The port from `iqscore serve: … listening on http://127.0.0.1:PORT`, once the server listens.
        func port(within seconds: Double = 60) async throws -> Int {
            let deadline = Date().addingTimeInterval(seconds)
            while true {
                // The log first: a test run that held this task up past the deadline still finds the line.
                if let range = log.range(of: #"listening on http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
                    let port = Int(log[range].split(separator: ":").last!)
                {
                    return port
                }
                guard process.isRunning, Date() < deadline else { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw TestJSON.ParseError(description: "no 'listening on' line; stderr:\n\(log)")
        }

        /// Waits for the log to hold `text` (the event a test waits on); false when the process ended or `seconds`
        /// (a guard against a hang, not a window the event must fit in) passed first.
        func waitForLog(_ text: String, within seconds: Double = 60) async throws -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while !log.contains(text) {
                guard process.isRunning, Date() < deadline else { return log.contains(text) }
                try await Task.sleep(for: .milliseconds(10))
            }
            return true
        }

        /// Waits for the process to end; nil when it is still running after `seconds`.
        func exitStatus(within seconds: Double) async throws -> Int32? {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            if process.isRunning { return nil }
            process.waitUntilExit()
            // The termination handler (which records `ending`) runs on Foundation's reaping thread, which may
            // come after `isRunning` turns false.
            while ending.at.withLock({ $0 }) == nil && Date() < deadline + 10 { try await Task.sleep(for: .milliseconds(10)) }
            return process.terminationStatus
        }
    }

    static func get(_ port: Int, _ path: String) async throws -> TestJSON {
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120)))
        client.connect()
        defer { Task { try? await client.shutdown() } }
        let response = try await client.execute(TestClient.Request(path, method: .get, authority: "127.0.0.1"))
        return try TestJSON.parse(response.body ?? ByteBuffer())
    }

    static func text(_ port: Int, _ path: String) async throws -> String {
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120)))
        client.connect()
        defer { Task { try? await client.shutdown() } }
        let response = try await client.execute(TestClient.Request(path, method: .get, authority: "127.0.0.1"))
        return String(buffer: response.body ?? ByteBuffer())
    }

    @Test("serve on a free port; SIGHUP reloads a changed bank; SIGTERM exits 0 promptly, with a request under way answered")
    func lifecycle() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try Server(["--bank", "bank.csv", "--cat-config", "cat.json", "--blueprint", "blueprint.json", "--port", "0"], in: dir)
        let port = try await server.port()
        let first = try await Self.get(port, "/healthz")
        #expect(first["status"]?.string == "ok")
        let firstVersion = try #require(first["bank_version"]?.string)
        #expect(
            server.log.contains(
                "iqscore serve: bank bank.csv (120 items, version \(firstVersion)); exposure control off (exposure_target is null in cat.json), listening on http://127.0.0.1:\(port)"
            ))
        #expect(server.log.contains("warning iqscore.serve: adaptive tests are served without exposure control"))

        try ReloadTests.replace("bank.csv", in: dir, with: try Data(contentsOf: dir.appendingPathComponent("bank2.csv")))
        kill(server.process.processIdentifier, SIGHUP)
        // The event is the reload's log line (notice, written at once, just after the new bank is installed).
        let version = BankVersion.version(ofBankBytes: Array(try Data(contentsOf: dir.appendingPathComponent("bank2.csv"))))
        let reloaded = "notice iqscore.serve: reloaded (SIGHUP): bank \(firstVersion) → \(version)"
        #expect(try await server.waitForLog(reloaded), "\(server.log)")
        #expect(try await Self.get(port, "/v1/bank")["bank_version"]?.string == version)

        // A bad file on SIGHUP: refused, logged, still serving.
        try ReloadTests.replace("bank.csv", in: dir, with: Data("item_id,a,b\n".utf8))
        kill(server.process.processIdentifier, SIGHUP)
        #expect(try await server.waitForLog("reload refused (SIGHUP)"), "\(server.log)")
        #expect(try await Self.get(port, "/healthz")["bank_version"]?.string == version)

        // An open keep-alive connection does not hold the shutdown up.
        let idle = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120)))
        idle.connect()
        _ = try await idle.execute(TestClient.Request("/healthz", method: .get, authority: "127.0.0.1"))
        let started = ContinuousClock.now
        kill(server.process.processIdentifier, SIGTERM)
        let status = try await server.exitStatus(within: 30)
        #expect(status == 0, "stderr:\n\(server.log)")
        let ended = try #require(server.ending.at.withLock { $0 })
        #expect(ended - started < .seconds(5))
        #expect(server.log.hasSuffix("iqscore serve: stopped\n"))
        try? await idle.shutdown()
    }

    @Test("SIGTERM with --drain-seconds: /readyz is 503 while every request is still served, then exit 0; JSON log lines carry request ids")
    func drainAndJSONLogs() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try Server(
            [
                "--bank", "bank.csv", "--port", "0", "--exposure", "none", "--drain-seconds", "10", "--log-format", "json",
                "--instance", "drain-test"
            ], in: dir)
        let port = try await server.port()
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(60)))
        client.connect()
        func get(_ path: String, id: String? = nil) async throws -> TestClient.Response {
            var headers = HTTPFields()
            if let id { headers[HTTPField.Name("X-Request-Id")!] = id }
            return try await client.execute(TestClient.Request(path, method: .get, authority: "127.0.0.1", headers: headers))
        }
        let traced = try await get("/healthz", id: "trace-me-42")
        #expect(traced.headers[HTTPField.Name("X-Request-Id")!] == "trace-me-42")
        #expect(traced.headers[HTTPField.Name("X-IQScore-Instance")!] == "drain-test")
        let started = ContinuousClock.now
        kill(server.process.processIdentifier, SIGTERM)
        // The drain begins when the signal is handled: /readyz turns 503 then (a 10 s drain leaves a busy test
        // machine time to see it), and the API still answers.
        var ready = HTTPResponse.Status.ok
        for _ in 0..<200 where ready == .ok {
            ready = try await get("/readyz").status
            if ready == .ok { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(ready == .serviceUnavailable)
        #expect(try await get("/v1/bank").status == .ok, "requests are served while draining")
        let status = try await server.exitStatus(within: 30)
        #expect(status == 0, "stderr:\n\(server.log)")
        let ended = try #require(server.ending.at.withLock { $0 })
        #expect(ended - started > .seconds(9.8) && ended - started < .seconds(25), "\(ended - started)")
        try? await client.shutdown()
        let lines = server.log.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(lines.count >= 5, "\(server.log)")
        let objects = try lines.map { try TestJSON.parse(ByteBuffer(string: String($0))) }
        #expect(objects.allSatisfy { $0["time"]?.string != nil && $0["level"]?.string != nil && $0["message"]?.string != nil })
        #expect(objects.contains { $0["request_id"]?.string == "trace-me-42" && $0["route"]?.string == "/healthz" && $0["status"]?.int == 200 })
        #expect(objects.contains { $0["message"]?.string?.contains("draining for 10") == true })
    }

    @Test("beyond loopback without scoring tokens: refused (64) unless --allow-anonymous; on loopback, a warning")
    func anonymousOnlyOnLoopback() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let refused = try Server(["--bank", "bank.csv", "--port", "0", "--exposure", "none", "--host", "0.0.0.0"], in: dir)
        #expect(try await refused.exitStatus(within: 60) == 64)
        #expect(refused.log.contains("without scoring tokens would give the item bank to anyone"), "\(refused.log)")
        let local = try Server(["--bank", "bank.csv", "--port", "0", "--exposure", "none"], in: dir)
        _ = try await local.port()
        #expect(local.log.contains("no scoring tokens: the API, item bank included, is open"))
        #expect(local.log.contains("tokens: 0 scoring, 0 admin (POST /v1/admin/reload is off; SIGHUP reloads)"))
        kill(local.process.processIdentifier, SIGTERM)
        #expect(try await local.exitStatus(within: 30) == 0)
    }

    @Test("SIGINT stops it too")
    func interrupt() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try Server(["--bank", "bank.csv", "--port", "0", "--exposure", "none"], in: dir)
        _ = try await server.port()
        kill(server.process.processIdentifier, SIGINT)
        #expect(try await server.exitStatus(within: 30) == 0)
    }

    @Test("a bad file at start-up: exit 1 with the loader's located error, nothing served")
    func startupErrors() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("item_id,a,b\ni1,x,0\n".utf8).write(to: dir.appendingPathComponent("broken.csv"))
        try Data(#"{"max_itms": 5}"#.utf8).write(to: dir.appendingPathComponent("badcat.json"))
        let cases: [([String], String)] = [
            (["--bank", "missing.csv"], "missing.csv: error: cannot open file"),
            (["--bank", "broken.csv"], "broken.csv:2:"),
            (["--bank", "bank.csv", "--cat-config", "badcat.json"], "badcat.json:1:2: error: unknown key \"max_itms\""),
            (["--bank", "bank.csv", "--norms", "missing.json"], "missing.json: error: cannot open file"),
            (["--bank", "bank.csv", "--exposure", "cat.json"], "cat.json")
        ]
        for (arguments, message) in cases {
            let run = try IQScoreCLI.run(["serve"] + arguments + ["--port", "0"], in: dir)
            #expect(run.status == 1, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
            #expect(!run.stderr.contains("listening"))
        }
        let usage = try IQScoreCLI.run(["serve", "--bank", "bank.csv", "--max-body-bytes", "0"], in: dir)
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("--max-body-bytes must be 1024…268435456, got 0"), "\(usage.stderr)")
    }
}
