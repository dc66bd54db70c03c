import Assembly
import PsychometricsIO
import Foundation
import Numerics
import Psychometrics
import Testing

/// A simulated 2PL bank for CAT tests: a ~ LogNormal(slopeMeanLog, 0.3), b ~ N(0, 1), domains in turn.
func catTestBank(items: Int, domains: [String] = ["pattern", "logic", "spatial"], slopeMeanLog: Double = 0.3, seed: UInt64 = 3) -> AssemblyBank {
    var rng = SeededGenerator(seed: seed)
    var spec = BankSpecification(model: .twoPL, itemCount: items, domains: domains)
    spec.slopeMeanLog = slopeMeanLog
    return try! AssemblyBank(bank: spec.draw(using: &rng))
}

/// Runs one simulated test for a simulee at `theta`; returns the finished session and its stop reason.
func catRunTest(_ session: AdaptiveSession, theta: Double, rng: inout SeededGenerator) -> (AdaptiveSession, AdaptiveSession.StopReason) {
    var session = session
    while true {
        switch session.nextItem(using: &rng) {
        case .administer(let j):
            let p = session.pool.bank.items[j].parameters.probability(at: theta)
            try! session.record(item: j, response: RandomVariate.uniform(using: &rng) < p ? 1 : 0)
        case .stop(let reason):
            return (session, reason)
        }
    }
}

@Suite("Adaptive sessions")
struct AdaptiveSessionTests {
    @Test(
        "randomesque 1, no constraints: the item of largest Fisher information at θ̂ (exact at the grid point θ = 0, within the interpolation error elsewhere)"
    )
    func maximumInformation() throws {
        let bank = catTestBank(items: 300)
        let config = CATConfiguration(minItems: 1, maxItems: 15, exposureTarget: nil)
        var session = try AdaptiveSession(bank: bank, configuration: config)
        var rng = SeededGenerator(seed: 1)
        #expect(session.estimate.theta.isApproximatelyEqual(to: 0, absoluteTolerance: 1e-12))
        for step in 0..<15 {
            guard case .administer(let j) = session.nextItem(using: &rng) else { Issue.record("stopped early"); return }
            let theta = session.estimate.theta
            let used = Set(session.items)
            let info = bank.items.indices.filter { !used.contains($0) }.map { ($0, bank.items[$0].parameters.information(at: theta)) }
            let best = info.max { $0.1 < $1.1 }!
            if step == 0 {
                #expect(j == best.0)
            } else {
                // Linear interpolation on a 0.05 grid: error ≤ h²/8·max|I″| ≈ 1e-3 for these slopes.
                #expect(bank.items[j].parameters.information(at: theta) >= best.1 - 2e-3, "step \(step): chose \(j), best \(best.0)")
            }
            try session.record(item: j, response: step % 3 == 0 ? 0 : 1)
        }
        #expect(session.nextItem(using: &rng) == .stop(.maxItems))
    }

    @Test("content minimums are met at the end of every test when feasible (integer and per-domain map)")
    func contentMinimums() throws {
        // Domain "memory" has the weakest items (a × 0.3), so maximum information alone would avoid it.
        var items = catTestBank(items: 240, domains: ["pattern", "logic", "spatial", "memory"]).items
        for k in items.indices where items[k].domain == "memory" { items[k].parameters.discrimination *= 0.3 }
        let bank = AssemblyBank(items: items)
        for minimum in [CATConfiguration.DomainMinimum.all(2), .perDomain(["memory": 3, "logic": 1])] {
            let config = CATConfiguration(minItems: 4, maxItems: 14, seTarget: 0.4, minPerDomain: minimum, randomesque: 2, exposureTarget: nil)
            let pool = try CATItemPool(bank: bank, configuration: config)
            var rng = SeededGenerator(seed: 9)
            for _ in 0..<60 {
                let theta = RandomVariate.normal(using: &rng)
                let (session, _) = catRunTest(try AdaptiveSession(pool: pool), theta: theta, rng: &rng)
                #expect(session.meetsDomainMinimums)
                for (d, domain) in bank.domains.enumerated() {
                    #expect(session.domainCounts[d] >= minimum.minimum(for: domain), "\(domain): \(session.domainCounts[d])")
                }
            }
        }
    }

