import ArgumentParser
import Foundation
import Integrity
import Norming
import Psychometrics
import PsychometricsIO

struct ScoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "score",
        abstract: "Score sessions to θ and IQ with confidence intervals, percentiles and flags.",
        discussion: """
            Reads sessions in long layout (session_id,item_id,response; names set by --session-column etc.) or \
            wide layout, exactly as `calibrate` does. Rows of a session need not be contiguous: contiguous input \
            streams (long files parsed and scored on every core); otherwise the files are read again and grouped \
            by session — in memory when they are small for --max-memory, else through partition files beside \
            the output. Memory stays within --max-memory (default 1G) plus a fixed overhead of about 50 MB, for \
            any input size and row order; a record (line) may be at most 16 MiB (or --max-memory/8). A pipe or \
            FIFO input is copied beside the output first, so it is read once.

            SCORES has one row per scored session in input order: \
            session_id,n_items,n_correct,theta,se,iq,iq_low,iq_high,percentile,method,flags,norms, plus age \
            (years, at most 2 decimals) with --age-column, plus n_unscored when the bank's status column marks items pretest or retired (answered, left out of θ, \
            the IQ, n_items and the domain counts; their responses stay in the input for calibrate --fixed), \
            plus <domain>_correct,<domain>_answered per domain when the bank has a domain column. \
            IQ = 100 + 15·(θ − μ)/σ with μ, σ from linear --norms (default the calibration population, μ = 0, \
            σ = 1), rounded half away from zero and clamped to 40–160; the interval is θ ± z·SE at --confidence; \
            the percentile is 100·Φ((θ − μ)/σ) to one decimal. Under age-specific norms (a NORMS.json document from \
            `iqscore norms build`; they need --age-column) each session is normed at its age: \
            IQ = 100 + 15·Φ⁻¹(F_age(θ)) (--iq-transform area, the default) or 100 + 15·(θ − m(age))/s(age) \
            (linear z, with the mean and SD of θ at that age), the interval is θ ± z·SE mapped the same way and \
            the percentile is 100·F_age(θ). With linear norms --age-column only reads, checks and writes the ages. \
            Flags: clamped_low, clamped_high, low_precision (SE > --low-precision-se), perfect_score, zero_score, \
            few_items (< --min-items), theta_at_bound, age_outside_norms (the age lies beyond the norms' ages and \
            their extrapolation margin; scored at the nearest covered age).

            Banks may hold items scored in more than two categories (model graded, gpcm, pcm, rsm or nominal, as \
            `calibrate --model graded` writes them, or mirt's coef() tables: a,b1,b2,… with --bank-model, or the \
            slope–intercept a1,d1,… and a1,ak0,…,d0,…): their cells are the categories 0…K−1, or the bank's \
            response labels (its categories column, e.g. 1;2;3;4 for data coded from 1). n_correct and the \
            <domain>_correct columns are then raw scores: the number correct of 0/1 items plus the categories of \
            graded and partial-credit items (a nominal item counts 1 for its key, the bank's key column, and nothing without one); perfect_score and \
            zero_score refer to the highest and lowest raw score.

            A bifactor or testlet bank (as `calibrate --model bifactor|testlet` writes it, a_<factor> columns, or \
            mirt's bfactor coef(simplify = TRUE) table, a1…ak,d,g,u) is scored as a battery: theta and se are the \
            general factor's posterior mean and SD (EAP on a grid of --quadrature-points per factor, default 31; \
            every factor N(0, 1)), and the IQ, interval and percentile are the full-scale IQ under --norms. Each \
            reported domain gets index_<domain>_theta,_se,_iq,_iq_low,_iq_high,_percentile,_flags (in JSON Lines \
            an "indexes" object): the domain's reference composite w_g·θ_g + w_s·θ_s, the direction its items \
            measure (Reckase 2009; the general-plus-specific composite DeMars 2013 recommends), N(0, 1) in the \
            calibration population, so its IQ is 100 + 15·index (or on its own norms, --index-norms NAME=NORMS.json: \
            linear or age-specific, e.g. built by norms build --theta-column index_NAME_theta) with the same interval level and flags (few_items: \
            the session answered none of the domain's items). --indexes auto (the default) reports the domains \
            that add value over the full-scale score by Haberman's (2008) criterion, PRMSE of the true index from \
            the domain's items alone above PRMSE from the full-scale score, computed on the bank as one form, or for \
            tests of --index-form-length items drawn from it (required beyond \(Battery.maximumFixedFormItems) items); the \
            criterion's figures are on stderr and in the manifest. --method is eap or map (the posterior mode of \
            every factor, SEs from the Hessian there); --prior-mean, --prior-sd and --bank-model are refused.

            A correlated-factors bank (calibrate --model correlated: a_<factor>, factor and r_<factor> columns) is \
            scored the same way with the factors as the indexes (each N(0, 1), from one posterior over all factors \
            N(0, R): a product grid of --quadrature-points per factor up to 3 factors, default 31; adaptive \
            quasi-Monte Carlo with 4,096 nodes from 4) and as theta the full-scale composite w·Σθ_f, \
            w = 1/√(1ᵀR1), N(0, 1) in the calibration population.

            Every session read is scored or written to REJECTS (session_id,file,line,column,reason): unknown \
            item id, a response that is not 0/1 (for an item in more than two categories: not one of its \
            categories 0…K−1 or response labels), the same item twice in a session, a malformed row; with --age-column, an age that is not a number in 0–130, one that differs within \
            the session (blank cells are allowed on some rows), or none on any row. A session with no responses \
            at all (an empty row, mirt's all-NA pattern) is listed there as not administered and counted apart: \
            it is not an error unless --strict. Default REJECTS: the output path with .rejects.csv.

            Outputs are one set: SCORES and REJECTS are written to temporary files beside them, synced, renamed \
            (REJECTS first) and then the manifest SUMMARY (--summary-json, default: the output path with \
            .summary.json) is written last, naming each output with its row count, size and CRC-32; \
            `iqscore verify SUMMARY` checks a set. An output that is the same file as an input, the bank or \
            another output is refused before anything is read.

            Exit status: 0 every session scored (or not administered); 2 some scored, some rejected (see \
            REJECTS; with --strict, not administered ones too); 1 failed: no \
            session could be scored (the first reasons, and which options would read a misread file, on stderr), \
            a bad bank, an unreadable input or bad options; nothing is written.
            """
    )

    @Argument(help: "Session CSV files (long or wide layout), at most \(BatchScorer.maximumInputFiles).")
    var sessions: [String]

    @Option(
        help:
            "Item bank CSV (as written by calibrate: item_id,a,b[,c][,domain…]; items in more than two categories with model graded, gpcm, pcm, rsm or nominal; a bifactor or correlated-factors bank's a_<factor> columns score as a battery)."
    )
    var bank: String

    @OptionGroup var bankModel: BankModelOption

    @Option(help: "Scores output (written atomically).")
    var out: String

    @Option(help: "Rejected sessions output (default: OUT with .rejects.csv; required when OUT is not a regular file, e.g. /dev/null).")
    var rejects: String?

    @Option(
        name: .customLong("summary-json"),
        help:
            "Run manifest JSON, written last: counts, options, and each output's rows, bytes and CRC-32 (default: OUT with .summary.json; none when OUT is not a regular file)."
    )
    var summaryJSON: String?

    @Option(help: "Estimator: eap, map, ml or wle.")
    var method: AbilityMethod = .eap

    @Option(help: "Output format: csv or jsonl.")
    var format: ScoreOutputFormat = .csv

    @OptionGroup var indexSelection: IndexSelection

    @Option(
        name: .customLong("index-form-length"),
        help: ArgumentHelp(
            "On a battery bank: the added value of the indexes is computed for tests of this many items drawn at random from the bank (default: the whole bank as one form; needed by --indexes auto beyond \(Battery.maximumFixedFormItems) items).",
            valueName: "items"))
    var indexFormLength: Int?

    @Option(
        name: .customLong("index-norms"),
        help: ArgumentHelp(
            "On a battery bank: the norms of one reported index, NAME=NORMS.json (repeat for more): a NORMS.json from `iqscore norms build` on that index's θ (--theta-column index_NAME_theta of a score file; age-specific norms need --age-column) or linear {\"name\", \"version\", \"mean\", \"sd\"} on the index's scale. An index without one is normed on the calibration population.",
            valueName: "name=norms.json"))
    var indexNorms: [String] = []

    @Option(
        help:
            "Norms JSON for the IQ scale: a NORMS.json document from `iqscore norms build` (age-specific: needs --age-column) or linear {\"name\", \"version\", \"mean\", \"sd\"} (default: calibration population N(0, 1))."
    )
    var norms: String?

    @Option(
        name: .customLong("age-column"),
        help:
            "Column holding each session's age in years (\(SessionAge.allowedText)); required by age-specific --norms. Written as the age column of the scores."
    )
    var ageColumn: String?

    @Option(
        name: .customLong("iq-transform"),
        help: "How age-specific norms turn θ into an IQ: area (100 + 15·Φ⁻¹(F_age(θ))) or linear (100 + 15·(θ − m(age))/s(age)).")
    var iqTransform: IQTransformation = .area

    @OptionGroup var columns: ResponseColumnOptions

    @OptionGroup var times: ResponseTimeOptions

    @Flag(
        name: .customLong("effort-moderated"),
        help:
            "With response times: leave each session's rapid guesses out of θ (effort-moderated scoring, Wise & DeMars 2006); rapid_excluded counts them."
    )
    var effortModerated = false

    @Option(
        name: .customLong("compromised"),
        help: ArgumentHelp(
            "With response times: a file of item ids suspected of being compromised (one per line, e.g. the items `iqscore monitor` alarmed on): every session gets the preknowledge test on them (Sinharay 2017; pk_* columns, time flag preknowledge).",
            valueName: "file"))
    var compromised: String?

    @Option(
        name: .customLong("rapid-rule"),
        help:
            "With response times: the rapid-guess thresholds from the bank's time model — nt10 (10% of the item's expected time, at most 10 s; Wise & Ma 2012) or lognormal (the time the item's 0.1% fastest take)."
    )
    var rapidRule: RapidGuessThresholds.Rule = .nt10

    @OptionGroup var scoring: ScoringSettings

    @Option(
        help:
            "Threads that parse and score, 1…\(WorkerThreads.maximum) (default: all cores, at most \(WorkerThreads.maximum)); the output does not depend on it."
    )
    var threads: Int?

    @Flag(help: "Count sessions with no responses (empty rows) as rejected: exit 2 when there are any.")
    var strict = false

    @Option(
        name: .customLong("key-column"),
        help: ArgumentHelp(
            "The cells are the options people chose: score each against the answer key in this column of the bank (1 if equal, any case; empty/NA = not administered). Without it, one-letter cells are scored against a 'key' column of letters and 1/0 stay right/wrong.",
            valueName: "column"))
    var keyColumn: String?

    @Option(
        name: .customLong("max-memory"),
        help: ArgumentHelp(
            "Memory budget such as 512M or 2G (K/M/G/T = ×1024ⁿ; 32M … 1T); beyond it, regrouping and the set of finished sessions spill to files beside the output. (default: 1G)",
            valueName: "size"),
        transform: memoryLimit)
    var maxMemory = MemoryLimit.standard

    /// Every range is the library's (`AbilityOptions`, `IQScale`, `WorkerThreads`), named as options here.
    func validate() throws {
        try throwIfAny(
            scoring.validationProblems(method)
                + WorkerThreads.validationProblems(threads, naming: .option)
                + BatchScorer.validationProblems(fileCount: sessions.count))
        if (effortModerated || rapidRule != .nt10 || compromised != nil) && !times.isSet {
            throw ValidationError("--effort-moderated, --rapid-rule and --compromised go with response times: --time-column or --time-suffix")
        }
        if let ageColumn {
            if ageColumn.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--age-column must name a column, got '\(ageColumn)'") }
            for (option, name) in [
                ("--session-column", columns.sessionColumn), ("--item-column", columns.itemColumn), ("--response-column", columns.responseColumn)
            ]
            where name == ageColumn {
                throw ValidationError("\(option) and --age-column name the same column '\(ageColumn)'; the age column must be another column")
            }
        }
    }

    /// The usage error of age-specific norms without --age-column.
    static func ageColumnNeeded(_ norms: AgeNorms) -> ValidationError {
        let range = norms.coveredAges.map { " (ages \(SessionAge.text($0.lowerBound))–\(SessionAge.text($0.upperBound)))" } ?? ""
        return ValidationError("the norms \(norms.label) are age-specific\(range): name the age column with --age-column")
    }

    var rejectsPath: String { rejects ?? siblingPath(of: out, suffix: ".rejects.csv") }

    /// The manifest's path: --summary-json, or beside a regular-file OUT.
    var manifestPath: String? { iqscore.manifestPath(summaryJSON: summaryJSON, out: out) }

    func run() throws {
        try runReportingErrors {
            if rejects == nil && isSpecialFile(out) {
                throw InputError(
                    file: out, message: "--out is not a regular file, so there is no place beside it for the rejects; name one with --rejects")
            }
            let outputs = [("--out", out), ("--rejects", rejectsPath)] + given("--summary-json", manifestPath)
            let indexNormFiles = try parsedIndexNorms()
            try prepareOutputs(
                inputs: sessions.map { ("input", $0) } + [("--bank", bank)] + given("--norms", norms)
                    + indexNormFiles.map { ("--index-norms", $0.path) },
                outputs: outputs)
            // Before anything else is read: age-specific norms need the age column.
            let ageNorms = try norms.map { try AgeNorms.load(json: $0) } ?? .linear(.calibrationPopulation)
            if ageNorms.isAgeSpecific && ageColumn == nil { throw Self.ageColumnNeeded(ageNorms) }
            var battery = try loadBattery()
            let itemBank = try battery?.bank ?? loadBank(bank, categoryItems: bankModel.reading)
            // Linear norms are `IQScale`'s own; age-specific ones report through `AgeNormScale` with the same settings.
            let linearNorms: Norms
            if case .linear(let n) = ageNorms.model { linearNorms = n } else { linearNorms = .calibrationPopulation }
            let settings = try scoring.scale(linearNorms)
            let scorer =
                try battery.map { try SessionScorer(battery: $0.battery, bank: itemBank, ability: scoring.ability(method), scale: settings) }
                ?? SessionScorer(bank: itemBank, ability: scoring.ability(method), scale: settings)
            // Linear norms as the scorer applies them (the calibration population on the bank's latent scale).
            let reportedNorms = ageNorms.isAgeSpecific ? ageNorms : .linear(scorer.scale.norms)
            let batch = BatchScorer(scorer: scorer, fileOptions: times.applied(to: columns.fileOptions), format: format)
            if times.isSet {
                guard itemBank.speedPopulation != nil && itemBank.hasTimeModels else {
                    throw ValidationError(
                        "--time-column/--time-suffix score with the bank's response-time model, and \(bank) has none (time_intensity, time_discrimination, speed_sd, speed_correlation): calibrate it with the sessions' times (calibrate --time-column)"
                    )
                }
                let suspected = try compromised.map { try Self.suspectedItems($0, bank: itemBank) } ?? []
                batch.timedScorer = try TimedSessionScorer(scorer: scorer, rule: rapidRule, effortModerated: effortModerated, compromised: suspected)
            }
            batch.optionKeys = try keyColumn.map { try OptionKeys(bank: itemBank, column: $0, everyCell: true) } ?? OptionKeys.letters(in: itemBank)
            if ageNorms.isAgeSpecific { batch.ageScale = AgeNormScale(norms: ageNorms, transformation: iqTransform, settings: scorer.scale) }
            batch.ageColumn = ageColumn
            if !indexNormFiles.isEmpty {
                guard let b = battery, let indexScale = scorer.indexScale else {
                    throw ValidationError(
                        "--index-norms goes with a battery bank (bifactor, testlet or correlated factors); \(bank) is unidimensional")
                }
                let names = b.battery.reportedNames
                var scales = [AgeNormScale?](repeating: nil, count: names.count)
                for file in indexNormFiles {
                    guard let position = names.firstIndex(of: file.name) else {
                        throw ValidationError(
                            "--index-norms \(file.name): not a reported index (reported: \(names.isEmpty ? "none" : names.joined(separator: ", ")); --indexes chooses them)"
                        )
                    }
                    let norms = try AgeNorms.load(json: file.path)
                    if norms.isAgeSpecific && ageColumn == nil { throw Self.ageColumnNeeded(norms) }
                    scales[position] = AgeNormScale(norms: norms, transformation: iqTransform, settings: indexScale)
                    battery?.indexNorms[file.name] = norms.label
                }
                batch.indexScales = scales
            }
            if let threads { batch.workers = threads }
            batch.maxMemoryBytes = maxMemory.bytes
            let scoresWriter = try AtomicFileWriter(path: out)
            let rejectsWriter = try AtomicFileWriter(path: rejectsPath)
            let manifestWriter = try manifestPath.map { try AtomicFileWriter(path: $0) }
            let progress = ProgressLine()
            var onProgress: ((BatchProgress) -> Void)?
            if progress.isEnabled { onProgress = { progress.show($0) } }
            let report: BatchScoringReport
            do {
                report = try batch.run(inputs: sessions, scores: scoresWriter, rejects: rejectsWriter, progress: onProgress)
            } catch let error as InputError where error.line == 1 && sessions.contains(error.file) {
                // A header that does not parse (R's write.csv2 read with commas): the options that would read it.
                progress.clear()
                guard let hint = ResponseLayoutHint.headerHint(forFile: error.file, options: columns.fileOptions) else { throw error }
                throw InputErrors([error], hint: hint)
            }
            progress.clear()
            let hint = report.sessionsRefused > 0 ? layoutHint(bank: itemBank) : nil
            if report.sessionsScored == 0 {
                // Nothing to deliver: a failure (exit 1) that writes nothing, with the first reasons on stderr.
                printError(noneScored(report, first: BatchScorer.firstRejections(in: rejectsWriter, limit: 5), hint: hint))
                return ExitStatus.failure
            }
            try OutputSet.commit(
                [("rejects", rejectsWriter, report.sessionsRejected), ("scores", scoresWriter, report.sessionsScored)],
                manifest: manifestWriter
            ) { entries in
                var manifest = ScoreRunSummary(command: self, report: report, scorer: scorer, norms: reportedNorms, outputs: entries)
                manifest.battery = battery.map { BatterySummary($0, selection: indexSelection.indexes) }
                return try manifest.json()
            }
            printError(
                summary(report, scorer: scorer, norms: reportedNorms, keys: batch.optionKeys, battery: battery) + (hint.map { "\nhint: " + $0 } ?? "")
            )
            let rejected = strict ? report.sessionsRejected : report.sessionsRefused
            return rejected == 0 ? ExitStatus.success : ExitStatus.someRejected
        }
    }

    /// The item ids of a `--compromised` file: one per line (surrounding spaces ignored; blank lines and a first
    /// line `item_id` skipped), each in the bank.
    /// - Throws: `InputError` naming the file and line of an id not in the bank, or when the file lists none.
    static func suspectedItems(_ path: String, bank: ItemBank) throws -> Set<String> {
        let reader = try CSVReader(path: path)
        let known = Set(bank.items.map(\.itemID))
        var ids = Set<String>()
        while try reader.nextRow() {
            let fields = reader.strings()
            let id = (fields.first ?? "").trimmingCharacters(in: .whitespaces)
            if id.isEmpty || (reader.line == 1 && id == "item_id") { continue }
            guard fields.count == 1, known.contains(id) else {
                throw InputError(
                    file: path, line: reader.line, column: 1,
                    message: fields.count == 1
                        ? "item \(TextFidelity.quoted(id)) is not in the bank" : "expected one item id per line, found \(fields.count) fields")
            }
            ids.insert(id)
        }
        guard !ids.isEmpty else { throw InputError(file: path, message: "lists no item ids (one per line)") }
        return ids
    }

    /// `--index-norms NAME=FILE` values: each split at its first `=`, names distinct.
    func parsedIndexNorms() throws -> [(name: String, path: String)] {
        var out: [(name: String, path: String)] = []
        for value in indexNorms {
            let (name, path) = try Self.indexNormsArgument(value)
            guard !out.contains(where: { $0.name == name }) else { throw ValidationError("--index-norms names \(TextFidelity.quoted(name)) twice") }
            out.append((name, path))
        }
        return out
    }

    /// One `--index-norms NAME=FILE` value (`score`, `serve`), split at its first `=`.
    static func indexNormsArgument(_ value: String) throws -> (name: String, path: String) {
        guard let equals = value.firstIndex(of: "="), value.startIndex != equals, value.index(after: equals) != value.endIndex else {
            throw ValidationError("--index-norms must be NAME=NORMS.json (an index and its norms file), got \(TextFidelity.quoted(value))")
        }
        return (String(value[..<equals]).trimmingCharacters(in: .whitespaces), String(value[value.index(after: equals)...]))
    }

    /// Which options would read the first input that a misread layout explains (`ResponseLayoutHint`), named
    /// when there are several inputs.
    func layoutHint(bank: ItemBank) -> String? {
        let ids = Set(bank.items.map(\.itemID))
        // A bank of items in more than two categories reads whole-number cells as their categories.
        var hintOptions = columns.fileOptions
        hintOptions.categoryResponses = bank.hasCategoryItems
        for path in sessions {
            if let hint = ResponseLayoutHint.hint(forFile: path, options: hintOptions, itemIDs: ids, ageColumn: ageColumn) {
                return sessions.count > 1 ? "\(path): \(hint)" : hint
            }
        }
        return nil
    }

    /// The error of a run that scored no session: the count, the first rejections, the hint.
    func noneScored(_ r: BatchScoringReport, first: [RejectedSession], hint: String?) -> String {
        var lines: [String]
        if r.sessionsRead == 0 {
            lines = ["error: no session was scored: the input holds no sessions (\(formatCount(r.rowsRead)) data rows); nothing was written"]
        } else {
            lines = [
                "error: no session was scored: \(r.sessionsRead == 1 ? "the only session read was" : "all \(formatCount(r.sessionsRead)) sessions read were") rejected; nothing was written"
                    + (first.isEmpty ? "" : ". The first:")
            ]
            for reject in first {
                var location = reject.file
                if let line = reject.line { location += ":\(line)" + (reject.column.map { ":\($0)" } ?? "") }
                lines.append("\(location): rejected session \(TextFidelity.quoted(reject.sessionID)): \(reject.reason)")
            }
            if r.sessionsRejected > first.count && !first.isEmpty { lines.append("… and \(formatCount(r.sessionsRejected - first.count)) more") }
        }
        if let hint { lines.append("hint: " + hint) }
        return lines.joined(separator: "\n")
    }

    func summary(_ r: BatchScoringReport, scorer: SessionScorer, norms: AgeNorms, keys: OptionKeys? = nil, battery: ScoringBattery? = nil) -> String {
        let mb = Double(r.bytesRead) / 1e6
        var lines = [
            "iqscore score: read \(formatCount(r.sessionsRead)) session\(r.sessionsRead == 1 ? "" : "s") (\(formatCount(r.rowsRead)) row\(r.rowsRead == 1 ? "" : "s"), \(fixed(mb, 1)) MB) from \(r.files) file\(r.files == 1 ? "" : "s") in \(fixed(r.seconds, 2)) s (\(formatCount(Int(Double(r.sessionsRead) / max(r.seconds, 1e-9)))) sessions/s, \(fixed(mb / max(r.seconds, 1e-9), 1)) MB/s)"
        ]
        lines.append(
            "scored \(formatCount(r.sessionsScored)), "
                + (r.sessionsNotAdministered > 0 ? "not administered \(formatCount(r.sessionsNotAdministered)) (no responses), " : "")
                + "rejected \(formatCount(r.sessionsRefused))" + (r.sessionsRejected > 0 ? " (see \(rejectsPath))" : ""))
        if let keys {
            lines.append(
                keys.everyCell
                    ? "responses are the options chosen, scored against the bank's column '\(keyColumn ?? "key")' (--key-column)"
                    : "one-letter responses scored against the bank's 'key' column (1/0 cells stay right/wrong)")
        }
        if r.blankResponses > 0 { lines.append("\(formatCount(r.blankResponses)) rows with an empty response were treated as not administered") }
        for file in r.unnamedIDColumnFiles { lines.append(unnamedIDColumnNote(file)) }
        if r.regrouped {
            lines.append(
                "note: rows of some sessions were not contiguous; the input was regrouped "
                    + (r.regroupPartitions > 1 ? "through \(r.regroupPartitions) partition files (--max-memory \(maxMemory))" : "in memory"))
        }
        let o = scorer.estimator.options, e = scorer.estimator
        if let battery {
            lines += batteryLines(battery)
        } else {
            lines.append(
                "method \(o.method.rawValue.uppercased())"
                    + (o.method == .eap || o.method == .map
                        ? " (prior N(\(e.priorMean.formatted6), \(e.priorSD.formatted6)²)"
                            + (o.method == .eap
                                ? ", \(o.quadraturePoints) points on [-\(o.thetaBound.formatted6), \(o.thetaBound.formatted6)])" : ")") : "")
                    + "; norms \(normsDescription(norms)); \(fixed(100 * scorer.scale.confidenceLevel, 0))% intervals")
        }
        if battery != nil { lines.append("full-scale norms \(normsDescription(norms)); \(fixed(100 * scorer.scale.confidenceLevel, 0))% intervals") }
        let flags = ScoreFlag.allCases.compactMap { f in r.flagCounts[f].map { "\(f.rawValue) \(formatCount($0))" } }
        if !flags.isEmpty { lines.append("flags: " + flags.joined(separator: ", ")) }
        if times.isSet {
            let timeFlags = TimeFlag.allCases.filter { $0 != .preknowledge || compromised != nil }.map {
                "\($0.rawValue) \(formatCount(r.timeFlagCounts[$0] ?? 0))"
            }
            lines.append(
                "response times: \(rapidRule.rawValue) rapid-guess thresholds" + (effortModerated ? ", rapid guesses left out of θ" : "")
                    + (compromised.map { ", preknowledge test on the items of \($0)" } ?? "")
                    + "; time flags: " + timeFlags.joined(separator: ", ")
                    + (r.droppedTimes > 0 ? "; \(formatCount(r.droppedTimes)) times of 0 or more than a day dropped" : ""))
        }
        lines.append("wrote \(out) and \(rejectsPath)" + (manifestPath.map { ", manifest \($0)" } ?? ""))
        return lines.joined(separator: "\n")
    }
}

