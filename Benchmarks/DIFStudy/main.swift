import Fairness
import Foundation
import Psychometrics

// Power and Type I error of the DIF methods (issue #29): two groups of PERSONS each, the reference N(0, 1) and
// the focal N(-0.5, 1) (unequal means throughout), ITEMS 2PL items (a ~ U(0.8, 2), b ~ N(0, 1), drawn per
// replication), DIF in 10% or 20% of the items:
//   uniform:     the focal group's b shifted by 0.5 (unbalanced: every DIF item harder for the focal group;
//                balanced: half harder, half easier);
//   non-uniform: the focal group's a halved (unbalanced) or half halved and half × 1.5 (balanced), b unchanged;
// dense (every person answers every item) or missing by design (three blocks of items, each person two of them
// at random: θ matching for MH and LR); and a null condition without DIF (dense and missing). Each method (mh,
// lr, irt) without and with purification, flags at Benjamini–Hochberg adjusted p < 0.05. Power: the share of
// the DIF items flagged; Type I: the share of the other items flagged (over items × replications). The null
// condition also runs MH matched on the rest score, to show why the total score is the default.
//
// --methods chooses the methods (default mh,lr,irt; wald as well); --anchor N adds a run per method purified and
// then tested against a constant anchor of the N least-DIF unflagged items (DIFOptions.anchorCount), reported as
// "+a".
//
//   swift run -c release dif-study [--replications R] [--persons N] [--items J] [--seed S] [--threads T]
//                                  [--methods LIST] [--anchor N] [--dense-only]

var replications = 10, persons = 1_000, itemCount = 30, threads = WorkerThreads.all
var seed: UInt64 = 29
var methods: [DIFMethod] = [.mantelHaenszel, .logisticRegression, .likelihoodRatio], anchor = 0, denseOnly = false
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fatalError("\(flag) needs a value") }
    switch flag {
    case "--replications": replications = Int(value)!
    case "--persons": persons = Int(value)!
    case "--items": itemCount = Int(value)!
    case "--seed": seed = UInt64(value)!
    case "--threads": threads = Int(value)!
    case "--methods": methods = value.split(separator: ",").map { DIFMethod(rawValue: String($0))! }
    case "--anchor": anchor = Int(value)!
    case "--dense-only": denseOnly = value == "yes"
    default: fatalError("unknown option \(flag)")
    }
}

enum Kind: String { case none, uniform, nonUniform = "non-uniform" }
struct Condition {
    var kind: Kind; var balanced: Bool; var share: Double; var missing: Bool
    var name: String { kind == .none ? "no DIF" : "\(kind.rawValue), \(balanced ? "balanced" : "unbalanced"), \(Int(share * 100))%" }
}

@MainActor func simulate(_ c: Condition, rng: inout SeededGenerator) throws -> (data: ResponseMatrix, groups: [String], dif: Set<Int>) {
    let J = itemCount
    let a = (0..<J).map { _ in 0.8 + 1.2 * RandomVariate.uniform(using: &rng) }
    let b = (0..<J).map { _ in RandomVariate.normal(using: &rng) }
    let k = c.kind == .none ? 0 : Int((c.share * Double(J)).rounded())
    let dif = Set((0..<J).shuffled(using: &rng).prefix(k))
    let order = dif.sorted()
    var af = a, bf = b
    for (n, j) in order.enumerated() {
        let against = !c.balanced || n % 2 == 0
        switch c.kind {
        case .uniform: bf[j] = b[j] + (against ? 0.5 : -0.5)
        case .nonUniform: af[j] = a[j] * (against ? 0.5 : 1.5)
        case .none: break
        }
    }
    var rows: [[UInt8?]] = [], groups: [String] = []
    for group in ["ref", "foc"] {
        for _ in 0..<persons {
            let theta = group == "ref" ? RandomVariate.normal(using: &rng) : -0.5 + RandomVariate.normal(using: &rng)
            let skipped = c.missing ? Int(RandomVariate.uniform(using: &rng) * 3) : -1
            rows.append(
                (0..<J).map { j in
                    if j * 3 / J == skipped { return nil }
                    let (aj, bj) = group == "ref" ? (a[j], b[j]) : (af[j], bf[j])
                    return RandomVariate.uniform(using: &rng) < Logistic.sigmoid(aj * (theta - bj)) ? 1 : 0
                })
            groups.append(group)
        }
    }
    return (try ResponseMatrix(itemIDs: (0..<J).map { "i\($0)" }, rows: rows), groups, dif)
}

