import Assembly
import PsychometricsIO
import Foundation
import Numerics
import Psychometrics
import Testing

/// A simulated six-domain bank (2PL, b ~ N(0, 1); domains assigned in turn), with every 7th item an anchor
/// (7 is coprime with 6, so every domain has anchors) and items 1–3 of the bank in one enemy group.
func appBank(items: Int = 600, seed: UInt64 = 5) -> AssemblyBank {
    var rng = SeededGenerator(seed: seed)
    let spec = BankSpecification(model: .twoPL, itemCount: items, domains: ["pattern", "logic", "spatial", "math", "verbal", "memory"])
    let bank = spec.draw(using: &rng)
    return AssemblyBank(
        items: bank.items.enumerated().map { k, item in
            AssemblyItem(
                id: item.itemID, domain: item.metadata["domain"]!, parameters: item.parameters,
                isAnchor: k % 7 == 0, enemyGroup: k < 3 ? "g1" : nil)
        })
}

let sixDomains = ["pattern": 5, "logic": 4, "spatial": 4, "math": 4, "verbal": 4, "memory": 4]
let bands: [String: [Double]] = ["easy": [-6, -0.5], "medium": [-0.5, 0.5], "hard": [0.5, 6]]

@Suite("Fixed forms")
struct FormAssemblerTests {
    @Test("domain and difficulty counts hold exactly for every seed; seeds reproduce and differ")
    func exactCounts() throws {
        let bank = appBank()
        var blueprint = Blueprint(length: 25, domainCounts: sixDomains)
        blueprint.difficultyCounts = ["easy": 8, "medium": 9, "hard": 8]
        blueprint.difficultyBands = bands
        let assembler = try FormAssembler(bank: bank, blueprint: blueprint)
        var distinct = Set<[Int]>()
        for seed in 1...30 as ClosedRange<UInt64> {
            let form = try #require(try assembler.assemble(options: AssemblyOptions(seed: seed)).first)
            #expect(form.method == "exact")
            #expect(form.domainCounts == sixDomains)
            #expect(form.difficultyCounts == ["easy": 8, "medium": 9, "hard": 8])
            #expect(Set(form.items).count == 25)
            #expect(form.relaxed.isEmpty)
            for k in form.items {
                let b = bank.items[k].parameters.difficulty
                let cls = try #require(assembler.difficultyClass(of: k))
                #expect(b >= bands[cls]![0] && b <= bands[cls]![1])
            }
            // Presentation order: easiest first.
            #expect(form.items.map { bank.items[$0].parameters.difficulty } == form.items.map { bank.items[$0].parameters.difficulty }.sorted())
            distinct.insert(form.items.sorted())
            #expect(try assembler.assemble(options: AssemblyOptions(seed: seed)).first?.items == form.items)
        }
        #expect(distinct.count == 30)
    }

    @Test("domain weights become counts by the largest-remainder rule")
    func weights() throws {
        var blueprint = Blueprint(length: 25, domainWeights: ["pattern": 2, "logic": 1, "spatial": 1, "math": 1, "verbal": 1, "memory": 1])
        // 25·2/7 = 7.14 → 7; 25/7 = 3.57 → 3 each (22 in all); the 3 left go to the largest remainders (.57,
        // ties broken by weight, then name): logic, math, memory.
        #expect(blueprint.resolvedDomainCounts() == ["pattern": 7, "logic": 4, "math": 4, "memory": 4, "spatial": 3, "verbal": 3])
        blueprint.domainWeights = ["a": 1, "b": 1, "c": 1]
        blueprint.length = 10
        #expect(blueprint.resolvedDomainCounts() == ["a": 4, "b": 3, "c": 3])
    }

    @Test("excluded, retired and pretest items are never selected")
    func exclusions() throws {
        var items = appBank().items
        for k in stride(from: 0, to: items.count, by: 5) { items[k].status = .retired }
        for k in stride(from: 1, to: items.count, by: 7) { items[k].status = .pretest }
        let bank = AssemblyBank(items: items)
        let seen = Set(items.prefix(200).map(\.id))
        let assembler = try FormAssembler(bank: bank, blueprint: Blueprint(length: 25, domainCounts: sixDomains))
        var options = AssemblyOptions(seed: 3)
        options.excluded = seen
        for seed in 1...10 as ClosedRange<UInt64> {
            options.seed = seed
            let form = try #require(try assembler.assemble(options: options).first)
            for k in form.items {
                #expect(bank.items[k].status == .active)
                #expect(!seen.contains(bank.items[k].id))
            }
        }
    }

