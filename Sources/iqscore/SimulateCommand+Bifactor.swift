import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

extension SimulateCommand {
    /// `--model bifactor|testlet`'s own rules: the specific factors are --domains; no --bank, categories or θ
    /// distribution (the factors are N(0, 1)).
    func validateBifactor() throws {
        guard let domains, !domains.isEmpty else {
            throw ValidationError(
                "--model \(model.description) draws one \(model.isBifactor ? "specific factor" : "factor") per domain: give --domains (comma-separated, assigned to the items in turn)"
            )
        }
        if bank != nil {
            throw ValidationError("--bank gives a unidimensional bank; --model \(model.description) draws its own (from --items and --domains)")
        }
        if let itemType, itemType != .twoPL && itemType != .threePL {
            throw ValidationError("--item-type must be 2pl or 3pl for --model \(model.description), got \(itemType.rawValue)")
        }
        if thetaMean != 0 || thetaSD != 1 {
            throw ValidationError("--theta-mean and --theta-sd apply to one-factor models; the factors of --model \(model.description) are N(0, 1)")
        }
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
            if model == .correlated { return try runCorrelated(bank: bank, names: names, rng: &rng) }
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
                try writeAtomically(
                    bifactorBankCSV(
                        items.indices.map { BifactorBankRow(itemID: bank.items[$0].itemID, item: items[$0]) },
                        structure: structure, metadata: Self.domainMetadata(bank, domains: names)), to: bankOut)
            }
            printError(
                "iqscore simulate: \(model.description) \(irtModel.rawValue.uppercased()) bank of \(formatCount(count)) items on a general factor and \(names.count) specific factor\(names.count == 1 ? "" : "s") (\(names.joined(separator: ", "))), \(formatCount(persons)) sessions × \(itemsPerSession ?? count) items (\(layout.rawValue) layout, seed \(seed)) in \(fixed(Date().timeIntervalSince(started), 2)) s"
            )
            printError("wrote \(out)" + (bankOut.map { ", \($0)" } ?? "") + (thetasOut.map { ", \($0)" } ?? ""))
            return ExitStatus.success
        }
    }

    /// The `domain` column of a drawn multidimensional bank's --bank-out: item j's domain is `domains[j % K]`, the
    /// domains in turn as its items were assigned to the factors.
    static func domainMetadata(_ bank: ItemBank, domains: [String]) -> ItemMetadata {
        ItemMetadata(
            columns: ["domain"],
            values: Dictionary(uniqueKeysWithValues: bank.items.indices.map { (bank.items[$0].itemID, ["domain": domains[$0 % domains.count]]) }))
    }

    /// `--model correlated`: each item of the drawn bank on its domain's factor (a, d = −a·b, c), the factors
    /// N(0, R) with every correlation --factor-correlation (`CorrelatedFactorsSimulator`).
    func runCorrelated(bank: ItemBank, names: [String], rng: inout SeededGenerator) throws -> Int32 {
        let k = names.count, rho = factorCorrelation ?? 0.6
        guard k >= 2 else { throw ValidationError("--model correlated needs at least 2 --domains (its factors), got \(k)") }
        guard rho > -1 / Double(k - 1), rho < 1 else {
            throw ValidationError(
                "--factor-correlation must be greater than −1/(K−1) = \(fixed(-1 / Double(k - 1), 4)) and below 1 for \(k) factors, got \(rho)")
        }
        let count = bank.items.count
        let correlations = (0..<(k * k)).map { $0 / k == $0 % k ? 1 : rho }
        let items = bank.items.indices.map { j -> CorrelatedFactorsResult.Item in
            let p = bank.items[j].parameters
            return .init(
                itemID: bank.items[j].itemID, factor: j % k, slope: p.discrimination, intercept: p.intercept, guessing: p.guessing,
                estimatesGuessing: bank.items[j].model == .threePL)
        }
        let simulator = try CorrelatedFactorsSimulator(
            items: items.map { BifactorItem(generalSlope: $0.slope, intercept: $0.intercept, guessing: $0.guessing) },
            factors: items.map(\.factor), correlations: correlations, itemsPerSession: itemsPerSession)
        let started = Date()
        let (data, scores) = simulator.matrix(count: persons, itemIDs: bank.items.map(\.itemID), using: &rng)
        let writer = try AtomicFileWriter(path: out)
        var lines = try SessionLines(itemIDs: data.itemIDs, persons: persons, layout: layout, noID: noID, writer: writer)
        let thetaWriter = try thetasOut.map { try AtomicFileWriter(path: $0) }
        try thetaWriter?.write((["session_id"] + names.map { "theta_" + $0 }).map(csvField).joined(separator: ",") + "\n")
        for i in 0..<data.personCount {
            let answers = data.cells(ofPerson: i).map { (item: Int(data.itemIndices[$0]), response: data.responses[$0]) }
            let id = try lines.write(answers)
            try thetaWriter?.write(([id] + scores[i].map { String(format: "%.6f", $0) }).joined(separator: ",") + "\n")
        }
        try writer.commit()
        try thetaWriter?.commit()
        if let bankOut {
            try writeAtomically(
                CorrelatedFactorsResult.bankCSV(
                    items: items, factors: names, correlations: correlations, metadata: Self.domainMetadata(bank, domains: names)), to: bankOut)
        }
        printError(
            "iqscore simulate: correlated \(irtModel.rawValue.uppercased()) bank of \(formatCount(count)) items on \(k) factors (\(names.joined(separator: ", ")); every correlation \(rho)), \(formatCount(persons)) sessions × \(itemsPerSession ?? count) items (\(layout.rawValue) layout, seed \(seed)) in \(fixed(Date().timeIntervalSince(started), 2)) s"
        )
        printError("wrote \(out)" + (bankOut.map { ", \($0)" } ?? "") + (thetasOut.map { ", \($0)" } ?? ""))
        return ExitStatus.success
    }
}
