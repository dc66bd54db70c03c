import ArgumentParser
import Assembly
import Foundation
import Psychometrics
import PsychometricsIO

struct AssembleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assemble",
        abstract: "Assemble balanced fixed forms from a calibrated bank to a blueprint.",
        discussion: """
            The bank needs a domain column; optional columns status (active/pretest/retired), anchor (1/0), \
            enemy_group and difficulty_label are used when present. The blueprint JSON: \
            {"length": 25, "domain_counts": {"pattern": 9, …}} or "domain_weights" (largest-remainder rounding), \
            optional "difficulty_counts" with "difficulty_bands" {"easy": [-6, -0.5], …} or bank labels, \
            "anchors_per_domain", "exclude", "enemies": [["i1", "i7"]], "target_information": \
            [{"theta": 0, "information": 10}], "max_exposure", "forms", "max_overlap", "statuses".

            Counts-only blueprints are solved exactly (max-flow allocation, random items within cells: each seed \
            gives a different, equally valid form); other rules use a swap search whose remaining violations are \
            reported. FORM.csv: form,position,item_id,domain,a,b,c,difficulty_class,anchor (easiest first; an item \
            scored in more than two categories is shown as the 2PL with its peak information: a = 2·√(max I), \
            b = the θ of that peak, c = 0; difficulty bands and the order use that θ).

            A bifactor or testlet bank (calibrate --model bifactor|testlet) is assembled on its items' \
            general-factor marginals (each item as a 2PL/3PL on θ_g with its specific factor integrated out: \
            the information targets are about the full-scale ability); the summary and --report-json \
            ("factor_information") add each form's information per factor: the general factor's from the \
            marginals, each specific factor's about that factor from its items at θ_g = 0. A correlated-factors \
            bank (calibrate --model correlated) is assembled on its items' marginals on the full-scale composite \
            θ_FS; "factor_information" holds full_scale's (the marginals') and each factor's from its own items.

            Exit status: 0 every rule met; 2 forms written but some rule relaxed (listed on stderr); 1 the \
            blueprint cannot be met (each short constraint named with supply and demand) or bad input.
            """
    )

    @Option(help: "Item bank CSV with a domain column.")
    var bank: String

    @Option(help: "Blueprint JSON.")
    var blueprint: String

    @Option(help: "Output form CSV (written atomically).")
    var out: String

    @Option(help: "Number of parallel forms, \(Blueprint.allowedFormCounts.text) (overrides the blueprint's \"forms\").")
    var forms: Int?

    @Option(help: "CSV with an item_id column: items to exclude (e.g. seen before).")
    var exclude: String?

    @Option(help: "CSV item_id,exposure_rate for the blueprint's max_exposure rule.")
    var exposure: String?

    @Option(help: "Random seed (different seeds give different, equally valid forms).")
    var seed: UInt64 = 1

    @Option(name: .customLong("report-json"), help: "Also write the diagnostics as JSON.")
    var reportJSON: String?

    @Option(help: "Also run a seeded simulation study with this many simulees, \(SimulationStudy.allowedSimulees.text) (θ ~ N(0, 1), EAP scoring).")
    var simulate: Int?

    @Option(name: .customLong("simulation-out"), help: "Simulation report JSON (with --simulate).")
    var simulationOut: String?

    @Option(
        name: .customLong("se-target"),
        help: "Report the share of simulees with SE ≤ this, in \(FormSimulation.Options.allowedSETargets) (with --simulate).")
    var seTarget: Double?

    @Flag(name: .customLong("simulate-fixed"), help: "Simulate with the assembled parallel forms in turn instead of a form per simulee.")
    var simulateFixed = false

    /// Ranges are the library's (`Blueprint`, `SimulationStudy`, `FormSimulation.Options`).
    @OptionGroup var bankModel: BankModelOption

    func validate() throws {
        try throwIfAny(
            [
                forms.flatMap { Blueprint.allowedFormCounts.problem($0, "--forms") },
                simulate.flatMap { SimulationStudy.allowedSimulees.problem($0, "--simulate") },
                seTarget.flatMap { FormSimulation.Options.allowedSETargets.problem($0, "--se-target") }
            ].compactMap { $0 })
        if simulate != nil && simulationOut == nil { throw ValidationError("--simulate needs --simulation-out FILE for the report") }
        if simulate == nil && (simulationOut != nil || seTarget != nil || simulateFixed) {
            throw ValidationError("--simulation-out, --se-target and --simulate-fixed go with --simulate N")
        }
    }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(
                inputs: [("--bank", bank), ("--blueprint", blueprint)] + given("--exclude", exclude) + given("--exposure", exposure),
                outputs: [("--out", out)] + given("--report-json", reportJSON) + given("--simulation-out", simulationOut))
            let battery = try loadAssemblyBattery()
            let assemblyBank = try AssemblyBank(bank: battery?.scoringBank ?? loadBank(bank, categoryItems: bankModel.reading))
            var spec = try Blueprint.load(json: blueprint)
            if let forms { spec.forms = forms }
            var options = AssemblyOptions(seed: seed)
            var unknownExcluded = 0
            if let exclude {
                let ids = try readColumn(exclude, "item_id")
                options.excluded = Set(ids)
                unknownExcluded = ids.filter { assemblyBank.index(of: $0) == nil }.count
            }
            if let exposure {
                let rows = try readPairs(exposure, "item_id", "exposure_rate")
                options.exposureRates = rows
            }
            let assembler: FormAssembler
            let result: [AssembledForm]
            do {
                assembler = try FormAssembler(bank: assemblyBank, blueprint: spec)
                let started = Date()
                result = try assembler.assemble(options: options)
                let ms = Date().timeIntervalSince(started) * 1000
                try write(result, assembler, battery: battery)
                printError(summary(result, assembler, ms: ms, unknownExcluded: unknownExcluded, battery: battery))
                if let simulate, let simulationOut {
                    var study = FormSimulation.Options(simulees: simulate, seed: seed)
                    study.seTarget = seTarget
                    study.thetaMean = assemblyBank.latentScale.mean
                    study.thetaSD = assemblyBank.latentScale.sd
                    if simulateFixed { study.fixedForms = result.count }
                    let report = try FormSimulation.run(assembler: assembler, options: study)
                    try writeAtomically(try encodeJSON(report), to: simulationOut)
                    var line =
                        "simulation (\(report.mode), \(formatCount(simulate)) simulees): RMSE \(fixed(report.figures.rmse, 3)), bias \(fixed(report.figures.bias, 3)), mean SE \(fixed(report.figures.meanSE, 3))"
                    if let share = report.figures.shareSEReached { line += ", SE ≤ \(seTarget!.formatted6) for \(fixed(100 * share, 1))%" }
                    line +=
                        "; exposure max \(fixed(report.figures.maxExposure, 3)), mean \(fixed(report.figures.meanExposure, 4)); overlap \(fixed(report.figures.overlapRate, 3)); content violations \(report.contentViolations); \(fixed(report.elapsedSeconds, 2)) s"
                    printError(line)
                    printError("wrote \(simulationOut)")
                }
            } catch let error as AssemblyError where error.code == .infeasibleBlueprint {
                throw InputError(file: blueprint, message: error.description)
            }
            return result.contains { !$0.relaxed.isEmpty } ? ExitStatus.someRejected : ExitStatus.success
        }
    }

    func write(_ forms: [AssembledForm], _ assembler: FormAssembler, battery: AssemblyBattery?) throws {
        var text = "form,position,item_id,domain,a,b,c,difficulty_class,anchor\n"
        for (f, form) in forms.enumerated() {
            for (p, k) in form.items.enumerated() {
                let item = assembler.bank.items[k]
                let cls = assembler.classes.isEmpty ? "" : (assembler.difficultyClass(of: k) ?? "")
                // An item in more than two categories: the 2PL with its peak information (`AssemblyItem.slope`,
                // `location`), c = 0.
                let c = item.categoryModel == nil ? item.parameters.guessing : 0
                text +=
                    "\(f + 1),\(p + 1),\(csvField(item.id)),\(csvField(item.domain)),\(fixed(item.slope, 6)),\(fixed(item.location, 6)),\(fixed(c, 6)),\(csvField(cls)),\(item.isAnchor ? 1 : 0)\n"
            }
        }
        try writeAtomically(text, to: out)
        if let reportJSON {
            let report = forms.enumerated().map { f, form -> [String: Any] in
                var r: [String: Any] = [
                    "form": f + 1, "method": form.method, "items": form.items.map { assembler.bank.items[$0].id },
                    "domain_counts": form.domainCounts, "difficulty_counts": form.difficultyCounts,
                    "anchor_counts": form.anchorCounts, "relaxed": form.relaxed, "overlap_with_earlier": form.overlapWithEarlier,
                    "information": form.information.map {
                        ["theta": $0.theta, "information": $0.information, "se": $0.standardError.isFinite ? $0.standardError : NSNull()]
                            as [String: Any]
                    }
                ]
                if let battery {
                    r["factor_information"] = Self.factorInformation(form, assembler, battery).map { f in
                        ["factor": f.factor, "items": f.items, "information": f.values.map { ["theta": $0.theta, "information": $0.information] }]
                            as [String: Any]
                    }
                }
                if let s = form.targetScore { r["target_score"] = s }
                if let b = form.targetUpperBound { r["target_upper_bound"] = b }
                return r
            }
            let data = try JSONSerialization.data(withJSONObject: ["forms": report], options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            try writeAtomically(String(decoding: data, as: UTF8.self) + "\n", to: reportJSON)
        }
    }

    func summary(_ forms: [AssembledForm], _ assembler: FormAssembler, ms: Double, unknownExcluded: Int, battery: AssemblyBattery?) -> String {
        var lines = [
            "iqscore assemble: \(forms.count) form\(forms.count == 1 ? "" : "s") of \(assembler.blueprint.length) items from \(formatCount(assembler.bank.items.count)) (seed \(seed)) in \(fixed(ms, 2)) ms"
        ]
        if let battery { lines.append(battery.description) }
        if unknownExcluded > 0 { lines.append("note: \(unknownExcluded) excluded item id\(unknownExcluded == 1 ? " is" : "s are") not in the bank") }
        for (f, form) in forms.enumerated() {
            let domains = form.domainCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            var line = "form \(f + 1) (\(form.method)): \(domains)"
            if !form.difficultyCounts.isEmpty {
                line += "; " + form.difficultyCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            }
            if !form.anchorCounts.isEmpty {
                line += "; anchors " + form.anchorCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            }
            lines.append(line)
            lines.append(
                "  information (SE): "
                    + form.information.map { "θ \($0.theta.formatted6): \(fixed($0.information, 2)) (\(fixed($0.standardError, 3)))" }.joined(
                        separator: ", "))
            if let battery {
                for f in Self.factorInformation(form, assembler, battery) {
                    lines.append(
                        "  \(f.factor) (\(f.items) items\(f.note.isEmpty ? "" : ", " + f.note)): "
                            + f.values.map { "θ \($0.theta.formatted6): \(fixed($0.information, 2))" }.joined(separator: ", "))
                }
            }
            if let s = form.targetScore, let b = form.targetUpperBound {
                lines.append("  information targets met to \(fixed(100 * s, 1))% (upper bound \(fixed(100 * b, 1))%)")
            }
            if !form.overlapWithEarlier.isEmpty {
                lines.append("  shared with earlier forms: " + form.overlapWithEarlier.map(String.init).joined(separator: ", "))
            }
            for r in form.relaxed { lines.append("  relaxed: \(r)") }
        }
        lines.append("wrote \(out)" + (reportJSON.map { " and \($0)" } ?? ""))
        return lines.joined(separator: "\n")
    }

    /// The values of one named column of a CSV file.
    func readColumn(_ path: String, _ name: String) throws -> [String] {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header with \(name)") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        try CSVHeader.checkUnique(header, file: path, line: reader.line)
        guard let c = header.firstIndex(of: name) else {
            throw InputError(file: path, line: reader.line, message: "no \(name) column in the header (\(header.joined(separator: ",")))")
        }
        var values: [String] = []
        while try reader.nextRow() {
            guard c < reader.fieldCount else {
                throw reader.fieldCountError(expected: header.count)
            }
            let v = reader.string(c).trimmingCharacters(in: .whitespaces)
            if !v.isEmpty { values.append(v) }
        }
        return values
    }

    func readPairs(_ path: String, _ key: String, _ value: String) throws -> [String: Double] {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header with \(key),\(value)") }
        let header = reader.strings().map { $0.trimmingCharacters(in: .whitespaces) }
        try CSVHeader.checkUnique(header, file: path, line: reader.line)
        guard let kc = header.firstIndex(of: key), let vc = header.firstIndex(of: value) else {
            throw InputError(file: path, line: reader.line, message: "the header needs \(key) and \(value) (found \(header.joined(separator: ",")))")
        }
        var out: [String: Double] = [:], firstLine: [String: Int] = [:]
        while try reader.nextRow() {
            guard max(kc, vc) < reader.fieldCount else {
                throw reader.fieldCountError(expected: header.count)
            }
            let text = reader.string(vc).trimmingCharacters(in: .whitespaces)
            guard let v = DecimalNumber.parse(text), v >= 0, v <= 1 else {
                throw InputError(
                    file: path, line: reader.line, column: vc + 1, message: "\(value) '\(text.escapingControlCharacters)' must be a number in [0, 1]")
            }
            let id = reader.string(kc).trimmingCharacters(in: .whitespaces)
            if let previous = firstLine[id] {
                throw InputError(
                    file: path, line: reader.line, column: kc + 1,
                    message: "\(key) '\(id.escapingControlCharacters)' already listed on line \(previous)")
            }
            firstLine[id] = reader.line
            out[id] = v
        }
        return out
    }
}

