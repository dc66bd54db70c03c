// Per-session scoring latency of `SessionScorer` — the server path: one 25-item session at a time, on a bank of
// 1,500 2PL items (six domains), for each estimator. Single thread, then all threads sharing one scorer.
//
//   swift run -c release scoring-latency
//   BANK_SIZE=100 METHOD=eap swift run -c release scoring-latency   # another bank size, one estimator
//   MODEL=graded CATEGORIES=4 swift run -c release scoring-latency   # items in K categories (graded, gpcm, pcm, nominal)
//   TIMES=1 swift run -c release scoring-latency   # EAP with response times (TimedSessionScorer) against without
//
// With MODEL the bank's items are drawn under that model (`BankSpecification.categoryModel`) and the sessions
// answer with categories: the cost per session against the 0/1 bank's, same sizes, same seed.
//
// Each figure is the median over 5 repetitions of 100,000 sessions (simulated with a fixed seed).
import Dispatch
import Foundation
import Integrity
import Psychometrics

let bankSize = Int(ProcessInfo.processInfo.environment["BANK_SIZE"] ?? "") ?? 1500, perSession = 25, sessions = 100_000, repetitions = 5
var rng = SeededGenerator(seed: 2026)
var spec = BankSpecification(model: .twoPL, itemCount: bankSize, domains: ["pattern", "logic", "spatial", "math", "verbal", "memory"])
spec.slopeSDLog = 0.3
if let name = ProcessInfo.processInfo.environment["MODEL"], !name.isEmpty {
    guard let kind = ItemModelKind(rawValue: name) else { fatalError("MODEL must be one of \(ItemModelKind.allCases.map(\.rawValue))") }
    spec.categoryModel = kind
    spec.categories = Int(ProcessInfo.processInfo.environment["CATEGORIES"] ?? "") ?? 4
    print("bank: \(bankSize) \(kind.rawValue) items in \(spec.categories) categories")
} else {
    print("bank: \(bankSize) 2PL items")
}
let bank = spec.draw(using: &rng)
var generated: [(ids: [String], indices: [Int], responses: [UInt8])] = []
ResponseSimulator(bank: bank, itemsPerSession: perSession).generate(count: sessions, using: &rng) { s in
    generated.append((s.responses.map { bank.items[$0.item].itemID }, s.responses.map(\.item), s.responses.map(\.response)))
}
let patterns = generated

func median(_ x: [Double]) -> Double { x.sorted()[x.count / 2] }
func seconds(_ body: () -> Void) -> Double {
    let t0 = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
}

print(
    "| estimator | by item id (µs/session) | by bank index (µs/session) | all \(ProcessInfo.processInfo.activeProcessorCount) threads (sessions/s) |")
print("|---|---|---|---|")
let methodFilter = ProcessInfo.processInfo.environment["METHOD"]
for method in AbilityMethod.allCases where methodFilter == nil || methodFilter == method.rawValue {
    let scorer = try SessionScorer(bank: bank, ability: AbilityOptions(method: method), scale: try IQScale())
    var sink = 0
    var byID: [Double] = [], byIndex: [Double] = [], parallel: [Double] = []
    for _ in 0..<repetitions {
        byID.append(
            seconds {
                for p in patterns { sink &+= (try? scorer.score(itemIDs: p.ids, responses: p.responses.map(Int.init)))?.score.iq ?? 0 }
            })
        byIndex.append(
            seconds {
                for p in patterns {
                    p.indices.withUnsafeBufferPointer { i in
                        p.responses.withUnsafeBufferPointer { r in sink &+= (try? scorer.score(i, r))?.score.iq ?? 0 }
                    }
                }
            })
        let workers = ProcessInfo.processInfo.activeProcessorCount
        let shared = patterns
        parallel.append(
            seconds {
                DispatchQueue.concurrentPerform(iterations: workers) { w in
                    var local = 0
                    for k in stride(from: w, to: sessions, by: workers) {
                        let p = shared[k]
                        p.indices.withUnsafeBufferPointer { i in
                            p.responses.withUnsafeBufferPointer { r in local &+= (try? scorer.score(i, r))?.score.iq ?? 0 }
                        }
                    }
                    _ = local
                }
            })
    }
    precondition(sink != 0)
    print(
        "| \(method.rawValue) | \(String(format: "%.2f", median(byID) / Double(sessions) * 1e6)) | \(String(format: "%.2f", median(byIndex) / Double(sessions) * 1e6)) | \(String(format: "%.0f", Double(sessions) / median(parallel))) |"
    )
}

