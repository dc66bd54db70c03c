import ArgumentParser
import Foundation
import Integrity
import Psychometrics
import PsychometricsIO

/// Exit codes shared by all subcommands (documented in `iqscore --help` and the README).
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let someRejected: Int32 = 2
    static let notConverged: Int32 = 3
    /// `monitor` raised at least one alarm (the output is written).
    static let alarms: Int32 = 4
}

/// Diagnostics go to stderr; stdout carries results only.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Runs a command body, turning data errors into `file:line:column: error:` lines on stderr and exit 1.
func runReportingErrors(_ body: () throws -> Int32) throws {
    let status: Int32
    do {
        status = try body()
    } catch let error as InputErrors {
        printError(error.description)
        throw ExitCode(ExitStatus.failure)
    } catch let error as InputError {
        printError(error.description)
        throw ExitCode(ExitStatus.failure)
    } catch let error as PsychometricsError {
        printError("error: \(error.message)")
        throw ExitCode(ExitStatus.failure)
    }
    if status != 0 { throw ExitCode(status) }
}

/// Throws the library's validation problems (each naming the option and its allowed range) as one usage
/// error: exit 64, before anything is read or written.
func throwIfAny(_ problems: [String]) throws {
    if !problems.isEmpty { throw ValidationError(problems.joined(separator: "; ")) }
}

/// Column names for long-layout response files (shared by every command that reads responses).
/// The response-time columns of a response file (`ResponseFileOptions.timeColumn`, `timeSuffix`).
struct ResponseTimeOptions: ParsableArguments {
    @Option(
        name: .customLong("time-column"),
        help:
            "Long layout: the column of each response's time in seconds (empty/NA: none; 0 or more than a day: the response kept without its time, counted)."
    )
    var timeColumn: String?

    @Option(
        name: .customLong("time-suffix"),
        help: ArgumentHelp("Wide layout: item Q's time in seconds is in column Q<suffix> (e.g. _time: q1_time).", valueName: "suffix"))
    var timeSuffix: String?

    var isSet: Bool { timeColumn != nil || timeSuffix != nil }

    func validate() throws {
        if timeColumn != nil && timeSuffix != nil {
            throw ValidationError("--time-column (long layout) and --time-suffix (wide layout) are two ways to name the times; give one")
        }
        if timeColumn?.isEmpty == true || timeSuffix?.isEmpty == true {
            throw ValidationError("--time-column and --time-suffix need a non-empty name")
        }
    }

    /// `options` with the times to read.
    func applied(to options: ResponseFileOptions) -> ResponseFileOptions {
        var o = options
        o.timeColumn = timeColumn
        o.timeSuffix = timeSuffix
        return o
    }
}

struct ResponseColumnOptions: ParsableArguments {
    @Option(name: .customLong("session-column"), help: "Session/person id column (long layout; also recognised as the first column of a wide file).")
    var sessionColumn = "session_id"

    @Option(name: .customLong("item-column"), help: "Item id column (long layout).")
    var itemColumn = "item_id"

    @Option(name: .customLong("response-column"), help: "Response column (long layout): 1/0, true/false; empty or NA = not administered.")
    var responseColumn = "response"

    @Option(help: "Force the layout instead of detecting it from the header: wide or long.")
    var layout: ResponseLayout?

    @Option(help: ArgumentHelp("Field separator: ',', ';', tab (also written '\\t') or '|'.", valueName: "char"))
    var delimiter = ","

    @Option(
        name: .customLong("ignore-columns"),
        help: ArgumentHelp(
            "Wide layout: columns that are not items (e.g. sex,country), comma-separated; each must be in the header. Ages are read with --age-column (score, norms build).",
            valueName: "names"))
    var ignoreColumns: String?

