import Foundation
import Integrity
import Psychometrics

// Detection and false-flag rates of the unproctored-testing statistics (issue #30), on model-generated data: a
// 2PL bank of ITEMS items with lognormal time items (β ~ N(3.4, 0.5²), α = exp(N(log 1.5, 0.2²))), θ ~ N(0, 1),
// speed σ_τ = 0.3 and ρ = 0.3, tests of 25 items drawn at random. Per session:
//   engaged:      the model as it stands (every false flag is counted here);
//   rapid:        a rapid guesser answering a share SHARE of its items in 1–4 s, correct with probability 0.25;
//   preknowledge: C of its 25 items from a compromised set, answered correctly with probability 0.95 in a fifth of
//                 the time (C = 3, 6, 12), beside honest sessions with the same C.
// The statistics use the true item parameters (their estimation error is the calibration's, measured by its
// recovery test). Flags: a response is a rapid guess below NT10 (from the bank's time model) or below the
// lognormal rule's 0.001 quantile; a session is disengaged at RTE < 0.90; l_t at p < 0.01; l_z* (at the WLE) below
// −2.33 (1%); preknowledge at a combined p < 0.01.
// The item monitor: DAYS days of SESSIONS_PER_DAY sessions on a bank of ITEMS items; the bank calibrated (with
// times) on the days before a leak of 5 items on day LEAK_DAY, after which a share of the sessions (0.1, 0.3)
// knows them; days from the leak to each leaked item's first alarm, and false alarms per 1,000 item-days on the
// other items — and on a run without any leak.
//
//   swift run -c release integrity-study [--sessions N] [--items J] [--seed S] [--replications R]

var sessions = 20_000, itemCount = 300, seed: UInt64 = 30, replications = 3
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fatalError("\(flag) needs a value") }
    switch flag {
    case "--sessions": sessions = Int(value)!
    case "--items": itemCount = Int(value)!
    case "--seed": seed = UInt64(value)!
    case "--replications": replications = Int(value)!
    default: fatalError("unknown option \(flag)")
    }
}

var rng = SeededGenerator(seed: seed)
let bank = BankSpecification(model: .twoPL, itemCount: itemCount).draw(using: &rng)
let parameters = bank.items.map(\.parameters)
let timeItems = ResponseTimeSimulator.drawItems(count: itemCount, using: &rng)
let population = try SpeedAccuracyPopulation(speedSD: 0.3, correlation: 0.3)
let times = ResponseTimeSimulator(items: timeItems, population: population)
let optionalTimes: [LognormalTimeItem?] = timeItems
let nt10 = RapidGuessThresholds.normative(items: optionalTimes, population: population)
let lognormalRule = RapidGuessThresholds.lognormal(items: optionalTimes, population: population, quantile: 0.001)
let wle = try AbilityEstimator(
    parameters: parameters,
    options: {
        var o = AbilityOptions(); o.method = .wle; return o
    }())

struct Session { var items: [Int]; var responses: [UInt8]; var seconds: [Double]; var rapid: [Bool] }

/// A session of 25 items: `compromisedCount` of them from the first `compromisedSet` items (known when `knows`),
/// the rest from the others; `rapidShare` of its items rapid-guessed.
@MainActor func session(compromisedCount: Int = 0, compromisedSet: Int = 30, knows: Bool = false, rapidShare: Double = 0) -> Session {
    let theta = RandomVariate.normal(using: &rng), tau = times.speed(theta: theta, using: &rng)
    var pool = Array(compromisedSet..<itemCount), pick = Array(0..<compromisedSet)
    pool.shuffle(using: &rng); pick.shuffle(using: &rng)
    let items = Array(pick.prefix(compromisedCount)) + Array(pool.prefix(25 - compromisedCount))
    var s = Session(items: items, responses: [], seconds: [], rapid: [])
    for j in items {
        var u: UInt8 = RandomVariate.uniform(using: &rng) < parameters[j].probability(at: theta) ? 1 : 0
        var t = times.seconds(item: j, speed: tau, using: &rng)
        var rapid = false
        if knows && j < compromisedSet {
            u = RandomVariate.uniform(using: &rng) < 0.95 ? 1 : 0
            t /= 5
        } else if RandomVariate.uniform(using: &rng) < rapidShare {
            u = RandomVariate.uniform(using: &rng) < 0.25 ? 1 : 0
            t = 1 + 3 * RandomVariate.uniform(using: &rng)
            rapid = true
        }
        s.responses.append(u); s.seconds.append(t); s.rapid.append(rapid)
    }
    return s
}

