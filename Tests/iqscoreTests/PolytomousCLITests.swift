import Foundation
import Testing
import TestSupport

/// Items scored in more than two categories end to end (issue 27): `calibrate --model graded|gpcm|pcm|nominal`
/// writes a bank `score` reads, mirt's tables score as mirt does, cells outside an item's categories are
/// rejected with the item and what it allows, and the commands that read 0/1 items only say so.
@Suite("iqscore with graded, partial-credit and nominal items")
struct PolytomousCLITests {
    static let data = Repository.file("Data").path
    static let mirtBanks = Repository.file("Tests/PsychometricsTests/Fixtures/mirt-banks").path

    /// A CSV's rows keyed by the first column.
    static func byID(_ ws: CLIWorkspace, _ name: String) throws -> (header: [String], rows: [String: [String]]) {
        let rows = try ws.csvRows(name)
        return (rows[0], Dictionary(rows.dropFirst().map { ($0[0], $0) }, uniquingKeysWith: { a, _ in a }))
    }

    @Test("calibrate --model graded on Science: mirt's log-likelihood within 1e-3; the bank scores the data")
    func gradedCalibrateAndScore() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "graded", "--tolerance", "1e-6", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(try ws.read("bank.summary.json").utf8)) as! [String: Any]
        // mirt 1.47, mirt(Science - 1, 1, "graded", TOL = 1e-6): −1608.869413.
        #expect(abs((summary["log_likelihood"] as! Double) + 1608.869413) < 1e-3, "\(summary["log_likelihood"]!)")
        #expect(summary["model"] as? String == "graded" && summary["n_parameters"] as? Int == 16)
        let bank = try Self.byID(ws, "bank.csv")
        #expect(
            bank.header.prefix(15) == [
                "item_id", "model", "a", "b", "c", "se_a", "se_b", "se_c", "n_responses", "p_value", "flags", "categories", "b1", "b2", "b3"
            ])
        #expect(bank.rows.values.allSatisfy { $0[1] == "graded" })
        r = try ws.run("verify", "bank.summary.json")
        #expect(r.status == 0, "\(r.stderr)")

        r = try ws.run("score", "\(Self.data)/science.csv", "--bank", "bank.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let scores = try Self.byID(ws, "scores.csv")
        #expect(scores.rows.count == 392)
        // Person 1 answered 3, 3, 2, 1: raw score 9 of 12.
        #expect(scores.rows["1"]![2] == "9")
        // Everybody at the top category (12 of 12) is flagged perfect_score.
        let perfect = scores.rows.values.filter { $0[2] == "12" }
        #expect(!perfect.isEmpty && perfect.allSatisfy { $0[10].contains("perfect_score") })
    }

    @Test(
        "calibrate --model rsm on Science: mirt's rsm log-likelihood within 1e-3, the thresholds printed and shared by the rows; score reads the bank"
    )
    func ratingScaleCalibrateAndScore() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "rsm", "--tolerance", "1e-6", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        // mirt 1.47, mirt(Science, 1, "rsm", TOL = 1e-6): −1636.908447, latent variance 0.9827448.
        let summary = try JSONSerialization.jsonObject(with: Data(try ws.read("bank.summary.json").utf8)) as! [String: Any]
        #expect(abs((summary["log_likelihood"] as! Double) + 1636.908447) < 1e-3, "\(summary["log_likelihood"]!)")
        #expect(summary["n_parameters"] as? Int == 7)
        #expect(r.stderr.contains("rating-scale thresholds τ (shared"), "\(r.stderr)")
        let bank = try Self.byID(ws, "bank.csv")
        let b1 = bank.header.firstIndex(of: "b1")!
        var centred: [[Double]] = []
        for row in bank.rows.values {
            #expect(row[1] == "rsm" && row[2] == "1.000000")
            let steps = (0..<3).map { Double(row[b1 + $0])! }
            let mean = steps.reduce(0, +) / 3
            centred.append(steps.map { $0 - mean })
        }
        // Every row's steps less their mean are the same thresholds (to the bank's 6 decimals).
        for row in centred { for v in 0..<3 { #expect(abs(row[v] - centred[0][v]) < 2e-6) } }
        r = try ws.run("score", "\(Self.data)/science.csv", "--bank", "bank.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.byID(ws, "scores.csv").rows.count == 392)
    }

    @Test(
        "nominal items answered in option letters: the same fit as their category numbers, the bank's categories say A;B;C;D, score reads the letters; keys start the fit and count in the raw score; mixed or ordered-model letters are refused by item"
    )
    func nominalOptionLetters() throws {
        let ws = try CLIWorkspace()
        let lines = try Self.simulatedNominal(ws, persons: 1500, seed: 11), lettered = Self.lettered
        var r: IQScoreCLI.Result
        // Lower case on the odd rows: letters are read in either case.
        try ws.write(
            "letters.csv",
            ([lines[0]] + lines.dropFirst().enumerated().map { $0.offset % 2 == 0 ? lettered($0.element) : lettered($0.element).lowercased() })
                .joined(separator: "\n") + "\n")
        r = try ws.run("calibrate", "digits.csv", "--model", "nominal", "--no-se", "--out", "d.csv")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("calibrate", "letters.csv", "--model", "nominal", "--no-se", "--out", "l.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let digits = try ws.json("d.summary.json"), letters = try ws.json("l.summary.json")
        #expect(abs((digits["log_likelihood"] as! Double) - (letters["log_likelihood"] as! Double)) < 1e-9)
        let bank = try Self.byID(ws, "l.csv"), categories = bank.header.firstIndex(of: "categories")!
        #expect(bank.rows.count == 6 && bank.rows.values.allSatisfy { $0[1] == "nominal" && $0[categories] == "A;B;C;D" })
        r = try ws.run("score", "letters.csv", "--bank", "l.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try ws.csvRows("scores.csv").count == 1501)
        // Keys in the items file: the fit starts from them and reaches the same maximum; the key counts 1 in the raw
        // score (the scores' raw score is the number of keyed options chosen, out of 6).
        let ids = lines[0].split(separator: ",").map(String.init)
        try ws.write("items.csv", "item_id,key\n" + ids.map { "\($0),d" }.joined(separator: "\n") + "\n")
        r = try ws.run("calibrate", "letters.csv", "--model", "nominal", "--items", "items.csv", "--no-se", "--out", "k.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(abs((try ws.json("k.summary.json")["log_likelihood"] as! Double) - (letters["log_likelihood"] as! Double)) < 1e-3)
        #expect(try Self.byID(ws, "k.csv").header.contains("key"))
        r = try ws.run("score", "letters.csv", "--bank", "k.csv", "--out", "keyed.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let keyed = try ws.csvRows("keyed.csv"), raw = try #require(keyed[0].firstIndex(of: "n_correct"))
        let chosen = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).filter { $0 == "3" }.count }
        #expect(keyed.dropFirst().map { Int($0[raw])! } == chosen, "\(keyed.prefix(4)) vs \(chosen.prefix(3))")
        #expect(chosen.contains(0) && chosen.contains { $0 > 2 })
        // A key that is none of an item's options in the data is refused, naming the item.
        try ws.write("badkey.csv", "item_id,key\n\(ids[0]),F\n")
        r = try ws.run("calibrate", "letters.csv", "--model", "nominal", "--items", "badkey.csv", "--no-se", "--out", "b.csv")
        #expect(
            r.status == 1 && r.stderr.contains("item '\(ids[0])': key 'F' in the items file is none of its options in the data (A, B, C, D)"),
            "\(r.stderr)")
        // Nobody chose item 1's option A: named in a warning, and the bank lists B;C;D for it.
        var noA: [String] = []
        for (n, line) in try ws.read("letters.csv").split(separator: "\n").map(String.init).enumerated() {
            var fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if n > 0 && fields[0].uppercased() == "A" { fields[0] = "B" }
            noA.append(fields.joined(separator: ","))
        }
        try ws.write("noa.csv", noA.joined(separator: "\n") + "\n")
        r = try ws.run("calibrate", "noa.csv", "--model", "nominal", "--no-se", "--out", "n.csv")
        #expect(r.status == 0 && r.stderr.contains("warning: item \(ids[0]): option A was never chosen"), "\(r.stderr)")
        #expect(try Self.byID(ws, "n.csv").rows[ids[0]]![categories] == "B;C;D")
        // One item in letters and numbers; letters on an item fitted as graded.
        try ws.write(
            "mixed.csv",
            lines[0] + "\n" + lettered(lines[1]) + "\n" + lines[2] + "\n" + lines.dropFirst(3).map(lettered).joined(separator: "\n") + "\n")
        r = try ws.run("calibrate", "mixed.csv", "--model", "nominal", "--out", "m.csv")
        #expect(r.status == 1 && r.stderr.contains("is answered both in option letters and in numbers"), "\(r.stderr)")
        try ws.write("models.csv", "item_id,model\n\(ids[0]),graded\n")
        r = try ws.run("calibrate", "letters.csv", "--model", "nominal", "--items", "models.csv", "--out", "g.csv")
        #expect(r.status == 1 && r.stderr.contains("item '\(ids[0])' is answered in option letters but fitted as graded"), "\(r.stderr)")
    }

    @Test("mirt's coef(IRTpars = TRUE) graded table with --bank-model: θ equals mirt's EAP (4 decimals)")
    func mirtTableScores() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run("score", "\(Self.data)/science.csv", "--bank", "\(Self.mirtBanks)/graded_irt.csv", "--out", "scores.csv")
        #expect(r.status == 1 && r.stderr.contains("--bank-model"), "\(r.stderr)")
        r = try ws.run(
            "score", "\(Self.data)/science.csv", "--bank", "\(Self.mirtBanks)/graded_irt.csv", "--bank-model", "graded", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("read as mirt IRTpars (a, b1 … b3)"), "\(r.stderr)")
        let scores = try Self.byID(ws, "scores.csv")
        // mirt 1.47 fscores(method = "EAP") for persons 1–5 (Fixtures/mirt-banks/eap5.csv).
        for (person, theta) in [("1", 0.401561343628388), ("2", 0.0520324007178631), ("3", -0.890643583094125), ("5", 0.765380585645408)] {
            #expect(abs(Double(scores.rows[person]![3])! - theta) <= 5.01e-5, "person \(person): \(scores.rows[person]![3])")
        }
    }

    @Test("data coded 1…4: the bank's categories column maps the cells; a 0 or a 5 is rejected naming the item")
    func labelsAndRejects() throws {
        let ws = try CLIWorkspace()
        let long = try Self.codedScience()
        try ws.write("coded.csv", long)
        var r = try ws.run("calibrate", "coded.csv", "--model", "gpcm", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("collapsed"), "\(r.stderr)")
        let bank = try Self.byID(ws, "bank.csv")
        let labels = try #require(bank.header.firstIndex(of: "categories"))
        #expect(bank.rows.values.allSatisfy { $0[labels] == "1;2;3;4" })
        try ws.write("bad.csv", "session_id,item_id,response\nx,Comfort,0\nx,Work,2\ny,Comfort,5\ny,Work,2\nz,Comfort,4\nz,Work,1\n")
        r = try ws.run("score", "coded.csv", "bad.csv", "--bank", "bank.csv", "--out", "scores.csv")
        #expect(r.status == 2, "\(r.stderr)")
        let rejects = try ws.read("scores.rejects.csv")
        #expect(
            rejects.contains(
                "x,bad.csv,2,3,\"response '0' is not a response to item 'Comfort'; allowed: 1, 2, 3, 4, or empty/NA for not administered\""),
            "\(rejects)")
        #expect(rejects.contains("y,bad.csv,4,3,"), "\(rejects)")
        let scores = try Self.byID(ws, "scores.csv")
        #expect(scores.rows.count == 393 && scores.rows["z"]![2] == "3")
    }

    @Test(
        "calibrate --model graded --fixed: a gpcm bank's items (categories 1;2;3;4) held, the others estimated on its scale; bank rows carried over; a cell outside a fixed item's categories refused by item"
    )
    func onlineCalibrationWithFixedItems() throws {
        let ws = try CLIWorkspace()
        let long = try Self.codedScience()
        try ws.write("coded.csv", long)
        var r = try ws.run("calibrate", "coded.csv", "--model", "gpcm", "--tolerance", "1e-6", "--out", "full.csv")
        #expect(r.status == 0, "\(r.stderr)")
        // The fixed bank: Comfort and Work from the gpcm fit, and a row nobody answered (Ghost, a copy of Work).
        let full = try ws.read("full.csv").split(separator: "\n").map(String.init)
        let comfort = try #require(full.first { $0.hasPrefix("Comfort,") }), work = try #require(full.first { $0.hasPrefix("Work,") })
        try ws.write("fixed.csv", [full[0], comfort, work, "Ghost" + work.dropFirst(4)].joined(separator: "\n") + "\n")
        r = try ws.run("calibrate", "coded.csv", "--model", "graded", "--fixed", "fixed.csv", "--tolerance", "1e-6", "--out", "online.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "fixed: 2 items held at their values in fixed.csv, 2 free items estimated on its scale; 1 bank item not in the data (carried over)"),
            "\(r.stderr)")
        #expect(r.stderr.contains("latent distribution: mean "), "\(r.stderr)")
        let bank = try Self.byID(ws, "online.csv")
        let flags = try #require(bank.header.firstIndex(of: "flags")), categories = try #require(bank.header.firstIndex(of: "categories"))
        #expect(bank.rows["Comfort"]![1] == "gpcm" && bank.rows["Comfort"]![flags] == "fixed" && bank.rows["Comfort"]![categories] == "1;2;3;4")
        #expect(bank.rows["Comfort"]![2...4] == Self.cells(comfort)[2...4])
        #expect(bank.rows["Ghost"]![flags] == "fixed;not in data")
        #expect(bank.rows["Future"]![1] == "graded" && bank.rows["Benefit"]![1] == "graded" && bank.rows["Future"]![categories] == "1;2;3;4")
        let summary = try JSONSerialization.jsonObject(with: Data(try ws.read("online.summary.json").utf8)) as! [String: Any]
        #expect(summary["fixed_items"] as? [String] == ["Comfort", "Work"] && summary["fixed_items_not_in_data"] as? [String] == ["Ghost"])
        // The gpcm fit's own scale: the graded items estimated beside it leave μ near 0 and σ near 1.
        let mean = try #require(summary["latent_mean"] as? Double), sd = try #require(summary["latent_sd"] as? Double)
        #expect(abs(mean) < 0.1 && abs(sd - 1) < 0.15, "μ \(mean), σ \(sd)")
        #expect(summary["latent_mean_se"] is Double && summary["n_parameters"] as? Int == 10)
        r = try ws.run("score", "coded.csv", "--bank", "online.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        // A cell that is none of a fixed item's bank categories is refused, naming the item and what it allows.
        try ws.write("bad.csv", long + "q1,Comfort,5\nq1,Work,2\n")
        r = try ws.run("calibrate", "bad.csv", "--model", "graded", "--fixed", "fixed.csv", "--out", "bad-bank.csv")
        #expect(
            r.status != 0
                && r.stderr.contains("fixed item 'Comfort' has 1 response such as '5' that is none of its bank categories (allowed: 1, 2, 3, 4)"),
            "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ws.directory.appendingPathComponent("bad-bank.csv").path))
    }

    /// Science in the long layout with its categories coded 1…4 (as mirt ships it), persons p1…p392.
    static func codedScience() throws -> String {
        let lines = try String(contentsOfFile: "\(Self.data)/science.csv", encoding: .utf8).split(separator: "\n")
        var long = "session_id,item_id,response\n"
        let items = lines[0].split(separator: ",")
        for (i, line) in lines.dropFirst().enumerated() {
            for (j, cell) in line.split(separator: ",").enumerated() { long += "p\(i + 1),\(items[j]),\(Int(cell)! + 1)\n" }
        }
        return long
    }

    /// Six nominal items in 4 options, simulated into digits.csv (no id column): its lines, header first.
    static func simulatedNominal(_ ws: CLIWorkspace, persons: Int, seed: Int) throws -> [String] {
        let r = try ws.run(
            "simulate", "--model", "nominal", "--categories", "4", "--items", "6", "--persons", String(persons), "--seed", String(seed), "--no-id",
            "--out", "digits.csv")
        #expect(r.status == 0, "\(r.stderr)")
        return try ws.read("digits.csv").split(separator: "\n").map(String.init)
    }

    /// A data line of option numbers as option letters (0 = A); empty cells stay empty.
    static func lettered(_ line: String) -> String {
        line.split(separator: ",", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : String(UnicodeScalar(UInt8(65 + Int($0)!))) }.joined(
            separator: ",")
    }

    /// A bank row's cells (no quoted commas in these).
    static func cells(_ line: String) -> [String] { line.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }

    @Test("per-item models from --items: a nominal item beside graded ones, in one bank")
    func perItemModels() throws {
        let ws = try CLIWorkspace()
        try ws.write("items.csv", "item_id,model,domain\nComfort,nominal,a\nWork,,b\nFuture,,b\nBenefit,,a\n")
        let r = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "graded", "--items", "items.csv", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let bank = try Self.byID(ws, "bank.csv")
        #expect(bank.rows["Comfort"]![1] == "nominal" && bank.rows["Work"]![1] == "graded")
        #expect(bank.header.contains("a_3") && bank.header.contains("c_3") && bank.header.last == "domain")
        try ws.write("bad-items.csv", "item_id,model\nComfort,4pl\n")
        var bad = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "graded", "--items", "bad-items.csv", "--out", "bank2.csv")
        #expect(
            bad.status == 1 && bad.stderr.contains("item 'Comfort': model '4pl' is not one of graded, gpcm, pcm, rsm, nominal, 3pl"), "\(bad.stderr)")
        // 3pl is for 0/1 items: a 4-category item under it is refused by name.
        try ws.write("bad-items.csv", "item_id,model\nComfort,3pl\n")
        bad = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "graded", "--items", "bad-items.csv", "--out", "bank2.csv")
        #expect(
            bad.status != 0 && bad.stderr.contains("item Comfort is fitted as 3pl, a 0/1 item, but its responses in use are 0, 1, 2, 3"),
            "\(bad.stderr)")
    }

    @Test("report draws the category curves of a pcm bank; norms build scores a sample with it and names a bad cell; 0/1 options are refused by name")
    func zeroOneOnlyCommands() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "pcm", "--out", "bank.csv", "--no-se")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("report", "\(Self.data)/science.csv", "--bank", "bank.csv", "--out", "report.html")
        #expect(r.status == 0 && r.stderr.contains("392 persons × 4 items"), "\(r.stderr)")
        let html = try ws.read("report.html")
        #expect(html.components(separatedBy: "<figure").count == 5 && html.contains("Category curves: the model against the data"))
        // norms build scores a norm sample's rows with the bank: categories 0…3 here; a 4 is named with its column.
        try ws.write("sample.csv", "person_id,age,Comfort,Work\n1,30,1,2\n2,31,4,1\n")
        r = try ws.run(
            "norms", "build", "sample.csv", "--bank", "bank.csv", "--age-column", "age", "--name", "n", "--norms-version", "1", "--out", "norms.json")
        #expect(r.status == 1 && r.stderr.contains("sample.csv:3:3: error: column 'Comfort': '4' is not a response; allowed: 0…3"), "\(r.stderr)")
        // The 392 Science persons with ages 20–59: age norms of θ scored from their graded responses.
        let rows = try String(contentsOfFile: "\(Self.data)/science.csv", encoding: .utf8).split(separator: "\n")
        try ws.write(
            "science_sample.csv",
            "person_id,age," + rows[0] + "\n"
                + rows.dropFirst().enumerated().map { "\($0.offset + 1),\(20 + $0.offset % 40),\($0.element)" }.joined(separator: "\n") + "\n")
        r = try ws.run(
            "norms", "build", "science_sample.csv", "--bank", "bank.csv", "--age-column", "age", "--name", "sci", "--norms-version", "1", "--out",
            "norms.json")
        #expect(r.status == 0 && r.stderr.contains("392 persons aged 20.0–59.0"), "\(r.stderr)")
        r = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "graded", "--guessing-prior", "beta:5,17", "--out", "b.csv")
        #expect(r.status == 64 && r.stderr.contains("--guessing-prior applies to 3pl items; this --model graded fit has none"), "\(r.stderr)")
        // A slope prior on graded items: MAP estimates (mirt 1.47 with PRIOR = (1-4, a1, lnorm, 0, 0.5): log-likelihood
        // −1609.147598, item 3's a 2.0190 instead of 2.3005), said on stderr and in the summary.
        r = try ws.run(
            "calibrate", "\(Self.data)/science.csv", "--model", "graded", "--slope-prior", "lognormal:0,0.5", "--tolerance", "1e-6", "--out", "b.csv")
        #expect(r.status == 0 && r.stderr.contains("slope prior: a ~ LogNormal(0, 0.5) on the graded, gpcm and 3pl items"), "\(r.stderr)")
        let prior = try JSONSerialization.jsonObject(with: Data(try ws.read("b.summary.json").utf8)) as! [String: Any]
        #expect(abs((prior["log_likelihood"] as! Double) + 1609.147598) < 1e-3, "\(prior["log_likelihood"]!)")
        #expect((prior["priors"] as? [String: String])?["slope"]?.hasPrefix("a ~ LogNormal") == true)
        #expect(abs(Double(try Self.byID(ws, "b.csv").rows["Future"]![2])! - 2.019) < 2e-3)
        r = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "2pl", "--out", "b.csv")
        #expect(r.status == 1 && r.stderr.contains("--model graded, gpcm, pcm, rsm or nominal"), "\(r.stderr)")
    }

    @Test("simulate --model graded --categories 5, then calibrate --model graded: parameters recovered; simulate --bank draws from a mixed bank")
    func simulateAndRecover() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "simulate", "--model", "graded", "--categories", "5", "--items", "20", "--persons", "3000", "--seed", "9",
            "--domains", "x,y", "--out", "responses.csv", "--bank-out", "true.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("graded bank (5 categories) of 20 items"), "\(r.stderr)")
        r = try ws.run("calibrate", "responses.csv", "--model", "graded", "--out", "estimated.csv", "--no-se")
        #expect(r.status == 0, "\(r.stderr)")
        let truth = try Self.byID(ws, "true.csv"), estimate = try Self.byID(ws, "estimated.csv")
        let columns = ["a", "b1", "b2", "b3", "b4"].map { truth.header.firstIndex(of: $0)! }
        var squares = 0.0, count = 0, largest = 0.0
        for (id, row) in truth.rows {
            #expect(row[1] == "graded")
            let other = try #require(estimate.rows[id])
            for c in columns {
                let d = Double(row[c])! - Double(other[estimate.header.firstIndex(of: truth.header[c])!])!
                squares += d * d; count += 1; largest = max(largest, abs(d))
            }
        }
        // 3,000 persons: thresholds far in the tails carry the largest errors.
        #expect((squares / Double(count)).squareRoot() < 0.12 && largest < 0.5, "RMSE \((squares / Double(count)).squareRoot()), largest \(largest)")
        // A mixed bank (a 2PL row beside graded ones) drives simulate --bank and scores what it drew.
        var lines = try ws.read("estimated.csv").split(separator: "\n").map(String.init)
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var first = lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        first[1] = "2pl"; first[3] = "0.25"
        for c in header.indices where header[c].hasPrefix("b") && header[c] != "b" || header[c].hasPrefix("se_b") { first[c] = "" }
        lines[1] = first.joined(separator: ",")
        try ws.write("mixed.csv", lines.joined(separator: "\n") + "\n")
        r = try ws.run("simulate", "--bank", "mixed.csv", "--persons", "200", "--layout", "long", "--seed", "2", "--out", "drawn.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let drawn = try ws.csvRows("drawn.csv").dropFirst()
        #expect(drawn.count == 200 * 20)
        #expect(Set(drawn.filter { $0[1] == first[0] }.map { $0[2] }).isSubset(of: ["0", "1"]))
        #expect(Set(drawn.map { $0[2] }) == ["0", "1", "2", "3", "4"])
        r = try ws.run("score", "drawn.csv", "--bank", "mixed.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("simulate", "--bank", "mixed.csv", "--items", "5", "--persons", "2", "--out", "x.csv")
        #expect(r.status == 64 && r.stderr.contains("--items comes from --bank"), "\(r.stderr)")
    }

    @Test(
        "3pl items beside graded ones: the items file's model column fits them with a lower asymptote under the 3PL's priors, the bank writes 3pl rows, score reads it; --guessing-prior without 3pl items is refused"
    )
    func threePLBesideGraded() throws {
        let ws = try CLIWorkspace()
        var bank = "item_id,model,a,b,c,categories,b1,b2,b3\n"
        for j in 0..<8 { bank += "mc\(j + 1),3pl,\(1 + 0.1 * Double(j % 4)),\(-1.2 + 0.35 * Double(j)),0.2,,,,\n" }
        for j in 0..<4 { bank += "pz\(j + 1),graded,1.3,,,,\(-1 + 0.3 * Double(j)),\(0.3 * Double(j)),\(1 + 0.3 * Double(j))\n" }
        try ws.write("truth.csv", bank)
        var r = try ws.run("simulate", "--bank", "truth.csv", "--persons", "3000", "--seed", "9", "--out", "data.csv")
        #expect(r.status == 0, "\(r.stderr)")
        try ws.write("items.csv", "item_id,model\n" + (1...8).map { "mc\($0),3pl" }.joined(separator: "\n") + "\n")
        r = try ws.run("calibrate", "data.csv", "--model", "graded", "--items", "items.csv", "--out", "bank.csv")
        #expect(r.status == 0 && r.stderr.contains("3pl items: c ~ Beta(5, 17), a ~ LogNormal(0, 0.5)"), "\(r.stderr)")
        let fitted = try Self.byID(ws, "bank.csv")
        let c = try #require(fitted.header.firstIndex(of: "c")), seC = try #require(fitted.header.firstIndex(of: "se_c"))
        for j in 1...8 {
            let row = try #require(fitted.rows["mc\(j)"])
            #expect(row[1] == "3pl" && abs(Double(row[c])! - 0.2) < 0.12 && Double(row[seC])! > 0, "\(row)")
        }
        #expect((1...4).allSatisfy { fitted.rows["pz\($0)"]?[1] == "graded" })
        let summary = try ws.json("bank.summary.json")
        #expect((summary["priors"] as? [String: String])?["guessing"] == "c ~ Beta(5, 17) on 3pl items")
        r = try ws.run("score", "data.csv", "--bank", "bank.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("calibrate", "data.csv", "--model", "graded", "--guessing-prior", "beta:4,12", "--out", "g.csv")
        #expect(r.status == 64 && r.stderr.contains("--guessing-prior applies to 3pl items; this --model graded fit has none"), "\(r.stderr)")
    }

    @Test("link: a graded bank on another scale (θ_old = 1.3 θ_new − 0.4) is linked back by stocking-lord and haebara")
    func linkGraded() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "graded", "--out", "old.csv", "--no-se")
        #expect(r.status == 0, "\(r.stderr)")
        // The new bank: a·1.3 and (b + 0.4)/1.3, so that every probability is unchanged.
        let rows = try ws.csvRows("old.csv")
        let header = rows[0]
        var text = header.joined(separator: ",") + "\n"
        for row in rows.dropFirst() {
            var cells = row
            for (c, name) in header.enumerated() where !cells[c].isEmpty {
                if name == "a" { cells[c] = String(Double(cells[c])! * 1.3) }
                if name.count == 2 && name.hasPrefix("b") { cells[c] = String((Double(cells[c])! + 0.4) / 1.3) }
                if name.hasPrefix("se_") { cells[c] = "" }
            }
            text += cells.joined(separator: ",") + "\n"
        }
        try ws.write("new.csv", text)
        for method in ["stocking-lord", "haebara", "mean-sigma"] {
            r = try ws.run(
                "link", "--reference", "old.csv", "--new", "new.csv", "--method", method, "--out", "linked.csv", "--summary-json", "link.json")
            #expect(r.status == 0, "\(r.stderr)")
            let summary = try JSONSerialization.jsonObject(with: Data(try ws.read("link.json").utf8)) as! [String: Any]
            let slope = summary["slope"] as! Double, intercept = summary["intercept"] as! Double
            // The bank's six decimals limit the recovery.
            #expect(abs(slope - 1.3) < 1e-4 && abs(intercept + 0.4) < 1e-4, "\(method): \(slope), \(intercept)")
            let linked = try Self.byID(ws, "linked.csv"), old = try Self.byID(ws, "old.csv")
            let b2 = old.header.firstIndex(of: "b2")!
            #expect(abs(Double(linked.rows["Future"]![b2])! - Double(old.rows["Future"]![b2])!) < 1e-4)
        }
    }

    @Test("analyze on a graded bank: S-X², conditional infit/outfit and classical statistics per category; the sparse category flagged")
    func analyzeGraded() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run("calibrate", "\(Self.data)/science.csv", "--model", "graded", "--out", "bank.csv", "--no-se")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("analyze", "\(Self.data)/science.csv", "--bank", "bank.csv", "--out", "items.csv", "--summary-json", "items.json")
        #expect(r.status == 0, "\(r.stderr)")
        let items = try Self.byID(ws, "items.csv")
        #expect(
            items.header == [
                "item_id", "model", "categories", "n", "mean_score", "max_score", "item_rest_r", "category_n", "category_mean_rest",
                "sx2", "sx2_df", "sx2_p", "infit", "outfit", "infit_z", "outfit_z", "flags"
            ])
        // Comfort: 5 persons chose its lowest category (Science, mirt's data).
        let comfort = try #require(items.rows["Comfort"])
        #expect(comfort[7] == "5;32;266;89" && comfort[16].contains("sparse category"), "\(comfort)")
        for row in items.rows.values {
            #expect(abs(Double(row[12])! - 1) < 0.2 && abs(Double(row[13])! - 1) < 0.2, "\(row)")
            let means = row[8].split(separator: ";").map { Double($0)! }
            #expect(zip(means, means.dropFirst()).allSatisfy { $0 < $1 }, "\(row)")
        }
        r = try ws.run("analyze", "\(Self.data)/science.csv", "--bank", "bank.csv", "--out", "items2.csv", "--q3-out", "q3.csv")
        #expect(r.status == 64 && r.stderr.contains("computed for banks of 0/1 items"), "\(r.stderr)")
        // Person fit: each person's WLE with l_z and l_z* (extreme patterns have no finite WLE-based l_z*).
        r = try ws.run(
            "analyze", "\(Self.data)/science.csv", "--bank", "bank.csv", "--out", "items3.csv", "--persons-out", "persons.csv", "--summary-json",
            "p.json")
        #expect(r.status == 0 && r.stderr.contains("person fit: l_z* < −1.96 for "), "\(r.stderr)")
        let persons = try ws.csvRows("persons.csv")
        #expect(persons[0] == ["person_id", "theta_wle", "se", "lz", "lz_star"] && persons.count == 393)
        let stars = persons.dropFirst().compactMap { Double($0[4]) }
        #expect(stars.count > 350 && stars.allSatisfy(\.isFinite))
        let mean = stars.reduce(0, +) / Double(stars.count)
        // Four items: the first-order correction leaves a mean of 0.27 here (within ±0.12 on 20 items, PersonFitLzTests).
        #expect(abs(mean) < 0.4, "mean l_z* \(mean)")
        let fit = try ws.json("p.json")["person_fit"] as? [String: [String: Int]]
        #expect(fit?["lz_star"]?["tested"] == stars.count)
    }

    @Test("analyze reads nominal items answered in option letters through the bank's categories")
    func analyzeNominalLetters() throws {
        let ws = try CLIWorkspace()
        let lines = try Self.simulatedNominal(ws, persons: 800, seed: 5), lettered = lines.dropFirst().map(Self.lettered)
        var r: IQScoreCLI.Result
        try ws.write("letters.csv", ([lines[0]] + lettered).joined(separator: "\n") + "\n")
        r = try ws.run("calibrate", "letters.csv", "--model", "nominal", "--no-se", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("analyze", "letters.csv", "--bank", "bank.csv", "--out", "items.csv", "--persons-out", "persons.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.byID(ws, "items.csv").rows.count == 6 && (try ws.csvRows("persons.csv")).count == 801)
        // A first row whose first cell is E (no such option).
        try ws.write("bad.csv", lines[0] + "\nE" + lettered[0].dropFirst() + "\n" + lettered.dropFirst().joined(separator: "\n") + "\n")
        r = try ws.run("analyze", "bad.csv", "--bank", "bank.csv", "--out", "items2.csv")
        #expect(r.status != 0 && r.stderr.contains("1 response such as E outside its categories (allowed A, B, C, D)"), "\(r.stderr)")
    }
}
