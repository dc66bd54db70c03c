import Assembly
import PsychometricsIO
import Foundation
import Psychometrics
import Testing

@Suite("Adaptive steps without a session: errors instead of traps, replay equal to a stateful session")
struct AdaptiveStepTests {
    static let config = CATConfiguration(minItems: 5, maxItems: 15, seTarget: 0.35, minPerDomain: .all(2), randomesque: 4, exposureTarget: nil)

    @Test("record: an unknown id, a repeated item, a response other than 0/1 throw and leave the session unchanged")
    func recordErrors() throws {
        let bank = catTestBank(items: 60)
        var session = try AdaptiveSession(pool: try CATItemPool(bank: bank, configuration: Self.config))
        let first = bank.items[0].id
        try session.record(itemID: first, response: 1)
        let before = (session.items, session.responses, session.estimate)
        #expect(throws: AssemblyError(.unknownItem, "unknown item id 'nope': the bank has no such item")) {
            try session.record(itemID: "nope", response: 1)
        }
        #expect(throws: AssemblyError(.repeatedItem, "item '\(first)' was already administered in this session (position 1 of 1)")) {
            try session.record(itemID: first, response: 0)
        }
        #expect(throws: AssemblyError(.invalidResponse, "the response to item '\(bank.items[1].id)' is 2; allowed 0 (incorrect) or 1 (correct)")) {
            try session.record(itemID: bank.items[1].id, response: 2)
        }
        #expect(throws: AssemblyError(.unknownItem, "item position -1 is out of range 0..<60")) { try session.record(item: -1, response: 1) }
        #expect(throws: AssemblyError.self) { try session.record(item: 60, response: 1) }
        #expect(session.items == before.0 && session.responses == before.1 && session.estimate == before.2)
        // Exposure parameters that do not fit the bank.
        #expect(throws: AssemblyError(.invalidExposure, field: "probabilities[1]", "exposure parameter 2 is 1.5; allowed 0 ≤ K ≤ 1")) {
            _ = try ExposureParameters(probabilities: [1, 1.5])
        }
        #expect(throws: AssemblyError(.invalidExposure, "one exposure parameter per bank item is needed: 2 given for 60 items")) {
            _ = try AdaptiveSession(pool: session.pool, exposure: try ExposureParameters(probabilities: [1, 0.5]))
        }
    }

    /// A stateful test with `seed`, administering what the session proposes; the history and each proposal.
    static func statefulTest(pool: CATItemPool, exposure: ExposureParameters?, seed: UInt64, theta: Double) throws
        -> (history: [AdministeredItem], proposals: [AdaptiveSession.Step])
    {
        var session = try AdaptiveSession(pool: pool, exposure: exposure, excluding: ["i0003"])
        var rng = SeededGenerator(seed: seed)
        var responder = SeededGenerator(seed: seed &+ 1)
        var history: [AdministeredItem] = [], proposals: [AdaptiveSession.Step] = []
        while true {
            let step = session.nextItem(using: &rng)
            proposals.append(step)
            guard case .administer(let j) = step else { return (history, proposals) }
            let p = pool.bank.items[j].parameters.probability(at: theta)
            let u = RandomVariate.uniform(using: &responder) < p ? 1 : 0
            try session.record(item: j, response: u)
            history.append(AdministeredItem(itemID: pool.bank.items[j].id, response: u))
        }
    }

    @Test(
        "nextStep from the history gives, at every step, the item the stateful session chose (randomesque and exposure lottery)",
        arguments: [UInt64(5), 6, 7])
    func replayEqualsStateful(seed: UInt64) throws {
        let bank = catTestBank(items: 90)
        let pool = try CATItemPool(bank: bank, configuration: Self.config)
        // Half the items under exposure control, so the lottery bars some of them during a test.
        let exposure = try ExposureParameters(probabilities: bank.items.indices.map { $0 % 2 == 0 ? 0.3 : 1 })
        let (history, proposals) = try Self.statefulTest(pool: pool, exposure: exposure, seed: seed, theta: 0.4)
        #expect(history.count >= 5)
        for k in 0...history.count {
            let step = try pool.nextStep(administered: Array(history.prefix(k)), excluding: ["i0003"], exposure: exposure, seed: seed)
            switch proposals[k] {
            case .administer(let j): #expect(step.action == .administer(itemID: bank.items[j].id, domain: bank.items[j].domain), "step \(k)")
            case .stop(let reason): #expect(step.action == .stop(reason))
            }
            #expect(step.itemCount == k)
            // A retried request gets the same answer.
            #expect(try pool.nextStep(administered: Array(history.prefix(k)), excluding: ["i0003"], exposure: exposure, seed: seed) == step)
        }
        #expect(!history.contains { $0.itemID == "i0003" })
    }

    @Test("nextStep locates a client's mistake in the history: unknown item, repeated item, bad response")
    func replayErrors() throws {
        let bank = catTestBank(items: 60)
        let pool = try CATItemPool(bank: bank, configuration: Self.config)
        let a = bank.items[0].id, b = bank.items[1].id
        func error(_ history: [AdministeredItem]) -> AssemblyError? {
            do { _ = try pool.nextStep(administered: history, seed: 1); return nil } catch { return error }
        }
        #expect(error([.init(itemID: a, response: 1), .init(itemID: "zz", response: 1)])?.field == "administered[1].item_id")
        #expect(
            error([.init(itemID: a, response: 1), .init(itemID: b, response: 0), .init(itemID: a, response: 1)])
                == AssemblyError(
                    .repeatedItem, field: "administered[2].item_id", "item '\(a)' was already administered in this session (position 1 of 2)"))
        #expect(error([.init(itemID: a, response: -1)])?.field == "administered[0].response")
        #expect(error([.init(itemID: a, response: -1)])?.code == .invalidResponse)
        // A history longer than max_items is recorded as given: the step says stop.
        let long = bank.items.prefix(16).map { AdministeredItem(itemID: $0.id, response: 1) }
        #expect(try pool.nextStep(administered: long, seed: 1).action == .stop(.maxItems))
    }

    @Test("ExposureParameters.load reads what cat simulate --exposure-out writes, in bank order, and locates bad rows")
    func exposureFile() throws {
        let bank = catTestBank(items: 4)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("exposure-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ids = bank.items.map(\.id)
        let good = directory.appendingPathComponent("k.csv").path
        // i2 missing: K = 1; rows in another order.
        try "item_id,k\n\(ids[3]),0.250000\n\(ids[0]),0.500000\n\(ids[1]),1.000000\n".write(toFile: good, atomically: true, encoding: .utf8)
        #expect(try ExposureParameters.load(csv: good, bank: bank).probabilities == [0.5, 1, 1, 0.25])
        let bad = directory.appendingPathComponent("bad.csv").path
        try "item_id,k\nnope,0.5\n\(ids[0]),1.5\n\(ids[1]),0.1\n\(ids[1]),0.2\n\(ids[2])\n".write(toFile: bad, atomically: true, encoding: .utf8)
        do {
            _ = try ExposureParameters.load(csv: bad, bank: bank)
            Issue.record("loaded")
        } catch {
            #expect(
                "\(error)".replacingOccurrences(of: bad, with: "bad.csv") == """
                    bad.csv:2:1: error: item 'nope' is not in the bank
                    bad.csv:3:2: error: k '1.5' is not a number in [0, 1]
                    bad.csv:5:1: error: item '\(ids[1])' already given on line 4
                    bad.csv:6: error: expected 2 fields as in the header, found 1
                    """)
        }
    }
}
