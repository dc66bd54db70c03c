import Foundation
import Testing
import TestSupport

@Suite("iqscore calibrate --fixed (online calibration) end to end", .timeLimit(.minutes(10)))
struct CalibrateFixedCLITests {
    @Test("pretest items calibrated onto a fixed bank: exit 0, bank values unchanged, new items added, JSON keys")
    func fixedBank() throws {
        let ws = try CLIWorkspace()
        // 30 items, θ ~ N(0.5, 1.2²); the first 24 items form the operational bank (true values), the last 6 are new.
        let sim = try ws.run(
            "simulate", "--model", "2pl", "--items", "30", "--persons", "3000", "--theta-mean", "0.5",
            "--theta-sd", "1.2", "--seed", "17", "--out", "responses.csv", "--bank-out", "true_bank.csv")
        #expect(sim.status == 0, "\(sim.stderr)")
        let truth = try ws.csvRows("true_bank.csv")
        // The bank: 24 operational rows plus one retired item nobody answered.
        let bankRows = truth.prefix(25).map { $0.joined(separator: ",") } + ["retired,2pl,1.300000,-0.400000,0.000000,,,,,,"]
        try ws.write("BANK.csv", bankRows.joined(separator: "\n") + "\n")

        let cal = try ws.run(
            "calibrate", "responses.csv", "--model", "2pl", "--fixed", "BANK.csv", "--out", "NEW_BANK.csv",
            "--summary-json", "summary.json")
        #expect(cal.status == 0, "\(cal.stderr)")
        #expect(cal.stdout.isEmpty)
        #expect(
            cal.stderrLines.contains(
                "fixed: 24 items held at their values in BANK.csv, 6 free items estimated on its scale; 1 bank item not in the data (carried over)"))
        #expect(cal.stderrLines.contains { $0.hasPrefix("latent distribution: mean 0.") && $0.contains(", SD 1.") })
        #expect(cal.stderr.contains("log-likelihood") && cal.stderr.contains("(14 parameters)"))
        #expect(cal.stderr.contains("wrote NEW_BANK.csv (31 items) and summary.json"))

        let out = try ws.csvRows("NEW_BANK.csv")
        #expect(out.first == CLITests.bankHeader.split(separator: ",").map(String.init))
        #expect(out.count == 1 + 31)
        // Fixed items: a, b, c exactly as in BANK.csv, flagged; this data's counts.
        for (row, bank) in zip(out.dropFirst().prefix(24), truth.dropFirst()) {
            #expect(row[0] == bank[0] && row[1] == "2pl")
            #expect(Array(row[2...4]) == Array(bank[2...4]), "item \(row[0]) changed")
            #expect(row[10] == "fixed")
            #expect(row[8] == "3000")
        }
        // New items: estimated (with SEs), near the truth on the bank's scale, not flagged fixed.
        for (row, actual) in zip(out.dropFirst(25).prefix(6), truth.dropFirst(25)) {
            #expect(row[0] == actual[0] && row[10] != "fixed" && !row[5].isEmpty && !row[6].isEmpty)
            let b = try #require(Double(row[3])), trueB = try #require(Double(actual[3]))
            #expect(abs(b - trueB) < 0.3, "item \(row[0]): b \(b) vs true \(trueB)")
        }
        #expect(out.last == ["retired", "2pl", "1.300000", "-0.400000", "0.000000", "", "", "", "", "", "fixed;not in data"])

        let summary = try ws.json("summary.json")
        for key in [
            "latent_mean", "latent_sd", "latent_mean_se", "latent_sd_se", "fixed_items", "free_items", "fixed_items_not_in_data", "fixed_bank"
        ] {
            #expect(summary[key] != nil, "summary JSON lacks \(key)")
        }
        let mean = try #require(summary["latent_mean"] as? Double), sd = try #require(summary["latent_sd"] as? Double)
        #expect(abs(mean - 0.5) < 0.1 && abs(sd - 1.2) < 0.1, "latent mean \(mean), SD \(sd)")
        #expect((summary["fixed_items"] as? [String])?.count == 24)
        #expect(summary["free_items"] as? [String] == (25...30).map { String(format: "i%04d", $0) })
        #expect(summary["fixed_items_not_in_data"] as? [String] == ["retired"])
        #expect(summary["n_parameters"] as? Int == 14)
        #expect(summary["n_items"] as? Int == 30)
    }

    @Test("a bank that shares no item with the data: exit 1 with the reason, nothing written")
    func disjointBank() throws {
        let ws = try CLIWorkspace()
        try ws.write("responses.csv", "session_id,q1,q2\ns1,1,0\ns2,0,1\ns3,1,1\ns4,0,0\n")
        try ws.write("BANK.csv", "item_id,a,b\nx1,1.0,0.5\n")
        let cal = try ws.run("calibrate", "responses.csv", "--fixed", "BANK.csv", "--min-item-responses", "1", "--out", "NEW.csv")
        #expect(cal.status == 1)
        #expect(cal.stderr.contains("none of the 1 fixed item is answered in the data (x1)"), "\(cal.stderr)")
        #expect(!ws.exists("NEW.csv"))
    }
}