struct Flags { var rte = false, lt = false, lz = false, pk = false; var nt10Responses = 0, lognormalResponses = 0 }
@MainActor func flags(_ s: Session, compromisedSet: Int = 30) -> Flags {
    var f = Flags()
    let effort = ResponseTimeEffort(items: s.items, seconds: s.seconds, thresholds: nt10)
    f.rte = effort.isDisengaged
    f.nt10Responses = effort.rapidGuesses
    f.lognormalResponses = ResponseTimeEffort(items: s.items, seconds: s.seconds, thresholds: lognormalRule).rapidGuesses
    f.lt = (LognormalPersonFit(items: s.items.map { timeItems[$0] }, seconds: s.seconds).pValue ?? 1) < 0.01
    let theta = s.items.withUnsafeBufferPointer { i in s.responses.withUnsafeBufferPointer { wle.estimate(i, $0) } }.theta
    let lz = s.items.withUnsafeBufferPointer { i in
        s.responses.withUnsafeBufferPointer { PersonFitLz.statistics(parameters: parameters, items: i, responses: $0, theta: theta) }
    }
    f.lz = (lz.lzStar ?? 0) < -2.33
    let compromised = (0..<itemCount).map { $0 < compromisedSet }
    f.pk =
        (PreknowledgeTest(
            items: s.items, responses: s.responses, seconds: s.seconds, parameters: parameters, timeItems: optionalTimes,
            compromised: compromised
        ).combinedPValue ?? 1) < 0.01
    return f
}

func rate(_ n: Int, _ d: Int) -> String { String(format: "%.4f", Double(n) / Double(max(d, 1))) }

// 1. Per session and per response.
print("## Flags on \(sessions) sessions per condition (\(itemCount)-item bank, 25 items each, true parameters)\n")
print("| condition | NT10 responses flagged | lognormal-rule responses flagged | RTE < 0.90 | l_t p < 0.01 | l_z* < −2.33 | preknowledge p < 0.01 |")
print("|---|---|---|---|---|---|---|")
@MainActor func row(_ name: String, _ make: () -> Session, compromisedCount: Int = 3) {
    var rte = 0, lt = 0, lz = 0, pk = 0, nt = 0, ln = 0, responses = 0, rapidNT = 0, rapidLN = 0, rapidTotal = 0
    for _ in 0..<sessions {
        let s = make()
        let f = flags(s)
        if f.rte { rte += 1 }; if f.lt { lt += 1 }; if f.lz { lz += 1 }; if f.pk { pk += 1 }
        // Responses: engaged ones (false flags) and planted rapid guesses (detections) counted apart.
        for k in s.items.indices {
            let isNT = nt10.isRapid(item: s.items[k], seconds: s.seconds[k]), isLN = lognormalRule.isRapid(item: s.items[k], seconds: s.seconds[k])
            if s.rapid[k] {
                rapidTotal += 1; if isNT { rapidNT += 1 }; if isLN { rapidLN += 1 }
            } else {
                responses += 1; if isNT { nt += 1 }; if isLN { ln += 1 }
            }
        }
    }
    let respNT = rapidTotal > 0 ? "\(rate(rapidNT, rapidTotal)) of guesses (\(rate(nt, responses)) of others)" : rate(nt, responses)
    let respLN = rapidTotal > 0 ? "\(rate(rapidLN, rapidTotal)) of guesses (\(rate(ln, responses)) of others)" : rate(ln, responses)
    print("| \(name) | \(respNT) | \(respLN) | \(rate(rte, sessions)) | \(rate(lt, sessions)) | \(rate(lz, sessions)) | \(rate(pk, sessions)) |")
}
row("engaged (false flags)", { session() })
row("rapid guesser, 20% of items", { session(rapidShare: 0.2) })
row("rapid guesser, 50% of items", { session(rapidShare: 0.5) })
for c in [3, 6, 12] {
    row("honest, \(c) compromised items seen (false flags)", { session(compromisedCount: c) })
    row("preknowledge of \(c) of 25 items", { session(compromisedCount: c, knows: true) })
}

// 2. Effort-moderated scoring: θ bias of rapid guessers (50%) with and without their guesses.
let eap = try AbilityEstimator(parameters: parameters)
var biasAll = 0.0, biasModerated = 0.0, n = 0
for _ in 0..<(sessions / 4) {
    let theta = RandomVariate.normal(using: &rng)
    var items = Array(0..<itemCount); items.shuffle(using: &rng); items = Array(items.prefix(25))
    var responses: [UInt8] = [], keep: [Int] = []
    for (k, j) in items.enumerated() {
        if k % 2 == 0 {
            responses.append(RandomVariate.uniform(using: &rng) < 0.25 ? 1 : 0)
        } else {
            responses.append(RandomVariate.uniform(using: &rng) < parameters[j].probability(at: theta) ? 1 : 0); keep.append(k)
        }
    }
    let all = try eap.estimate(items: items, responses: responses).theta
    let moderated = try eap.estimate(items: keep.map { items[$0] }, responses: keep.map { responses[$0] }).theta
    biasAll += all - theta; biasModerated += moderated - theta; n += 1
}
print(
    "\nEffort-moderated scoring (half the items rapid-guessed at 25% correct, \(n) sessions): mean θ bias \(String(format: "%+.3f", biasAll / Double(n))) scoring every response, \(String(format: "%+.3f", biasModerated / Double(n))) leaving the guesses out.\n"
)

