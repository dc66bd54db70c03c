import Foundation
import Testing
import TestSupport

/// Response times end to end: `simulate --times` in both layouts, `calibrate --time-column`/`--time-suffix`
/// recovering the simulated speed–accuracy model, the bank's time columns read back, and bad time cells named.
@Suite("iqscore response times end to end", .timeLimit(.minutes(10)))
struct ResponseTimesCLITests {
    @Test("simulate --times, calibrate --time-column and --time-suffix: the same model recovered from both layouts")
    func simulateAndCalibrate() throws {
        let ws = try CLIWorkspace()
        for layout in ["long", "wide"] {
            let sim = try ws.run(
                "simulate", "--model", "2pl", "--items", "20", "--persons", "2000", "--times", "--speed-sd", "0.4",
                "--speed-correlation", "0.5", "--layout", layout, "--seed", "9", "--out", "\(layout).csv",
                "--bank-out", "truth.csv", "--thetas-out", "thetas.csv")
            #expect(sim.status == 0, "\(sim.stderr)")
            #expect(sim.stderrLines.contains("response times: speed SD 0.400, ability-speed correlation 0.500"))
            let cal = try ws.run(
                ["calibrate", "\(layout).csv", "--out", "bank_\(layout).csv"]
                    + (layout == "long" ? ["--time-column", "seconds"] : ["--time-suffix", "_time"]))
            #expect(cal.status == 0, "\(cal.stderr)")
            #expect(cal.stderrLines.contains("response times: 40,000 timed responses"))
            let bank = try ws.csvRows("bank_\(layout).csv"), truth = try ws.csvRows("truth.csv")
            let header = bank[0]
            for column in ["time_intensity", "time_discrimination", "se_time_intensity", "se_time_discrimination", "speed_sd", "speed_correlation"] {
                #expect(header.contains(column), "\(column)")
            }
            let beta = header.firstIndex(of: "time_intensity")!, alpha = header.firstIndex(of: "time_discrimination")!
            let tb = truth[0].firstIndex(of: "time_intensity")!, ta = truth[0].firstIndex(of: "time_discrimination")!
            for (row, actual) in zip(bank.dropFirst(), truth.dropFirst()) {
                #expect(abs(Double(row[beta])! - Double(actual[tb])!) < 0.05, "β of \(row[0])")
                #expect(abs(Double(row[alpha])! - Double(actual[ta])!) < 0.2, "α of \(row[0])")
            }
            let sd = Double(bank[1][header.firstIndex(of: "speed_sd")!])!, rho = Double(bank[1][header.firstIndex(of: "speed_correlation")!])!
            #expect(abs(sd - 0.4) < 0.03 && abs(rho - 0.5) < 0.06, "σ_τ \(sd), ρ \(rho)")
            let summary = try ws.json("bank_\(layout).summary.json")
            let times = try #require(summary["response_times"] as? [String: Any])
            #expect(times["timed_responses"] as? Int == 40_000)
            #expect((times["theta_sd_ratio"] as? Double).map { $0 < 1 } == true)
            // The bank scores as any bank (its time columns read back), and with the times.
            if layout == "long" {
                let score = try ws.run("score", "long.csv", "--bank", "bank_long.csv", "--out", "scores.csv")
                #expect(score.status == 0, "\(score.stderr)")
                let timed = try ws.run("score", "long.csv", "--bank", "bank_long.csv", "--out", "timed.csv", "--time-column", "seconds")
                #expect(timed.status == 0, "\(timed.stderr)")
                #expect(
                    timed.stderrLines.contains { $0.hasPrefix("response times: nt10 rapid-guess thresholds; time flags: rapid_guessing ") },
                    "\(timed.stderr)")
                let plain = try ws.csvRows("scores.csv"), withTimes = try ws.csvRows("timed.csv")
                #expect(Array(withTimes[0].prefix(plain[0].count)) == plain[0] && withTimes[0].count == plain[0].count + 9)
                let se = plain[0].firstIndex(of: "se")!, nTimed = withTimes[0].firstIndex(of: "n_timed")!
                // ρ = 0.5: the times narrow the posteriors (on average, and nine in ten at least; a prior mean moved
                // to where the items inform less can widen one).
                let pairs = Array(zip(plain.dropFirst(), withTimes.dropFirst()))
                let meanWithout = pairs.reduce(0) { $0 + Double($1.0[se])! }, meanWith = pairs.reduce(0) { $0 + Double($1.1[se])! }
                #expect(meanWith < meanWithout && pairs.filter { Double($0.1[se])! <= Double($0.0[se])! }.count >= pairs.count * 9 / 10)
                #expect(withTimes.dropFirst().allSatisfy { $0[nTimed] == "20" })
                let manifest = try ws.json("timed.summary.json")
                #expect((manifest["response_times"] as? [String: Any])?["time_column"] as? String == "seconds")
                // A bank without a time model cannot score times; the options need times.
                let rows = try ws.csvRows("bank_long.csv")
                let keep = rows[0].indices.filter {
                    !["time_intensity", "time_discrimination", "se_time_intensity", "se_time_discrimination", "speed_sd", "speed_correlation"]
                        .contains(rows[0][$0])
                }
                try ws.write("untimed.csv", rows.map { r in keep.map { r[$0] }.joined(separator: ",") }.joined(separator: "\n") + "\n")
                let refused = try ws.run("score", "long.csv", "--bank", "untimed.csv", "--out", "u.csv", "--time-column", "seconds")
                #expect(refused.status == 64 && refused.stderr.contains("untimed.csv has none"), "\(refused.stderr)")
                // Suspected items: the preknowledge columns, and an unknown id named with its line.
                try ws.write("suspected.txt", "item_id\ni0001\ni0002\n\ni0003\n")
                let pk = try ws.run(
                    "score", "long.csv", "--bank", "bank_long.csv", "--out", "pk.csv", "--time-column", "seconds", "--compromised", "suspected.txt")
                #expect(pk.status == 0 && pk.stderr.contains("preknowledge test on the items of suspected.txt"), "\(pk.stderr)")
                let pkRows = try ws.csvRows("pk.csv")
                #expect(Array(pkRows[0].suffix(4)) == ["pk_answered", "pk_lr", "pk_speed_z", "pk_p"] && pkRows[1][pkRows[0].count - 4] == "3")
                try ws.write("unknown.txt", "i0001\nq99\n")
                let unknown = try ws.run(
                    "score", "long.csv", "--bank", "bank_long.csv", "--out", "u.csv", "--time-column", "seconds", "--compromised", "unknown.txt")
                #expect(unknown.status != 0 && unknown.stderr.contains("unknown.txt:2:1: error: item 'q99' is not in the bank"), "\(unknown.stderr)")
                let lonely = try ws.run("score", "long.csv", "--bank", "bank_long.csv", "--out", "u.csv", "--effort-moderated")
                #expect(lonely.status == 64 && lonely.stderr.contains("go with response times"), "\(lonely.stderr)")
            }
        }
        #expect(try ws.csvRows("thetas.csv")[0] == ["session_id", "theta", "speed"])
    }

    @Test("bad time cells are named with file, line, column and what is allowed; zero and absurd times are dropped and counted")
    func badTimes() throws {
        let ws = try CLIWorkspace()
        var rows = ["session_id,item_id,response,seconds"]
        for s in 1...40 { for i in 1...4 { rows.append("s\(s),q\(i),\((s + i) % 3 == 0 ? 0 : 1),\(10 + s % 7 + i)") } }
        try ws.write("good.csv", rows.joined(separator: "\n") + "\n")
        var bad = rows
        bad[5] = "s2,q1,1,-3"
        bad[9] = "s3,q1,0,fast"
        try ws.write("bad.csv", bad.joined(separator: "\n") + "\n")
        let r = try ws.run("calibrate", "bad.csv", "--time-column", "seconds", "--out", "b.csv")
        #expect(r.status != 0)
        #expect(r.stderr.contains("bad.csv:6:4: error: seconds '-3' is not a response time; allowed: a number of seconds"), "\(r.stderr)")
        #expect(r.stderr.contains("bad.csv:10:4: error: seconds 'fast' is not a response time"), "\(r.stderr)")
        #expect(!ws.exists("b.csv"))
        var dropped = rows
        dropped[3] = "s1,q3,1,0"
        dropped[7] = "s2,q3,1,100000"
        try ws.write("dropped.csv", dropped.joined(separator: "\n") + "\n")
        let d = try ws.run("calibrate", "dropped.csv", "--time-column", "seconds", "--out", "d.csv", "--summary-json", "d.json")
        #expect(d.status == 0 || d.status == 3, "\(d.stderr)")
        #expect(d.stderr.contains("; 2 times of 0 or more than a day dropped (first on line 4)"), "\(d.stderr)")
        let summary = try ws.json("d.json")
        #expect((summary["response_times"] as? [String: Any])?["dropped_times"] as? Int == 2)
        let missing = try ws.run("calibrate", "good.csv", "--time-column", "duration", "--out", "m.csv")
        #expect(missing.stderr.contains("no time column 'duration' in the header"), "\(missing.stderr)")
        let both = try ws.run("calibrate", "good.csv", "--time-column", "seconds", "--time-suffix", "_t", "--out", "m.csv")
        #expect(both.status == 64 && both.stderr.contains("give one"), "\(both.stderr)")
        let rasch = try ws.run("calibrate", "good.csv", "--time-column", "seconds", "--model", "rasch", "--out", "m.csv")
        #expect(rasch.status == 64 && rasch.stderr.contains("--model 1pl, 2pl or 3pl"), "\(rasch.stderr)")
        try ws.write("wide.csv", "id,q1,q2\na,1,0\nb,0,1\n")
        let noPairs = try ws.run("calibrate", "wide.csv", "--time-suffix", "_time", "--out", "m.csv")
        #expect(noPairs.stderr.contains("no column is an item's name followed by it"), "\(noPairs.stderr)")
    }
}

