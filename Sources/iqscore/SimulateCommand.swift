import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Generate a seeded item bank and simulated response data (streamed to disk).",
        discussion: """
            The bank: slopes a ~ LogNormal(--slope-mean-log, --slope-sd-log) (2PL/3PL; 1 for Rasch, \
            --common-slope for 1PL), difficulties b ~ N(--difficulty-mean, --difficulty-sd), guessing \
            c ~ Beta(--guessing-alpha, --guessing-beta) (3PL). Abilities θ ~ N(--theta-mean, --theta-sd).
            With --items-per-session below --items each session answers that many distinct items drawn at \
            random (missing by design). The same --seed gives byte-identical files.

            Items in more than two categories: --model graded, gpcm, pcm, rsm or nominal with --categories K (2…10) \
            draws per item a (1 for pcm) and a location β as above, then K − 1 sorted offsets δ ~ N(0, 1): \
            thresholds b_k = β + δ_(k) (rsm: a = 1 and b_k = β + τ_k, the centred thresholds τ drawn once; nominal: slopes a·k/(K − 1) with the middle ones shaken by N(0, 0.2²), \
            intercepts −a·Σ b_v/(K − 1)); cells are the categories 0…K−1. --bank BANK.csv instead draws the \
            responses from a bank as it is (0/1 and polytomous items mixed; cells 0…K−1 for the latter).

            A battery: --model bifactor draws the bank above (a, b, c as 2pl, or 3pl with --item-type 3pl) and puts \
            item k on the general factor (a_general = a, d = −a·b) and on the specific factor of --domains entry k \
            mod D, with a_<factor> = r·a, r ~ U(0.3, 0.9) per item; --model testlet draws one r per factor (the \
            testlet ratio λ). The factors are independent N(0, 1). --bank-out writes the true bank as calibrate \
            --model bifactor writes one (a domain column too: calibrate it with --items BANK --factor-column \
            domain); --thetas-out every factor's score (theta_general, theta_<factor>…). --model correlated puts \
            each item on its domain's factor only (a_<domain> = a), the factors N(0, R) with every correlation \
            --factor-correlation (default 0.6); --bank-out writes the true bank as calibrate --model correlated \
            writes one, --thetas-out theta_<factor>….

            Response times: --times draws each response's time under the hierarchical speed-accuracy model \
            (van der Linden 2007): item time intensities β ~ N(--time-intensity-mean, --time-intensity-sd²) and \
            discriminations α = exp(N(log --time-discrimination, 0.2²)) (a --bank with time columns keeps its own), \
            speed τ | θ ~ N(ρσ_τ z, σ_τ²(1 − ρ²)) with z the standardised θ, σ_τ = --speed-sd and ρ = \
            --speed-correlation, and log t = β − τ + N(0, 1/α²). The long layout gets a seconds column, the wide one \
            a <item>_time column per item; --bank-out writes the time parameters, --thetas-out each session's speed.

            Aberrant sessions, each with its truth in --thetas-out: --rapid-guessers F makes a share F of the sessions \
            guess a share --rapid-share of their items rapidly (correct with probability --guess-probability, in 1–4 s \
            uniformly); --days D spreads the sessions over D days from --start-date (a date column), and --leak-items \
            K leaks K items (drawn at random; a leaked_on column in --bank-out) on day --leak-day, after which a share \
            --preknowledge-share of the sessions knows them: correct with probability 0.95, in a fifth of the time.

            Example (the app's bank): iqscore simulate --model 2pl --items 1500 --items-per-session 25 \
            --persons 200000 --domains pattern,logic,spatial,math,verbal,memory --layout long \
            --out responses.csv --bank-out true_bank.csv --seed 7
            """
    )

    @Option(
        help:
            "Model: rasch, 1pl, 2pl or 3pl; graded, gpcm, pcm, rsm or nominal for items in --categories categories; bifactor or testlet for a general factor and one specific factor per --domains entry; correlated for one correlated factor per --domains entry."
    )
    var model: ModelArgument = .dichotomous(.twoPL)

    @Option(
        name: .customLong("factor-correlation"),
        help: "With --model correlated: the correlation of every pair of factors (the domains), greater than −1/(K−1) and below 1 (default 0.6).")
    var factorCorrelation: Double?

    @Option(name: .customLong("item-type"), help: "With --model bifactor, testlet or correlated: the items' model, 2pl or 3pl (default 2pl).")
    var itemType: IRTModel?

    /// The unidimensional model the bank is drawn under (a bifactor bank's items: --item-type).
    var irtModel: IRTModel { model.dichotomous ?? (model.isMultidimensional ? itemType ?? .twoPL : .twoPL) }

    @Option(help: "Categories per item with --model graded, gpcm, pcm, rsm or nominal, \(BankSpecification.allowedCategoryCounts.text).")
    var categories = 4

    @Option(help: "Bank size (number of items), \(BankSpecification.allowedItemCounts.text); not with --bank.")
    var items: Int?

    @Option(help: "Draw the responses from this bank (any models) instead of drawing a bank; --bank-out then copies it.")
    var bank: String?

    @Option(help: "Number of persons/sessions, \(ResponseSimulator.allowedSessionCounts.text).")
    var persons: Int

    @Option(name: .customLong("items-per-session"), help: "Items each session answers (default: all, i.e. dense data).")
    var itemsPerSession: Int?

    @Option(help: "Comma-separated domains assigned to items in turn (adds a domain column to the bank).")
    var domains: String?

    @Option(help: "Output layout: wide (one row per session) or long (session_id,item_id,response).")
    var layout: ResponseLayout = .wide

    @Option(help: "Responses CSV to write.")
    var out: String

    @Option(name: .customLong("bank-out"), help: "Write the true item parameters (bank CSV format).")
    var bankOut: String?

    @Option(name: .customLong("thetas-out"), help: "Write the true abilities (session_id,theta).")
    var thetasOut: String?

    @Flag(name: .customLong("no-id"), help: "Wide layout without a session_id column (the format girth's loader reads).")
    var noID = false

    @Flag(help: "Draw response times (seconds) too: a seconds column (long layout) or <item>_time columns (wide).")
    var times = false

    @Option(name: .customLong("speed-sd"), help: "With --times: the SD σ_τ of speed, in \(SpeedAccuracyPopulation.allowedSpeedSDs).") var speedSD =
        0.3
    @Option(
        name: .customLong("speed-correlation"),
        help: "With --times: the correlation ρ of ability and speed, in \(SpeedAccuracyPopulation.allowedCorrelations).") var speedCorrelation = 0.3
    @Option(
        name: .customLong("time-intensity-mean"),
        help: "With --times: the mean of the items' time intensities β (log-seconds; 3.4 ≈ 30 s), in \(LognormalTimeItem.allowedTimeIntensities).")
    var timeIntensityMean = 3.4
    @Option(name: .customLong("time-intensity-sd"), help: "With --times: the SD of β, in [0, 3].") var timeIntensitySD = 0.5
    @Option(name: .customLong("time-discrimination"), help: "With --times: the median time discrimination α, in [0.2, 20].") var timeDiscrimination =
        1.5

    @Option(name: .customLong("rapid-guessers"), help: "Share of sessions that rapid-guess, in [0, 1] (default 0).") var rapidGuessers = 0.0
    @Option(name: .customLong("rapid-share"), help: "Share of a rapid guesser's items guessed, in (0, 1] (default 0.5).") var rapidShare = 0.5
    @Option(name: .customLong("guess-probability"), help: "Probability that a rapid guess is correct, in [0, 1] (default 0.25: one of four options).")
    var guessProbability = 0.25
    @Option(help: "Spread the sessions over this many days (1…3650) and write a date column.") var days: Int?
    @Option(name: .customLong("start-date"), help: "The first day of --days, YYYY-MM-DD (default 2026-01-01).") var startDate = "2026-01-01"
    @Option(name: .customLong("leak-items"), help: "With --days: items leaked (drawn at random) on --leak-day.") var leakItems = 0
    @Option(name: .customLong("leak-day"), help: "With --leak-items: the day of the leak, 0-based from --start-date (default: the middle day).")
    var leakDay: Int?
    @Option(
        name: .customLong("preknowledge-share"),
        help: "With --leak-items: share of sessions from the leak day on that know the leaked items, in [0, 1] (default 0.3).")
    var preknowledgeShare = 0.3

    @Option(help: "Random seed.")
    var seed: UInt64 = 1

    @Option(name: .customLong("slope-mean-log"), help: "Mean of log a, in \(BankSpecification.allowedSlopeMeanLogs).") var slopeMeanLog = 0.0
    @Option(name: .customLong("slope-sd-log"), help: "SD of log a, in \(BankSpecification.allowedSlopeSDLogs).") var slopeSDLog = 0.3
    @Option(name: .customLong("common-slope"), help: "The 1PL slope, in \(BankSpecification.allowedCommonSlopes).") var commonSlope = 1.0
    @Option(name: .customLong("difficulty-mean"), help: "Mean of b, in \(BankSpecification.allowedDifficultyMeans).") var difficultyMean = 0.0
    @Option(name: .customLong("difficulty-sd"), help: "SD of b, in \(BankSpecification.allowedDifficultySDs).") var difficultySD = 1.0
    @Option(name: .customLong("guessing-alpha"), help: "Beta shape α of c, in \(BankSpecification.allowedGuessingShapes).") var guessingAlpha = 5.0
    @Option(name: .customLong("guessing-beta"), help: "Beta shape β of c, in \(BankSpecification.allowedGuessingShapes).") var guessingBeta = 17.0
    @Option(name: .customLong("theta-mean"), help: "Mean of θ, in \(ResponseSimulator.allowedThetaMeans).") var thetaMean = 0.0
    @Option(name: .customLong("theta-sd"), help: "SD of θ, in \(ResponseSimulator.allowedThetaSDs).") var thetaSD = 1.0

    /// The bank to draw, as the library checks it.
    var specification: BankSpecification {
        var spec = BankSpecification(
            model: irtModel, itemCount: items ?? 0,
            domains: domains.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } } ?? [])
        spec.slopeMeanLog = slopeMeanLog
        spec.slopeSDLog = slopeSDLog
        spec.commonSlope = commonSlope
        spec.difficultyMean = difficultyMean
        spec.difficultySD = difficultySD
        spec.guessingAlpha = guessingAlpha
        spec.guessingBeta = guessingBeta
        spec.categoryModel = model.categories
        spec.categories = categories
        return spec
    }

    /// Every range is the library's (`BankSpecification`, `ResponseSimulator`), named as options here.
    func validate() throws {
        if model.isMultidimensional { try validateBifactor() }
        if itemType != nil && !model.isMultidimensional { throw ValidationError("--item-type goes with --model bifactor, testlet or correlated") }
        if factorCorrelation != nil && model != .correlated { throw ValidationError("--factor-correlation goes with --model correlated") }
        if bank != nil {
            if items != nil { throw ValidationError("--items comes from --bank (its number of items); give one of them") }
        } else if items == nil {
            throw ValidationError("Missing expected argument '--items <items>' (or --bank BANK.csv)")
        }
        if model.categories == nil && categories != 4 { throw ValidationError("--categories goes with --model graded, gpcm, pcm, rsm or nominal") }
        // Every problem of the bank and of the sessions at once (the bank's only when it is drawn here).
        try throwIfAny(
            (bank == nil ? specification.validationProblems(naming: .option) : [])
                + ResponseSimulator.validationProblems(
                    itemCount: items ?? 100_000, itemsPerSession: bank == nil ? itemsPerSession : nil, sessions: persons,
                    thetaMean: thetaMean, thetaSD: thetaSD, naming: .option))
        if noID && layout == .long { throw ValidationError("--no-id applies to --layout wide only") }
        if times {
            if model.isMultidimensional {
                throw ValidationError("--times goes with the unidimensional models (the speed-accuracy model has one ability)")
            }
            var problems: [String] = []
            do throws(PsychometricsError) { _ = try SpeedAccuracyPopulation(speedSD: speedSD, correlation: speedCorrelation) } catch {
                problems.append(
                    SpeedAccuracyPopulation.allowedSpeedSDs.problem(speedSD, "--speed-sd") ?? SpeedAccuracyPopulation.allowedCorrelations.problem(
                        speedCorrelation, "--speed-correlation") ?? error.message)
            }
            problems += [
                LognormalTimeItem.allowedTimeIntensities.problem(timeIntensityMean, "--time-intensity-mean"),
                NumberRange.closed(0, 3).problem(timeIntensitySD, "--time-intensity-sd"),
                NumberRange.closed(0.2, 20).problem(timeDiscrimination, "--time-discrimination")
            ].compactMap { $0 }
            try throwIfAny(problems)
        }
        try validateAberrance()
        if !times && (speedSD != 0.3 || speedCorrelation != 0.3 || timeIntensityMean != 3.4 || timeIntensitySD != 0.5 || timeDiscrimination != 1.5) {
            throw ValidationError(
                "--speed-sd, --speed-correlation, --time-intensity-mean, --time-intensity-sd and --time-discrimination go with --times")
        }
    }

    /// The aberrance and date options' ranges and pairings.
    func validateAberrance() throws {
        var problems = [
            NumberRange.closed(0, 1).problem(rapidGuessers, "--rapid-guessers"), NumberRange.aboveUpTo(0, 1).problem(rapidShare, "--rapid-share"),
            NumberRange.closed(0, 1).problem(guessProbability, "--guess-probability"),
            NumberRange.closed(0, 1).problem(preknowledgeShare, "--preknowledge-share")
        ].compactMap { $0 }
        if let days, let p = (1...3650).problem(days, "--days") { problems.append(p) }
        if SessionDate.day(startDate) == nil {
            problems.append("--start-date must be a date YYYY-MM-DD (years \(SessionDate.allowedYears.text)), got \(TextFidelity.quoted(startDate))")
        }
        if leakItems < 0 { problems.append("--leak-items must be at least 0, got \(leakItems)") }
        if (leakItems > 0 || leakDay != nil) && days == nil { problems.append("--leak-items and --leak-day need --days (a leak happens on a date)") }
        if let leakDay, let days, !(0..<days).contains(leakDay) {
            problems.append("--leak-day must be in 0…\(days - 1) (a day of --days), got \(leakDay)")
        }
        if model.isMultidimensional && (rapidGuessers > 0 || leakItems > 0) {
            problems.append("--rapid-guessers and --leak-items go with the unidimensional models")
        }
        try throwIfAny(problems)
    }

    /// The response-time model of the simulation: a bank's own time items when every item has one, else drawn.
    func timeSimulator(bank: inout ItemBank, using rng: inout SeededGenerator) throws -> ResponseTimeSimulator? {
        guard times else { return nil }
        let population = try SpeedAccuracyPopulation(speedSD: speedSD, correlation: speedCorrelation)
        let own = bank.items.compactMap(\.timeModel)
        let items =
            own.count == bank.items.count
            ? own
            : ResponseTimeSimulator.drawItems(
                count: bank.items.count, intensityMean: timeIntensityMean, intensitySD: timeIntensitySD,
                discriminationMedian: timeDiscrimination, using: &rng)
        for k in bank.items.indices { bank.items[k].timeModel = items[k] }
        bank.speedPopulation = population
        var simulator = ResponseTimeSimulator(items: items, population: population)
        simulator.thetaMean = thetaMean
        simulator.thetaSD = thetaSD
        return simulator
    }

    func run() throws {
        if model.isMultidimensional { return try runBifactor() }
        try runReportingErrors {
            try prepareOutputs(
                inputs: given("--bank", self.bank), outputs: [("--out", out)] + given("--bank-out", bankOut) + given("--thetas-out", thetasOut))
            var rng = SeededGenerator(seed: seed)
            var bank = try self.bank.map { try loadBank($0, categoryItems: .read()) } ?? specification.draw(using: &rng)
            let timeSimulator = try self.timeSimulator(bank: &bank, using: &rng)
            let items = bank.items.count
            if let k = itemsPerSession, !(1...items).contains(k) {
                throw ValidationError("--items-per-session must be in 1…\(items) (the bank's items), got \(k)")
            }
            var simulator = ResponseSimulator(bank: bank, itemsPerSession: itemsPerSession)
            simulator.thetaMean = thetaMean
            simulator.thetaSD = thetaSD

            let started = Date()
            let writer = try AtomicFileWriter(path: out)
            let thetaWriter = try thetasOut.map { try AtomicFileWriter(path: $0) }
            let aberrant = rapidGuessers > 0 || leakItems > 0
            try thetaWriter?.write(
                "session_id,theta" + (timeSimulator == nil ? "" : ",speed") + (aberrant ? ",rapid_guesses,preknowledge" : "") + "\n")
            var lines = try SessionLines(
                itemIDs: bank.items.map(\.itemID), persons: persons, layout: layout, noID: noID, writer: writer, times: timeSimulator != nil,
                dates: days != nil)
            // Aberrance from its own generator too: the leaked items, then per session who guesses or knows.
            var aberranceRNG = SeededGenerator(seed: seed &+ 0x5851_F42D_4C95_7F2D)
            var leaked = [Bool](repeating: false, count: items)
            if leakItems > 0 {
                var order = Array(0..<items)
                order.shuffle(using: &aberranceRNG)
                for j in order.prefix(min(leakItems, items)) { leaked[j] = true }
            }
            let firstDay = SessionDate.day(startDate)!, leakOn = leakDay ?? (days ?? 1) / 2
            if leakItems > 0 {
                for j in 0..<items where leaked[j] { bank.items[j].metadata["leaked_on"] = SessionDate.text(firstDay + leakOn) }
                bank.metadataColumns.append("leaked_on")
            }
            var sessionIndex = 0
            // Times come from their own generator (seeded from the first), so the responses stay those of a run without --times.
            var timeRNG = SeededGenerator(seed: seed &+ 0x9E37_79B9_7F4A_7C15)
            var seconds: [Double] = []
            try simulator.generate(count: persons, using: &rng) { drawn in
                var session = drawn
                var speed: Double?
                if let timeSimulator {
                    let tau = timeSimulator.speed(theta: session.theta, using: &timeRNG)
                    seconds = session.responses.map { timeSimulator.seconds(item: $0.item, speed: tau, using: &timeRNG) }
                    speed = tau
                }
                let day = days.map { sessionIndex * $0 / persons }
                sessionIndex += 1
                var rapid = 0, knows = false
                if aberrant {
                    let guesser = RandomVariate.uniform(using: &aberranceRNG) < rapidGuessers
                    knows = day.map { $0 >= leakOn } == true && leakItems > 0 && RandomVariate.uniform(using: &aberranceRNG) < preknowledgeShare
                    for k in session.responses.indices {
                        let j = session.responses[k].item
                        if knows && leaked[j] {
                            session.responses[k].response = RandomVariate.uniform(using: &aberranceRNG) < 0.95 ? 1 : 0
                            if speed != nil { seconds[k] /= 5 }
                        } else if guesser && RandomVariate.uniform(using: &aberranceRNG) < rapidShare {
                            session.responses[k].response = RandomVariate.uniform(using: &aberranceRNG) < guessProbability ? 1 : 0
                            if speed != nil { seconds[k] = 1 + 3 * RandomVariate.uniform(using: &aberranceRNG) }
                            rapid += 1
                        }
                    }
                }
                let id = try lines.write(session.responses, seconds: speed == nil ? nil : seconds, date: day.map { SessionDate.text(firstDay + $0) })
                try thetaWriter?.write(
                    "\(id),\(String(format: "%.6f", session.theta))" + (speed.map { String(format: ",%.6f", $0) } ?? "")
                        + (aberrant ? ",\(rapid),\(knows ? 1 : 0)" : "") + "\n")
            }
            try writer.commit()
            try thetaWriter?.commit()
            if let bankOut { try writeAtomically(bank.csv(), to: bankOut) }
            let perSession = itemsPerSession ?? items
            let what =
                self.bank.map { "bank \($0)" }
                ?? (model.categories.map { "\($0.rawValue) bank (\(categories) categories)" } ?? "\(model.description.uppercased()) bank")
            printError(
                "iqscore simulate: \(what) of \(formatCount(items)) items, \(formatCount(persons)) sessions × \(perSession) items (\(layout.rawValue) layout, seed \(seed)) in \(fixed(Date().timeIntervalSince(started), 2)) s"
            )
            if let p = bank.speedPopulation {
                printError("response times: speed SD \(fixed(p.speedSD, 3)), ability-speed correlation \(fixed(p.correlation, 3))")
            }
            if let days {
                printError(
                    "dates: \(days) days from \(startDate)"
                        + (leakItems > 0
                            ? "; \(leaked.filter { $0 }.count) items leaked on \(SessionDate.text(firstDay + leakOn)) (\(bank.items.indices.filter { leaked[$0] }.prefix(8).map { bank.items[$0].itemID }.joined(separator: ", "))\(leakItems > 8 ? ", …" : ""))"
                            : ""))
            }
            printError("wrote \(out)" + (bankOut.map { ", \($0)" } ?? "") + (thetasOut.map { ", \($0)" } ?? ""))
            return ExitStatus.success
        }
    }
}