    @Test("enemies never appear together; anchors per domain are met")
    func enemiesAndAnchors() throws {
        let bank = appBank()
        var blueprint = Blueprint(length: 25, domainCounts: sixDomains)
        blueprint.anchorsPerDomain = 1
        // A blueprint enemy set on top of the bank's group g1 (items 1–3).
        let ids = bank.items.map(\.id)
        blueprint.enemies = [[ids[3], ids[4], ids[5], ids[6], ids[7], ids[8]]]
        let assembler = try FormAssembler(bank: bank, blueprint: blueprint)
        for seed in 1...20 as ClosedRange<UInt64> {
            let form = try #require(try assembler.assemble(options: AssemblyOptions(seed: seed)).first)
            #expect(form.relaxed.isEmpty, "\(form.relaxed)")
            #expect(form.domainCounts == sixDomains)
            #expect(form.items.filter { $0 < 3 }.count <= 1)
            #expect(form.items.filter { (3...8).contains($0) }.count <= 1)
            for domain in sixDomains.keys { #expect((form.anchorCounts[domain] ?? 0) >= 1) }
        }
    }

    @Test("parallel forms keep overlap within the limit")
    func overlap() throws {
        var blueprint = Blueprint(length: 25, domainCounts: sixDomains)
        blueprint.forms = 4
        blueprint.maxOverlap = 0.2
        let forms = try FormAssembler(bank: appBank(items: 300), blueprint: blueprint).assemble(options: AssemblyOptions(seed: 9))
        #expect(forms.count == 4)
        for i in forms.indices {
            #expect(forms[i].relaxed.isEmpty)
            for j in forms.indices where j < i {
                #expect(Set(forms[i].items).intersection(forms[j].items).count <= 5)
            }
        }
    }

    @Test("information targets: achieved score never exceeds its upper bound")
    func targets() throws {
        var blueprint = Blueprint(length: 20, domainCounts: ["pattern": 4, "logic": 4, "spatial": 3, "math": 3, "verbal": 3, "memory": 3])
        blueprint.targetInformation = [.init(theta: -1, information: 6), .init(theta: 0, information: 8), .init(theta: 1, information: 6)]
        let form = try #require(try FormAssembler(bank: appBank(), blueprint: blueprint).assemble(options: AssemblyOptions(seed: 4)).first)
        let score = try #require(form.targetScore), bound = try #require(form.targetUpperBound)
        #expect(score <= bound + 1e-12)
        #expect(score > 0.95)
        #expect(form.domainCounts["pattern"] == 4)
        for point in form.information where [-1.0, 0, 1].contains(point.theta) {
            #expect(abs(point.standardError - 1 / point.information.squareRoot()) < 1e-12)
        }
    }

    @Test("an infeasible blueprint names the constraint with supply and demand")
    func infeasible() throws {
        let bank = appBank()
        let spatial = bank.items.filter { $0.domain == "spatial" }.map(\.id)
        var options = AssemblyOptions()
        options.excluded = Set(spatial.dropLast(3))
        let assembler = try FormAssembler(bank: bank, blueprint: Blueprint(length: 25, domainCounts: sixDomains))
        #expect {
            try assembler.assemble(options: options)
        } throws: { error in
            (error as? AssemblyError)?.problems == [
                "spatial needs 4 eligible items; the bank has 3 (100 in the domain, 97 of them excluded, retired, pretest or over-exposed)"
            ]
        }
        // Joint domain × difficulty shortfall, explained by the minimum cut.
        let hardPattern = bank.items.filter { $0.domain == "pattern" && $0.parameters.difficulty >= 1.5 }.count
        var blueprint = Blueprint(length: 10, domainCounts: ["pattern": 8, "logic": 2])
        blueprint.difficultyCounts = ["easy": 2, "hard": 8]
        blueprint.difficultyBands = ["easy": [-6, 0], "hard": [1.5, 6]]
        #expect(hardPattern < 6)
        #expect {
            try FormAssembler(bank: bank, blueprint: blueprint).assemble()
        } throws: { error in
            (error as? AssemblyError)?.problems == [
                "pattern needs 8 items, of which at least 6 must be hard (b in [1.5, 6]) because the counts of easy total 2; the bank has \(hardPattern) eligible such items"
            ]
        }
        #expect {
            try FormAssembler(bank: bank, blueprint: Blueprint(length: 5, domainCounts: ["music": 5]))
        } throws: { error in
            (error as? AssemblyError)?.problems == [
                "domain \"music\" needs 5 items; the bank has no items in that domain (domains: pattern, logic, spatial, math, verbal, memory)"
            ]
        }
    }

    @Test("blueprint JSON: the documented contract decodes; inconsistencies are named")
    func blueprintJSON() throws {
        let json = #"{"length": 25, "domain_counts": {"pattern": 9, "logic": 8, "spatial": 8}, "enemies": [["i1","i7"]], "anchors_per_domain": 1}"#
        let blueprint = try JSONDecoder().decode(Blueprint.self, from: Data(json.utf8))
        #expect(
            blueprint.length == 25 && blueprint.domainCounts?["pattern"] == 9 && blueprint.enemies == [["i1", "i7"]]
                && blueprint.anchorsPerDomain == 1)
        #expect(blueprint.validationProblems().isEmpty)
        var bad = blueprint
        bad.domainCounts = ["pattern": 9, "logic": 8]
        bad.maxOverlap = 2
        #expect(bad.validationProblems() == ["domain_counts sum to 17, but length is 25", "max_overlap must be in [0, 1], got 2.0"])
    }

    @Test("bank metadata problems name the line")
    func bankValidation() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("asm-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("bank.csv").path
        // The status is the bank reader's to check (scoring needs it too), with its column.
        try "item_id,a,b,c,domain,status,anchor\ni1,1,0,0,logic,active,1\ni2,1,0,0,logic,archived,0\ni3,1,0,0,,active,maybe\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try AssemblyBank.load(csv: path)
        } throws: { error in
            "\(error)" == "\(path):3:6: error: item 'i2': status 'archived' is not one of active, pretest, retired"
        }
        try "item_id,a,b,c,domain,status,anchor\ni1,1,0,0,logic,active,1\ni2,1,0,0,logic,retired,0\ni3,1,0,0,,active,maybe\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try AssemblyBank.load(csv: path)
        } throws: { error in
            "\(error)" == "\(path):4: error: item 'i3': empty domain"
        }
    }
}

