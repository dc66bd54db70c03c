import Foundation
import Psychometrics
import PsychometricsIO

/// Thresholds for item flags (shared by `analyze` and `report`).
struct FlagRules {
    var minSlope = 0.5
    var minPointBiserial = 0.15
    /// Significance level of the fit tests: S-X² p-values below it; infit/outfit |ZSTD| beyond the two-sided
    /// critical value; RMSD above its replicates' 1 − α quantile; Q3 pairs family-wise over the pairs compared.
    var misfitP = 0.01
    var pRange = (0.05, 0.95)
    var mnsqRange = (0.7, 1.3)
    var maxRMSD = 0.1
    var q3Threshold = 0.2
    var q3MinimumPersons = 30
    /// How S-X² pools sparse score groups (`SX2Pooling`).
    var sx2Pooling = SX2Pooling.forward

    /// Slope thresholds: [0, 50], the largest slope a bank may hold (`ItemBank.allowedSlopes`).
    static let allowedMinSlopes = NumberRange.closed(0, 50)
    /// Point-biserial thresholds: [−1, 1], a correlation's range.
    static let allowedPointBiserials = NumberRange.closed(-1, 1)
    /// S-X² p-value thresholds and p-value ranges: [0, 1], a probability's range.
    static let allowedProbabilities = NumberRange.closed(0, 1)
    /// Infit/outfit mean squares: [0, 100]. Their expectation is 1; beyond 100 nothing is ever flagged.
    static let allowedMeanSquares = NumberRange.closed(0, 100)
    /// RMSD thresholds: [0, 1], the range of a difference of probabilities.
    static let allowedRMSDs = NumberRange.closed(0, 1)
    /// Q3* thresholds: [0, 2], the range of a difference of correlations.
    static let allowedQ3Thresholds = NumberRange.closed(0, 2)
    /// Persons per Q3 pair: 10 or more (Fisher's z needs n > 3; below 10 a correlation of 0/1 residuals is noise).
    static let allowedQ3MinimumPersons = 10...Int.max

    /// Problems with the thresholds, naming the command-line options.
    func validationProblems() -> [String] {
        var problems = [
            Self.allowedMinSlopes.problem(minSlope, "--min-slope"),
            Self.allowedPointBiserials.problem(minPointBiserial, "--min-point-biserial"),
            Self.allowedProbabilities.problem(misfitP, "--misfit-p"),
            Self.allowedRMSDs.problem(maxRMSD, "--max-rmsd"),
            Self.allowedQ3Thresholds.problem(q3Threshold, "--q3-threshold"),
            Self.allowedQ3MinimumPersons.problem(q3MinimumPersons, "--q3-min-persons")
        ].compactMap { $0 }
        for (name, range, allowed) in [("--p-range", pRange, Self.allowedProbabilities), ("--mnsq-range", mnsqRange, Self.allowedMeanSquares)] {
            if !(allowed.contains(range.0) && allowed.contains(range.1) && range.0 < range.1) {
                problems.append("\(name) must be LOW,HIGH with LOW < HIGH, both in \(allowed); got \(range.0),\(range.1)")
            }
        }
        return problems
    }

    /// The |ZSTD| a mean square must exceed: Φ⁻¹(1 − misfitP/2) (∞ at 0, 0 at 1).
    var meanSquareCriticalZ: Double {
        misfitP <= 0 ? .infinity : misfitP >= 1 ? 0 : StandardNormal.quantile(1 - misfitP / 2)
    }
}

/// Everything `analyze` computes for a response file and a bank, in one value.
struct ItemAnalysisTable {
    struct Row {
        var itemID: String
        var classical: ClassicalItemAnalysis.Item
        var fit: ModelFit.ItemFit
        /// The parameters on the N(0, 1) metric of the bank's calibration population (`LatentScale.standardized`),
        /// which the fit statistics, curves and charts use: the bank's own for a bank on that metric.
        var parameters: ItemParameters
        /// The parameters as the bank holds them (what tables show).
        var bankParameters: ItemParameters
        var flags: [String]
        /// The fit statistics that flag this item (keys of `FitFlag`).
        var fitFlags: Set<FitFlag>
    }

    /// Fit statistics whose flags `analyze` counts separately (its summary's `fit_flags`).
    enum FitFlag: String, CaseIterable {
        case sx2, infit, outfit, rmsd
    }

    var rows: [Row]
    var classical: ClassicalItemAnalysis
    var fit: ModelFit
    var data: ResponseMatrix
    var model: IRTModel
    var itemsNotInBank: [String]
    /// The bank's latent scale: θ of persons (`fit.persons`, on the N(0, 1) metric) is reported as
    /// `latentScale.theta(fromStandard:)`.
    var latentScale: LatentScale
    var personsWithoutResponses: Int
    /// How the response file was read (its layout and id column).
    var fileReport: ResponseFileReport
    var rules: FlagRules
    /// Maydeu-Olivares & Joe's M2 of the bank's model on the persons who answered every item, or why not.
    var m2: LimitedInformationFit?
    var m2Undefined: String?

