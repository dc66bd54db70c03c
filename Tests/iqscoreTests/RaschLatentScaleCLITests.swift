import Foundation
import Testing
import TestSupport

/// A Rasch bank carries its latent scale (issue 26, item 1): `calibrate --model rasch` writes the estimated
/// population SD as `latent_sd`, and `score`, `analyze`, `cat simulate` and `link` honour it. Before, the bank
/// held only the item difficulties and every reader assumed N(0, 1): person 1 of ICAR16 scored θ −1.638 / IQ 75
/// (mirt −1.936; the equivalent 1PL bank IQ 79), 1,182 low_precision flags instead of 165.
@Suite("Rasch banks on their latent scale")
struct RaschLatentScaleCLITests {
    static let data = Repository.file("Data").path

    /// mirt 1.47: `mod <- mirt(icar16, 1, itemtype = "Rasch", TOL = 1e-6); fscores(mod, method = "EAP",
    /// full.scores.SE = TRUE)` (61 points on [−6, 6], prior N(0, COV_11) with COV_11 = 1.908214, SD
    /// 1.381381056), rows by person number.
    static let mirtEAP: [Int: (theta: Double, se: Double)] = [
        1: (-1.9357118, 0.6260421), 2: (-1.2444382, 0.5582986), 3: (-0.9430112, 0.5411085), 4: (-1.7042804, 0.6466076),
        5: (-0.6893728, 0.5694262), 6: (1.8637789, 0.6524124), 7: (2.3257191, 0.7100236), 9: (-0.3761533, 0.5276264),
        10: (-0.3403437, 0.5359804), 100: (-0.0974586, 0.5290098), 500: (-0.1855719, 0.5442260), 1500: (0.7827453, 0.5613148)
    ]

    /// Rows of a CSV keyed by its first column.
    static func byID(_ ws: CLIWorkspace, _ name: String) throws -> (header: [String], rows: [String: [String]]) {
        let rows = try ws.csvRows(name)
        return (rows[0], Dictionary(rows.dropFirst().map { ($0[0], $0) }, uniquingKeysWith: { a, _ in a }))
    }

    @Test("ICAR16: the bank carries latent_sd (mirt's 1.3814), θ and SE agree with mirt's Rasch EAPs to 1e-3")
    func icar16AgainstMirt() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run("calibrate", "\(Self.data)/icar16.csv", "--model", "rasch", "--out", "rasch.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let bank = try Self.byID(ws, "rasch.csv")
        let meanColumn = try #require(bank.header.firstIndex(of: "latent_mean")), sdColumn = try #require(bank.header.firstIndex(of: "latent_sd"))
        let sds = Set(bank.rows.values.map { $0[sdColumn] })
        #expect(sds.count == 1 && Set(bank.rows.values.map { $0[meanColumn] }) == ["0.0"])
        let sd = try #require(Double(sds.first!))
        #expect(abs(sd - 1.381381056) < 1e-3, "\(sd)")

        r = try ws.run("score", "\(Self.data)/icar16.csv", "--bank", "rasch.csv", "--out", "scores.csv")
        #expect(r.stderr.contains("prior N(0, 1.38161²)"), "\(r.stderr)")
        #expect(r.stderr.contains("norms calibration-population@1 (θ mean 0, SD 1.38161)"), "\(r.stderr)")
        let scores = try Self.byID(ws, "scores.csv")
        let theta = try #require(scores.header.firstIndex(of: "theta")), se = try #require(scores.header.firstIndex(of: "se"))
        for (person, expected) in Self.mirtEAP {
            let row = try #require(scores.rows[String(person)])
            #expect(abs(Double(row[theta])! - expected.theta) < 1e-3, "person \(person): θ \(row[theta]), mirt \(expected.theta)")
            #expect(abs(Double(row[se])! - expected.se) < 1e-3, "person \(person): SE \(row[se]), mirt \(expected.se)")
        }
        // IQ against the calibration population N(0, σ²): person 1 is (−1.936/1.3816)·15 + 100 = 79.
        #expect(scores.rows["1"]![scores.header.firstIndex(of: "iq")!] == "79")
    }

