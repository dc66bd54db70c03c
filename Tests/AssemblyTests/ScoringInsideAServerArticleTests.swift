import Assembly
import Foundation
import Psychometrics
import PsychometricsIO
import Testing

// The code of the DocC article "Scoring inside a server" (Sources/Psychometrics/Psychometrics.docc/
// ScoringInsideAServer.md), compiled and run here. `articleBlocksAreHere` checks that every ```swift block of the
// article appears in this file verbatim, so the article cannot drift from code that compiles.

@Suite("The 'Scoring inside a server' article compiles and runs")
struct ScoringInsideAServerArticleTests {
    static let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Psychometrics/Psychometrics.docc/ScoringInsideAServer.md")

    @Test("every Swift block of the article is in this file, verbatim")
    func articleBlocksAreHere() throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = text.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count == 3)
        for block in blocks {
            let indented = block.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "        " + $0 }.joined(
                separator: "\n")
            #expect(source.contains(indented), "not compiled here:\n\(block)")
        }
    }

    @Test("the article's calls: load once, score, one adaptive step")
    func articleCode() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("article-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bankPath = directory.appendingPathComponent("bank.csv").path
        var csv = "item_id,a,b,c,domain\n"
        for j in 1...120 {
            csv += String(format: "i%04d,%.2f,%.2f,0,%@\n", j, 0.8 + Double(j % 5) * 0.2, Double(j % 9) * 0.4 - 1.6, ["logic", "math"][j % 2])
        }
        try csv.write(toFile: bankPath, atomically: true, encoding: .utf8)
        var next: String?

        let bank = try ItemBank.load(csv: bankPath) // PsychometricsIO: located errors
        let scorer = try SessionScorer(bank: bank, ability: AbilityOptions(method: .eap), scale: try IQScale())
        let pool = try CATItemPool(bank: try AssemblyBank(bank: bank), configuration: CATConfiguration(maxItems: 25))

        let result = try scorer.score(itemIDs: ["i0001", "i0002", "i0003"], responses: [1, 0, 1])
        let iq = result.score.iq, interval = (result.score.low, result.score.high)

        let history = [AdministeredItem(itemID: "i0001", response: 1)]
        let step = try pool.nextStep(administered: history, excluding: ["i0002"], seed: 42)
        switch step.action {
        case .administer(let itemID, _): next = itemID
        case .stop: next = nil
        }

        #expect(interval.0 <= iq && iq <= interval.1)
        #expect(next != nil && next != "i0001" && next != "i0002")
        #expect(try pool.nextStep(administered: history, excluding: ["i0002"], seed: 42) == step)
    }
}