    /// `--ignore-columns` as names.
    var ignoredColumns: [String] {
        ignoreColumns.map { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
    }

    /// The separator's byte, or nil when `delimiter` is not one `ResponseFileOptions.allowedDelimiters` holds.
    var delimiterByte: UInt8? {
        let text = delimiter == "tab" || delimiter == "\\t" ? "\t" : delimiter
        guard text.utf8.count == 1, let byte = text.utf8.first, ResponseFileOptions.allowedDelimiters.contains(byte) else { return nil }
        return byte
    }

    /// The three long-layout columns must be three different, non-empty names: one column cannot be both the
    /// session and the item (the reader would take the same field for both without a word).
    func validate() throws {
        if delimiterByte == nil {
            throw ValidationError("--delimiter must be ',', ';', tab or '|', got \(TextFidelity.quoted(delimiter))")
        }
        if ignoreColumns != nil, ignoredColumns.contains(where: \.isEmpty) {
            throw ValidationError("--ignore-columns must list column names separated by commas, got \(TextFidelity.quoted(ignoreColumns!))")
        }
        let names = [("--session-column", sessionColumn), ("--item-column", itemColumn), ("--response-column", responseColumn)]
        for (option, name) in names where name.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("\(option) must name a column, got '\(name)'")
        }
        for (k, (option, name)) in names.enumerated() {
            if let (other, _) = names[..<k].first(where: { $0.1 == name }) {
                throw ValidationError("\(other) and \(option) name the same column '\(name)'; the session, item and response columns must differ")
            }
        }
    }

    var fileOptions: ResponseFileOptions {
        var options = ResponseFileOptions(
            sessionColumn: sessionColumn, itemColumn: itemColumn, responseColumn: responseColumn, layout: layout,
            delimiter: delimiterByte ?? UInt8(ascii: ","))
        options.naming = .option
        options.ignoredColumns = ignoredColumns
        return options
    }
}

extension ResponseLayout: ExpressibleByArgument {}
extension RapidGuessThresholds.Rule: ExpressibleByArgument {}
extension ItemModelKind: ExpressibleByArgument {}
extension CorrelatedFactorsCalibrator.Integration: ExpressibleByArgument {}

/// `--model` of calibrate and simulate: a model of 0/1 items (rasch, 1pl, 2pl, 3pl: `EMCalibrator`) or of items
/// scored in more than two categories (graded, gpcm, pcm, rsm, nominal: `PolytomousCalibrator`).
enum ModelArgument: Hashable, ExpressibleByArgument, CustomStringConvertible {
    case dichotomous(IRTModel)
    case categories(ItemModelKind)
    /// The bifactor model of 0/1 items (`BifactorCalibrator`): a general factor and one specific factor per item
    /// group.
    case bifactor
    /// The testlet model: the bifactor model with each factor's specific slopes proportional to the general ones.
    case testlet
    /// Correlated factors, simple structure (`CorrelatedFactorsCalibrator`): each item on one factor, the factors'
    /// correlations estimated.
    case correlated

    /// Any case, as `IRTModel`'s argument.
    init?(argument: String) {
        let text = argument.lowercased()
        if let m = IRTModel(rawValue: text) {
            self = .dichotomous(m)
        } else if let k = ItemModelKind(rawValue: text) {
            self = .categories(k)
        } else if text == "bifactor" {
            self = .bifactor
        } else if text == "testlet" {
            self = .testlet
        } else if text == "correlated" {
            self = .correlated
        } else {
            return nil
        }
    }

    var dichotomous: IRTModel? { if case .dichotomous(let m) = self { m } else { nil } }
    var categories: ItemModelKind? { if case .categories(let k) = self { k } else { nil } }
    /// The bifactor model or its testlet constraint (`BifactorCalibrator`).
    var isBifactor: Bool { self == .bifactor || self == .testlet }
    /// A model of several factors over item groups (bifactor, testlet, correlated): its structure comes from a
    /// column of --items, its items are 2PL or 3PL.
    var isMultidimensional: Bool { isBifactor || self == .correlated }
    var description: String {
        dichotomous?.rawValue ?? categories?.rawValue ?? (self == .testlet ? "testlet" : self == .correlated ? "correlated" : "bifactor")
    }
    static var allValueStrings: [String] {
        IRTModel.allCases.map(\.rawValue) + ItemModelKind.categoryRowKinds.map(\.rawValue) + ["bifactor", "testlet", "correlated"]
    }
    var defaultValueDescription: String { description }
}