/// The responses file of `simulate`, a session at a time: its header on creation, then per session one wide row or
/// its long rows, session ids s1… zero-padded to the width of the session count.
struct SessionLines {
    let itemIDs: [String]
    let layout: ResponseLayout
    let noID: Bool
    let writer: AtomicFileWriter
    let width: Int
    var index = 0
    var cells: [UInt8], answered: [Bool], line: [UInt8] = []
    /// With times: each item's time in the wide row being written.
    var seconds: [Double]

    /// Whether sessions carry a date column.
    let dates: Bool

    init(itemIDs: [String], persons: Int, layout: ResponseLayout, noID: Bool, writer: AtomicFileWriter, times: Bool = false, dates: Bool = false)
        throws
    {
        self.dates = dates
        self.itemIDs = itemIDs
        self.layout = layout
        self.noID = noID
        self.writer = writer
        width = String(persons).count
        cells = [UInt8](repeating: 0, count: itemIDs.count)
        answered = [Bool](repeating: false, count: itemIDs.count)
        seconds = times ? [Double](repeating: 0, count: itemIDs.count) : []
        line.reserveCapacity((times ? 14 : 4) * itemIDs.count + 32)
        switch layout {
        case .wide:
            try writer.write(
                ((noID ? [] : ["session_id"]) + itemIDs + (times ? itemIDs.map { $0 + "_time" } : []) + (dates ? ["date"] : [])).joined(
                    separator: ",") + "\n")
        case .long: try writer.write("session_id,item_id,response" + (times ? ",seconds" : "") + (dates ? ",date" : "") + "\n")
        }
    }

