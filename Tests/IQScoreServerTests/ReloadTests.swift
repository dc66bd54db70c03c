import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IQScoreServer
import NIOCore
import Synchronization
import Testing

/// Reloading without downtime: POST /v1/admin/reload (and the same `reload` SIGHUP calls) under load.
@Suite("iqscore serve: reload", .timeLimit(.minutes(2)))
struct ReloadTests {
    /// Replaces `name` in `dir` with `contents` the way an operator should: a new file renamed over the old.
    static func replace(_ name: String, in dir: URL, with contents: Data) throws {
        let temporary = dir.appendingPathComponent(".\(name).new")
        try contents.write(to: temporary)
        _ = rename(temporary.path, dir.appendingPathComponent(name).path)
    }

    @Test("under load from 4 connections: every request answered 200, the version changes, a bad file is refused and the old bank keeps serving")
    func underLoad() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let service = try Fixtures.service(in: dir)
        let first = service.state.bankVersion
        let second = BankVersion.version(ofBankBytes: Array(try Data(contentsOf: dir.appendingPathComponent("bank2.csv"))))
        #expect(first != second)
        let session = try Fixtures.sessions(dir.appendingPathComponent("responses.csv"))[0]
        let body = Fixtures.scoreBody(id: session.id, items: session.items, responses: session.responses)
        try await Fixtures.application(service).test(.live) { client in
            let port = try #require(client.port)
            let stop = StopFlag()
            let answered = AnsweredRequests()
            let results = try await withThrowingTaskGroup(of: [String: Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let connection = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120)))
                        connection.connect()
                        var seen: [String: Int] = [:]
                        while !stop.value.load(ordering: .relaxed) {
                            let response = try await connection.execute(
                                TestClient.Request("/v1/score", method: .post, authority: "127.0.0.1", body: ByteBuffer(string: body)))
                            let json = try TestJSON.parse(response.body ?? ByteBuffer())
                            let version = json["bank_version"]?.string ?? "?"
                            #expect(response.status == .ok)
                            #expect(response.headers[HTTPField.Name("X-Bank-Version")!] == version)
                            seen["\(response.status.code) \(version)", default: 0] += 1
                            await answered.record(version)
                        }
                        try await connection.shutdown()
                        return seen
                    }
                }
                // Each step waits for requests answered (events), not for a time window: 8 on the first bank
                // before the reload, 8 on the second after it, 8 more after the refused reload.
                await answered.wait(for: first, count: 8)
                try Self.replace("bank.csv", in: dir, with: try Data(contentsOf: dir.appendingPathComponent("bank2.csv")))
                let (status, json, headers) = try await client.post("/v1/admin/reload", "", headers: Fixtures.adminHeaders)
                #expect(status == .ok)
                #expect(json == .object([("reloaded", .bool(true)), ("previous_version", .string(first)), ("bank_version", .string(second))]))
                #expect(headers[HTTPField.Name("X-Bank-Version")!] == second)
                await answered.wait(for: second, count: 8)
                // A broken bank is refused with a problem; the second bank keeps serving.
                try Self.replace("bank.csv", in: dir, with: Data("item_id,a,b\ni0001,abc,0\n".utf8))
                let (refused, problem, _) = try await client.post("/v1/admin/reload", "", headers: Fixtures.adminHeaders)
                #expect(refused == .unprocessableContent)
                #expect(problem["type"]?.string == "urn:iqscore:problem:reload-failed")
                #expect(problem["detail"]?.string?.contains("bank.csv:2") == true, "\(problem)")
                #expect(problem["bank_version"]?.string == second)
                await answered.wait(for: second, count: await answered.count(of: second) + 8)
                stop.value.store(true, ordering: .relaxed)
                var total: [String: Int] = [:]
                for try await seen in group { total.merge(seen, uniquingKeysWith: +) }
                return total
            }
            #expect(Set(results.keys) == ["200 \(first)", "200 \(second)"], "\(results)")
            // Requests on both sides of each reload.
            #expect(results["200 \(first)", default: 0] >= 8 && results["200 \(second)", default: 0] >= 16, "\(results)")
            let (_, bank, _) = try await client.get("/v1/bank")
            #expect(bank["bank_version"]?.string == second)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains(#"iqscore_reloads_total{result="applied"} 1"#))
            #expect(metrics.contains(#"iqscore_reloads_total{result="refused"} 1"#))
            #expect(metrics.contains(#"iqscore_bank_info{bank_version="\#(second)""#))
            #expect(!metrics.contains(#"iqscore_bank_info{bank_version="\#(first)""#))
        }
    }

    @Test("a request holding the old state finishes on it: the snapshot is immutable and outlives the swap")
    func snapshot() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let service = try Fixtures.service(in: dir)
        let before = service.state
        try Self.replace("bank.csv", in: dir, with: try Data(contentsOf: dir.appendingPathComponent("bank2.csv")))
        let outcome = try await service.reload(trigger: "test")
        #expect(outcome.previousVersion == before.bankVersion)
        #expect(service.state.bankVersion == outcome.currentVersion)
        #expect(before.bankVersion == outcome.previousVersion)
        #expect(before.bank != service.state.bank)
        // A bad CAT configuration is refused as well, naming the file.
        try Data(#"{"max_items": 0}"#.utf8).write(to: dir.appendingPathComponent("cat.json"))
        await #expect(throws: (any Error).self) { try await service.reload(trigger: "test") }
        #expect(service.state.bankVersion == outcome.currentVersion)
    }
}

/// Tells the load tasks to stop.
final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Requests answered so far, by bank version; a test waits for a count to be reached (an event) instead of
/// sleeping for a window that a busy machine may not fill.
actor AnsweredRequests {
    private var counts: [String: Int] = [:]
    private var waiters: [(version: String, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func record(_ version: String) {
        counts[version, default: 0] += 1
        let reached = counts[version, default: 0]
        waiters.removeAll { waiter in
            guard waiter.version == version, reached >= waiter.count else { return false }
            waiter.continuation.resume()
            return true
        }
    }

    func count(of version: String) -> Int { counts[version, default: 0] }

    /// Returns once `count` requests have been answered on `version` (the suite's time limit ends a wait that
    /// never does).
    func wait(for version: String, count: Int) async {
        guard counts[version, default: 0] < count else { return }
        await withCheckedContinuation { waiters.append((version, count, $0)) }
    }
}
