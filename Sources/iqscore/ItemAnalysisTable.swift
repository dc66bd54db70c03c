import Foundation
import Psychometrics

/// Thresholds for item flags (shared by `analyze` and `report`).
struct FlagRules {
    var minSlope = 0.5
    var minPointBiserial = 0.15
    var misfitP = 0.01
    var pRange = (0.05, 0.95)
    var mnsqRange = (0.7, 1.3)

    /// Slope thresholds: [0, 50], the largest slope a bank may hold (`ItemBank.allowedSlopes`).
    static let allowedMinSlopes = NumberRange.closed(0, 50)
    /// Point-biserial thresholds: [−1, 1], a correlation's range.
    static let allowedPointBiserials = NumberRange.closed(-1, 1)
    /// S-X² p-value thresholds and p-value ranges: [0, 1], a probability's range.
    static let allowedProbabilities = NumberRange.closed(0, 1)
    /// Infit/outfit mean squares: [0, 100]. Their expectation is 1; beyond 100 nothing is ever flagged.
    static let allowedMeanSquares = NumberRange.closed(0, 100)

    /// Problems with the thresholds, naming the command-line options.
    func validationProblems() -> [String] {
        var problems = [Self.allowedMinSlopes.problem(minSlope, "--min-slope"),
                        Self.allowedPointBiserials.problem(minPointBiserial, "--min-point-biserial"),
                        Self.allowedProbabilities.problem(misfitP, "--misfit-p")].compactMap { $0 }
        for (name, range, allowed) in [("--p-range", pRange, Self.allowedProbabilities), ("--mnsq-range", mnsqRange, Self.allowedMeanSquares)] {
            if !(allowed.contains(range.0) && allowed.contains(range.1) && range.0 < range.1) {
                problems.append("\(name) must be LOW,HIGH with LOW < HIGH, both in \(allowed); got \(range.0),\(range.1)")
            }
        }
        return problems
    }
}

/// Everything `analyze` computes for a response file and a bank, in one value.
struct ItemAnalysisTable {
    struct Row {
        var itemID: String
        var classical: ClassicalItemAnalysis.Item
        var fit: ModelFit.ItemFit
        var parameters: ItemParameters
        var flags: [String]
    }

    var rows: [Row]
    var classical: ClassicalItemAnalysis
    var fit: ModelFit
    var data: ResponseMatrix
    var model: IRTModel
    var itemsNotInBank: [String]
    var personsWithoutResponses: Int

    /// Restricts the responses to the bank's items and computes classical statistics, fit and flags.
    init(responses: String, fileOptions: ResponseFileOptions, bank: ItemBank, rules: FlagRules) throws {
        let (loaded, report) = try ResponseMatrix.load(csv: responses, options: fileOptions)
        var byID: [String: BankItem] = [:]
        for item in bank.items { byID[item.itemID] = item }
        itemsNotInBank = loaded.itemIDs.filter { byID[$0] == nil }
        let (data, dropped) = loaded.keepingItems(loaded.itemIDs.map { byID[$0] != nil })
        guard data.itemCount >= 2 else {
            throw InputError(file: responses, message: "only \(data.itemCount) of the \(loaded.itemCount) items are in the bank \(bank.sourcePath ?? "bank"); analysis needs at least 2")
        }
        self.data = data
        personsWithoutResponses = report.emptyPersons.count + dropped.count
        let bankItems = data.itemIDs.map { byID[$0]! }
        let parameters = bankItems.map(\.parameters)
        model = bankItems.first!.model
        let free: Int
        switch model { case .rasch, .onePL: free = 1; case .twoPL: free = 2; case .threePL: free = 3 }
        let classical = ClassicalItemAnalysis(data)
        let fit = try ModelFit(data: data, parameters: parameters, freeParameters: free)
        self.classical = classical
        self.fit = fit
        rows = (0..<data.itemCount).map { j in
            let c = classical.items[j], f = fit.items[j], p = parameters[j]
            var flags: [String] = []
            if p.discrimination < 0 { flags.append("negative slope") } else if p.discrimination < rules.minSlope { flags.append("low slope (a < \(rules.minSlope.formatted6))") }
            if c.pValue < rules.pRange.0 || c.pValue > rules.pRange.1 { flags.append("extreme p-value") }
            if let r = c.pointBiserial, r < rules.minPointBiserial { flags.append("low point-biserial (< \(rules.minPointBiserial.formatted6))") }
            if let sp = f.sx2P, sp < rules.misfitP { flags.append("misfit (S-X² p < \(rules.misfitP.formatted6))") }
            if let i = f.infit, let o = f.outfit, i < rules.mnsqRange.0 || i > rules.mnsqRange.1 || o < rules.mnsqRange.0 || o > rules.mnsqRange.1 {
                flags.append("infit/outfit outside \(rules.mnsqRange.0.formatted6)–\(rules.mnsqRange.1.formatted6)")
            }
            flags += bankItems[j].flags.map { "calibration: \($0)" }
            return Row(itemID: c.itemID, classical: c, fit: f, parameters: p, flags: flags)
        }
    }

    var parameters: [ItemParameters] { rows.map(\.parameters) }
    var flaggedCount: Int { rows.filter { !$0.flags.isEmpty }.count }
}