// 3. The item monitor.
print("## Item monitor (\(replications) replications: 200 items, 60 days × 500 sessions of 25 items, leak of 5 items on day 40)\n")
print(
    "| preknowledge share | leaked items found | days to first alarm (median, max) | change dated within ±2 days | false alarms per 1,000 item-days |"
)
print("|---|---|---|---|---|")
for share in [0.0, 0.1, 0.3] {
    var found = 0, planted = 0, delays: [Int] = [], datedCount = 0, falseAlarms = 0, itemDays = 0
    for _ in 0..<replications {
        let monitorBank = BankSpecification(model: .twoPL, itemCount: 200).draw(using: &rng)
        let p = monitorBank.items.map(\.parameters)
        let t = ResponseTimeSimulator.drawItems(count: 200, using: &rng)
        let sim = ResponseTimeSimulator(items: t, population: population)
        var leaked = [Bool](repeating: false, count: 200)
        var order = Array(0..<200); order.shuffle(using: &rng)
        for j in order.prefix(5) { leaked[j] = true }
        var dated: [DatedSession] = []
        var offsets = [0], cells: [Int32] = [], values: [UInt8] = [], seconds: [Float] = []
        for day in 0..<60 {
            for _ in 0..<500 {
                let theta = RandomVariate.normal(using: &rng), tau = sim.speed(theta: theta, using: &rng)
                var items = Array(0..<200); items.shuffle(using: &rng); items = Array(items.prefix(25)).sorted()
                let knows = share > 0 && day >= 40 && RandomVariate.uniform(using: &rng) < share
                var u: [UInt8] = [], s: [Double] = []
                for j in items {
                    var answer: UInt8 = RandomVariate.uniform(using: &rng) < p[j].probability(at: theta) ? 1 : 0
                    var time = sim.seconds(item: j, speed: tau, using: &rng)
                    if knows && leaked[j] { answer = RandomVariate.uniform(using: &rng) < 0.95 ? 1 : 0; time /= 5 }
                    u.append(answer); s.append(time)
                }
                dated.append(DatedSession(day: day, items: items, responses: u, seconds: s))
                if day < 40 {
                    cells += items.map { Int32($0) }; values += u; seconds += s.map { Float($0) }; offsets.append(cells.count)
                }
            }
        }
        // Calibrate the bank (responses and times) on the 40 days before the leak.
        let before = ResponseMatrix(
            validatedPersonIDs: (0..<(offsets.count - 1)).map { "s\($0)" }, itemIDs: (0..<200).map { "i\($0)" },
            rowOffsets: offsets, itemIndices: cells, responses: values)
        var options = CalibrationOptions(model: .twoPL)
        options.standardErrors = false
        let fit = try SpeedAccuracyCalibrator(options: options).calibrate(before, times: ResponseTimes(validatedSeconds: seconds))
        let fitted = fit.irt.items.map(\.parameters), fittedTimes = fit.timeItems.map(\.parameters)
        var monitor = ItemMonitor(parameters: fitted, timeItems: fittedTimes, estimator: try AbilityEstimator(parameters: fitted))
        monitor.rapidGuesses = RapidGuessThresholds.normative(items: fittedTimes, population: fit.population)
        let report = monitor.run(dated)
        itemDays += report.days.filter { !leaked[$0.item] }.count
        falseAlarms += report.alarms.filter { !leaked[$0.item] }.count
        for j in 0..<200 where leaked[j] && share > 0 {
            planted += 1
            if let first = report.alarms.first(where: { $0.item == j && $0.day >= 40 }) {
                found += 1
                delays.append(first.day - 40)
                if abs(first.changeDay - 40) <= 2 { datedCount += 1 }
            }
        }
    }
    delays.sort()
    let delay = delays.isEmpty ? "–" : "\(delays[delays.count / 2]), \(delays.last!)"
    print(
        "| \(share == 0 ? "none (no leak)" : String(format: "%.0f%%", share * 100)) | \(share == 0 ? "–" : "\(found) of \(planted)") | \(delay) | \(share == 0 ? "–" : "\(datedCount) of \(found)") | \(String(format: "%.3f", 1000 * Double(falseAlarms) / Double(itemDays))) (\(falseAlarms) in \(itemDays)) |"
    )
}
