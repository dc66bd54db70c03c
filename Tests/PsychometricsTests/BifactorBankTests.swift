import Foundation
import Testing
@testable import Psychometrics
@testable import PsychometricsIO

@Suite("Bifactor bank files")
struct BifactorBankTests {
    static func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bifactor-bank-\(UUID().uuidString).csv").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("iqscore's layout: what the calibration writes is read back, factors in column order")
    func roundTrip() throws {
        var items = BifactorCalibratorTests.items
        items[7].guessing = 0.2
        let structure = try FactorStructure(
            generalFactor: "g", items: items.indices.map { ("i\($0)", items[$0].specific.map { ["verbal", "spatial"][$0] }) })
        let text = bifactorBankCSV(
            items.indices.map { BifactorBankRow(itemID: "i\($0)", item: items[$0]) }, structure: structure,
            metadata: ItemMetadata(columns: ["domain"], values: ["i0": ["domain": "logic"]]))
        let path = try Self.write(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bank = try BifactorBank.load(csv: path)
        #expect(bank.layout == "iqscore" && bank.structure.generalFactor == "g" && bank.structure.specificFactors == ["verbal", "spatial"])
        #expect(bank.itemIDs == items.indices.map { "i\($0)" })
        for (read, written) in zip(bank.items, items) {
            #expect(read.specific == written.specific && read.estimatesGuessing == written.estimatesGuessing)
            #expect(abs(read.generalSlope - written.generalSlope) < 1e-6 && abs(read.specificSlope - written.specificSlope) < 1e-6)
            #expect(abs(read.intercept - written.intercept) < 1e-6 && abs(read.guessing - written.guessing) < 1e-6)
        }
        #expect(BifactorBank.isMultidimensional(header: text.prefix { $0 != "\n" }.split(separator: ",").map(String.init)))
    }

    @Test("mirt's coef(simplify = TRUE)$items of a bfactor() fit, as write.csv writes it")
    func mirtLayout() throws {
        let path = try Self.write(
            """
            "","a1","a2","a3","d","g","u"
            "reason.4",1.77865759311429,0.579097957978374,0,1.18272201350992,0,1
            "letter.7",1.68539060352169,0,1.00580847360296,0.89709343681165,0,1
            "rotate.3",1.2,0,0,-2.7,0.15,1

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bank = try BifactorBank.load(csv: path)
        #expect(bank.layout == "mirt slope–intercept (a1…a3, d, g, u)")
        #expect(bank.structure.factorNames == ["G", "S1", "S2"])
        #expect(bank.items.map(\.specific) == [0, 1, nil])
        #expect(bank.items[0].specificSlope == 0.579097957978374 && bank.items[2].guessing == 0.15 && bank.items[2].estimatesGuessing)
    }

    @Test(
        "bad rows are named by line and column",
        arguments: [
            (
                "item_id,a_g,a_x,a_y,d\ni1,1,0.5,0.4,0\n",
                "bank.csv:2:4: error: item 'i1': slopes on two specific factors (x, y); a bifactor item loads on at most one"
            ),
            ("item_id,a_g,a_x,d\ni1,1,0.5,abc\n", "bank.csv:2:4: error: item 'i1': d 'abc' is not a number"),
            (
                "item_id,a_g,a_x,a_y,d,specific_factor\ni1,1,0.5,0,0,y\n",
                "bank.csv:2:6: error: item 'i1': specific_factor y but the nonzero slope is a_x"
            ),
            (
                "item_id,a_g,a_x,d,u\ni1,1,0.5,0,0.9\n",
                "bank.csv:2:5: error: item 'i1': u = 0.9 is an upper asymptote below 1 (4PL), which the bifactor model does not have"
            ),
            ("item_id,a_g,a_x,d\ni1,99,0.5,0\n", "bank.csv:2:2: error: item 'i1': a_g must be in [-50, 50], got 99.0"),
            ("item_id,a,b\ni1,1,0\n", "bank.csv:1: error: not a bifactor bank: it needs a slope column per factor")
        ])
    func refusals(text: String, message: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bifactor-bank-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bank.csv").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try BifactorBank.load(csv: path)
            Issue.record("no error for \(text)")
        } catch {
            let description = String(describing: error)
            #expect(description.contains(message.replacingOccurrences(of: "bank.csv", with: path)), "\(description)")
        }
    }
}
