import Foundation
import Hummingbird
import HummingbirdTesting
import IQScoreServer
import Logging
import NIOCore
import Testing
import TestSupport

/// Banks, sessions and services for the server tests (the built `iqscore` binary is `IQScoreCLI`'s, TestSupport).
enum Fixtures {
    /// A directory, made once per test run, with:
    /// - `bank.csv`: a simulated 120-item 2PL bank in domains a, b, c (`iqscore simulate --seed 3`);
    /// - `bank2.csv`: the same item ids with other parameters (`--seed 4`), for reloads;
    /// - `responses.csv`: 40 sessions × 20 items of the first bank, long layout;
    /// - `cat.json`: at most 8 items, at least 2 per domain, randomesque 4 (so the seed matters), no exposure
    ///   control (so a server starts without calibrating it; CATNextTests covers exposure parameters); `blueprint.json`: 12 items, 4 per domain.
    static let data: Result<URL, any Error> = Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-server-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Shared by every test of the run, so removed when the test process exits (it outlived each run before).
        sharedDirectory = directory.path
        atexit { if let path = Fixtures.sharedDirectory { try? FileManager.default.removeItem(atPath: path) } }
        for (seed, bank, out) in [("3", "bank.csv", "responses.csv"), ("4", "bank2.csv", "responses2.csv")] {
            let run = try IQScoreCLI.run(
                [
                    "simulate", "--model", "2pl", "--items", "120", "--persons", "40", "--items-per-session", "20",
                    "--domains", "a,b,c", "--layout", "long", "--slope-mean-log", "0.3", "--out", out,
                    "--bank-out", bank, "--seed", seed
                ], in: directory)
            guard run.status == 0 else { throw TestJSON.ParseError(description: "simulate failed: \(run.stderr)") }
        }
        try Data(#"{"max_items": 8, "min_per_domain": 2, "randomesque": 4, "exposure_target": null}"#.utf8).write(
            to: directory.appendingPathComponent("cat.json"))
        try Data(#"{"length": 12, "domain_counts": {"a": 4, "b": 4, "c": 4}}"#.utf8).write(to: directory.appendingPathComponent("blueprint.json"))
        return directory
    }

    /// `data`'s directory once made, for the exit handler (which must not make it).
    nonisolated(unsafe) static var sharedDirectory: String?

    static func dataDirectory() throws -> URL { try data.get() }

    /// A fresh directory holding copies of the data files (for tests that change them).
    static func copyOfData() throws -> URL {
        let source = try dataDirectory()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-server-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in ["bank.csv", "bank2.csv", "responses.csv", "cat.json", "blueprint.json"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: directory.appendingPathComponent(name))
        }
        return directory
    }

    /// Sessions of a long-layout file: id, item ids and responses in file order.
    static func sessions(_ file: URL) throws -> [(id: String, items: [String], responses: [Int])] {
        var order: [String] = []
        var byID: [String: (items: [String], responses: [Int])] = [:]
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if byID[f[0]] == nil { order.append(f[0]); byID[f[0]] = ([], []) }
            byID[f[0]]!.items.append(f[1])
            byID[f[0]]!.responses.append(Int(f[2])!)
        }
        return order.map { ($0, byID[$0]!.items, byID[$0]!.responses) }
    }

    static let quietLogger = Logger(label: "iqscore.serve.tests") { _ in SwiftLogNoOpLogHandler() }

    /// The admin token every fixture service accepts (from its configuration's token environment), and the
    /// header that carries it.
    static let adminToken = "admin-token-of-the-tests-0001"
    static let adminHeaders: HTTPFields = [.authorization: "Bearer \(adminToken)"]
    /// A scoring token, for services made with `scoringToken: true`.
    static let scoringToken = "scoring-token-of-the-tests-01"
    static let scoringHeaders: HTTPFields = [.authorization: "Bearer \(scoringToken)"]

    /// A service on the shared data (or on `directory`), with the CAT rules, blueprint and exposure given.
    static func service(
        in directory: URL? = nil, bank: String = "bank.csv", cat: Bool = true, blueprint: Bool = true,
        exposure: String? = nil, limits: ServerLimits = ServerLimits(), scoringToken: Bool = false,
        instance: String = "test-instance"
    ) throws -> ScoringService {
        let dir = try directory ?? dataDirectory()
        var configuration = ServerConfiguration(
            bankPath: dir.appendingPathComponent(bank).path,
            catConfigurationPath: cat ? dir.appendingPathComponent("cat.json").path : nil,
            blueprintPath: blueprint ? dir.appendingPathComponent("blueprint.json").path : nil,
            exposurePath: exposure.map { dir.appendingPathComponent($0).path })
        // No calibration at load (seconds in a debug build, for every service a test makes): exposure as given.
        configuration.exposureControl = false
        configuration.tokenEnvironment = [AccessTokens.adminVariable: adminToken]
        if scoringToken { configuration.tokenEnvironment[AccessTokens.scoringVariable] = Self.scoringToken }
        return try ScoringService(configuration: configuration, limits: limits, instance: instance, logger: quietLogger)
    }

    /// The whole application on an ephemeral loopback port.
    static func application(_ service: ScoringService) -> some ApplicationProtocol {
        IQScoreApplication.makeApplication(service: service, options: IQScoreApplication.Options(host: "127.0.0.1", port: 0))
    }

    static func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// A score request body.
    static func scoreBody(id: String?, items: [String], responses: [Int], method: String? = nil) -> String {
        var members: [String] = []
        if let id { members.append(#""session_id":"\#(id)""#) }
        members.append(#""item_ids":[\#(items.map { "\"\($0)\"" }.joined(separator: ","))]"#)
        members.append(#""responses":[\#(responses.map(String.init).joined(separator: ","))]"#)
        if let method { members.append(#""method":"\#(method)""#) }
        return "{" + members.joined(separator: ",") + "}"
    }
}

extension TestClientProtocol {
    /// POSTs `body` and returns the status and the parsed JSON body.
    func post(_ uri: String, _ body: String, headers: HTTPFields = [:]) async throws -> (HTTPResponse.Status, TestJSON, HTTPFields) {
        let response = try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
        return (response.status, try TestJSON.parse(response.body), response.headers)
    }

    func get(_ uri: String) async throws -> (HTTPResponse.Status, TestJSON, HTTPFields) {
        let response = try await execute(uri: uri, method: .get)
        return (response.status, try TestJSON.parse(response.body), response.headers)
    }
}
