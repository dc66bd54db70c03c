import Foundation
import Testing
import TestSupport

// Issue 10, "hostile input": no option, JSON value or file content may crash the binary (a trap, an integer
// conversion, an allocation of hundreds of gigabytes) or be accepted silently when it is nonsense. Each case
// runs the real binary; `IQScoreCLI.run` fails the test when it dies of a signal.

@Suite("Hostile input: a located error or a usage error, never a crash", .timeLimit(.minutes(10)))
struct HostileInputCLITests {
    /// A workspace with a 60-item, three-domain 2PL bank (`bank.csv`) and 20 long-layout sessions (`s.csv`).
    func workspace() throws -> CLIWorkspace {
        let ws = try CLIWorkspace()
        let r = try ws.run(
            "simulate", "--model", "2pl", "--items", "60", "--persons", "20", "--items-per-session", "12",
            "--domains", "a,b,c", "--layout", "long", "--out", "s.csv", "--bank-out", "bank.csv", "--seed", "3")
        #expect(r.status == 0, "\(r.stderr)")
        return ws
    }

    /// Runs iqscore and expects a usage error: exit 64, `message` in the "Error: …" line, nothing written.
    func expectUsageError(_ ws: CLIWorkspace, _ arguments: [String], _ message: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try ws.contents()
        let r = try IQScoreCLI.run(arguments, in: ws.directory, sourceLocation: sourceLocation)
        #expect(r.status == 64, "\(arguments.joined(separator: " ")): \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderrLines.first == "Error: " + message, sourceLocation: sourceLocation)
        #expect(try ws.contents() == before, sourceLocation: sourceLocation)
    }

    /// Runs iqscore and expects exit 1 with exactly `stderr`.
    func expectFailure(_ ws: CLIWorkspace, _ arguments: [String], _ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try IQScoreCLI.run(arguments, in: ws.directory, sourceLocation: sourceLocation)
        #expect(r.status == 1, "\(arguments.joined(separator: " ")): \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr == stderr, sourceLocation: sourceLocation)
    }

