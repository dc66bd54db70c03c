import Assembly
import Foundation
import HummingbirdTesting
import IQScoreServer
import PsychometricsIO
import Testing

/// POST /v1/cat/next is the library's stateless step, seeded from the session id and the bank version.
@Suite("iqscore serve: adaptive steps", .timeLimit(.minutes(2)))
struct CATNextTests {
    static func body(_ session: String, _ history: [(String, Int)], exclude: [String]? = nil) -> String {
        let administered = history.map { #"{"item_id": "\#($0.0)", "response": \#($0.1)}"# }.joined(separator: ",")
        let excluded = exclude.map { #", "exclude": [\#($0.map { "\"\($0)\"" }.joined(separator: ","))]"# } ?? ""
        return #"{"session_id": "\#(session)", "administered": [\#(administered)]\#(excluded)}"#
    }

    @Test("each step is the library's nextStep with seed FNV-1a(session id, bank version); the same request twice gives the same answer")
    func matchesLibrary() async throws {
        let service = try Fixtures.service()
        let state = service.state
        let pool = try #require(state.pool)
        try await Fixtures.application(service).test(.router) { client in
            for session in ["alpha", "beta", "gamma"] {
                var history: [(String, Int)] = []
                let seed = BankVersion.catSeed(sessionID: session, bankVersion: state.bankVersion)
                for step in 0..<5 {
                    let (status, json, _) = try await client.post("/v1/cat/next", Self.body(session, history, exclude: ["i0010"]))
                    #expect(status == .ok)
                    let (_, again, _) = try await client.post("/v1/cat/next", Self.body(session, history, exclude: ["i0010"]))
                    #expect(again == json)
                    let expected = try pool.nextStep(
                        administered: history.map { AdministeredItem(itemID: $0.0, response: $0.1) },
                        excluding: ["i0010"], seed: seed)
                    guard case .administer(let itemID, let domain) = expected.action else { Issue.record("library stopped"); return }
                    #expect(json.keys == ["action", "item_id", "domain", "theta", "se", "n_items", "bank_version"])
                    #expect(json["action"]?.string == "administer")
                    #expect(json["item_id"]?.string == itemID)
                    #expect(json["domain"]?.string == domain)
                    #expect(json["n_items"]?.int == step)
                    #expect(json["theta"]?.double == (expected.estimate.theta * 10_000).rounded(.toNearestOrAwayFromZero) / 10_000)
                    #expect(itemID != "i0010")
                    history.append((itemID, step % 2))
                }
            }
            // The seed comes from the session id: ten sessions do not all start with the same item (randomesque 4).
            var firstItems = Set<String>()
            for k in 0..<10 {
                let (_, json, _) = try await client.post("/v1/cat/next", Self.body("person-\(k)", []))
                firstItems.insert(json["item_id"]?.string ?? "")
            }
            #expect(firstItems.count > 1)
        }
        #expect(
            BankVersion.catSeed(sessionID: "a", bankVersion: "0123456789abcdef")
                != BankVersion.catSeed(sessionID: "a", bankVersion: "0123456789abcdee"))
    }

    @Test("a test followed to the end stops at max_items with the score POST /v1/score gives")
    func runToStop() async throws {
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            var history: [(String, Int)] = []
            var last = TestJSON.null
            for step in 0..<20 {
                let (status, json, _) = try await client.post("/v1/cat/next", Self.body("runner", history))
                #expect(status == .ok)
                last = json
                guard json["action"]?.string == "administer", let item = json["item_id"]?.string else { break }
                history.append((item, step % 3 == 0 ? 0 : 1))
            }
            #expect(last["action"]?.string == "stop")
            #expect(last["reason"]?.string == "max_items")
            #expect(history.count == 8)
            let domains = Dictionary(grouping: history.map { Int($0.0.dropFirst())! % 3 }, by: { $0 }).mapValues(\.count)
            #expect(domains.count == 3) // simulate assigns domains a, b, c in turn; at least 2 each
            let (_, score, _) = try await client.post(
                "/v1/score", Fixtures.scoreBody(id: "runner", items: history.map(\.0), responses: history.map(\.1)))
            #expect(last["score"] == score)
            #expect(last["bank_version"] == score["bank_version"])
        }
    }

    @Test("--exposure: items with k = 0 are never administered, and the steps equal the library's with those parameters")
    func exposureControl() async throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        var csv = "item_id,k\n"
        for j in 1...60 { csv += String(format: "i%04d,0\n", j) }
        try Data(csv.utf8).write(to: dir.appendingPathComponent("exposure.csv"))
        let service = try Fixtures.service(in: dir, exposure: "exposure.csv")
        let state = service.state
        let pool = try #require(state.pool)
        let exposure = try ExposureParameters.load(csv: dir.appendingPathComponent("exposure.csv").path, bank: try #require(state.assemblyBank))
        try await Fixtures.application(service).test(.router) { client in
            for session in ["x1", "x2", "x3", "x4"] {
                var history: [(String, Int)] = []
                for _ in 0..<4 {
                    let (_, json, _) = try await client.post("/v1/cat/next", Self.body(session, history))
                    let item = try #require(json["item_id"]?.string)
                    #expect(Int(item.dropFirst())! > 60)
                    let expected = try pool.nextStep(
                        administered: history.map { AdministeredItem(itemID: $0.0, response: $0.1) }, exposure: exposure,
                        seed: BankVersion.catSeed(sessionID: session, bankVersion: state.bankVersion))
                    #expect(expected.action == .administer(itemID: item, domain: json["domain"]?.string ?? ""))
                    history.append((item, 1))
                }
            }
        }
    }
}
