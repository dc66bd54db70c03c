// In-process cost of answering `POST /v1/score` (issue 25): what the server does for a 25-item session between
// reading the body and handing the response to HTTP, without the network, on one thread.
//
//   swift run -c release serve-latency
//
// On a 1,500-item six-domain 2PL bank (as Benchmarks/serve_load.py makes), 2,000 sessions of 25 items with
// responses from the 2PL at θ ~ N(0, 1), each phase timed over all of them, median of 7 repetitions:
//   * the bearer token's check (`AccessTokens.identify`: SHA-256 of the token and a table lookup);
//   * the scoring alone (`SessionScorer.score` by bank index: the EAP over 61 nodes, IQ and percentile);
//   * the whole handler (`ScoringService.score`: body → request → score → JSON response) on the bodies clients
//     send, which `ScoreRequestScanner` reads, and on the same bodies with the session id written with an escape
//     (`"s\u0031"`), which go the strict way (`RequestJSON` + `RequestDecoding`).
import Foundation
import IQScoreServer
import NIOCore
import Psychometrics
import PsychometricsIO

let sessions = 2_000, repetitions = 7
var rng = SeededGenerator(seed: 7)
var spec = BankSpecification(model: .twoPL, itemCount: 1_500, domains: ["pattern", "logic", "spatial", "math", "verbal", "memory"])
spec.slopeMeanLog = 0.3
let bank = spec.draw(using: &rng)
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-latency-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let bankPath = directory.appendingPathComponent("bank.csv").path
try bank.csv().write(toFile: bankPath, atomically: true, encoding: .utf8)
var configuration = ServerConfiguration(bankPath: bankPath)
configuration.exposureControl = false
let token = "bench-scoring-token-0123456789abcdef"
configuration.tokenEnvironment = [AccessTokens.scoringVariable: token]
let service = try ScoringService(configuration: configuration)
let state = service.state

var plain: [ByteBuffer] = [], escaped: [ByteBuffer] = []
var indices: [[Int]] = [], answers: [[UInt8]] = []
ResponseSimulator(parameters: bank.items.map(\.parameters), itemsPerSession: 25).generate(count: sessions, using: &rng) { s in
    let ids = s.responses.map { "\"\(bank.items[$0.item].itemID)\"" }.joined(separator: ",")
    let responses = s.responses.map { String($0.response) }.joined(separator: ",")
    plain.append(ByteBuffer(string: #"{"session_id":"s1","item_ids":[\#(ids)],"responses":[\#(responses)]}"#))
    escaped.append(ByteBuffer(string: #"{"session_id":"s\u0031","item_ids":[\#(ids)],"responses":[\#(responses)]}"#))
    indices.append(s.responses.map(\.item))
    answers.append(s.responses.map(\.response))
}
let scorer = try SessionScorer(bank: bank, ability: AbilityOptions(method: .eap), scale: try IQScale())

func medianMicroseconds(_ body: () throws -> Int) rethrows -> Double {
    var times: [Double] = []
    var sink = 0
    for _ in 0..<repetitions {
        let t0 = DispatchTime.now().uptimeNanoseconds
        sink &+= try body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e3 / Double(sessions))
    }
    precondition(sink != 0)
    return times.sorted()[repetitions / 2]
}

let header = "Bearer " + token
let identify = medianMicroseconds { (0..<sessions).reduce(0) { n, _ in n + (state.access.identify(authorization: header) == nil ? 0 : 1) } }
let scoring = try medianMicroseconds {
    var n = 0
    for k in 0..<sessions {
        n += try indices[k].withUnsafeBufferPointer { i in try answers[k].withUnsafeBufferPointer { r in try scorer.score(i, r).score.iq } }
    }
    return n
}
let fast = try medianMicroseconds { try plain.reduce(0) { n, body in n + (try service.score(state, body).status.code == 200 ? 1 : 0) } }
let strict = try medianMicroseconds { try escaped.reduce(0) { n, body in n + (try service.score(state, body).status.code == 200 ? 1 : 0) } }
print("| phase (25-item session, 1,500-item bank) | µs per request |")
print("|---|---:|")
print(String(format: "| bearer token check (SHA-256 + lookup) | %.2f |", identify))
print(String(format: "| scoring alone (EAP, IQ, percentile; by bank index) | %.2f |", scoring))
print(String(format: "| whole handler, the bodies clients send (ScoreRequestScanner) | %.2f |", fast))
print(String(format: "| whole handler, strict reader (an escape in session_id) | %.2f |", strict))
