import Assembly
import Foundation
import Psychometrics
import PsychometricsIO
import Testing

// What a test service does with the libraries, through their public API only: load a bank from a file once,
// score sessions from many concurrent tasks, run adaptive steps without server-side state (with a client's
// mistakes in the history), assemble a fixed form.

@Suite("A server's use of the public API")
struct ServerConsumerTests {
    /// A seeded 1,500-item, six-domain 2PL bank written as CSV and loaded back, as a server loads its bank.
    static func loadBank() throws -> ItemBank {
        var rng = SeededGenerator(seed: 11)
        var spec = BankSpecification(model: .twoPL, itemCount: 1500, domains: ["pattern", "logic", "spatial", "math", "verbal", "memory"])
        spec.slopeMeanLog = 0.3
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("consumer-bank-\(UUID().uuidString).csv").path
        try spec.draw(using: &rng).csv().write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try ItemBank.load(csv: path)
    }

    @Test("scores from 8 concurrent tasks equal the sequential scores")
    func concurrentScoring() async throws {
        let bank = try Self.loadBank()
        let scorer = try SessionScorer(bank: bank, ability: AbilityOptions(method: .eap), scale: try IQScale())
        // 2,000 sessions of 25 distinct items with seeded responses.
        var rng = SeededGenerator(seed: 5)
        let sessions: [(ids: [String], responses: [Int])] = (0..<2000).map { _ in
            var picked = Set<Int>()
            while picked.count < 25 { picked.insert(Int(rng.next(upperBound: UInt64(bank.items.count)))) }
            let ids = picked.sorted().map { bank.items[$0].itemID }
            return (ids, ids.map { _ in Int(rng.next(upperBound: UInt64(2))) })
        }
        let sequential = try sessions.map { try scorer.score(itemIDs: $0.ids, responses: $0.responses) }
        let concurrent = try await withThrowingTaskGroup(of: (Int, [SessionScore]).self) { group in
            for t in 0..<8 {
                group.addTask {
                    (
                        t,
                        try stride(from: t, to: sessions.count, by: 8).map {
                            try scorer.score(itemIDs: sessions[$0].ids, responses: sessions[$0].responses)
                        }
                    )
                }
            }
            var out = [SessionScore?](repeating: nil, count: sessions.count)
            for try await (t, scores) in group {
                for (k, score) in zip(stride(from: t, to: sessions.count, by: 8), scores) { out[k] = score }
            }
            return out.map { $0! }
        }
        #expect(concurrent == sequential)
        // A client's mistake is a thrown error with a code, never a crash.
        #expect(throws: PsychometricsError.self) { _ = try scorer.score(itemIDs: ["nope"], responses: [1]) }
    }

    @Test("stateless adaptive steps: a full test, retries, and a repeated item, a bad response, an unknown item")
    func adaptiveSteps() throws {
        let bank = try Self.loadBank()
        let pool = try CATItemPool(bank: try AssemblyBank(bank: bank), configuration: CATConfiguration(minItems: 10, maxItems: 25, seTarget: 0.3))
        var history: [AdministeredItem] = []
        var rng = SeededGenerator(seed: 9)
        while true {
            let step = try pool.nextStep(administered: history, seed: 1234)
            #expect(try pool.nextStep(administered: history, seed: 1234) == step)
            guard case .administer(let itemID, _) = step.action else { break }
            history.append(AdministeredItem(itemID: itemID, response: Int(rng.next(upperBound: UInt64(2)))))
        }
        #expect(history.count >= 10 && history.count <= 25)
        func code(_ history: [AdministeredItem]) -> AssemblyError.Code? {
            do { _ = try pool.nextStep(administered: history, seed: 1234); return nil } catch { return error.code }
        }
        #expect(code(history + [history[0]]) == .repeatedItem)
        #expect(code([AdministeredItem(itemID: history[0].itemID, response: 7)]) == .invalidResponse)
        #expect(code([AdministeredItem(itemID: "not-in-bank", response: 1)]) == .unknownItem)
    }

    @Test("a fixed form from a blueprint")
    func assembleForm() throws {
        let bank = try AssemblyBank(bank: try Self.loadBank())
        let blueprint = Blueprint(length: 25, domainCounts: ["pattern": 5, "logic": 4, "spatial": 4, "math": 4, "verbal": 4, "memory": 4])
        let forms = try FormAssembler(bank: bank, blueprint: blueprint).assemble()
        #expect(forms.count == 1 && forms[0].items.count == 25 && forms[0].domainCounts["pattern"] == 5)
    }
}
