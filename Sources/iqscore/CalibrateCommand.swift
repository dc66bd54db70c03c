import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Calibrate an item bank by marginal maximum likelihood (Bock–Aitkin EM).",
        discussion: """
            Reads responses in wide layout (first column an id such as session_id/person_id/id when its header \
            says so or is empty, as R's write.csv writes row names; one column per item, cells 1, 0 or empty = \
            not administered) or long layout \
            (session_id,item_id,response; other columns ignored; names set by --session-column etc.).

            Writes BANK.csv with item_id,model,a,b,c,se_a,se_b,se_c,n_responses,p_value,flags (+ metadata \
            columns from --items), slope–difficulty form P = c + (1 − c)/(1 + exp(−a(θ − b))), D = 1.
            Standard errors: observed information by Louis' formula, delta method to (a, b, c).
            EM is accelerated by SQUAREM (Varadhan & Roland 2008), kept only where it does not lower the \
            log-likelihood plus log priors; --acceleration none runs plain EM (same stopping rule, more cycles).
            3PL defaults: c ~ Beta(5, 17) (mode 0.2), a ~ LogNormal(0, 0.5); change or switch off with the \
            prior options. Items everybody got right or wrong, or with fewer than --min-item-responses, are \
            excluded and listed; persons with no responses are excluded and counted.

            --model rasch fixes every slope at 1 and estimates the population SD σ: the bank carries it as the \
            columns latent_mean (0) and latent_sd (σ), which score, serve, analyze, report, cat and link honour \
            (prior and IQ norms N(0, σ²)). With --fixed, the output bank keeps the fixed bank's latent scale.

            Items scored in more than two categories: --model graded (Samejima), gpcm (Muraki), pcm (Masters' \
            partial credit: a = 1, latent SD estimated), rsm (Andrich's rating scale: pcm with thresholds shared by \
            the rsm items, which need the same categories; written as pcm rows of a = 1 and the item's steps \
            location + τ, the τ printed) or nominal (Bock) reads the cells as categories, whole \
            numbers 0…255 (K = the largest plus one), and fits every item under that model, or under the model \
            the model column of --items names for it; two-category items come out as 2pl (rasch under pcm and rsm). The \
            bank writes such an item's slope in a, its thresholds in b1…b(K−1) (nominal: a_0…, c_0…) with their \
            se_ columns, and in categories the data's responses when they are not 0…K−1 (data coded 1…4: \
            1;2;3;4). A category nobody chose between two chosen ones is collapsed with a warning and the flag \
            'categories collapsed'. Nominal items may be answered in option letters A–Z (either case; numbers \
            then go up to 127, and one item takes one or the other): an item answered in letters has the \
            categories A = 0, B = 1, … and the bank's categories column says A;B;…; the items file's key column \
            names its correct option, which starts with the largest slope. --slope-prior puts its prior on the graded and gpcm items' slopes (MAP item \
            estimates). A 0/1 item with model 3pl in --items is fitted with a lower asymptote beside the others, \
            under the 3PL's priors (c ~ Beta(5, 17), a ~ LogNormal(0, 0.5); --guessing-prior and --slope-prior \
            change them) and written as a 3pl row. --e-step dense is for 0/1 items only.

            Online (fixed-parameter) calibration: --fixed BANK.csv holds the bank's items at their values \
            (their model, a, b, c) and estimates the other items on the bank's scale under --model, with the \
            latent mean and SD estimated (reported as latent_mean/latent_sd). The output bank holds the fixed \
            items (flag 'fixed', bank values unchanged) and the new items; bank items not in the data are \
            carried over (flags 'fixed;not in data'). Under graded, gpcm, pcm, rsm or nominal the fixed bank may \
            hold 0/1 items of any model (3PL included) and items in several categories; a fixed item's cells are \
            read as its bank categories (its categories column, or 0…K−1) and any other is refused by item; \
            pcm and rsm items are fitted with a = 1 on the bank's scale.

            A battery: --model bifactor fits 0/1 items on a general factor and at most one specific factor each \
            (Gibbons & Hedeker 1992), the specific factor named by the --factor-column column of --items \
            (default domain; empty: the general factor only), 2PL items or 3PL with --item-type 3pl, 31 \
            quadrature points per dimension by default (mirt's bfactor()). The bank has one slope column per \
            factor (a_general, a_<factor>…; 0 where an item does not load), d and c (slope–intercept form, \
            P = c + (1 − c)/(1 + exp(−(a_general θ_general + a_<factor> θ_<factor> + d)))), their se_ columns and \
            specific_factor; standard errors from the observed information (Oakes 1999). --model testlet \
            constrains each factor's specific slopes to λ · a_general (Wainer, Bradlow & Wang's testlet model; one \
            λ per factor, printed and in the summary's testlet_ratios), written as the same bank. With --fixed \
            BIFACTOR_BANK.csv, --model bifactor holds the bank's items at their values (flag 'fixed'; their \
            specific factors are the bank's) and estimates the new items on its factors, which stay N(0, 1): the \
            new sample is taken from the bank's calibration population. --model \
            correlated fits each item on its one factor (the --factor-column cell, which every item needs) with \
            the factors' correlations estimated (variances 1; positive definite by construction): up to 3 \
            factors by exact quadrature on the product grid (31 points per factor for 2, 21 for 3), from 4 factors \
            on (up to \(CorrelatedFactorsCalibrator.maximumAdaptiveFactors)) by adaptive quasi-Monte Carlo \
            (--qmc-points Sobol nodes per person, default \(CorrelatedFactorsCalibrator.defaultMonteCarloPoints), \
            moved onto each person's posterior; --integration grid or --quadrature-points keeps the grid up to \
            \(CorrelatedFactorsCalibrator.maximumFactors) factors and \(CorrelatedFactorsCalibrator.maximumNodes) nodes); its bank has a_<factor> columns (one nonzero per item), \
            d, c, their se_ columns, factor, and r_<factor>: the item's factor's row of the correlation matrix; the \
            summary has the matrix and its standard errors.

            Response times: --time-column (long layout) or --time-suffix (wide) with --model 1pl, 2pl or 3pl fits \
            van der Linden's speed-accuracy model jointly with the items: log T ~ N(β − τ, 1/α²) per response, \
            ability and speed bivariate normal (speed SD σ_τ, correlation ρ), speed integrated in closed form. The \
            bank adds time_intensity (β), time_discrimination (α), their se_ columns, speed_sd and \
            speed_correlation; the summary a response_times section. --exclude-rapid-guesses leaves out the \
            responses below NT10 (rapid guesses inflate the speed SD and pull ρ towards 0).

            BANK and the summary are one set: the bank is written to a temporary file, synced and renamed, and \
            the summary (the manifest: `iqscore verify SUMMARY` checks it) is written last. An output that is the \
            same file as an input is refused before anything is read.

            Exit status: 0 converged; 3 written but EM did not converge; 1 failed (nothing written).
            """
    )

    @Argument(help: "Responses CSV (wide or long layout).")
    var responses: String

    @Option(
        help:
            "Model: rasch, 1pl, 2pl or 3pl for 0/1 items; graded, gpcm, pcm, rsm or nominal for items scored in more than two categories (cells 0…255; per item by the model column of --items); bifactor for 0/1 items on a general factor and one specific factor per group of items (--factor-column); testlet for the bifactor model with specific slopes proportional to the general ones; correlated for 0/1 items each on one of several correlated factors (--factor-column)."
    )
    var model: ModelArgument = .dichotomous(.twoPL)

    @Option(
        name: .customLong("factor-column"),
        help:
            "With --model bifactor|testlet: the column of --items naming each item's specific factor (items with an empty cell or no row load on the general factor only); with --model correlated, each item's factor (every item needs one)."
    )
    var factorColumn = "domain"

    @Option(name: .customLong("item-type"), help: "With --model bifactor, testlet or correlated: the items' model, 2pl or 3pl (default 2pl).")
    var itemType: IRTModel?

    /// The 0/1 model (`--model rasch|1pl|2pl|3pl`, or a bifactor fit's `--item-type`); 2PL's ranges check the
    /// options of the other models.
    var irtModel: IRTModel { model.dichotomous ?? (model.isMultidimensional ? itemType ?? .twoPL : .twoPL) }

    @Option(help: "Output bank CSV (written atomically).")
    var out: String

    @Option(
        name: .customLong("summary-json"),
        help:
            "JSON summary of the fit and run manifest, written last (the bank's rows, bytes and CRC-32; default: OUT with .summary.json; none when OUT is not a regular file)."
    )
    var summaryJSON: String?

    @Option(help: "Item metadata CSV (item_id plus columns such as domain) to carry into the bank.")
    var items: String?

    @Option(
        name: .customLong("fixed"),
        help:
            "Bank CSV whose items are held fixed at their values (online calibration of new items onto the bank's scale); a bifactor bank with --model bifactor, a correlated-factors bank with --model correlated (a held item's factor is the bank's; the correlations are estimated on the new sample)."
    )
    var fixedBankPath: String?

    @Option(
        name: .customLong("group-column"),
        help:
            "Multiple-group calibration (2pl, 3pl or bifactor): the response file's column holding each person's group; needs --reference. The bank holds the reference group's parameters; the summary JSON every group's mean and SD (the reference N(0, 1); with --model bifactor the general factor's, the specific factors N(0, 1) in every group) and the freed items' parameters per group."
    )
    var groupColumn: String?

    @Option(
        name: .customLong("group-file"),
        help: ArgumentHelp(
            "Multiple-group calibration from one file per group instead of --group-column: a non-reference group's responses (repeat per group); the positional file holds the reference group's (named by --reference). Items are matched by id; groups may see different items.",
            valueName: "GROUP=PATH"))
    var groupFiles: [String] = []

    @Option(help: "With --group-column: the reference group (its θ is N(0, 1)); with --group-file, the positional file's group name.")
    var reference: String?

    @Flag(
        name: .customLong("fixed-group-specifics"),
        help:
            "With --model bifactor and groups: keep every group's specific factors N(0, 1) (only the general factor's mean and SD differ by group); by default each non-reference group estimates each specific factor's mean and SD as well, as mirt's bfactor(group =, invariance = c(items, 'free_means', 'free_var'))."
    )
    var fixedGroupSpecifics = false

    @Option(
        name: .customLong("free-items"),
        help: ArgumentHelp(
            "With --group-column: items whose parameters differ by group, ITEM:GROUP[|GROUP…] comma-separated (ITEM alone: free in every group); every other item is invariant.",
            valueName: "list"))
    var freeItems: String?

    @OptionGroup var columns: ResponseColumnOptions

    @OptionGroup var times: ResponseTimeOptions

    @Flag(
        name: .customLong("exclude-rapid-guesses"),
        help:
            "With response times: leave out of the fit the responses faster than NT10 (10% of the item's mean time in these data, at most 10 s; Wise & Ma 2012) — effort-moderated calibration."
    )
    var excludeRapidGuesses = false

    @Option(
        name: .customLong("quadrature-points"),
        help:
            "Quadrature points (per dimension for bifactor and correlated), \(QuadratureGrid.allowedPointCounts.text); default 61, bifactor 31 (mirt's), correlated 31 for 2 factors and 21 for 3 (set, it keeps --model correlated on the product grid up to \(CorrelatedFactorsCalibrator.maximumFactors) factors: 15, 9, 7 for 4…6 are finer than mirt's 9, 7, 5 and still coarse)."
    )
    var quadraturePoints: Int?

    @Option(
        name: .customLong("integration"),
        help:
            "With --model correlated: auto (the product grid up to 3 factors or with --quadrature-points, adaptive quasi-Monte Carlo from 4 factors on or with --qmc-points), grid, or qmc (up to \(CorrelatedFactorsCalibrator.maximumAdaptiveFactors) factors)."
    )
    var integration: CorrelatedFactorsCalibrator.Integration = .automatic

    @Option(
        name: .customLong("qmc-points"),
        help:
            "With --integration qmc: Sobol nodes per person, a power of two in \(CorrelatedFactorsCalibrator.allowedMonteCarloPoints.lowerBound)…\(CorrelatedFactorsCalibrator.allowedMonteCarloPoints.upperBound) (default \(CorrelatedFactorsCalibrator.defaultMonteCarloPoints))."
    )
    var qmcPoints: Int?

    @Option(
        help:
            "With --model bifactor, testlet or correlated: EM runs from this many starting values (1…\(StartRecord.maximumStarts)): the default start, then seeded perturbations of it (slopes ×exp(0.25z), intercepts +0.25z, correlations' free values +0.3z); the run with the highest log-likelihood is kept and every run's is reported. Each run costs a calibration."
    )
    var starts = 1

    @Option(name: .customLong("theta-bound"), help: "Quadrature grid on [-B, B]; B in \(QuadratureGrid.allowedBounds).")
    var thetaBound = 6.0

    @Option(help: "Convergence tolerance on the largest parameter change per cycle, in \(CalibrationOptions.allowedTolerances).")
    var tolerance = 1e-4

    @Option(name: .customLong("max-cycles"), help: "EM cycle limit, \(CalibrationOptions.allowedMaxCycles.text).")
    var maxCycles = 500

    @Option(help: "EM acceleration: squarem (SQUAREM with a monotonicity safeguard) or none (plain EM).")
    var acceleration: EMAcceleration = .squarem

    @Option(
        name: .customLong("guessing-prior"),
        help:
            "3PL prior on c: 'beta:ALPHA,BETA' (each in \(BetaPrior.allowedShapes)), 'options:K' (K \(BetaPrior.allowedOptionCounts.text); mode 1/K, weight 20), 'options' (K per item from the options column of --items; items without one keep beta:5,17) or 'none'. Default beta:5,17."
    )
    var guessingPrior: String?

    @Option(
        name: .customLong("slope-prior"),
        help:
            "Prior on slopes (2PL/3PL; graded and gpcm items): 'lognormal:MEANLOG,SDLOG' (MEANLOG in \(LogNormalPrior.allowedMeanLogs), SDLOG in \(LogNormalPrior.allowedSDLogs)) or 'none'. Default lognormal:0,0.5 for 3PL, none for 2PL."
    )
    var slopePrior: String?

    @Option(name: .customLong("min-item-responses"), help: "Exclude items with fewer responses.")
    var minItemResponses = 10

    @Flag(name: .customLong("no-se"), help: "Skip standard errors.")
    var noStandardErrors = false

    @Option(name: .customLong("e-step"), help: "E-step: automatic, dense (BLAS) or sparse (answered cells only).")
    var eStep: EStepStrategy = .automatic

    @Option(
        help:
            "Threads that read the file, run EM and compute standard errors, 1…\(WorkerThreads.maximum) (default: all cores, at most \(WorkerThreads.maximum))."
    )
    var threads: Int?

    @Option(
        name: .customLong("max-memory"),
        help: ArgumentHelp(
            "Memory budget such as 512M or 2G (K/M/G/T = ×1024ⁿ; 32M … 1T). Calibration keeps every response in memory: reading stops with an error past the budget, and a fit whose estimated peak exceeds it is refused before it starts. (default: 1G)",
            valueName: "size"),
        transform: memoryLimit)
    var maxMemory = MemoryLimit.standard

    /// Every range is the library's (`CalibrationOptions`, `BetaPrior`, `LogNormalPrior`, `WorkerThreads`),
    /// named as options here. The prior texts are checked strictly first (two plain decimal numbers, see
    /// `DecimalNumber`), so that `parsedGuessingPrior()`/`parsedSlopePrior()` only ever see valid text.
    func validate() throws {
        // The priors' texts first (as before the other ranges), then every range of the library's options.
        if model.categories != nil { try validateCategoryModel() }
        if model.isMultidimensional { try validateBifactor() }
        if (integration != .automatic || qmcPoints != nil) && model != .correlated {
            throw ValidationError("--integration and --qmc-points go with --model correlated")
        }
        if let qmcPoints, !(CorrelatedFactorsCalibrator.allowedMonteCarloPoints.contains(qmcPoints) && qmcPoints & (qmcPoints - 1) == 0) {
            throw ValidationError(
                "--qmc-points must be a power of two in \(CorrelatedFactorsCalibrator.allowedMonteCarloPoints.lowerBound)…\(CorrelatedFactorsCalibrator.allowedMonteCarloPoints.upperBound), got \(qmcPoints)"
            )
        }
        if qmcPoints != nil && integration == .productGrid { throw ValidationError("--qmc-points goes with --integration qmc or auto, not grid") }
        if qmcPoints != nil && quadraturePoints != nil && model == .correlated {
            throw ValidationError("--qmc-points and --quadrature-points choose different integrations; give one")
        }
        if starts != 1 && !model.isMultidimensional {
            throw ValidationError(
                "--starts goes with --model bifactor, testlet or correlated (the multidimensional models, whose likelihood can have several maxima)")
        }
        if !(1...StartRecord.maximumStarts).contains(starts) {
            throw ValidationError("--starts must be 1…\(StartRecord.maximumStarts), got \(starts)")
        }
        if itemType != nil && !model.isMultidimensional {
            throw ValidationError("--item-type goes with --model bifactor, testlet or correlated (the other models name the item type in --model)")
        }
        if irtModel == .threePL { _ = try parsedGuessingPrior() }
        if irtModel.hasItemSlopes { _ = try parsedSlopePrior() }
        try validateGroups()
        try validateTimes()
        try throwIfAny(try calibrationOptions().validationProblems(naming: .option))
    }

    /// The library's options from the command line (validated by `validate()`, used by `run()`).
    func calibrationOptions() throws -> CalibrationOptions {
        var options = CalibrationOptions(model: irtModel)
        options.naming = .option
        options.quadraturePoints = quadraturePoints ?? (model.isBifactor ? BifactorCalibrator.defaultOptions.quadraturePoints : 61)
        options.thetaBound = thetaBound
        options.tolerance = tolerance
        options.maxCycles = maxCycles
        options.acceleration = acceleration
        options.minimumItemResponses = minItemResponses
        options.standardErrors = !noStandardErrors
        options.eStep = eStep
        options.maxMemoryBytes = maxMemory.bytes
        if let threads { options.workers = threads }
        // A polytomous fit's guessing prior is its 3pl items' (`PolytomousCalibrator.threePLGuessingPrior`).
        if model.categories == nil, case .some(let prior) = try parsedGuessingPrior() { options.guessingPrior = prior }
        if case .some(let prior) = try parsedSlopePrior() { options.slopePrior = prior }
        return options
    }

    /// `--guessing-prior` as a prior (`.some(nil)`: 'none'; `.none`: not given). The numbers are plain decimals
    /// (`DecimalNumber`) within `BetaPrior`'s ranges.
    func parsedGuessingPrior() throws -> BetaPrior?? {
        guard let text = guessingPrior else { return .none }
        if model != .dichotomous(.threePL) && model.categories == nil && !(model.isMultidimensional && itemType == .threePL) {
            throw ValidationError(
                "--guessing-prior applies to --model 3pl, to the 3pl items of a polytomous fit, and to --model bifactor|testlet|correlated --item-type 3pl"
            )
        }
        if text == "none" { return .some(nil) }
        let syntax = ValidationError("--guessing-prior must be 'beta:ALPHA,BETA', 'options:K', 'options' or 'none'; got '\(text)'")
        if text == "options" {
            // Per item from the items file (`itemGuessingPriors`, filled in `run()`); the default for the others.
            if model.categories != nil || model.isMultidimensional {
                throw ValidationError(
                    "--guessing-prior options (per item) is for --model 3pl; a polytomous fit's 3pl items take beta:ALPHA,BETA, options:K or none")
            }
            if items == nil {
                throw ValidationError(
                    "--guessing-prior options reads the number of options per item from the options column of --items ITEMS.csv; give --items, or use options:K"
                )
            }
            return .none
        }
        if text.hasPrefix("beta:") {
            let fields = text.dropFirst(5).split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 2, let alpha = DecimalNumber.parse(fields[0]), let beta = DecimalNumber.parse(fields[1]) else { throw syntax }
            try throwIfAny(BetaPrior.validationProblems(alpha: alpha, beta: beta).map { "--guessing-prior: \($0)" })
            return .some(try BetaPrior(alpha: alpha, beta: beta))
        }
        if text.hasPrefix("options:") {
            guard let k = DecimalNumber.parseInteger(text.dropFirst(8)) else { throw syntax }
            if let p = BetaPrior.allowedOptionCounts.problem(k, "--guessing-prior options:K") { throw ValidationError(p) }
            return .some(try BetaPrior.centred(onOptions: k))
        }
        throw syntax
    }

    /// Per-item guessing priors centred on 1/K, K from the `options` column of the items file (`--guessing-prior
    /// options`). A K outside `BetaPrior.allowedOptionCounts` or not a whole number is an error naming the item.
    static func optionPriors(_ metadata: ItemMetadata, file: String) throws -> [String: BetaPrior] {
        guard metadata.columns.contains("options") else {
            throw InputError(
                file: file, line: 1,
                message:
                    "--guessing-prior options needs an options column (the number of options of each item); found: \(metadata.columns.joined(separator: ","))"
            )
        }
        var priors: [String: BetaPrior] = [:], problems: [String] = []
        for (id, row) in metadata.values.sorted(by: { $0.key < $1.key }) {
            let text = (row["options"] ?? "").trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            guard let k = DecimalNumber.parseInteger(text), BetaPrior.allowedOptionCounts.contains(k) else {
                problems.append("item '\(id)': options \(TextFidelity.quoted(text)) is not a whole number in \(BetaPrior.allowedOptionCounts.text)")
                continue
            }
            priors[id] = try BetaPrior.centred(onOptions: k)
        }
        if !problems.isEmpty { throw InputError(file: file, message: problems.prefix(5).joined(separator: "; ") + (problems.count > 5 ? "; …" : "")) }
        return priors
    }

    /// `--slope-prior` as a prior (`.some(nil)`: 'none'; `.none`: not given), within `LogNormalPrior`'s ranges.
    func parsedSlopePrior() throws -> LogNormalPrior?? {
        guard let text = slopePrior else { return .none }
        if model.dichotomous?.hasItemSlopes != true && model.categories == nil && !model.isMultidimensional {
            throw ValidationError("--slope-prior applies to --model 2pl or 3pl, and to the graded and gpcm items of a polytomous fit")
        }
        if text == "none" { return .some(nil) }
        if text.hasPrefix("lognormal:") {
            let fields = text.dropFirst(10).split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 2, let meanLog = DecimalNumber.parse(fields[0]), let sdLog = DecimalNumber.parse(fields[1]) else {
                throw ValidationError("--slope-prior must be 'lognormal:MEANLOG,SDLOG' or 'none'; got '\(text)'")
            }
            try throwIfAny(LogNormalPrior.validationProblems(meanLog: meanLog, sdLog: sdLog).map { "--slope-prior: \($0)" })
            return .some(try LogNormalPrior(meanLog: meanLog, sdLog: sdLog))
        }
        throw ValidationError("--slope-prior must be 'lognormal:MEANLOG,SDLOG' with SDLOG > 0, or 'none'; got '\(text)'")
    }

    /// The summary (manifest) path: --summary-json, or beside a regular-file OUT.
    var manifestPath: String? { iqscore.manifestPath(summaryJSON: summaryJSON, out: out) }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(
                inputs: [("input", responses)] + groupFiles.compactMap { try? GroupFiles.parse($0).get() }.map { ("--group-file", $0.path) }
                    + given("--items", items) + given("--fixed", fixedBankPath),
                outputs: [("--out", out)] + given("--summary-json", manifestPath))
            let bankWriter = try AtomicFileWriter(path: out)
            let manifestWriter = try manifestPath.map { try AtomicFileWriter(path: $0) }
            BLASConfiguration.setThreadCount(1)
            if let kind = model.categories { return try runCategoryModel(kind, bankWriter: bankWriter, manifestWriter: manifestWriter) }
            if model.isBifactor { return try runBifactor(bankWriter: bankWriter, manifestWriter: manifestWriter) }
            if model == .correlated { return try runCorrelated(bankWriter: bankWriter, manifestWriter: manifestWriter) }
            if groupSource != nil { return try runMultipleGroup(bankWriter: bankWriter, manifestWriter: manifestWriter) }
            if times.isSet { return try runSpeedAccuracy(bankWriter: bankWriter, manifestWriter: manifestWriter) }
            var options = try calibrationOptions()

            let readStart = Date()
            let metadata = try items.map { try ItemMetadata.load(csv: $0) }
            if guessingPrior == "options", let metadata, let path = items { options.itemGuessingPriors = try Self.optionPriors(metadata, file: path) }
            let fixedBank = try fixedBankPath.map { try loadBank($0) }
            if let fixedBank {
                options.fixedItems = Dictionary(fixedBank.items.map { ($0.itemID, $0.parameters) }, uniquingKeysWith: { first, _ in first })
            }
            let (data, report) = try ResponseMatrix.load(
                csv: responses, options: columns.fileOptions, maxMemoryBytes: maxMemory.bytes,
                threads: threads ?? WorkerThreads.all)
            noteUnnamedIDColumn(report)
            let readSeconds = Date().timeIntervalSince(readStart)
            // A terminal shows each EM cycle as mirt does (silent when stderr is piped).
            let status = TerminalStatusLine()
            let result = try EMCalibrator(options: options).calibrate(data, progress: Self.progress(on: status))
            status.clear()
            let bank = ItemBank(calibration: result, metadata: metadata, fixed: fixedBank)
            try bankWriter.write(bank.csv())
            try OutputSet.commit([("bank", bankWriter, bank.items.count)], manifest: manifestWriter) { entries in
                var summary = calibrationSummary(result: result, report: report, readSeconds: readSeconds)
                summary.common.setFixed(bank: fixedBankPath, items: result.fixedItemIDs, notInData: result.fixedItemsNotInData)
                if fixedBankPath != nil { summary.fit.free_items = result.freeItemIDs }
                summary.common.outputs = entries
                return try summary.json()
            }
            if let metadata {
                let missing = result.items.filter { metadata.values[$0.itemID] == nil }.map(\.itemID)
                if !missing.isEmpty {
                    printError(
                        "warning: \(missing.count) calibrated item\(missing.count == 1 ? "" : "s") not in \(items!): \(missing.prefix(5).joined(separator: ", "))\(missing.count > 5 ? ", …" : "") (metadata left empty)"
                    )
                }
            }
            // Estimates a bank may not hold (a slope near 0 sends b far out): said now, not first by `score`.
            for item in bank.items where !item.flags.contains("fixed") {
                let p = item.parameters
                if !ItemBank.allowsDifficulty(p.difficulty, slope: p.discrimination) || !ItemBank.allowedPositiveSlopes.contains(p.discrimination) {
                    printError(
                        "warning: item '\(item.itemID)': a = \(p.discrimination.formatted6), b = \(p.difficulty.formatted6) lie outside what a bank for scoring may hold "
                            + "(a in \(ItemBank.allowedPositiveSlopes), b in \(ItemBank.allowedDifficulties) or |a·b| ≤ \(ItemBank.flatItemIntercept.formatted6) when |a| < \(ItemBank.flatSlope.formatted6)): the item does not measure θ; remove it from \(out) before scoring"
                    )
                }
            }
            printError(humanSummary(result: result, report: report, readSeconds: readSeconds, bankItems: bank.items.count))
            return result.converged ? ExitStatus.success : ExitStatus.notConverged
        }
    }

    /// Each EM cycle on a terminal's status line, as mirt shows it (nil when stderr is not a terminal).
    static func progress(on status: TerminalStatusLine) -> ((CalibrationProgress) -> Void)? {
        guard status.isEnabled else { return nil }
        return { p in
            switch p.phase {
            case .cycle:
                status.show(
                    "EM cycle \(p.cycle): log-likelihood \(fixed(p.logLikelihood, 2)), largest change \(String(format: "%.1e", p.largestChange)), \(fixed(p.elapsedSeconds, 1)) s"
                )
            case .standardErrors:
                status.show("EM stopped after \(p.cycle) cycles (\(fixed(p.elapsedSeconds, 1)) s); computing standard errors…", force: true)
            }
        }
    }

    func humanSummary(result: CalibrationResult, report: ResponseFileReport, readSeconds: Double, bankItems: Int) -> String {
        var lines: [String] = []
        lines.append(
            "iqscore calibrate: \(result.model.rawValue.uppercased()) on \(responses) (\(report.layout.rawValue) layout, \(formatCount(report.dataRows)) data rows)"
        )
        lines.append(
            "data: \(formatCount(result.personCount)) persons × \(result.items.count) items, \(formatCount(result.cellCount)) responses (\(fixed(100 * Double(result.cellCount) / Double(max(1, result.personCount * result.items.count)), 1))% of cells); \(result.eStep.rawValue) E-step"
        )
        var excluded: [String] = []
        // The same counts as the summary JSON's excluded_persons = persons_without_responses + persons_only_excluded_items.
        let empty = report.emptyPersons.count, onlyExcluded = result.excludedPersons.count
        switch (empty, onlyExcluded) {
        case (0, 0): break
        case (_, 0): excluded.append("\(formatCount(empty)) person\(empty == 1 ? "" : "s") with no responses")
        case (0, _): excluded.append("\(formatCount(onlyExcluded)) person\(onlyExcluded == 1 ? "" : "s") with responses only to excluded items")
        default:
            excluded.append(
                "\(formatCount(empty + onlyExcluded)) persons (\(formatCount(empty)) with no responses, \(formatCount(onlyExcluded)) with responses only to excluded items)"
            )
        }
        if !result.excludedItems.isEmpty {
            excluded.append(
                "\(result.excludedItems.count) items (\(result.excludedItems.map(\.itemID).prefix(5).joined(separator: ", "))\(result.excludedItems.count > 5 ? ", …" : ""))"
            )
        }
        if report.blankResponses > 0 { excluded.append("\(formatCount(report.blankResponses)) blank response rows") }
        lines.append("excluded: " + (excluded.isEmpty ? "none" : excluded.joined(separator: "; ")))
        // Plain EM: one E-step per cycle, said by the cycle count; SQUAREM: its E-steps and extrapolations too.
        let work =
            result.options.acceleration == .none
            ? ""
            : "; \(result.eSteps) E-steps with SQUAREM, \(result.extrapolations) extrapolations kept, \(result.rejectedExtrapolations) rejected"
        let status =
            result.converged
            ? "converged in \(result.cycles) cycles (largest change \(String(format: "%.1e", result.lastChange)) < \(String(format: "%.1e", result.options.tolerance))\(work))"
            : "NOT CONVERGED after \(result.cycles) cycles (largest change \(String(format: "%.1e", result.lastChange)) ≥ \(String(format: "%.1e", result.options.tolerance))\(work))"
        lines.append(
            "\(status); read \(fixed(readSeconds, 2)) s, fit \(fixed(result.elapsedSeconds, 2)) s (standard errors \(fixed(result.standardErrorSeconds, 2)) s)"
        )
        lines.append(result.fitLine(logLikelihoodDecimals: 2))
        var priors: [String] = []
        if let p = result.options.guessingPrior, result.model == .threePL {
            let perItem = result.options.itemGuessingPriors
            priors.append(
                perItem.isEmpty
                    ? "c ~ \(p)"
                    : "c ~ Beta centred on 1/K for \(perItem.count) items (K from --items' options column; mode 1/K, weight 20), \(p) for the others")
        }
        if let p = result.options.slopePrior { priors.append("a ~ \(p)") }
        lines.append("priors: " + (priors.isEmpty ? "none" : priors.joined(separator: ", ")))
        if let fixedPath = fixedBankPath {
            let notInData = result.fixedItemsNotInData.count
            lines.append(
                "fixed: \(result.fixedItemIDs.count) items held at their values in \(fixedPath), \(result.freeItemIDs.count) free items estimated on its scale"
                    + (notInData > 0 ? "; \(notInData) bank item\(notInData == 1 ? "" : "s") not in the data (carried over)" : ""))
            lines.append(
                "latent distribution: mean \(fixed(result.latentMean, 4))" + (result.latentMeanStandardError.map { " (SE \(fixed($0, 4)))" } ?? "")
                    + ", SD \(fixed(result.latentSD, 4))" + (result.latentSDStandardError.map { " (SE \(fixed($0, 4)))" } ?? ""))
        } else if result.model == .rasch {
            lines.append("latent SD \(fixed(result.latentSD, 4))" + (result.latentSDStandardError.map { " (SE \(fixed($0, 4)))" } ?? ""))
        }
        lines.append("standard errors: \(result.standardErrorMethod)")
        let free = result.items.filter { !$0.isFixed }
        let a = free.map(\.parameters.discrimination), b = free.map(\.parameters.difficulty)
        if !free.isEmpty {
            lines.append(
                (fixedBankPath == nil ? "" : "free items: ")
                    + "a: \(fixed(a.min()!, 3)) … \(fixed(a.max()!, 3)), b: \(fixed(b.min()!, 3)) … \(fixed(b.max()!, 3))"
                    + (result.model == .threePL
                        ? ", c: \(fixed(free.map(\.parameters.guessing).min()!, 3)) … \(fixed(free.map(\.parameters.guessing).max()!, 3))" : ""))
        }
        lines += summaryTail(warnings: result.warnings, bankItems: bankItems)
        return lines.joined(separator: "\n")
    }

    /// The last lines of every fit's stderr summary: the first 8 warnings (the rest counted), and the files written.
    func summaryTail(warnings: [String], bankItems: Int) -> [String] {
        var lines = warnings.prefix(8).map { "warning: \($0)" }
        if warnings.count > 8 { lines.append("warning: … and \(warnings.count - 8) more (see the summary JSON)") }
        lines.append("wrote \(out) (\(bankItems) items)" + (manifestPath.map { " and \($0)" } ?? ""))
        return lines
    }
}