extension ScoreCommand {
    /// The norms as the summary names them: `NAME@VERSION (θ mean μ, SD σ)` for linear norms,
    /// `NAME@VERSION (continuous, ages A–B, area transformation)` for age-specific ones; then the age column.
    func normsDescription(_ norms: AgeNorms) -> String {
        var text = norms.label + " ("
        switch norms.model {
        case .linear(let n):
            text += "θ mean \(n.mean.formatted6), SD \(n.sd.formatted6)"
        case .continuous, .bands:
            text += ScoreRunSummary.method(of: norms)
            if let range = norms.coveredAges {
                text += ", ages \(SessionAge.text(range.lowerBound))–\(SessionAge.text(range.upperBound))"
                if norms.extrapolation > 0 { text += " ± \(SessionAge.text(norms.extrapolation))" }
            }
            text += ", \(iqTransform.rawValue) transformation"
        }
        return text + ")" + (ageColumn.map { ", ages from column '\($0.escapingControlCharacters)'" } ?? "")
    }
}

/// The `score` run manifest (`--summary-json`): what was read, the options, the counts, and the outputs with
/// their rows, bytes and CRC-32 (see `OutputSet`).
struct ScoreRunSummary: Encodable {
    var manifest_version = 1
    var command = "score"
    var iqscore_version = iqscoreVersion
    var inputs: [String]
    var bank: String
    var method: String
    /// The norms' label (name@version), how they were made (linear, continuous or bands), the IQ transformation
    /// (age-specific norms only) and the age column (nil: none).
    var norms: String
    var norms_method: String
    var iq_transform: String?
    var age_column: String?
    var confidence: Double
    var files: Int
    var rows_read: Int
    var bytes_read: Int
    var blank_responses: Int
    var sessions_read: Int
    var sessions_scored: Int
    /// Sessions refused (not counting those not administered).
    var sessions_rejected: Int
    /// Sessions with no responses, listed in the rejects as not administered.
    var sessions_not_administered: Int
    var regrouped: Bool
    var regroup_partitions: Int
    var session_hash_runs: Int
    var max_memory_bytes: Int
    var flags: [String: Int]
    var seconds: Double
    var outputs: [ManifestEntry]
    /// On a battery bank: its model, factors, the indexes reported and their added value.
    var battery: BatterySummary?
    /// With response times: how they were read and used, and the sessions carrying each time flag.
    var response_times: TimesSummary?