@Suite("Fixed-form simulation")
struct FormSimulationTests {
    @Test("recovers θ, spreads exposure with per-simulee forms, reproduces from the seed")
    func study() throws {
        let assembler = try FormAssembler(bank: appBank(), blueprint: Blueprint(length: 25, domainCounts: sixDomains))
        var options = FormSimulation.Options(simulees: 600, seed: 3)
        options.seTarget = 0.5
        let report = try FormSimulation.run(assembler: assembler, options: options)
        #expect(report.meanLength == 25)
        #expect(report.figures.rmse < 0.5 && abs(report.figures.bias) < 0.08 && report.figures.correlation > 0.85)
        // 600 random 25-item forms from 600 items: each item is taken with probability ≈ 25/600 ≈ 0.04.
        #expect(report.figures.maxExposure < 0.1)
        #expect(report.figures.meanExposure.isApproximatelyEqual(to: 25.0 / 600, relativeTolerance: 1e-9))
        #expect(report.figures.overlapRate < 0.1)
        #expect(report.contentViolations == 0)
        options.threads = 1
        let again = try FormSimulation.run(assembler: assembler, options: options)
        #expect(again.figures.rmse == report.figures.rmse && again.figures.maxExposure == report.figures.maxExposure)
        // One fixed form for everybody: every administered item has exposure 1 and overlap is complete.
        options.fixedForms = 1
        let fixed = try FormSimulation.run(assembler: assembler, options: options)
        #expect(fixed.figures.maxExposure == 1 && fixed.figures.overlapRate.isApproximatelyEqual(to: 1, absoluteTolerance: 1e-12))
    }
}