/// `simulate --days --leak-items --rapid-guessers` and `monitor`: the leaked items alarm, from the leak day.
@Suite("iqscore monitor end to end", .timeLimit(.minutes(10)))
struct MonitorCLITests {
    @Test("a planted leak is found: alarms on the leaked items within a week, the change dated to the leak day; exit 4")
    func plantedLeak() throws {
        let ws = try CLIWorkspace()
        let sim = try ws.run(
            "simulate", "--items", "60", "--items-per-session", "20", "--persons", "12000", "--times", "--days", "40",
            "--leak-items", "3", "--leak-day", "25", "--rapid-guessers", "0.02", "--layout", "long", "--seed", "4",
            "--out", "sessions.csv", "--bank-out", "truth.csv", "--thetas-out", "truth_sessions.csv")
        #expect(sim.status == 0, "\(sim.stderr)")
        #expect(sim.stderrLines.contains { $0.hasPrefix("dates: 40 days from 2026-01-01; 3 items leaked on 2026-01-26 (") })
        let truth = try ws.csvRows("truth.csv")
        let leakedColumn = try #require(truth[0].firstIndex(of: "leaked_on"))
        let leaked = Set(truth.dropFirst().filter { $0[leakedColumn] == "2026-01-26" }.map { $0[0] })
        #expect(leaked.count == 3)
        let sessions = try ws.csvRows("truth_sessions.csv")
        #expect(sessions[0] == ["session_id", "theta", "speed", "rapid_guesses", "preknowledge"])
        #expect(sessions.dropFirst().contains { $0[4] == "1" } && sessions.dropFirst().contains { Int($0[3])! > 0 })
        // The bank from the sessions before the leak, as a programme calibrates before it monitors.
        let rows = try ws.read("sessions.csv").split(separator: "\n", omittingEmptySubsequences: true)
        try ws.write("before.csv", ([rows[0]] + rows.dropFirst().filter { $0.suffix(10) < "2026-01-26" }).joined(separator: "\n") + "\n")
        let cal = try ws.run("calibrate", "before.csv", "--time-column", "seconds", "--out", "bank.csv")
        #expect(cal.status == 0, "\(cal.stderr)")
        // The 2% rapid guessers pull ρ (0.3) down; leaving their guesses out restores it.
        let moderated = try ws.run("calibrate", "before.csv", "--time-column", "seconds", "--exclude-rapid-guesses", "--out", "moderated.csv")
        #expect(moderated.status == 0, "\(moderated.stderr)")
        let all = try #require(try ws.json("bank.summary.json")["response_times"] as? [String: Any])
        let kept = try #require(try ws.json("moderated.summary.json")["response_times"] as? [String: Any])
        #expect((kept["rapid_guesses_removed"] as? Int ?? 0) > 1000 && all["rapid_guesses_removed"] == nil)
        let rhoAll = try #require(all["correlation"] as? Double), rhoKept = try #require(kept["correlation"] as? Double)
        #expect(abs(rhoKept - 0.3) < abs(rhoAll - 0.3) && abs(rhoKept - 0.3) < 0.05, "ρ \(rhoAll) with the guesses, \(rhoKept) without")
        let mon = try ws.run(
            "monitor", "sessions.csv", "--bank", "bank.csv", "--date-column", "date", "--time-column", "seconds", "--out", "monitor.csv")
        #expect(mon.status == 4, "\(mon.stderr)")
        let summary = try ws.json("monitor.summary.json")
        let alarms = try #require(summary["alarms"] as? [[String: String]])
        for item in leaked {
            let first = try #require(alarms.first { $0["item_id"] == item }, "leaked item \(item) never alarmed: \(mon.stderr)")
            #expect(first["alarm_date"]! <= "2026-02-02", "\(item) alarmed on \(first["alarm_date"]!)")
            #expect(("2026-01-23"..."2026-01-29").contains(first["change_date"]!), "\(item) change from \(first["change_date"]!)")
        }
        #expect(Set(alarms.map { $0["item_id"]! }).subtracting(leaked).count <= 1, "\(mon.stderr)")
        let out = try ws.csvRows("monitor.csv")
        #expect(
            out[0] == [
                "item_id", "date", "n", "n_timed", "p_correct", "response_residual", "time_residual", "statistic", "cusum", "alarm",
                "window_n", "window_p_correct", "window_time_intensity", "time_intensity"
            ])
        // The report's items-over-time section: the alarmed items' series.
        let report = try ws.run("report", "before.csv", "--bank", "bank.csv", "--monitor", "monitor.csv", "--out", "report.html")
        #expect(report.status == 0, "\(report.stderr)")
        let html = try ws.read("report.html")
        #expect(html.contains("<h2 id=\"monitor\">Items over time</h2>"))
        for item in leaked { #expect(html.contains("<tr class=\"flag\"><td>\(item)</td>"), "\(item) not in the report's alarms") }
        #expect(!html.contains("NaN") && !html.contains("inf\""))
        // Without times the monitor watches correctness alone.
        let plain = try ws.run("monitor", "sessions.csv", "--bank", "bank.csv", "--date-column", "date", "--out", "plain.csv")
        #expect(plain.stderr.contains("(responses only: no times or no time model in the bank)"), "\(plain.stderr)")
        // A bad date is named.
        try ws.write("bad.csv", "session_id,item_id,response,date\na,i0001,1,2026-02-30\na,i0002,0,2026-02-30\n")
        let bad = try ws.run("monitor", "bad.csv", "--bank", "bank.csv", "--date-column", "date", "--out", "x.csv")
        #expect(bad.status == 1 && bad.stderr.contains("bad.csv:2:4: error: date '2026-02-30' is not a date YYYY-MM-DD"), "\(bad.stderr)")
    }
}