extension EStepStrategy: ExpressibleByArgument {}
extension EMAcceleration: ExpressibleByArgument {}

extension CalibrateCommand {
    /// The `--summary-json` document of a 0/1 fit (also the speed–accuracy fit's, which adds `response_times`).
    func calibrationSummary(result: CalibrationResult, report: ResponseFileReport, readSeconds: Double) -> FitSummary<CalibrationSummary> {
        FitSummary(
            common: summaryCommon(model: result.model.rawValue, fit: result, options: result.options, report: report, readSeconds: readSeconds),
            fit: CalibrationSummary(result: result, report: report, readSeconds: readSeconds))
    }
}

/// The 0/1 fit's own keys of its `--summary-json` document (`FitSummary`, beside `FitSummaryCommon`'s).
struct CalibrationSummary: Encodable {
    var n_items: Int
    var n_responses: Int
    /// Persons left out of the fit: `persons_without_responses + persons_only_excluded_items` (stderr's
    /// "excluded:" line gives the same counts).
    var excluded_persons: Int
    var persons_without_responses: Int
    var persons_only_excluded_items: Int
    var excluded_items: [[String: String]]
    /// SQUAREM's extrapolations kept and rejected by its safeguard (the E-steps of the iterations, `e_steps`, are
    /// the cycles without acceleration).
    var extrapolations: Int
    var rejected_extrapolations: Int
    var last_change: Double
    var quadrature_points: Int
    var theta_bound: Double
    var e_step: String
    var latent_mean: Double
    var latent_mean_se: Double?
    var latent_sd: Double
    var latent_sd_se: Double?
    var free_items: [String]?
    var priors: [String: String]
    var standard_errors: String
    var standard_error_seconds: Double
    /// EM cycle time split: E-step, the E-step's BLAS products (dense data; 0 for the sparse E-step), M-step.
    var e_step_seconds: Double
    var e_step_blas_seconds: Double
    var m_step_seconds: Double
    var seconds_per_cycle: Double
    var elapsed_seconds: Double
    /// A joint calibration of responses and times (`--time-column`, `--time-suffix`).
    var response_times: ResponseTimeSummary?