    @Test("a Rasch bank and its 1PL equivalent on N(0, 1) give θ·σ, the same IQ, interval, flags and fit statistics")
    func equivalentOnePL() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "calibrate", "\(Self.data)/icar16.csv", "--model", "rasch", "--items", "\(Self.data)/icar16_items.csv", "--out", "rasch.csv")
        #expect(r.status == 0, "\(r.stderr)")
        // The same model written on the N(0, 1) metric: a = σ, b/σ, no latent columns.
        let rows = try ws.csvRows("rasch.csv")
        let header = rows[0]
        let a = header.firstIndex(of: "a")!, b = header.firstIndex(of: "b")!, sdColumn = header.firstIndex(of: "latent_sd")!
        let domain = header.firstIndex(of: "domain")!
        let sd = Double(rows[1][sdColumn])!
        var onePL = "item_id,model,a,b,domain\n"
        for row in rows.dropFirst() { onePL += "\(row[0]),1pl,\(sd),\(Double(row[b])! / sd),\(row[domain])\n" }
        try ws.write("onepl.csv", onePL)
        #expect(rows.dropFirst().allSatisfy { $0[a] == "1.000000" })

        for bank in ["rasch", "onepl"] {
            // The same 61 nodes on both metrics: [−6, 6] logits is [−6/σ, 6/σ] population SDs.
            let bound = bank == "rasch" ? "6" : "\(6 / sd)"
            r = try ws.run("score", "\(Self.data)/icar16.csv", "--bank", "\(bank).csv", "--out", "\(bank)-scores.csv", "--theta-bound", bound)
            #expect(r.status == 0, "\(r.stderr)") // 16 empty rows not administered
            r = try ws.run(
                "analyze", "\(Self.data)/icar16.csv", "--bank", "\(bank).csv", "--out", "\(bank)-items.csv",
                "--summary-json", "\(bank)-analysis.json", "--persons-out", "\(bank)-persons.csv")
            #expect(r.status == 0, "\(r.stderr)")
        }
        let rasch = try Self.byID(ws, "rasch-scores.csv"), onepl = try Self.byID(ws, "onepl-scores.csv")
        #expect(rasch.rows.count == 1509 && onepl.rows.count == 1509)
        let theta = rasch.header.firstIndex(of: "theta")!, se = rasch.header.firstIndex(of: "se")!
        var lowPrecision = 0
        for (id, row) in rasch.rows {
            let other = try #require(onepl.rows[id])
            // θ and SE to the 4 decimals written (the 1PL's b/σ is rounded by the shortest repr only).
            #expect(abs(Double(row[theta])! - sd * Double(other[theta])!) < 2e-4, "session \(id)")
            #expect(abs(Double(row[se])! - sd * Double(other[se])!) < 2e-4, "session \(id)")
            for column in ["iq", "iq_low", "iq_high", "percentile", "flags"] {
                let k = rasch.header.firstIndex(of: column)!
                #expect(row[k] == other[k], "session \(id) \(column): \(row[k]) vs \(other[k])")
            }
            if row[rasch.header.firstIndex(of: "flags")!].contains("low_precision") { lowPrecision += 1 }
        }
        #expect(lowPrecision == 165)

        // Fit statistics and reliabilities do not depend on the metric.
        func json(_ name: String) throws -> [String: Any] { try JSONSerialization.jsonObject(with: Data(try ws.read(name).utf8)) as! [String: Any] }
        let raschSummary = try json("rasch-analysis.json"), oneplSummary = try json("onepl-analysis.json")
        for key in ["marginal_rxx", "mean_error_variance_reliability"] {
            let x = try #require(raschSummary[key] as? Double), y = try #require(oneplSummary[key] as? Double)
            #expect(abs(x - y) < 1e-6, "\(key): \(x) vs \(y)")
        }
        let raschItems = try Self.byID(ws, "rasch-items.csv"), oneplItems = try Self.byID(ws, "onepl-items.csv")
        for (id, row) in raschItems.rows {
            for column in ["infit", "outfit", "sx2", "sx2_p", "rmsd"] {
                let k = raschItems.header.firstIndex(of: column)!
                #expect(abs(Double(row[k])! - Double(oneplItems.rows[id]![k])!) < 2e-4, "\(id) \(column)")
            }
            // The table shows the bank's own parameters.
            #expect(row[raschItems.header.firstIndex(of: "a")!] == "1.0000")
        }
        let raschPersons = try Self.byID(ws, "rasch-persons.csv"), oneplPersons = try Self.byID(ws, "onepl-persons.csv")
        let wle = raschPersons.header.firstIndex(of: "theta_wle")!
        for (id, row) in raschPersons.rows where !row[wle].isEmpty {
            #expect(abs(Double(row[wle])! - sd * Double(oneplPersons.rows[id]![wle])!) < 5e-4, "person \(id)")
        }

        // cat simulate draws the simulees from the bank's population and uses it as the prior.
        try ws.write("cat.json", #"{"max_items": 8, "exposure_target": null}"#)
        r = try ws.run("cat", "simulate", "--bank", "rasch.csv", "--config", "cat.json", "--simulees", "200", "--out", "cat.json.out")
        #expect(r.status == 0, "\(r.stderr)")
        let study = try json("cat.json.out")
        #expect(abs((study["theta_sd"] as? Double ?? 0) - sd) < 1e-12, "\(study["theta_sd"] ?? "nil")")
    }

    @Test("a bank's latent columns: read back exactly, the same on every row, both or neither, in range")
    func latentColumns() throws {
        let ws = try CLIWorkspace()
        try ws.write("r.csv", "session_id,q1,q2\ns1,1,0\ns2,0,1\n")
        let header = "item_id,model,a,b,latent_mean,latent_sd\n"
        try ws.write("differs.csv", header + "q1,rasch,1,0,0,1.5\nq2,rasch,1,0.5,0,1.4\n")
        var r = try ws.run("score", "r.csv", "--bank", "differs.csv", "--out", "s.csv")
        #expect(r.status != 0)
        #expect(r.stderr.contains("differs.csv:3:6: error: item 'q2': latent_mean, latent_sd = 0, 1.4 differ from 0, 1.5 on line 2"), "\(r.stderr)")
        try ws.write("half.csv", "item_id,a,b,latent_sd\nq1,1,0,1.5\n")
        r = try ws.run("score", "r.csv", "--bank", "half.csv", "--out", "s.csv")
        #expect(r.stderr.contains("half.csv:1: error: the bank has latent_sd but no latent_mean"), "\(r.stderr)")
        try ws.write("zero.csv", header + "q1,rasch,1,0,0,0\n")
        r = try ws.run("score", "r.csv", "--bank", "zero.csv", "--out", "s.csv")
        #expect(r.stderr.contains("zero.csv:2:6: error: item 'q1': latent_sd must be in [0.01, 100], got 0.0"), "\(r.stderr)")
    }

    @Test("--guessing-prior options: each item's c prior centred on 1/K from the options column (issue 26, item 16); equal K gives options:K exactly")
    func guessingPriorPerItem() throws {
        let ws = try CLIWorkspace()
        // ICAR16's items have 6 or 8 options.
        var r = try ws.run(
            "calibrate", "\(Self.data)/icar16.csv", "--model", "3pl", "--items", "\(Self.data)/icar16_items.csv",
            "--guessing-prior", "options", "--out", "per-item.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "priors: c ~ Beta centred on 1/K for 16 items (K from --items' options column; mode 1/K, weight 20), Beta(5, 17) for the others"),
            "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try ws.read("per-item.summary.json").utf8)) as! [String: Any]
        let priors = try #require(json["priors"] as? [String: String])
        #expect(priors["guessing:reason.4"] == "Beta(4.33333, 17.6667)" && priors["guessing:rotate.3"] == "Beta(3.5, 18.5)", "\(priors)")
        // Every item with 6 options: the same fit as options:6.
        let items =
            try String(contentsOfFile: "\(Self.data)/icar16_items.csv", encoding: .utf8).split(separator: "\n").enumerated()
            .map { k, line in k == 0 ? String(line) : String(line[..<line.lastIndex(of: ",")!]) + ",6" }.joined(separator: "\n") + "\n"
        try ws.write("six.csv", items)
        r = try ws.run(
            "calibrate", "\(Self.data)/icar16.csv", "--model", "3pl", "--items", "six.csv", "--guessing-prior", "options", "--out", "six-bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run(
            "calibrate", "\(Self.data)/icar16.csv", "--model", "3pl", "--items", "six.csv", "--guessing-prior", "options:6", "--out", "k6-bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try ws.read("six-bank.csv") == (try ws.read("k6-bank.csv")))
        #expect(try ws.read("per-item.csv") != (try ws.read("six-bank.csv")))
        // Without --items, or with a bad K: named errors.
        r = try ws.run("calibrate", "\(Self.data)/icar16.csv", "--model", "3pl", "--guessing-prior", "options", "--out", "x.csv")
        #expect(
            r.status == 64 && r.stderr.contains("--guessing-prior options reads the number of options per item from the options column of --items"),
            "\(r.stderr)")
        try ws.write("bad.csv", "item_id,options\nreason.4,1\n")
        r = try ws.run(
            "calibrate", "\(Self.data)/icar16.csv", "--model", "3pl", "--items", "bad.csv", "--guessing-prior", "options", "--out", "x.csv")
        #expect(r.status == 1 && r.stderr.contains("item 'reason.4': options '1' is not a whole number in 2…100"), "\(r.stderr)")
    }
}