struct Tally {
    var hits = 0, difItems = 0, falseFlags = 0, cleanItems = 0
    var power: String { difItems == 0 ? "–" : String(format: "%.2f", Double(hits) / Double(difItems)) }
    var typeI: String { String(format: "%.3f", Double(falseFlags) / Double(max(1, cleanItems))) }
}

var conditions: [Condition] = []
for missing in denseOnly ? [false] : [false, true] {
    conditions.append(Condition(kind: .none, balanced: false, share: 0, missing: missing))
    for kind in [Kind.uniform, .nonUniform] {
        for balanced in [false, true] {
            for share in [0.1, 0.2] {
                conditions.append(Condition(kind: kind, balanced: balanced, share: share, missing: missing))
            }
        }
    }
}
print(
    "| design | condition | method | power | Type I | power (purified) | Type I (purified) |"
        + (anchor > 0 ? " power (constant anchor) | Type I (constant anchor) |" : ""))
print("|---|---|---|---|---|---|---|" + (anchor > 0 ? "---|---|" : ""))
let started = Date()
for (ci, condition) in conditions.enumerated() {
    var tallies: [String: Tally] = [:]
    for r in 0..<replications {
        var rng = SeededGenerator(seed: seed &+ UInt64(1_000 * ci + r))
        let (data, groups, dif) = try simulate(condition, rng: &rng)
        for (purify, anchored) in [(false, false), (true, false)] + (anchor > 0 ? [(true, true)] : []) {
            var options = DIFOptions()
            options.methods = methods
            options.purify = purify
            if anchored { options.anchorCount = anchor }
            options.dtfDraws = 0
            options.calibration.standardErrors = false
            options.calibration.workers = threads
            var runs = [(String, DIFOptions)]()
            runs.append(("", options))
            if condition.kind == .none && !condition.missing && !purify {
                var rest = options
                rest.methods = [.mantelHaenszel]
                rest.matching = .restScore
                runs.append((" rest", rest))
            }
            for (suffix, o) in runs {
                let report = try DIFAnalysis.run(data, groups: groups, reference: "ref", options: o)
                for method in o.methods {
                    let key = method.rawValue + suffix + (anchored ? "+a" : purify ? "+p" : "")
                    var t = tallies[key] ?? Tally()
                    for (j, row) in report.rows.enumerated() {
                        let flagged = row.flaggedBy.contains(method)
                        if dif.contains(j) {
                            t.difItems += 1; if flagged { t.hits += 1 }
                        } else {
                            t.cleanItems += 1; if flagged { t.falseFlags += 1 }
                        }
                    }
                    tallies[key] = t
                }
            }
        }
    }
    for key in ["mh", "mh rest", "lr", "irt", "wald"] {
        guard let plain = tallies[key] else { continue }
        let purified = tallies[key + "+p"], anchored = tallies[key + "+a"]
        print(
            "| \(condition.missing ? "missing by design" : "dense") | \(condition.name) | \(key == "mh rest" ? "mh (rest score)" : key) | \(plain.power) | \(plain.typeI) | \(purified?.power ?? "–") | \(purified?.typeI ?? "–") |"
                + (anchor > 0 ? " \(anchored?.power ?? "–") | \(anchored?.typeI ?? "–") |" : ""))
    }
    FileHandle.standardError.write(Data("condition \(ci + 1)/\(conditions.count) done at \(Int(Date().timeIntervalSince(started))) s\n".utf8))
}
print(
    "\n\(replications) replications per condition, \(persons) persons per group, \(itemCount) items, seed \(seed); \(Int(Date().timeIntervalSince(started))) s"
)
