import Foundation
import Testing

/// Response times end to end: `simulate --times` in both layouts, `calibrate --time-column`/`--time-suffix`
/// recovering the simulated speed–accuracy model, the bank's time columns read back, and bad time cells named.
@Suite("iqscore response times end to end", .timeLimit(.minutes(10)))
struct ResponseTimesCLITests {
    @Test("simulate --times, calibrate --time-column and --time-suffix: the same model recovered from both layouts")
    func simulateAndCalibrate() throws {
        let ws = try CLIWorkspace()
        for layout in ["long", "wide"] {
            let sim = try ws.run("simulate", "--model", "2pl", "--items", "20", "--persons", "2000", "--times", "--speed-sd", "0.4",
                                 "--speed-correlation", "0.5", "--layout", layout, "--seed", "9", "--out", "\(layout).csv",
                                 "--bank-out", "truth.csv", "--thetas-out", "thetas.csv")
            #expect(sim.status == 0, "\(sim.stderr)")
            #expect(sim.stderrLines.contains("response times: speed SD 0.400, ability-speed correlation 0.500"))
            let cal = try ws.run(["calibrate", "\(layout).csv", "--out", "bank_\(layout).csv"] + (layout == "long" ? ["--time-column", "seconds"] : ["--time-suffix", "_time"]))
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
            // The bank scores as any bank (its time columns read back).
            if layout == "long" {
                let score = try ws.run("score", "long.csv", "--bank", "bank_long.csv", "--out", "scores.csv")
                #expect(score.status == 0, "\(score.stderr)")
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