/// `--bank-model`: the model of bank rows whose thresholds name none (mirt's `coef(IRTpars = TRUE)` tables).
struct BankModelOption: ParsableArguments {
    @Option(
        name: .customLong("bank-model"),
        help:
            "The model of bank rows with thresholds b1, b2, … and no model cell, as mirt's coef(IRTpars = TRUE) graded and gpcm tables are written: graded, gpcm or pcm."
    )
    var bankModel: ItemModelKind?

    /// How the bank is read: items in more than two categories allowed, these rows under `bankModel`.
    var reading: CategoryItemReading { .read(thresholdsModel: bankModel) }
}
extension IRTModel: ExpressibleByArgument {
    /// Any case: `2PL` as mirt and the literature write it, `2pl` as the bank files do.
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }
}

/// Parses "1.5" etc. with a message naming the option.
func formatCount(_ n: Int) -> String {
    let s = String(n)
    var out = ""
    for (k, ch) in s.reversed().enumerated() {
        if k > 0 && k % 3 == 0 && ch != "-" { out.append(",") }
        out.append(ch)
    }
    return String(out.reversed())
}

func fixed(_ v: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", v) }

/// Before a command reads anything: SIGINT/SIGTERM/SIGHUP remove this run's temporary files; an output that is
/// the same file as an input or another output is refused; temporary files that killed runs left beside the
/// outputs are removed, and said so on stderr.
func prepareOutputs(inputs: [(String, String)], outputs: [(String, String)]) throws {
    TemporaryFiles.installInterruptCleanup()
    try OutputSet.checkPaths(inputs: inputs.map { (role: $0.0, path: $0.1) }, outputs: outputs.map { (role: $0.0, path: $0.1) })
    for path in OutputSet.removeStaleTemporaries(besides: outputs.map(\.1)) {
        printError("note: removed \(path), a temporary file left by an interrupted run")
    }
}

/// Parses a `--max-memory` value (a usage error, exit 64, when it is not a size in range).
func memoryLimit(_ text: String) throws -> MemoryLimit {
    guard let limit = MemoryLimit(text) else { throw ValidationError(MemoryLimit.problem(text, option: "--max-memory")) }
    return limit
}

/// `[(option, path)]` when the option was given, else nothing (for `prepareOutputs`).
func given(_ option: String, _ path: String?) -> [(String, String)] {
    path.map { [(option, $0)] } ?? []
}

/// Where a run's manifest goes: `--summary-json`, or beside OUT with .summary.json when OUT is a regular file
/// (a device such as /dev/null has no "beside").
func manifestPath(summaryJSON: String?, out: String) -> String? {
    summaryJSON ?? (isSpecialFile(out) ? nil : siblingPath(of: out, suffix: ".summary.json"))
}

/// Whether `path` exists and is not a regular file (a device such as /dev/null, a FIFO).
func isSpecialFile(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG
}

/// Pretty JSON with sorted keys and unescaped slashes, ending in a newline.
func encodeJSON<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
}

/// Writes text to `path` atomically.
func writeAtomically(_ text: String, to path: String) throws {
    let writer = try AtomicFileWriter(path: path)
    try writer.write(text)
    try writer.commit()
}

/// The note for a wide file whose first column had no name and was read as the ids (R's `write.csv()` row names).
func unnamedIDColumnNote(_ path: String) -> String {
    "note: \(path): the first column has no name (as R's write.csv writes row names): read as the session ids"
}

