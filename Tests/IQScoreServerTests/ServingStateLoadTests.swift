import Assembly
import Foundation
import IQScoreServer
import Psychometrics
import PsychometricsIO
import Testing

/// What the server checks when it loads: a whole bank (issue 25, defect 8) and exposure control by default
/// (defect 7).
@Suite("iqscore serve: loading the bank and its exposure control", .timeLimit(.minutes(2)))
struct ServingStateLoadTests {
    static func load(_ dir: URL, bank: String = "bank.csv", cat: String? = nil, exposureControl: Bool = false) throws -> ServingState {
        var configuration = ServerConfiguration(
            bankPath: dir.appendingPathComponent(bank).path,
            catConfigurationPath: cat.map { dir.appendingPathComponent($0).path })
        configuration.exposureControl = exposureControl
        return try ServingState.load(configuration)
    }

    @Test(
        "the default CAT configuration on a 16-item bank (ICAR16's size) loads with exposure control off and the reason (issue 26, item 12; was a load error)"
    )
    func smallBank() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-small-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let rows = (0..<16).map { "q\($0),1.1,\(Double($0 % 8) / 2 - 2),\(["logic", "pattern"][$0 % 2])" }
        try Data(("item_id,a,b,domain\n" + rows.joined(separator: "\n") + "\n").utf8).write(to: dir.appendingPathComponent("bank.csv"))
        let state = try Self.load(dir, exposureControl: true)
        #expect(state.exposure == nil)
        #expect(
            state.exposureControl
                == "off (exposure control off: the default exposure_target 0.25 cannot be met, every test gives 16 of the bank's 16 active items (mean exposure 1); set exposure_target to choose)"
        )
    }

    @Test("a bank cut short (no line end after its last record) is refused, naming its last line")
    func cutBank() throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bytes = try Data(contentsOf: dir.appendingPathComponent("bank.csv"))
        // Cut in the middle of the last record's difficulty: "0.51…" would still parse as a number.
        let text = String(decoding: bytes, as: UTF8.self)
        let lastLine = text.dropLast().lastIndex(of: "\n").map { text.distance(from: text.startIndex, to: $0) } ?? 0
        try bytes.prefix(lastLine + 20).write(to: dir.appendingPathComponent("cut.csv"))
        let lines = text.prefix(lastLine + 20).filter { $0 == "\n" }.count + 1
        #expect {
            try Self.load(dir, bank: "cut.csv")
        } throws: { error in
            "\(error)".hasPrefix("\(dir.appendingPathComponent("cut.csv").path):\(lines): error: the last record has no line end")
        }
        // The whole file loads, with all its items.
        #expect(try Self.load(dir).bank.items.count == 120)
    }

    @Test("a bank beside a calibrate manifest must have the manifest's size and CRC-32; a matching one loads")
    func manifest() throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bank = try Data(contentsOf: dir.appendingPathComponent("bank.csv"))
        var crc = CRC32()
        bank.withUnsafeBytes { crc.update($0) }
        func writeManifest(bytes: Int, crc32: String) throws {
            let json = #"{"outputs": [{"role": "bank", "path": "bank.csv", "rows": 120, "bytes": \#(bytes), "crc32": "\#(crc32)"}]}"#
            try Data(json.utf8).write(to: dir.appendingPathComponent("bank.summary.json"))
        }
        try writeManifest(bytes: bank.count, crc32: crc.hex)
        #expect(try Self.load(dir).bank.items.count == 120)

        // One item's line changed by hand, the manifest left as calibrate wrote it: refused.
        try writeManifest(bytes: bank.count + 7, crc32: "00000000")
        #expect {
            try Self.load(dir)
        } throws: { error in
            let text = "\(error)"
            return text.contains("the file has \(bank.count) bytes with CRC-32 \(crc.hex), but its manifest")
                && text.contains("says \(bank.count + 7) bytes with CRC-32 00000000")
        }

        // Another command's summary beside the bank (no bank output in it) is not a manifest of this bank.
        try Data(#"{"n_persons": 3}"#.utf8).write(to: dir.appendingPathComponent("bank.summary.json"))
        #expect(try Self.load(dir).bank.items.count == 120)
    }

    @Test("exposure control is on by default: Sympson–Hetter calibrated at load with seed 1, the same on every instance")
    func exposureByDefault() throws {
        let dir = try Fixtures.copyOfData()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"max_items": 8, "min_per_domain": 2, "randomesque": 4, "exposure_target": 0.3, "exposure_calibration_simulees": 500}"#.utf8)
            .write(to: dir.appendingPathComponent("cat-exposure.json"))
        let first = try Self.load(dir, cat: "cat-exposure.json", exposureControl: true)
        let second = try Self.load(dir, cat: "cat-exposure.json", exposureControl: true)
        let parameters = try #require(first.exposure)
        #expect(second.exposure == parameters)
        let pool = first.pool
        #expect(parameters == (try SympsonHetter.calibrate(pool: pool, seed: 1)).parameters)
        #expect(parameters.probabilities.contains { $0 < 1 }, "no item was controlled")
        #expect(first.exposureControl.hasPrefix("sympson-hetter r_max 0.3 calibrated at load ("), "\(first.exposureControl)")

        // Turned off on request, or by the configuration: said so.
        #expect(try Self.load(dir, cat: "cat-exposure.json").exposure == nil)
        #expect(try Self.load(dir, cat: "cat-exposure.json").exposureControl == "off (exposure control turned off)")
        // `iqscore serve` names its option; a program configuring the server in code reads words.
        var served = ServerConfiguration(
            bankPath: dir.appendingPathComponent("bank.csv").path,
            catConfigurationPath: dir.appendingPathComponent("cat-exposure.json").path)
        served.exposureControl = false
        served.naming = .option
        #expect(try ServingState.load(served).exposureControl == "off (--exposure none)")
        let nullTarget = try Self.load(dir, cat: "cat.json", exposureControl: true)
        #expect(nullTarget.exposure == nil)
        #expect(nullTarget.exposureControl == "off (exposure_target is null in \(dir.appendingPathComponent("cat.json").path))")
    }
}