    /// Restricts the responses to the bank's items and computes classical statistics, fit and flags.
    init(responses: String, fileOptions: ResponseFileOptions, bank: ItemBank, rules: FlagRules) throws {
        let (loaded, report) = try ResponseMatrix.load(csv: responses, options: fileOptions)
        noteUnnamedIDColumn(report)
        var byID: [String: BankItem] = [:]
        for item in bank.items { byID[item.itemID] = item }
        itemsNotInBank = loaded.itemIDs.filter { byID[$0] == nil }
        let (data, dropped) = loaded.keepingItems(loaded.itemIDs.map { byID[$0] != nil })
        guard data.itemCount >= 2 else {
            throw InputError(
                file: responses,
                message:
                    "only \(data.itemCount) of the \(loaded.itemCount) items are in the bank \(bank.sourcePath ?? "bank"); analysis needs at least 2")
        }
        self.data = data
        self.rules = rules
        personsWithoutResponses = report.emptyPersons.count + dropped.count
        fileReport = report
        let bankItems = data.itemIDs.map { byID[$0]! }
        // Fit statistics assume θ ~ N(0, 1): a bank with another latent scale (Rasch) is taken on that metric.
        latentScale = bank.latentScale
        let parameters = bankItems.map { bank.latentScale.standardized($0.parameters) }
        model = bankItems.first!.model
        let free: Int
        switch model {
        case .rasch, .onePL: free = 1;
        case .twoPL: free = 2;
        case .threePL: free = 3
        }
        let classical = ClassicalItemAnalysis(data)
        var options = ModelFit.Options()
        options.q3.minimumPairCount = rules.q3MinimumPersons
        options.q3.threshold = rules.q3Threshold
        options.q3.significance = rules.misfitP
        options.significance = rules.misfitP
        options.sx2Pooling = rules.sx2Pooling
        let fit = try ModelFit(data: data, parameters: parameters, freeParameters: free, options: options)
        self.classical = classical
        self.fit = fit
        if Set(bankItems.map(\.model)).count > 1 {
            m2Undefined = "the bank mixes item models; M2 is computed for one"
        } else {
            (m2, m2Undefined) = UnidimensionalJointProbabilities.m2(
                data, items: parameters, model: model, grid: try QuadratureGrid(count: 61, bound: 6),
                workers: WorkerThreads.all)
        }
        let zCritical = rules.meanSquareCriticalZ
        rows = (0..<data.itemCount).map { j in
            let c = classical.items[j], f = fit.items[j], p = parameters[j]
            var flags: [String] = []
            var fitFlags: Set<FitFlag> = []
            if p.discrimination < 0 {
                flags.append("negative slope")
            } else if bankItems[j].parameters.discrimination < rules.minSlope {
                flags.append("low slope (a < \(rules.minSlope.formatted6))")
            }
            if c.pValue < rules.pRange.0 || c.pValue > rules.pRange.1 { flags.append("extreme p-value") }
            if let r = c.pointBiserial, r < rules.minPointBiserial { flags.append("low point-biserial (< \(rules.minPointBiserial.formatted6))") }
            if let sp = f.sx2P, sp < rules.misfitP { flags.append("misfit (S-X² p < \(rules.misfitP.formatted6))"); fitFlags.insert(.sx2) }
            // A mean square flags when it is outside the range (an effect worth attention) and its ZSTD is
            // significant (not the noise of a small n).
            func outside(_ ms: Double?, _ z: Double?) -> Bool {
                guard let ms, let z else { return false }
                return (ms < rules.mnsqRange.0 || ms > rules.mnsqRange.1) && abs(z) > zCritical
            }
            if outside(f.infit, f.infitZ) { fitFlags.insert(.infit) }
            if outside(f.outfit, f.outfitZ) { fitFlags.insert(.outfit) }
            if fitFlags.contains(.infit) || fitFlags.contains(.outfit) {
                flags.append("infit/outfit outside \(rules.mnsqRange.0.formatted6)–\(rules.mnsqRange.1.formatted6) (|ZSTD| > \(fixed(zCritical, 2)))")
            }
            // RMSD flags when it is above the cutoff (an effect worth attention) and above what this item's n
            // reaches by chance (its replicates' critical value).
            if let r = f.rmsd, r > rules.maxRMSD, r > f.rmsdCritical ?? 0 {
                flags.append("RMSD > \(rules.maxRMSD.formatted6)"); fitFlags.insert(.rmsd)
            }
            flags += bankItems[j].flags.map { "calibration: \($0)" }
            return Row(
                itemID: c.itemID, classical: c, fit: f, parameters: p, bankParameters: bankItems[j].parameters, flags: flags, fitFlags: fitFlags)
        }
    }

    var parameters: [ItemParameters] { rows.map(\.parameters) }
    var flaggedCount: Int { rows.filter { !$0.flags.isEmpty }.count }

    /// Statistic → why it is undefined, classical and model-based together.
    var undefined: [String: String] { classical.undefined.merging(fit.undefined) { a, _ in a } }
}
