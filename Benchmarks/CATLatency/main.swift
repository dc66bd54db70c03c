// Latency of one CAT step — the server path: record a response (EAP re-estimate over the answered items) and
// choose the next item (maximum information with content balancing, randomesque, Sympson–Hetter lottery) on a
// bank of 1,500 2PL items in six domains, with the app's rules (8–25 items, SE 0.30, one item per domain,
// randomesque 5, exposure target 0.25). Single thread.
//
//   swift run -c release cat-latency [--slope-mean-log 0.3] [--model graded --categories 4]
//
// With --model the bank's items are drawn under that model in K categories (`BankSpecification.categoryModel`) and
// the simulees answer with categories: the step's cost against the 0/1 bank's, same bank size and rules.
//
// Each test is simulated (seeded) and every call is timed; the table gives the median, 99th percentile and mean
// over all steps of 5,000 tests, for a few configurations.
import Assembly
import Dispatch
import Foundation
import Psychometrics

var slopeMeanLog = 0.3
if let k = CommandLine.arguments.firstIndex(of: "--slope-mean-log"), k + 1 < CommandLine.arguments.count,
    let v = Double(CommandLine.arguments[k + 1])
{
    slopeMeanLog = v
}

let bankSize = 1500, tests = 5000
var bankRNG = SeededGenerator(seed: 2026)
var spec = BankSpecification(model: .twoPL, itemCount: bankSize, domains: ["pattern", "logic", "spatial", "math", "verbal", "memory"])
spec.slopeMeanLog = slopeMeanLog
spec.slopeSDLog = 0.3
if let k = CommandLine.arguments.firstIndex(of: "--model"), k + 1 < CommandLine.arguments.count {
    guard let kind = ItemModelKind(rawValue: CommandLine.arguments[k + 1]) else {
        fatalError("--model must be one of \(ItemModelKind.allCases.map(\.rawValue))")
    }
    spec.categoryModel = kind
    if let c = CommandLine.arguments.firstIndex(of: "--categories"), c + 1 < CommandLine.arguments.count {
        spec.categories = Int(CommandLine.arguments[c + 1]) ?? 4
    }
}
let bank = try AssemblyBank(bank: spec.draw(using: &bankRNG))

func percentile(_ sorted: [UInt64], _ p: Double) -> Double { Double(sorted[min(sorted.count - 1, Int(p * Double(sorted.count)))]) / 1000 }

print(
    "bank: \(bankSize) \(spec.categoryModel.map { "\($0.rawValue) (\(spec.categories) categories)" } ?? "2PL") items, six domains, a ~ LogNormal(\(slopeMeanLog), 0.3), b ~ N(0, 1); \(tests) simulated tests per row, one thread"
)
print("")
print("| configuration | steps | select median / p99 / mean (µs) | record (EAP) median / p99 / mean (µs) | whole step mean (µs) |")
print("|---|---|---|---|---|")

struct Variant { var name: String; var configuration: CATConfiguration }
var app = CATConfiguration(minItems: 8, maxItems: 25, seTarget: 0.30, minPerDomain: .all(1), randomesque: 5, exposureTarget: 0.25)
var variants = [Variant(name: "app rules + Sympson–Hetter 0.25", configuration: app)]
var plain = app
plain.exposureTarget = nil
variants.append(Variant(name: "app rules, no exposure control", configuration: plain))
var greedy = plain
greedy.randomesque = 1
variants.append(Variant(name: "max information only (k = 1)", configuration: greedy))
var stratified = app
stratified.aStratification = 4
variants.append(Variant(name: "a-stratified (4) + Sympson–Hetter", configuration: stratified))

var poolBuild: [Double] = []
for variant in variants {
    let built = DispatchTime.now().uptimeNanoseconds
    let pool = try CATItemPool(bank: bank, configuration: variant.configuration)
    poolBuild.append(Double(DispatchTime.now().uptimeNanoseconds - built) / 1e6)
    let exposure = variant.configuration.exposureTarget == nil ? nil : try SympsonHetter.calibrate(pool: pool, seed: 11).parameters
    let items = pool.bank.items
    var select: [UInt64] = [], record: [UInt64] = []
    select.reserveCapacity(tests * 26)
    record.reserveCapacity(tests * 26)
    var rng = SeededGenerator(seed: 99)
    for _ in 0..<tests {
        let theta = RandomVariate.normal(using: &rng)
        var session = AdaptiveSession(validatedPool: pool, exposure: exposure)
        while true {
            let t0 = DispatchTime.now().uptimeNanoseconds
            let step = session.nextItem(using: &rng)
            let t1 = DispatchTime.now().uptimeNanoseconds
            select.append(t1 - t0)
            guard case .administer(let j) = step else { break }
            let u = items[j].response(at: theta, uniform: RandomVariate.uniform(using: &rng))
            let t2 = DispatchTime.now().uptimeNanoseconds
            session.recordUnchecked(item: j, response: u)
            record.append(DispatchTime.now().uptimeNanoseconds - t2)
        }
    }
    let meanSelect = Double(select.reduce(0, +)) / Double(select.count) / 1000
    let meanRecord = Double(record.reduce(0, +)) / Double(record.count) / 1000
    select.sort()
    record.sort()
    print(
        "| \(variant.name) | \(record.count) | \(String(format: "%.1f / %.1f / %.1f", percentile(select, 0.5), percentile(select, 0.99), meanSelect)) | \(String(format: "%.1f / %.1f / %.1f", percentile(record, 0.5), percentile(record, 0.99), meanRecord)) | \(String(format: "%.1f", meanSelect + meanRecord)) |"
    )
}
print("")
print("building the pool (information and EAP tables): \(poolBuild.map { String(format: "%.1f", $0) }.joined(separator: ", ")) ms")