    @Test("a confidence level whose (1 + c)/2 rounds to 1 is refused (it trapped in the normal quantile)")
    func confidence() throws {
        let ws = try workspace()
        try expectUsageError(
            ws, ["score", "s.csv", "--bank", "bank.csv", "--out", "o.csv", "--confidence", "0.9999999999999999"],
            "--confidence must be in (0, 0.9999999999], got 0.9999999999999999")
        let r = try ws.run("score", "s.csv", "--bank", "bank.csv", "--out", "o.csv", "--confidence", "0.9999999999")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("100% intervals"))
    }

    @Test("--threads is capped at 256 in every command that has it (100000 aborted allocating ~800 GB)")
    func threads() throws {
        let ws = try workspace()
        try ws.write("cat.json", #"{"max_items": 10, "exposure_target": null}"#)
        let message = "--threads must be 1…256, got 100000"
        try expectUsageError(ws, ["score", "s.csv", "--bank", "bank.csv", "--out", "o.csv", "--threads", "100000"], message)
        try expectUsageError(ws, ["calibrate", "s.csv", "--out", "b.csv", "--threads", "100000"], message)
        try expectUsageError(ws, ["cat", "simulate", "--bank", "bank.csv", "--config", "cat.json", "--out", "r.json", "--threads", "100000"], message)
        try expectUsageError(ws, ["score", "s.csv", "--bank", "bank.csv", "--out", "o.csv", "--threads", "0"], "--threads must be 1…256, got 0")
    }

    @Test("blueprints: overflowing weights, absurd sizes, counts that overflow a sum, unknown keys")
    func blueprints() throws {
        let ws = try workspace()
        let run = ["assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form.csv"]
        try ws.write("bp.json", #"{"length": 25, "domain_weights": {"a": 1e308, "b": 1e308}}"#)
        try expectFailure(ws, run, "bp.json: error: domain_weights must be non-negative numbers with a positive, finite sum\n")
        try ws.write("bp.json", #"{"length": 1000000000000000, "forms": 1000000000000}"#)
        try expectFailure(ws, run, "bp.json: error: length must be 1…10000, got 1000000000000000; forms must be 1…1000, got 1000000000000\n")
        try ws.write("bp.json", #"{"length": 5, "domain_counts": {"a": 9223372036854775807, "b": 1}}"#)
        try expectFailure(ws, run, #"bp.json: error: domain_counts for "a" must be 0…5, got 9223372036854775807"# + "\n")
        try ws.write("bp.json", "{\"length\": 6,\n \"target_information\": [{\"theta\": 0, \"informaton\": 5}]}")
        try expectFailure(ws, run, #"bp.json:2:38: error: unknown key "informaton" in target_information[0] (known: theta, information)"# + "\n")
        try ws.write("bp.json", #"{"length": 6, "length": 7}"#)
        try expectFailure(ws, run, #"bp.json:1:15: error: key "length" appears twice in one object (first on line 1)"# + "\n")
        try ws.write("bp.json", #"{"length": 6}"#)
        try expectUsageError(ws, run + ["--forms", "1000000000000"], "--forms must be 1…1000, got 1000000000000")
        try expectUsageError(
            ws, run + ["--simulate", "1000000000000", "--simulation-out", "sim.json"], "--simulate must be 1…1000000, got 1000000000000")
        try expectUsageError(
            ws, run + ["--simulate", "10", "--simulation-out", "sim.json", "--se-target", "nan"], "--se-target must be in (0, 10], got nan")
        #expect(!ws.exists("form.csv"))
    }

    @Test("exposure and exclusion CSVs: strict numbers, one row per item, one column per name")
    func assemblyCSVs() throws {
        let ws = try workspace()
        try ws.write("bp.json", #"{"length": 6, "max_exposure": 0.5}"#)
        let run = ["assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form.csv"]
        try ws.write("x.csv", "item_id,exposure_rate\ni0001,0x1p-2\n")
        try expectFailure(ws, run + ["--exposure", "x.csv"], "x.csv:2:2: error: exposure_rate '0x1p-2' must be a number in [0, 1]\n")
        try ws.write("x.csv", "item_id,exposure_rate\ni0001,0.1\ni0001,0.9\n")
        try expectFailure(ws, run + ["--exposure", "x.csv"], "x.csv:3:1: error: item_id 'i0001' already listed on line 2\n")
        try ws.write("seen.csv", "item_id,item_id\ni0001,i0002\n")
        try expectFailure(
            ws, run + ["--exclude", "seen.csv"], "seen.csv:1:2: error: column 'item_id' appears twice in the header (columns 1 and 2)\n")
    }

    @Test("norms: unknown keys and values outside the θ scale's plausible range")
    func norms() throws {
        let ws = try workspace()
        let run = ["score", "s.csv", "--bank", "bank.csv", "--out", "o.csv", "--norms", "norms.json"]
        try ws.write("norms.json", #"{"name": "a", "version": "1", "mean": 1e300, "sd": 1e-300}"#)
        try expectFailure(ws, run, "norms.json: error: norms mean must be in [-10, 10], got 1e+300; norms sd must be in [0.01, 10], got 1e-300\n")
        try ws.write("norms.json", #"{"name": "a", "version": "1", "mean": 100, "sd": 15}"#)
        try expectFailure(ws, run, "norms.json: error: norms mean must be in [-10, 10], got 100.0; norms sd must be in [0.01, 10], got 15.0\n")
        try ws.write("norms.json", #"{"name": "a", "version": "1", "mean": 0, "sd": 1, "SD": 2}"#)
        try expectFailure(ws, run, #"norms.json:1:51: error: unknown key "SD" (known: name, version, mean, sd)"# + "\n")
        #expect(!ws.exists("o.csv"))
    }

    @Test("CAT rules: values that would allocate or make no sense")
    func catRules() throws {
        let ws = try workspace()
        let run = ["cat", "simulate", "--bank", "bank.csv", "--config", "cat.json", "--out", "r.json"]
        try ws.write("cat.json", #"{"max_items": 1000000000000000, "prior_mean": 1e300, "exposure_calibration_simulees": 1000000000000}"#)
        try expectFailure(
            ws, run,
            "cat.json: error: max_items must be 1…10000, got 1000000000000000; exposure_calibration_simulees must be 100…1000000, got 1000000000000; prior_mean must be in [-10, 10], got 1e+300\n"
        )
        try ws.write("cat.json", #"{"max_items": 10}"#)
        try expectUsageError(ws, run + ["--theta-mean", "nan"], "--theta-mean must be in [-10, 10], got nan")
        try expectUsageError(ws, run + ["--simulees", "1000000000000"], "--simulees must be 1…1000000, got 1000000000000")
        #expect(!ws.exists("r.json"))
    }

    @Test("bank values: hexadecimal, infinite, huge, or a model the parameters contradict")
    func banks() throws {
        let ws = try workspace()
        let run = ["score", "s.csv", "--bank", "b.csv", "--out", "o.csv"]
        for (value, message) in [
            ("0x1p3", "a '0x1p3' is not a number"), ("inf", "a 'inf' is not a number"), ("nan", "a 'nan' is not a number"),
            ("1e400", "a '1e400' is not a number"), ("1e300", "a = 1e+300; allowed 0 < a ≤ 50 (scoring needs a positive slope)")
        ] {
            try ws.write("b.csv", "item_id,a,b\ni0001,\(value),0\n")
            try expectFailure(ws, run, "b.csv:2:2: error: item 'i0001': \(message)\n")
        }
        try ws.write("b.csv", "item_id,model,a,b,c\ni0001,rasch,1.3,0,0\n")
        try expectFailure(
            ws, run,
            "b.csv:2:3: error: item 'i0001': a = 1.3, but a rasch item has a = 1: the model column contradicts the parameters (use model 1pl or 2pl for other slopes)\n"
        )
        try ws.write("b.csv", "item_id,a,b,a\ni0001,1,0,2\n")
        try expectFailure(ws, run, "b.csv:1:4: error: column 'a' appears twice in the header (columns 2 and 4)\n")
        #expect(!ws.exists("o.csv"))
    }

    @Test("an ML standard error of 1e163 (one item far from θ̂) is written, not a trap in the number formatter")
    func hugeStandardError() throws {
        let ws = try CLIWorkspace()
        try ws.write("b.csv", "item_id,a,b\nq1,7,100\n")
        try ws.write("s.csv", "session_id,item_id,response\ns1,q1,0\n")
        for method in ["ml", "wle"] {
            let r = try ws.run("score", "s.csv", "--bank", "b.csv", "--out", "o.csv", "--method", method)
            #expect(r.status == 0, "\(r.stderr)")
            let row = try ws.csvRows("o.csv")[1]
            #expect(row[4].hasSuffix(".0000") && row[4].count > 100, "\(row[4])")
            #expect(row[10].contains("low_precision"))
        }
    }

    @Test("command-line numbers: nan, inf, hexadecimal and huge values are refused with the allowed range")
    func options() throws {
        let ws = try workspace()
        let score = ["score", "s.csv", "--bank", "bank.csv", "--out", "o.csv"]
        try expectUsageError(
            ws, score + ["--prior-sd", "nan", "--prior-mean", "inf"],
            "--prior-sd must be in [0.01, 100], got nan; --prior-mean must be in [-10, 10], got inf")
        try expectUsageError(ws, score + ["--theta-bound", "0x1p8"], "--theta-bound must be in [1, 20], got 256.0")
        try expectUsageError(
            ws, score + ["--low-precision-se", "inf", "--min-items", "0"],
            "--low-precision-se must be in (0, 100], got inf; --min-items must be 1…10000, got 0")
        try expectUsageError(ws, ["calibrate", "s.csv", "--out", "b.csv", "--tolerance", "nan"], "--tolerance must be in (0, 1), got nan")
        try expectUsageError(
            ws, ["calibrate", "s.csv", "--out", "b.csv", "--max-cycles", "1000000000"], "--max-cycles must be 1…100000, got 1000000000")
        try expectUsageError(
            ws, ["calibrate", "s.csv", "--out", "b.csv", "--model", "3pl", "--guessing-prior", "beta:inf,17"],
            "--guessing-prior must be 'beta:ALPHA,BETA', 'options:K', 'options' or 'none'; got 'beta:inf,17'")
        try expectUsageError(
            ws, ["calibrate", "s.csv", "--out", "b.csv", "--model", "3pl", "--guessing-prior", "beta:5000,17"],
            "--guessing-prior: the Beta prior's alpha must be in [1, 1000], got 5000.0")
        try expectUsageError(
            ws, ["calibrate", "s.csv", "--out", "b.csv", "--model", "3pl", "--guessing-prior", "options:1000"],
            "--guessing-prior options:K must be 2…100, got 1000")
        try expectUsageError(
            ws, ["calibrate", "s.csv", "--out", "b.csv", "--slope-prior", "lognormal:0,1e300"],
            "--slope-prior: the log-normal prior's SDLOG must be in (0, 10], got 1e+300")
        // simulate: a NaN Beta shape trapped in the Gamma sampler's precondition.
        let simulate = ["simulate", "--items", "10", "--persons", "10", "--out", "x.csv"]
        try expectUsageError(ws, simulate + ["--model", "3pl", "--guessing-alpha", "nan"], "--guessing-alpha must be in [0.5, 1000], got nan")
        try expectUsageError(
            ws, simulate + ["--theta-sd", "inf", "--common-slope=-1"],
            "--common-slope must be in (0, 20], got -1.0; --theta-sd must be in (0, 10], got inf")
        try expectUsageError(
            ws, ["simulate", "--items", "1000000000000", "--persons", "10", "--out", "x.csv"], "--items must be 1…100000, got 1000000000000")
        try expectUsageError(
            ws, ["analyze", "s.csv", "--bank", "bank.csv", "--out", "a.csv", "--min-slope", "nan", "--p-range", "0,inf"],
            "--p-range must be LOW,HIGH (two numbers), got '0,inf'")
        try expectUsageError(
            ws, ["analyze", "s.csv", "--bank", "bank.csv", "--out", "a.csv", "--min-slope", "nan", "--mnsq-range", "0.5,1e300"],
            "--min-slope must be in [0, 50], got nan; --mnsq-range must be LOW,HIGH with LOW < HIGH, both in [0, 100]; got 0.5,1e+300")
        try expectUsageError(
            ws, ["link", "--reference", "bank.csv", "--new", "bank.csv", "--out", "l.csv", "--theta-bound", "nan"],
            "--theta-bound must be in [1, 20], got nan")
    }

    @Test("one column cannot be two of the session, item and response columns")
    func responseColumns() throws {
        let ws = try workspace()
        try expectUsageError(
            ws, ["score", "s.csv", "--bank", "bank.csv", "--out", "o.csv", "--item-column", "session_id"],
            "--session-column and --item-column name the same column 'session_id'; the session, item and response columns must differ")
        try expectUsageError(ws, ["calibrate", "s.csv", "--out", "b.csv", "--response-column", " "], "--response-column must name a column, got ' '")
    }

    @Test("link: constants that carry an item beyond the bank ranges are an error, not an unreadable bank")
    func implausibleLink() throws {
        let ws = try CLIWorkspace()
        try ws.write("old.csv", "item_id,a,b\nq1,1,0\nq2,1,1\nq3,1,2\n")
        try ws.write("new.csv", "item_id,a,b\nq1,50,-100\nq2,0.0001,100\nq3,50,100\n")
        let r = try ws.run("link", "--reference", "old.csv", "--new", "new.csv", "--out", "linked.csv", "--method", "mean-sigma")
        #expect(r.status == 1)
        #expect(
            r.stderr.hasPrefix(
                "error: linking new.csv onto old.csv gives θ_old = 0.00866025 · θ_new + 0.711325, which puts 2 items outside the ranges a bank may hold: item 'q1': a = 5773.5; allowed 0 < a ≤ 50"
            ))
        #expect(!ws.exists("linked.csv"))
    }
}