/// Says so on stderr when `report`'s file had an unnamed first column read as the ids.
func noteUnnamedIDColumn(_ report: ResponseFileReport) {
    if report.idColumn == "" { printError(unnamedIDColumnNote(report.path)) }
}

/// Reads a bank (`ItemBank.load(csv:)`) and, when its header is a foreign layout (mirt, catR, girth), says on
/// stderr how it was read, e.g. `note: bank.csv: read as mirt slope–intercept (a1, d, g): b = −d/a1; c = g`.
func loadBank(_ path: String, requirePositiveSlopes: Bool = true, categoryItems: CategoryItemReading = .refused) throws -> ItemBank {
    let bank = try ItemBank.load(.path(path), requirePositiveSlopes: requirePositiveSlopes, categoryItems: categoryItems, naming: .option)
    if let layout = bank.layout, !layout.isNative {
        printError("note: \(path): read as \(layout.name)" + (layout.conversion.isEmpty ? "" : ": \(layout.conversion)"))
    }
    return bank
}

/// Reads a bifactor bank (`BifactorBank.load(csv:)`) and, when it is in mirt's layout, says so on stderr as
/// `loadBank` does for the unidimensional ones.
func loadBifactorBank(_ path: String, requirePositiveGeneralSlopes: Bool = false) throws -> BifactorBank {
    let bank = try BifactorBank.load(csv: path, requirePositiveGeneralSlopes: requirePositiveGeneralSlopes)
    if bank.layout != "iqscore" { printError("note: \(path): read as \(bank.layout)") }
    return bank
}

/// Where a multiple-group command's groups come from: a column of the response file (`--group-column`), or one file
/// per group (`--group-file GROUP=PATH`, repeatable; the positional file then holds the reference group's
/// responses).
struct GroupSource {
    var responses: String
    var groupColumn: String?
    var groupFiles: [String]
    var reference: String

    /// Whether groups were asked for at all.
    var isGiven: Bool { groupColumn != nil || !groupFiles.isEmpty }

    /// The files, the positional one first as the reference's (nil with --group-column).
    func files() throws -> [(group: String, path: String)]? {
        guard !groupFiles.isEmpty else { return nil }
        guard groupColumn == nil else { throw ValidationError("--group-column and --group-file are two ways to give the groups; use one") }
        switch GroupFiles.parse(["\(reference)=\(responses)"] + groupFiles) {
        case .failure(let problem):
            throw ValidationError("--group-file \(problem) (the positional file is the reference group \(TextFidelity.quoted(reference))'s)")
        case .success(let files): return files
        }
    }

    /// The responses, the first file's read report and each person's group label.
    func load(options: ResponseFileOptions, maxMemoryBytes: Int?, threads: Int) throws -> (ResponseMatrix, ResponseFileReport, [String]) {
        if let files = try files() {
            let (data, labels, reports) = try GroupFiles.load(files, options: options, maxMemoryBytes: maxMemoryBytes, threads: threads)
            reports.forEach(noteUnnamedIDColumn)
            return (data, reports[0], labels)
        }
        guard let groupColumn else {
            throw ValidationError("give the groups: --group-column COLUMN, or --group-file GROUP=PATH per non-reference group")
        }
        var fileOptions = options
        if !fileOptions.ignoredColumns.contains(groupColumn) { fileOptions.ignoredColumns.append(groupColumn) }
        let (data, report) = try ResponseMatrix.load(csv: responses, options: fileOptions, maxMemoryBytes: maxMemoryBytes, threads: threads)
        noteUnnamedIDColumn(report)
        return (data, report, try PersonGroups.load(csv: responses, column: groupColumn, options: fileOptions, report: report, matrix: data))
    }

    /// The summaries' record of the groups' source: the group files by group (nil with a group column).
    var filesByGroup: [String: String]? { (try? files())?.reduce(into: [String: String]()) { $0[$1.group] = $1.path } }
}