    struct TimesSummary: Encodable {
        var time_column: String?
        var time_suffix: String?
        var rapid_rule: String
        var effort_moderated: Bool
        var compromised: String?
        var dropped_times: Int
        var flags: [String: Int]
    }

    init(command c: ScoreCommand, report r: BatchScoringReport, scorer: SessionScorer, norms ageNorms: AgeNorms, outputs: [ManifestEntry]) {
        inputs = c.sessions
        bank = c.bank
        method = scorer.estimator.options.method.rawValue
        norms = ageNorms.label
        norms_method = Self.method(of: ageNorms)
        iq_transform = ageNorms.isAgeSpecific ? c.iqTransform.rawValue : nil
        age_column = c.ageColumn
        confidence = scorer.scale.confidenceLevel
        files = r.files
        rows_read = r.rowsRead
        bytes_read = r.bytesRead
        blank_responses = r.blankResponses
        sessions_read = r.sessionsRead
        sessions_scored = r.sessionsScored
        sessions_rejected = r.sessionsRefused
        sessions_not_administered = r.sessionsNotAdministered
        regrouped = r.regrouped
        regroup_partitions = r.regroupPartitions
        session_hash_runs = r.sessionHashRuns
        max_memory_bytes = c.maxMemory.bytes
        flags = Dictionary(uniqueKeysWithValues: r.flagCounts.map { ($0.key.rawValue, $0.value) })
        seconds = r.seconds
        self.outputs = outputs
        if c.times.isSet {
            response_times = TimesSummary(
                time_column: c.times.timeColumn, time_suffix: c.times.timeSuffix, rapid_rule: c.rapidRule.rawValue,
                effort_moderated: c.effortModerated, compromised: c.compromised, dropped_times: r.droppedTimes,
                flags: Dictionary(uniqueKeysWithValues: TimeFlag.allCases.map { ($0.rawValue, r.timeFlagCounts[$0] ?? 0) }))
        }
    }