    /// Writes the next session's responses (item index, category) and returns its id.
    mutating func write(_ responses: [(item: Int, response: UInt8)], seconds times: [Double]? = nil, date: String? = nil) throws -> String {
        let digits = String(index + 1)
        let id = "s" + String(repeating: "0", count: width - digits.count) + digits
        index += 1
        line.removeAll(keepingCapacity: true)
        switch layout {
        case .wide:
            for (k, (j, u)) in responses.enumerated() {
                cells[j] = u
                answered[j] = true
                if let times { seconds[j] = times[k] }
            }
            if !noID { line.append(contentsOf: id.utf8) }
            for j in 0..<itemIDs.count {
                if j > 0 || !noID { line.append(UInt8(ascii: ",")) }
                if answered[j] { Self.appendCategory(cells[j], to: &line) }
            }
            if times != nil {
                for j in 0..<itemIDs.count {
                    line.append(UInt8(ascii: ","))
                    if answered[j] { Self.appendSeconds(seconds[j], to: &line) }
                }
            }
            for j in 0..<itemIDs.count { answered[j] = false }
            if let date { line.append(UInt8(ascii: ",")); line.append(contentsOf: date.utf8) }
            line.append(UInt8(ascii: "\n"))
        case .long:
            for (k, (j, u)) in responses.enumerated() {
                line.append(contentsOf: id.utf8)
                line.append(UInt8(ascii: ","))
                line.append(contentsOf: itemIDs[j].utf8)
                line.append(UInt8(ascii: ","))
                Self.appendCategory(u, to: &line)
                if let times {
                    line.append(UInt8(ascii: ","))
                    Self.appendSeconds(times[k], to: &line)
                }
                if let date { line.append(UInt8(ascii: ",")); line.append(contentsOf: date.utf8) }
                line.append(UInt8(ascii: "\n"))
            }
        }
        try line.withUnsafeBufferPointer { try writer.write(bytes: $0) }
        return id
    }

    /// A time in seconds with three decimals (milliseconds), as `ResponseTimeCell` reads it.
    @inline(__always) static func appendSeconds(_ t: Double, to line: inout [UInt8]) {
        let ms = Int((t * 1000).rounded())
        line.append(contentsOf: String(ms / 1000).utf8)
        line.append(UInt8(ascii: "."))
        let frac = ms % 1000
        line.append(UInt8(ascii: "0") + UInt8(frac / 100))
        line.append(UInt8(ascii: "0") + UInt8(frac / 10 % 10))
        line.append(UInt8(ascii: "0") + UInt8(frac % 10))
    }

    /// A response's digits (0, 1, or a category up to 255).
    @inline(__always) static func appendCategory(_ u: UInt8, to line: inout [UInt8]) {
        if u >= 100 { line.append(UInt8(ascii: "0") + u / 100) }
        if u >= 10 { line.append(UInt8(ascii: "0") + u / 10 % 10) }
        line.append(UInt8(ascii: "0") + u % 10)
    }
}