    init(result: CalibrationResult, report: ResponseFileReport, readSeconds: Double) {
        n_items = result.items.count
        n_responses = result.cellCount
        persons_without_responses = report.emptyPersons.count
        persons_only_excluded_items = result.excludedPersons.count
        excluded_persons = persons_without_responses + persons_only_excluded_items
        excluded_items = result.excludedItems.map { ["item_id": $0.itemID, "reason": $0.reason] }
        extrapolations = result.extrapolations
        rejected_extrapolations = result.rejectedExtrapolations
        last_change = result.lastChange.isFinite ? result.lastChange : 0
        quadrature_points = result.options.quadraturePoints
        theta_bound = result.options.thetaBound
        e_step = result.eStep.rawValue
        latent_mean = result.latentMean
        latent_mean_se = result.latentMeanStandardError
        latent_sd = result.latentSD
        latent_sd_se = result.latentSDStandardError
        var p: [String: String] = [:]
        if result.model == .threePL {
            p["guessing"] = result.options.guessingPrior?.description ?? "none"
            for (id, prior) in result.options.itemGuessingPriors { p["guessing:" + id] = prior.description }
        }
        if result.model.hasItemSlopes { p["slope"] = result.options.slopePrior?.description ?? "none" }
        priors = p
        standard_errors = result.standardErrorMethod
        standard_error_seconds = result.standardErrorSeconds
        e_step_seconds = result.timing.eStepSeconds
        e_step_blas_seconds = result.timing.blasSeconds
        m_step_seconds = result.timing.mStepSeconds
        seconds_per_cycle = result.cycles > 0 ? (result.timing.eStepSeconds + result.timing.mStepSeconds) / Double(result.cycles) : 0
        elapsed_seconds = result.elapsedSeconds + readSeconds
    }
}