    @Test("an SE target reached early still waits for the domain minima (reason se_reached, minima met)")
    func contentBeforeStopping() throws {
        let bank = catTestBank(items: 120, domains: ["a", "b", "c", "d", "e", "f"], slopeMeanLog: 1.2)
        let config = CATConfiguration(minItems: 1, maxItems: 20, seTarget: 0.9, minPerDomain: .all(1), exposureTarget: nil)
        var rng = SeededGenerator(seed: 4)
        let (session, reason) = catRunTest(try AdaptiveSession(bank: bank, configuration: config), theta: 0.3, rng: &rng)
        #expect(reason == .seReached)
        #expect(session.items.count == 6)
        #expect(session.domainCounts == [1, 1, 1, 1, 1, 1])
    }

    @Test("randomesque k: the first item is spread over exactly the k most informative items")
    func randomesqueSpreads() throws {
        let bank = catTestBank(items: 200)
        let config = CATConfiguration(maxItems: 5, randomesque: 5, exposureTarget: nil)
        let pool = try CATItemPool(bank: bank, configuration: config)
        let top5 = Set(
            bank.items.indices.sorted { bank.items[$0].parameters.information(at: 0) > bank.items[$1].parameters.information(at: 0) }.prefix(5))
        var counts: [Int: Int] = [:]
        for seed in 1...400 as ClosedRange<UInt64> {
            var rng = SeededGenerator(seed: seed)
            var session = try AdaptiveSession(pool: pool)
            guard case .administer(let j) = session.nextItem(using: &rng) else { Issue.record("no item"); return }
            counts[j, default: 0] += 1
        }
        #expect(Set(counts.keys) == top5)
        // Uniform over 5: each about 80 of 400 (binomial SD 8); allow ±4 SD.
        for (_, n) in counts { #expect(abs(n - 80) <= 32, "\(counts)") }
    }

    @Test("no item is given twice; excluded ids are never chosen; unknown excluded ids are ignored")
    func exclusionsAndRepeats() throws {
        let bank = catTestBank(items: 90)
        let config = CATConfiguration(minItems: 30, maxItems: 30, randomesque: 3, exposureTarget: nil)
        let pool = try CATItemPool(bank: bank, configuration: config)
        // Exclude the 10 most informative items at θ = 0 (the greedy path would start there).
        let excluded = bank.items.indices.sorted { bank.items[$0].parameters.information(at: 0) > bank.items[$1].parameters.information(at: 0) }
            .prefix(10).map { bank.items[$0].id }
        var rng = SeededGenerator(seed: 5)
        for _ in 0..<20 {
            let (session, reason) = catRunTest(
                try AdaptiveSession(pool: pool, excluding: excluded + ["not-in-bank"]), theta: RandomVariate.normal(using: &rng), rng: &rng)
            #expect(reason == .maxItems)
            #expect(Set(session.items).count == session.items.count)
            #expect(session.items.allSatisfy { !excluded.contains(bank.items[$0].id) })
        }
    }

    @Test("stop reasons: max_items without an SE target, se_reached no earlier than min_items, bank_exhausted on a small pool")
    func stopReasons() throws {
        let bank = catTestBank(items: 60)
        var rng = SeededGenerator(seed: 6)
        let fixed = CATConfiguration(minItems: 1, maxItems: 12, exposureTarget: nil)
        let (a, reasonA) = catRunTest(try AdaptiveSession(bank: bank, configuration: fixed), theta: 0.5, rng: &rng)
        #expect(reasonA == .maxItems && a.items.count == 12)

        // An SE target met by the prior alone still gives min_items items.
        let loose = CATConfiguration(minItems: 7, maxItems: 12, seTarget: 5, exposureTarget: nil)
        let (b, reasonB) = catRunTest(try AdaptiveSession(bank: bank, configuration: loose), theta: 0.5, rng: &rng)
        #expect(reasonB == .seReached && b.items.count == 7)

        let target = CATConfiguration(minItems: 1, maxItems: 40, seTarget: 0.45, exposureTarget: nil)
        let (c, reasonC) = catRunTest(try AdaptiveSession(bank: bank, configuration: target), theta: -0.2, rng: &rng)
        #expect(reasonC == .seReached && c.estimate.standardError <= 0.45 && c.items.count < 40)

        // 12 items, 4 excluded, up to 20 wanted: the pool runs out after 8.
        let small = catTestBank(items: 12)
        let long = CATConfiguration(minItems: 1, maxItems: 20, exposureTarget: nil)
        let (d, reasonD) = catRunTest(
            try AdaptiveSession(bank: small, configuration: long, excluding: small.items.prefix(4).map(\.id)),
            theta: 0, rng: &rng)
        #expect(reasonD == .bankExhausted && d.items.count == 8)
        #expect(d.stopReason == .bankExhausted)
    }

    @Test("domain weights: Kingsbury–Zara keeps a fixed-length test on the target shares")
    func kingsburyZara() throws {
        let bank = catTestBank(items: 150)
        var config = CATConfiguration(maxItems: 12, exposureTarget: nil)
        config.domainWeights = ["pattern": 2, "logic": 1, "spatial": 1]
        var rng = SeededGenerator(seed: 8)
        let (session, _) = catRunTest(try AdaptiveSession(bank: bank, configuration: config), theta: 1, rng: &rng)
        #expect(session.domainCounts == [6, 3, 3])
    }

    @Test("a-stratification: the first stage draws from the lowest-a stratum of each domain, by b closest to θ̂")
    func aStratification() throws {
        let bank = catTestBank(items: 120)
        let config = CATConfiguration(maxItems: 8, aStratification: 4, exposureTarget: nil)
        var session = try AdaptiveSession(bank: bank, configuration: config)
        var rng = SeededGenerator(seed: 2)
        guard case .administer(let j) = session.nextItem(using: &rng) else { Issue.record("no item"); return }
        let domain = bank.items[j].domain
        let members = bank.items.filter { $0.domain == domain }.sorted { $0.parameters.discrimination < $1.parameters.discrimination }
        let lowest = members.prefix(members.count / 4)
        #expect(lowest.contains { $0.id == bank.items[j].id })
        let closest = bank.items.indices.filter { k in bank.items[k].domain == domain && lowest.contains { $0.id == bank.items[k].id } }
            .min { abs(bank.items[$0].parameters.difficulty) < abs(bank.items[$1].parameters.difficulty) }
        // The first pick is the best over all domains' lowest strata; within its domain it is the closest b.
        #expect(j == closest)
    }

    @Test("Sympson–Hetter: an item with K = 0 is never administered while other items are left")
    func exposureLottery() throws {
        let bank = catTestBank(items: 40)
        let config = CATConfiguration(maxItems: 10, exposureTarget: nil)
        let pool = try CATItemPool(bank: bank, configuration: config)
        let best = bank.items.indices.max { bank.items[$0].parameters.information(at: 0) < bank.items[$1].parameters.information(at: 0) }!
        var k = [Double](repeating: 1, count: bank.items.count)
        k[best] = 0
        var rng = SeededGenerator(seed: 3)
        for _ in 0..<20 {
            let (session, _) = catRunTest(
                try AdaptiveSession(pool: pool, exposure: try ExposureParameters(probabilities: k)), theta: RandomVariate.normal(using: &rng),
                rng: &rng)
            #expect(!session.items.contains(best))
        }
    }

    @Test("the same seed gives the same test; responses recorded in another order give the same estimate")
    func reproducible() throws {
        let bank = catTestBank(items: 200)
        let config = CATConfiguration(minItems: 5, maxItems: 20, seTarget: 0.35, minPerDomain: .all(2), randomesque: 4, exposureTarget: nil)
        let pool = try CATItemPool(bank: bank, configuration: config)
        var r1 = SeededGenerator(seed: 77), r2 = SeededGenerator(seed: 77)
        let (a, _) = catRunTest(try AdaptiveSession(pool: pool), theta: 0.7, rng: &r1)
        let (b, _) = catRunTest(try AdaptiveSession(pool: pool), theta: 0.7, rng: &r2)
        #expect(a.items == b.items && a.responses == b.responses)
        var c = try AdaptiveSession(pool: pool)
        for (j, u) in zip(a.items, a.responses).reversed() { try c.record(item: j, response: Int(u)) }
        #expect(c.estimate.theta.isApproximatelyEqual(to: a.estimate.theta, absoluteTolerance: 1e-12))
    }
}

@Suite("CAT configuration")
struct CATConfigurationTests {
    func decode(_ json: String) throws -> CATConfiguration { try CATConfiguration.decode(Data(json.utf8), file: "cat.json") }

