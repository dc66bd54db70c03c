import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

extension SimulateCommand {
    /// `--model bifactor|testlet`'s own rules: the specific factors are --domains; no --bank, categories or θ
    /// distribution (the factors are N(0, 1)).
    func validateBifactor() throws {
        guard let domains, !domains.isEmpty else {
            throw ValidationError("--model \(model.description) draws one specific factor per domain: give --domains (comma-separated, assigned to the items in turn)")
        }
        if bank != nil { throw ValidationError("--bank gives a unidimensional bank; --model \(model.description) draws its own (from --items and --domains)") }
        if let itemType, itemType != .twoPL && itemType != .threePL {
            throw ValidationError("--item-type must be 2pl or 3pl for --model \(model.description), got \(itemType.rawValue)")
        }
        if thetaMean != 0 || thetaSD != 1 { throw ValidationError("--theta-mean and --theta-sd apply to one-factor models; the factors of --model \(model.description) are N(0, 1)") }
    }

    /// Draws a bifactor (testlet) bank and sessions (`BifactorSimulator`), streaming the responses; --bank-out writes
    /// the true bank (as `calibrate --model bifactor` writes one), --thetas-out every factor's score.
    func runBifactor() throws {
        try runReportingErrors {
            try prepareOutputs(inputs: [], outputs: [("--out", out)] + given("--bank-out", bankOut) + given("--thetas-out", thetasOut))
            var rng = SeededGenerator(seed: seed)
            let bank = specification.draw(using: &rng)
            let count = bank.items.count
            if let k = itemsPerSession, !(1...count).contains(k) {
                throw ValidationError("--items-per-session must be in 1…\(count) (the bank's items), got \(k)")
            }
            let names = specification.domains
            // Domains in turn, as the unidimensional bank's domain column.
            let factors: [Int?] = (0..<count).map { $0 % names.count }
            let items = BifactorSimulator.items(from: bank, factors: factors, testlet: model == .testlet, using: &rng)
            let structure = try FactorStructure(items: bank.items.indices.map { (bank.items[$0].itemID, names[$0 % names.count]) })
            let simulator = BifactorSimulator(items: items, specificFactorCount: names.count, itemsPerSession: itemsPerSession)
            let started = Date()
            let writer = try AtomicFileWriter(path: out)
            let thetaWriter = try thetasOut.map { try AtomicFileWriter(path: $0) }
            try thetaWriter?.write((["session_id"] + structure.factorNames.map { "theta_" + $0 }).map(csvField).joined(separator: ",") + "\n")
            var lines = try SessionLines(itemIDs: bank.items.map(\.itemID), persons: persons, layout: layout, noID: noID, writer: writer)
            try simulator.generate(count: persons, using: &rng) { scores, responses in
                let id = try lines.write(responses)
                try thetaWriter?.write(([id] + scores.map { String(format: "%.6f", $0) }).joined(separator: ",") + "\n")
            }
            try writer.commit()
            try thetaWriter?.commit()
            if let bankOut {
                let metadata = ItemMetadata(columns: ["domain"], values: Dictionary(uniqueKeysWithValues: bank.items.indices.map {
                    (bank.items[$0].itemID, ["domain": names[$0 % names.count]])
                }))
                try writeAtomically(bifactorBankCSV(items.indices.map { BifactorBankRow(itemID: bank.items[$0].itemID, item: items[$0]) },
                                                    structure: structure, metadata: metadata), to: bankOut)
            }
            printError("iqscore simulate: \(model.description) \(irtModel.rawValue.uppercased()) bank of \(formatCount(count)) items on a general factor and \(names.count) specific factor\(names.count == 1 ? "" : "s") (\(names.joined(separator: ", "))), \(formatCount(persons)) sessions × \(itemsPerSession ?? count) items (\(layout.rawValue) layout, seed \(seed)) in \(fixed(Date().timeIntervalSince(started), 2)) s")
            printError("wrote \(out)" + (bankOut.map { ", \($0)" } ?? "") + (thetasOut.map { ", \($0)" } ?? ""))
            return ExitStatus.success
        }
    }
}