/// A battery bank as `assemble` uses it: the unidimensional view forms are assembled on (each item's marginal on
/// the full-scale factor) and a form's information per factor.
struct AssemblyBattery {
    /// The items' marginals on the full-scale factor, with ids and metadata.
    var scoringBank: ItemBank
    /// The stderr line saying what the forms are assembled on.
    var description: String
    /// A form's information (its bank item ids) at `thetas`: the full-scale factor's first, then each factor with
    /// items in the form, with how its information is taken.
    var information: (_ itemIDs: [String], _ thetas: [Double]) -> [FactorInformation]

    struct FactorInformation {
        var factor: String
        var items: Int
        /// "marginal", "at θ_g = 0", or "" (a correlated factor's items measure it alone).
        var note: String
        var values: [(theta: Double, information: Double)]
    }

    /// A bifactor bank: the general factor's information from its items' general-factor marginals
    /// (`BifactorItem.generalMarginal`), each specific factor's about that factor from its items at θ_g = 0
    /// (`BifactorItem.information(general:specific:)`).
    init(bifactor battery: BifactorBank) {
        scoringBank = battery.scoringBank
        description =
            "bifactor bank: forms assembled on the items' general-factor marginals (information about θ_g with the specific factors unknown, as the full-scale score sees them); information per factor below"
        let position = Dictionary(uniqueKeysWithValues: battery.itemIDs.enumerated().map { ($1, $0) })
        information = { ids, thetas in
            let items = ids.compactMap { position[$0] }.map { battery.items[$0] }
            var out = [
                FactorInformation(
                    factor: battery.structure.generalFactor, items: items.count, note: "marginal",
                    values: thetas.map { t in (t, items.reduce(0) { $0 + $1.generalMarginal.information(at: t) }) })
            ]
            for (f, name) in battery.structure.specificFactors.enumerated() {
                let members = items.filter { $0.specific == f }
                guard !members.isEmpty else { continue }
                out.append(
                    .init(
                        factor: name, items: members.count, note: "at θ_g = 0",
                        values: thetas.map { t in (t, members.reduce(0) { $0 + $1.information(general: 0, specific: t).specific }) }))
            }
            return out
        }
    }

