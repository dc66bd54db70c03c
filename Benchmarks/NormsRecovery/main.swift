import Foundation
import Norming
import Psychometrics

// Recovery study of norming (issue #14): norms built from seeded, non-representative samples of a known
// population (`NormingRecoveryPopulation`: θ mean rising and falling over ages 16–90, SD and skew changing with
// age, education shifting θ; young and educated persons over-sampled), against the population's true IQ over
// ages 17–89 (step 2) × true IQ 60–140 (step 5). For each sample size: RMS and largest |IQ error|, mean over
// replications (largest: the largest over replications), continuous vs bands, raked to the population margins
// vs unweighted. Then the smallest n (of a ladder) at which continuous raked norms reach RMS ≤ 1.5.
//
//   swift run -c release norms-recovery [--replications R] [--sizes 2000,5000,20000] [--ladder 1000,2000,…]

var replications = 5
var sizes = [2000, 5000, 20000]
var ladder = [1000, 2000, 3000, 5000, 10000, 20000]
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fatalError("\(flag) needs a value") }
    switch flag {
    case "--replications": replications = Int(value)!
    case "--sizes": sizes = value.split(separator: ",").map { Int($0)! }
    case "--ladder": ladder = value.split(separator: ",").map { Int($0)! }
    default: fatalError("unknown option \(flag)")
    }
}

struct Cell { var rms = 0.0, largest = 0.0, seconds = 0.0, deff = 0.0, degrees: [String] = [], bands: [Int] = [], warnings = 0 }

func run(n: Int, method: NormingMethod, raked: Bool, seed: UInt64) throws -> (
    rms: Double, largest: Double, seconds: Double, deff: Double, detail: String, warnings: Int
) {
    var rng = SeededGenerator(seed: seed)
    let sample = NormingRecoveryPopulation.sample(count: n, selective: true, using: &rng)
    var options = NormsBuildOptions(name: "recovery", version: "1")
    options.method = method
    let start = Date()
    let build = try NormsBuilder.build(sample, margins: raked ? NormingRecoveryPopulation.margins : nil, options: options)
    let seconds = Date().timeIntervalSince(start)
    let e = NormingRecoveryPopulation.errors(of: build.norms)
    let detail: String
    if let m = build.document.model {
        detail = "\(m.degrees.mu)/\(m.degrees.logSigma)/\(m.degrees.epsilon.map(String.init) ?? "-")/\(m.degrees.logDelta.map(String.init) ?? "-")"
    } else {
        detail = "\(build.document.bands?.count ?? 0) bands"
    }
    return (e.rms, e.largest, seconds, build.document.sample.designEffect, detail, build.document.warnings.count)
}

print("norms recovery: \(replications) replications per cell; grid ages 17–89 step 2 × true IQ 60–140 step 5 (629 points)")
print("population: NormingRecoveryPopulation; sample: young and educated over-sampled; raking: age_group × education margins")
print("")
print("| n | method | weighting | RMS IQ error | largest IQ error | deff | model (μ/logσ/ε/logδ or bands) | warnings | s per build |")
print("|---:|---|---|---:|---:|---:|---|---:|---:|")
for n in sizes {
    for method in [NormingMethod.continuous, .bands] {
        for raked in [true, false] {
            var cell = Cell()
            var details: [String: Int] = [:]
            for r in 0..<replications {
                let result = try run(n: n, method: method, raked: raked, seed: UInt64(1000 * n + r))
                cell.rms += result.rms / Double(replications)
                cell.largest = max(cell.largest, result.largest)
                cell.seconds += result.seconds / Double(replications)
                cell.deff += result.deff / Double(replications)
                cell.warnings += result.warnings
                details[result.detail, default: 0] += 1
            }
            let model = details.sorted { $0.value > $1.value }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
            print(
                "| \(n) | \(method.rawValue) | \(raked ? "raked" : "none") | \(String(format: "%.2f", cell.rms)) | \(String(format: "%.2f", cell.largest)) | \(String(format: "%.2f", cell.deff)) | \(model) | \(cell.warnings) | \(String(format: "%.2f", cell.seconds)) |"
            )
        }
    }
}
print("")
print("smallest n for RMS ≤ 1.5 (continuous, raked; mean over \(replications) replications):")
var found: Int?
for n in ladder {
    var rms = 0.0
    for r in 0..<replications {
        rms += try run(n: n, method: .continuous, raked: true, seed: UInt64(7_000_000 + 1000 * n + r)).rms / Double(replications)
    }
    print("  n = \(n): RMS \(String(format: "%.2f", rms))")
    if rms <= 1.5 { found = n; break }
}
print(found.map { "→ n = \($0)" } ?? "→ not reached on the ladder")