    func message(_ json: String) -> String? {
        do { _ = try decode(json); return nil } catch { return "\(error)" }
    }

    @Test("the app's rules decode; min_per_domain takes an integer or a map; absent exposure_target is 0.25, null is none")
    func decoding() throws {
        let app = try decode(#"{"min_items": 8, "max_items": 25, "se_target": 0.30, "min_per_domain": 1, "randomesque": 5}"#)
        #expect(app.minItems == 8 && app.maxItems == 25 && app.seTarget == 0.30 && app.minPerDomain == .all(1) && app.randomesque == 5)
        #expect(app.exposureTarget == 0.25 && app.estimator == .eap)
        let map = try decode(#"{"max_items": 10, "min_per_domain": {"logic": 2}, "exposure_target": null, "estimator": "MAP"}"#)
        #expect(map.minPerDomain == .perDomain(["logic": 2]) && map.exposureTarget == nil && map.estimator == .map)
        // Round trip through the encoder.
        let encoded = try JSONEncoder().encode(app)
        #expect(try CATConfiguration.decode(encoded, file: "x") == app)
    }

    @Test("bad configurations: exact messages naming the file and the key")
    func errors() {
        #expect(message(#"{"min_items": 8}"#) == #"cat.json: error: the CAT configuration lacks "max_items""#)
        #expect(
            message(#"{"max_items": 25, "min_item": 8}"#)?.hasPrefix(#"cat.json:1:19: error: unknown key "min_item" (known: min_items, max_items"#)
                == true)
        #expect(message(#"{"max_items": "25"}"#) == #"cat.json: error: "max_items" has the wrong type: expected an integer"#)
        #expect(
            message(#"{"max_items": 25, "min_per_domain": "two"}"#)
                == #"cat.json: error: "min_per_domain" has the wrong type: expected an integer or an object of integers"#)
        #expect(
            message(#"{"max_items": 5, "min_items": 8, "randomesque": 0}"#)
                == "cat.json: error: min_items (8) exceeds max_items (5); randomesque must be 1…100, got 0")
        #expect(
            message(#"{"max_items": 25, "se_target": -1, "exposure_target": 1.5}"#)
                == "cat.json: error: se_target must be in (0, 10], got -1.0; exposure_target must be in (0, 1], got 1.5")
        #expect(
            message(#"{"max_items": 25, "estimator": "mle"}"#) == #"cat.json: error: "estimator": estimator 'mle' is not one of eap, map, ml, wle"#)
        #expect(message("[1, 2]") == #"cat.json: error: the CAT configuration must be a JSON object, e.g. {"max_items": 25}"#)
        #expect(message("{max_items: 25}") == "cat.json:1:2: error: not valid JSON: expected a key in double quotes, found 'm'")
        #expect(message(#"{"max_items": 25, "prior_sd": 0}"#) == "cat.json: error: prior_sd must be in [0.01, 100], got 0.0")
    }

    @Test("problems on a bank: unknown domains, minima the bank or max_items cannot hold")
    func bankProblems() {
        let bank = catTestBank(items: 9)
        var config = CATConfiguration(maxItems: 5, minPerDomain: .perDomain(["logic": 4, "music": 1]))
        config.domainWeights = ["art": 1]
        #expect(
            config.validationProblems(for: bank) == [
                #"min_per_domain names domain "music", which the bank does not have (domains: pattern, logic, spatial)"#,
                #"domain_weights names domain "art", which the bank does not have (domains: pattern, logic, spatial)"#,
                "min_per_domain asks for 4 logic items, but the bank has 3 active ones"
            ])
        config = CATConfiguration(maxItems: 5, minPerDomain: .all(2))
        #expect(config.validationProblems(for: bank) == ["min_per_domain needs 6 items over 3 domains, more than max_items (5)"])
        #expect(throws: AssemblyError.self) { try CATItemPool(bank: bank, configuration: config) }
    }
}