    /// A correlated-factors bank: the full-scale composite's information from its items' marginals on it
    /// (`CorrelatedFactorsScorer.fullScaleMarginal`), each factor's from its own items (which measure it alone).
    init(correlated file: CorrelatedFactorsBank) throws {
        let scorer = try CorrelatedFactorsScorer(items: file.items, correlations: file.correlations)
        scoringBank = file.scoringBank(scorer)
        description =
            "correlated-factors bank: forms assembled on the items' marginals on the full-scale composite w·Σθ_f (as the full-scale score sees them); information per factor below"
        let position = Dictionary(uniqueKeysWithValues: file.items.enumerated().map { ($1.itemID, $0) })
        let marginals = file.items.indices.map { scorer.fullScaleMarginal(item: $0) }
        let own = file.items.map { ItemParameters(discrimination: $0.slope, difficulty: -$0.intercept / $0.slope, guessing: $0.guessing) }
        information = { ids, thetas in
            let members = ids.compactMap { position[$0] }
            var out = [
                FactorInformation(
                    factor: "full_scale", items: members.count, note: "marginal",
                    values: thetas.map { t in (t, members.reduce(0) { $0 + marginals[$1].information(at: t) }) })
            ]
            for (f, name) in file.factors.enumerated() {
                let onFactor = members.filter { file.items[$0].factor == f }
                guard !onFactor.isEmpty else { continue }
                out.append(
                    .init(
                        factor: name, items: onFactor.count, note: "",
                        values: thetas.map { t in (t, onFactor.reduce(0) { $0 + own[$1].information(at: t) }) }))
            }
            return out
        }
    }
}