    func json() throws -> String { try encodeJSON(self) }

    /// "linear", "continuous" or "bands".
    static func method(of norms: AgeNorms) -> String {
        switch norms.model {
        case .linear: "linear"
        case .continuous: "continuous"
        case .bands: "bands"
        }
    }
}

extension AbilityMethod: ExpressibleByArgument {}
extension ScoreOutputFormat: ExpressibleByArgument {}

/// Rows, sessions, rate and ETA of a scoring run on `TerminalStatusLine`.
final class ProgressLine: @unchecked Sendable {
    private let line = TerminalStatusLine()
    var isEnabled: Bool { line.isEnabled }

    func show(_ p: BatchProgress) {
        var text =
            "\(formatCount(p.rows)) rows, \(formatCount(p.sessions)) sessions, \(formatCount(Int(Double(p.rows) / max(p.seconds, 1e-9)))) rows/s"
        if let total = p.totalBytes, total > 0 {
            let fraction = Double(p.bytesRead) / Double(total)
            text += ", \(fixed(100 * fraction, 1))% of \(fixed(Double(total) / 1e6, 0)) MB"
            if fraction > 0.01 { text += ", ETA \(fixed(p.seconds * (1 - fraction) / fraction, 0)) s" }
        }
        line.show(text)
    }

    func clear() { line.clear() }
}
