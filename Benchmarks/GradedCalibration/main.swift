import Foundation
import Psychometrics

// The polytomous calibration workload (issue 27): a graded bank fitted by `PolytomousCalibrator`, side by side
// with mirt 1.47 (`Benchmarks/graded.sh`).
//
//   graded-calibration simulate --persons N --items J --categories K --seed S --out DATA.csv
//       N persons answering all J graded items with K categories (a ~ logN(0, 0.3²), thresholds ordered around
//       b ~ N(0, 1) with gaps 0.6–1.4), θ ~ N(0, 1); wide CSV with a header i1…iJ, cells 0…K−1.
//   graded-calibration fit DATA.csv [--threads T] [--tolerance X] [--no-se]
//       prints one JSON line: seconds (fit only), cycles, log-likelihood, converged.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(64)
}

let arguments = Array(CommandLine.arguments.dropFirst())
func value(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}
func number(_ name: String, _ fallback: Double) -> Double {
    guard let text = value(name) else { return fallback }
    guard let v = Double(text) else { fail("\(name): not a number: \(text)") }
    return v
}

switch arguments.first {
case "simulate":
    let persons = Int(number("--persons", 100_000)), items = Int(number("--items", 50)), k = Int(number("--categories", 5))
    guard persons >= 1, items >= 2, (2...20).contains(k), let out = value("--out") else {
        fail("usage: simulate --persons N --items J --categories K --seed S --out FILE")
    }
    var rng = SeededGenerator(seed: UInt64(number("--seed", 1)))
    var bank: [any ItemResponseModel] = []
    for _ in 0..<items {
        let a = exp(0.3 * RandomVariate.normal(using: &rng)), centre = RandomVariate.normal(using: &rng)
        var b: [Double] = [], gaps: [Double] = []
        for _ in 1..<k { gaps.append(0.6 + 0.8 * RandomVariate.uniform(using: &rng)) }
        var x = centre - gaps.reduce(0, +) / 2
        for g in gaps { b.append(x); x += g }
        bank.append(GradedResponseItem(discrimination: a, thresholds: b))
    }
    let ids = (1...items).map { "i\($0)" }
    let (data, _) = CategoryResponseSimulator.matrix(items: bank, itemIDs: ids, persons: persons, using: &rng)
    var text = ids.joined(separator: ",") + "\n"
    text.reserveCapacity(persons * items * 2 + 1000)
    for i in 0..<persons {
        let cells = data.cells(ofPerson: i)
        text += cells.map { String(data.responses[$0]) }.joined(separator: ",")
        text += "\n"
    }
    try! text.write(toFile: out, atomically: true, encoding: .utf8)
case "fit":
    guard arguments.count >= 2 else { fail("usage: fit DATA.csv [--threads T] [--tolerance X] [--no-se]") }
    let bytes = try! Data(contentsOf: URL(fileURLWithPath: arguments[1]))
    var header: [String] = [], rows: [[UInt8?]] = [], row: [UInt8?] = [], field = 0, inField = false, line = 0
    var largest: UInt8 = 1
    bytes.withUnsafeBytes { raw in
        var start = 0
        for (p, byte) in raw.enumerated() {
            if line == 0 {
                if byte == UInt8(ascii: "\n") {
                    header = String(decoding: raw[start..<p], as: UTF8.self).split(separator: ",").map(String.init)
                    line = 1
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): field = field * 10 + Int(byte - 48); inField = true
            case UInt8(ascii: ","): row.append(inField ? UInt8(field) : nil); largest = max(largest, UInt8(field)); field = 0; inField = false
            case UInt8(ascii: "\n"):
                row.append(inField ? UInt8(field) : nil); largest = max(largest, UInt8(field)); field = 0; inField = false
                rows.append(row); row.removeAll(keepingCapacity: true)
            default: break
            }
            _ = start
            start = p
        }
    }
    let data = try! ResponseMatrix(itemIDs: header, rows: rows, categoryCounts: [Int](repeating: Int(largest) + 1, count: header.count))
    var options = CalibrationOptions(model: .twoPL)
    options.workers = Int(number("--threads", Double(ProcessInfo.processInfo.activeProcessorCount)))
    options.tolerance = number("--tolerance", 1e-4)
    options.standardErrors = !arguments.contains("--no-se")
    let fit = try! PolytomousCalibrator(options: options).calibrate(data, model: .graded)
    print(
        "{\"persons\": \(data.personCount), \"items\": \(data.itemCount), \"categories\": \(Int(largest) + 1), \"threads\": \(options.workers), "
            + "\"seconds\": \(fit.elapsedSeconds), \"cycles\": \(fit.cycles), \"e_steps\": \(fit.eSteps), \"log_likelihood\": \(fit.logLikelihood), "
            + "\"converged\": \(fit.converged), \"standard_errors\": \(options.standardErrors)}")
default:
    fail("usage: graded-calibration simulate … | fit DATA.csv …")
}