extension AssembleCommand {
    /// The battery bank of `--bank` (nil for a unidimensional one); the options it does not take refused.
    func loadAssemblyBattery() throws -> AssemblyBattery? {
        guard BifactorBank.isMultidimensional(csv: bank) else { return nil }
        var refused: [String] = []
        if simulate != nil {
            refused.append(
                "--simulate (the form simulation draws from one factor: simulate the battery with iqscore simulate --model bifactor|correlated and score it)"
            )
        }
        if bankModel.bankModel != nil { refused.append("--bank-model (a battery bank's items are 2pl or 3pl)") }
        if !refused.isEmpty {
            throw ValidationError("\(bank) is a multidimensional (battery) bank; assemble does not take " + refused.joined(separator: "; "))
        }
        if CorrelatedFactorsBank.isCorrelated(csv: bank) {
            do { return try AssemblyBattery(correlated: CorrelatedFactorsBank.load(csv: bank)) } catch let error as PsychometricsError {
                throw InputError(file: bank, message: error.message)
            }
        }
        return AssemblyBattery(bifactor: try loadBifactorBank(bank, requirePositiveGeneralSlopes: true))
    }

    /// A form's information per factor at the θ points of its information (`AssemblyBattery.information`).
    static func factorInformation(_ form: AssembledForm, _ assembler: FormAssembler, _ battery: AssemblyBattery) -> [AssemblyBattery
        .FactorInformation]
    {
        battery.information(form.items.map { assembler.bank.items[$0].id }, form.information.map(\.theta))
    }
}