// With response times: the same sessions, each response timed under the speed–accuracy model (σ_τ 0.3, ρ 0.3), scored
// by `TimedSessionScorer` (collateral prior, speed, effort, l_t) against `SessionScorer` on the same bank, EAP, by
// bank index, interleaved repetitions on one thread; the ratio is the cost of scoring with times.
if ProcessInfo.processInfo.environment["TIMES"] == "1" {
    var timedBank = bank
    let timeItems = ResponseTimeSimulator.drawItems(count: bank.items.count, using: &rng)
    let population = try SpeedAccuracyPopulation(speedSD: 0.3, correlation: 0.3)
    for k in timedBank.items.indices { timedBank.items[k].timeModel = timeItems[k] }
    timedBank.speedPopulation = population
    let simulator = ResponseTimeSimulator(items: timeItems, population: population)
    let secondsPerSession = patterns.map { p -> [Float] in
        let tau = simulator.speed(theta: RandomVariate.normal(using: &rng), using: &rng)
        return p.indices.map { Float(simulator.seconds(item: $0, speed: tau, using: &rng)) }
    }
    let plain = try SessionScorer(bank: timedBank, scale: try IQScale())
    let timed = try TimedSessionScorer(scorer: plain)
    var sink = 0
    var without: [Double] = [], with: [Double] = []
    // The batch path of each (`score` and `/v1/score` run the same calls): domain counts into a buffer, and the
    // sessions laid out one after another as `BatchScorer` holds a batch (items, responses and seconds each in one
    // array), so that both read their input as the batch does.
    let counts = UnsafeMutablePointer<Int>.allocate(capacity: 2 * max(plain.domains.count, 1))
    defer { counts.deallocate() }
    var offsets = [0], flatItems: [Int] = [], flatResponses: [UInt8] = [], flatSeconds: [Float] = []
    for (k, p) in patterns.enumerated() {
        flatItems += p.indices
        flatResponses += p.responses
        flatSeconds += secondsPerSession[k]
        offsets.append(flatItems.count)
    }
    let pairs = 11
    flatItems.withUnsafeBufferPointer { items in
        flatResponses.withUnsafeBufferPointer { responses in
            flatSeconds.withUnsafeBufferPointer { times in
                for _ in 0..<pairs {
                    without.append(
                        seconds {
                            for k in 0..<sessions {
                                let range = offsets[k]..<offsets[k + 1]
                                sink &+=
                                    (try? plain.score(
                                        UnsafeBufferPointer(rebasing: items[range]), UnsafeBufferPointer(rebasing: responses[range]),
                                        domainCounts: counts, report: nil))?.1.iq ?? 0
                            }
                        })
                    with.append(
                        seconds {
                            for k in 0..<sessions {
                                let range = offsets[k]..<offsets[k + 1]
                                sink &+=
                                    (try? timed.score(
                                        UnsafeBufferPointer(rebasing: items[range]), UnsafeBufferPointer(rebasing: responses[range]),
                                        UnsafeBufferPointer(rebasing: times[range]), domainCounts: counts, report: nil))?.1.iq ?? 0
                            }
                        })
                }
            }
        }
    }
    precondition(sink != 0)
    // Each repetition times both back to back: the median of the per-repetition ratios is robust to the machine's
    // load changing between repetitions.
    let a = median(without) / Double(sessions) * 1e6, b = median(with) / Double(sessions) * 1e6
    let ratio = median(zip(with, without).map { $0 / $1 })
    print(
        "\nEAP with response times: \(String(format: "%.2f", b)) µs/session against \(String(format: "%.2f", a)) without; ratio \(String(format: "%.2f", ratio))× (median of \(pairs) paired repetitions), one thread"
    )
}
