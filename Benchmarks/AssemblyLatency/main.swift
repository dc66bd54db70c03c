// Latency of fixed-form assembly: one 25-item form from a 1,500-item six-domain bank, per blueprint kind.
//
//   swift run -c release assembly-latency
//
// Each figure: median and 99th percentile over 2,000 forms (seeds 1…2,000), one thread, `FormAssembler` built once.
import Assembly
import Dispatch
import Psychometrics

var rng = SeededGenerator(seed: 2026)
let spec = BankSpecification(model: .twoPL, itemCount: 1500, domains: ["pattern", "logic", "spatial", "math", "verbal", "memory"])
let drawn = spec.draw(using: &rng)
let bank = AssemblyBank(
    items: drawn.items.enumerated().map { k, item in
        AssemblyItem(
            id: item.itemID, domain: item.metadata["domain"]!, parameters: item.parameters,
            isAnchor: k % 7 == 0, enemyGroup: k % 50 == 0 ? "g\(k / 500)" : nil)
    })
let counts = ["pattern": 5, "logic": 4, "spatial": 4, "math": 4, "verbal": 4, "memory": 4]

var domainsOnly = Blueprint(length: 25, domainCounts: counts)
var withDifficulty = domainsOnly
withDifficulty.difficultyCounts = ["easy": 8, "medium": 9, "hard": 8]
withDifficulty.difficultyBands = ["easy": [-6, -0.5], "medium": [-0.5, 0.5], "hard": [0.5, 6]]
var withRules = withDifficulty
withRules.anchorsPerDomain = 1
withRules.enemies = [["i0001", "i0002", "i0003"]]
var withTargets = domainsOnly
withTargets.targetInformation = [.init(theta: -1, information: 8), .init(theta: 0, information: 10), .init(theta: 1, information: 8)]

print("| blueprint | method | median (ms) | p99 (ms) |")
print("|---|---|---|---|")
for (name, blueprint) in [
    ("domain counts", domainsOnly), ("domain × difficulty counts", withDifficulty),
    ("+ anchors per domain + enemies", withRules), ("domain counts + information targets", withTargets)
] {
    let assembler = try FormAssembler(bank: bank, blueprint: blueprint)
    var times: [Double] = []
    var method = ""
    for seed in 1...2000 as ClosedRange<UInt64> {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let form = try assembler.assemble(options: AssemblyOptions(seed: seed))[0]
        times.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
        method = form.method
    }
    times.sort()
    print("| \(name) | \(method) | \(String(format: "%.3f", times[times.count / 2])) | \(String(format: "%.3f", times[times.count * 99 / 100])) |")
}
