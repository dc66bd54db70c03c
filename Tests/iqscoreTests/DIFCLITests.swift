import Foundation
import Testing
import TestSupport

// Issue 29: `iqscore dif` and `calibrate --group-column`.

@Suite("iqscore dif and calibrate --group-column")
struct DIFCLITests {
    /// The FairnessTests fixture (2 × 1,000 persons, 12 items, i1 uniform and i2 non-uniform DIF).
    static func fixture() throws -> String {
        try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("FairnessTests/Fixtures/dif/two_groups.csv"), encoding: .utf8)
    }

    @Test("dif on a wide file: the table, DTF, summary manifest and stderr; the flagged items are the planted ones")
    func wideFile() throws {
        let ws = try CLIWorkspace()
        try ws.write("responses.csv", try Self.fixture())
        let r = try ws.run(
            "dif", "responses.csv", "--group-column", "group", "--reference", "ref", "--out", "dif.csv", "--dtf-out", "dtf.csv", "--dtf-draws", "100")
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try ws.csvRows("dif.csv")
        #expect(rows.count == 13 && rows[0].first == "item_id" && rows[0].contains("ets_class") && rows[0].contains("irt_p_adj"))
        let flagged = rows.dropFirst().filter { $0[rows[0].firstIndex(of: "flagged_by")!].contains("irt") }.map { $0[0] }
        #expect(flagged == ["i1", "i2"], "\(flagged)")
        let ets = rows[1][rows[0].firstIndex(of: "ets_class")!]
        #expect(ets == "C-", "i1 is much harder for the focal group: \(ets)")
        #expect(
            r.stderr.contains("mh: 2 items flagged") && r.stderr.contains("irt: 2 items flagged (BH-adjusted p < 0.05): i1, i2")
                && r.stderr.contains("DTF 'foc'"), "\(r.stderr)")
        let summary = try ws.json("dif.summary.json")
        #expect(summary["command"] as? String == "dif" && (summary["outputs"] as? [[String: Any]])?.count == 2)
        #expect((summary["flagged"] as? [String: [String]])?["irt"] == ["i1@foc", "i2@foc"])
        let verify = try ws.run("verify", "dif.summary.json")
        #expect(verify.status == 0, "\(verify.stderr)")
        let dtf = try ws.csvRows("dtf.csv")
        #expect(dtf.count == 14 && dtf[0] == ["focal_group", "theta", "expected_score_reference", "expected_score_focal", "difference", "iq_gap"])
    }

    @Test(
        "long layout with θ matching on a bank, purification: same flags; a session in two groups, an empty label, a small group and an unseen item named"
    )
    func longFileAndBadInput() throws {
        let ws = try CLIWorkspace()
        let lines = try Self.fixture().split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let items = Array(lines[0].dropFirst(2))
        var long = "session_id,item_id,response,country\n"
        for row in lines.dropFirst() {
            for (k, item) in items.enumerated() where !(row[1] == "foc" && item == "i12") { long += "\(row[0]),\(item),\(row[k + 2]),\(row[1])\n" }
        }
        try ws.write("long.csv", long)
        var r = try ws.run("calibrate", "long.csv", "--out", "pooled.csv", "--no-se")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run(
            "dif", "long.csv", "--group-column", "country", "--reference", "ref", "--bank", "pooled.csv", "--matching", "theta",
            "--purify", "--methods", "mh,irt", "--out", "dif.csv", "--dtf-draws", "0")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("matching: theta: EAP") && r.stderr.contains("purification"), "\(r.stderr)")
        let rows = try ws.csvRows("dif.csv")
        let header = rows[0]
        let flags = Dictionary(uniqueKeysWithValues: rows.dropFirst().map { ($0[0], $0[header.firstIndex(of: "flagged_by")!]) })
        #expect(flags["i1"] == "mh;irt" && flags["i2"]?.contains("irt") == true, "\(flags)")
        let i12 = try #require(rows.first { $0[0] == "i12" })
        #expect(i12[header.firstIndex(of: "untestable")!].contains("group foc has no responses to this item"), "\(i12)")

        // Bad input, each named with file:line:column or the group.
        let p2 = try #require(long.range(of: "\np2,i5,"))
        var bad = long
        let end = try #require(bad[p2.upperBound...].firstIndex(of: "\n"))
        bad.replaceSubrange(bad.index(end, offsetBy: -3)..<end, with: "foc")
        try ws.write("two.csv", bad)
        r = try ws.run("dif", "two.csv", "--group-column", "country", "--reference", "ref", "--out", "x.csv")
        #expect(r.status != 0 && r.stderr.contains("session 'p2' is in group 'foc' here but in 'ref' on line 14"), "\(r.stderr)")
        try ws.write(
            "empty.csv",
            long.replacingOccurrences(of: "p7,i3,0,ref\n", with: "p7,i3,0,\n").replacingOccurrences(of: "p7,i3,1,ref\n", with: "p7,i3,1,\n"))
        r = try ws.run("dif", "empty.csv", "--group-column", "country", "--reference", "ref", "--out", "x.csv")
        #expect(r.status != 0 && r.stderr.contains("empty group label") && r.stderr.contains("empty.csv:"), "\(r.stderr)")
        r = try ws.run("dif", "long.csv", "--group-column", "country", "--reference", "ref", "--out", "x.csv", "--min-group-persons", "1001")
        #expect(r.status != 0 && r.stderr.contains("group 'ref' has 1000 persons with responses; each group needs at least 1001"), "\(r.stderr)")
        r = try ws.run("dif", "long.csv", "--group-column", "nope", "--reference", "ref", "--out", "x.csv")
        #expect(r.status != 0 && r.stderr.contains("no group column 'nope'"), "\(r.stderr)")
        r = try ws.run("dif", "long.csv", "--group-column", "country", "--reference", "ref", "--out", "x.csv", "--fdr", "2", "--methods", "mh,xx")
        #expect(r.status == 64 && r.stderr.contains("unknown method 'xx'"), "\(r.stderr)")
        #expect(!ws.exists("x.csv"))
    }

    @Test("calibrate --group-column: the reference's bank, each group's mean and SD, freed items per group")
    func multipleGroupCalibration() throws {
        let ws = try CLIWorkspace()
        try ws.write("responses.csv", try Self.fixture())
        var r = try ws.run(
            "calibrate", "responses.csv", "--group-column", "group", "--reference", "ref", "--free-items", "i1:foc,i2", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        // mirt 1.47 multipleGroup() with i1 and i2 free: log-likelihood −13378.584835.
        let summary = try ws.json("bank.summary.json")
        #expect(abs((summary["log_likelihood"] as? Double ?? 0) - -13378.584835) < 1e-3)
        let groups = try #require(summary["groups"] as? [[String: Any]])
        #expect(groups.count == 2 && groups[0]["group"] as? String == "ref" && groups[1]["mean"] as? Double ?? 0 < -0.3)
        let freed = try #require(summary["group_items"] as? [[String: Any]])
        #expect(freed.count == 4 && freed[0]["item_id"] as? String == "i1" && freed[0]["groups"] as? [String] == ["ref"])
        let bank = try ws.csvRows("bank.csv")
        #expect(bank.count == 13 && bank[1].last == "freed by group")
        r = try ws.run("score", "responses.csv", "--bank", "bank.csv", "--out", "scores.csv", "--ignore-columns", "group")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("calibrate", "responses.csv", "--group-column", "group", "--out", "bank2.csv")
        #expect(r.status == 64 && r.stderr.contains("--group-column needs --reference"), "\(r.stderr)")
        r = try ws.run("calibrate", "responses.csv", "--group-column", "group", "--reference", "ref", "--model", "rasch", "--out", "bank2.csv")
        #expect(r.status == 64 && r.stderr.contains("a multiple-group calibration fits --model 2pl, 3pl or bifactor"), "\(r.stderr)")
    }

    @Test("report --group-column: the DIF section with the flagged items' curves per group and the IQ gap at equal θ")
    func reportSection() throws {
        let ws = try CLIWorkspace()
        try ws.write("responses.csv", try Self.fixture())
        var r = try ws.run("calibrate", "responses.csv", "--ignore-columns", "group", "--no-se", "--out", "pooled.csv")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("report", "responses.csv", "--bank", "pooled.csv", "--out", "report.html", "--group-column", "group", "--reference", "ref")
        #expect(r.status == 0, "\(r.stderr)")
        let html = try ws.read("report.html")
        #expect(html.contains("<h2 id=\"dif\">Differential item functioning by group</h2>") && html.contains("IQ gap at equal θ"))
        let section = try #require(html.range(of: "id=\"dif\"")).upperBound
        #expect(html[section...].components(separatedBy: "<figure class=\"flag\">").count - 1 == 2, "one panel for each of i1 and i2")
        #expect(html[section...].contains("<td>i1</td><td>foc</td>") && html[section...].contains("C-"))
        r = try ws.run("report", "responses.csv", "--bank", "pooled.csv", "--out", "report2.html", "--group-column", "group")
        #expect(r.status == 64 && r.stderr.contains("--group-column and --reference go together"), "\(r.stderr)")
    }

    @Test("one file per group (--group-file): dif's table and calibrate's bank equal the group column's; the files' problems named")
    func groupFiles() throws {
        let ws = try CLIWorkspace()
        let text = try Self.fixture()
        try ws.write("responses.csv", text)
        let lines = text.split(separator: "\n").map(String.init)
        let header = lines[0].split(separator: ",").map(String.init)
        // Each group's rows without the group column; the focal file's columns in another order (items by id).
        func file(_ group: String, reversed: Bool) -> String {
            let columns = [0] + (reversed ? Array((2..<header.count).reversed()) : Array(2..<header.count))
            let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }.filter { $0[1] == group }
            return ([columns.map { header[$0] }] + rows.map { row in columns.map { row[$0] } }).map { $0.joined(separator: ",") }.joined(
                separator: "\n") + "\n"
        }
        try ws.write("ref.csv", file("ref", reversed: false))
        try ws.write("foc.csv", file("foc", reversed: true))
        var r = try ws.run("dif", "responses.csv", "--group-column", "group", "--reference", "ref", "--out", "column.csv", "--dtf-draws", "0")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("dif", "ref.csv", "--group-file", "foc=foc.csv", "--reference", "ref", "--out", "files.csv", "--dtf-draws", "0")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try ws.read("files.csv") == (try ws.read("column.csv")))
        let summary = try ws.json("files.summary.json")
        #expect((summary["group_files"] as? [String: String]) == ["ref": "ref.csv", "foc": "foc.csv"] && summary["group_column"] == nil)

        r = try ws.run("calibrate", "responses.csv", "--group-column", "group", "--reference", "ref", "--out", "column-bank.csv", "--no-se")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("calibrate", "ref.csv", "--group-file", "foc=foc.csv", "--reference", "ref", "--out", "files-bank.csv", "--no-se")
        #expect(r.status == 0 && r.stderr.contains("from 2 files (one per group)"), "\(r.stderr)")
        #expect(try ws.read("files-bank.csv") == (try ws.read("column-bank.csv")))

        // Problems: no '=', a repeated group, both ways at once, a person in two files.
        r = try ws.run("dif", "ref.csv", "--group-file", "foc.csv", "--reference", "ref", "--out", "x.csv")
        #expect(r.status == 64 && r.stderr.contains("--group-file takes GROUP=PATH"), "\(r.stderr)")
        r = try ws.run("dif", "ref.csv", "--group-file", "ref=foc.csv", "--reference", "ref", "--out", "x.csv")
        #expect(r.status == 64 && r.stderr.contains("group 'ref' is given twice"), "\(r.stderr)")
        r = try ws.run("calibrate", "responses.csv", "--group-column", "group", "--group-file", "foc=foc.csv", "--reference", "ref", "--out", "x.csv")
        #expect(r.status == 64 && r.stderr.contains("use one"), "\(r.stderr)")
        try ws.write(
            "overlap.csv",
            file("foc", reversed: false)
                + lines[1].split(separator: ",", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset != 1 }.map(\.element).joined(separator: ",") + "\n")
        r = try ws.run("dif", "ref.csv", "--group-file", "foc=overlap.csv", "--reference", "ref", "--out", "x.csv")
        #expect(r.status != 0 && r.stderr.contains("is also in ref.csv"), "\(r.stderr)")
    }

    @Test("calibrate --model bifactor --group-column: each group's factor means and SDs as mirt 1.47's bfactor(group =) gives them")
    func bifactorGroups() throws {
        let ws = try CLIWorkspace()
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "FairnessTests/Fixtures/dif")
        for name in ["bf_two_groups.csv", "bf_items.csv"] {
            try ws.write(name, try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8))
        }
        let r = try ws.run(
            "calibrate", "bf_two_groups.csv", "--model", "bifactor", "--items", "bf_items.csv", "--factor-column", "domain",
            "--group-column", "group", "--reference", "A", "--fixed-group-specifics", "--tolerance", "1e-5", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("'B': 1,500 persons, mean -0.5433 (SE 0.0498), SD 1.1817 (SE 0.0494)"), "\(r.stderr)")
        // mirt 1.47 (Fixtures/dif/bf_make.R: 31 points, TOL 1e-6 (ours 1e-5: 34 cycles instead of 47, the same values to 1e-5), B's general mean and variance freed): log-likelihood
        // −20012.6520819, mean −0.54331449 (SE 0.04978962), variance 1.3962358 (SE 0.1168024: SD 1.1816243, SE 0.0494249).
        let summary = try ws.json("bank.summary.json")
        let ll = try #require(summary["log_likelihood"] as? Double)
        #expect(abs(ll - -20012.6520819) < 1e-3, "\(ll)")
        let groups = try #require(summary["groups"] as? [[String: Any]])
        let b = try #require(groups.first { $0["group"] as? String == "B" })
        let mean = try #require(b["mean"] as? Double), sd = try #require(b["sd"] as? Double)
        let meanSE = try #require(b["mean_se"] as? Double), sdSE = try #require(b["sd_se"] as? Double)
        #expect(abs(mean - -0.54331449) < 2e-4 && abs(sd - 1.1816243) < 2e-4, "mean \(mean), SD \(sd)")
        #expect(abs(meanSE - 0.04978962) < 1e-4 && abs(sdSE - 0.0494249) < 1e-4, "SEs \(meanSE), \(sdSE)")
        #expect(summary["group_column"] as? String == "group" && groups.count == 2)
        // mirt's i1: a_general 0.896202, a_s1 1.040246, d 0.060242.
        let rows = try ws.csvRows("bank.csv"), header = rows[0]
        let i1 = try #require(rows.first { $0[0] == "i1" })
        let values = ["a_general", "a_s1", "d"].map { Double(i1[header.firstIndex(of: $0)!])! }
        #expect(zip(values, [0.896202, 1.040246, 0.060242]).allSatisfy { abs($0 - $1) < 5e-4 }, "\(values)")
        // The default: B's specific factors' means and SDs estimated too, as mirt's bfactor(group =, invariance = c(items,
        // "free_means", "free_var")) (bf_make.R's last lines: log-likelihood −20010.7440719; B's means −0.62306878,
        // 0.05557585, 0.15090981, 0.16050999, variances 1.4105962, 0.9879794, 0.7070257, 1.1269510).
        let free = try ws.run(
            "calibrate", "bf_two_groups.csv", "--model", "bifactor", "--items", "bf_items.csv", "--factor-column", "domain",
            "--group-column", "group", "--reference", "A", "--tolerance", "1e-5", "--no-se", "--out", "free.csv")
        #expect(free.status == 0 && free.stderr.contains("s1 mean 0.0556, SD 0.9940"), "\(free.stderr)")
        let freeSummary = try ws.json("free.summary.json")
        #expect(abs(try #require(freeSummary["log_likelihood"] as? Double) - -20010.7440719) < 1e-3)
        let freeB = try #require((freeSummary["groups"] as? [[String: Any]])?.first { $0["group"] as? String == "B" })
        let specifics = try #require(freeB["specific_factors"] as? [[String: Any]])
        let means = [freeB["mean"] as? Double] + specifics.map { $0["mean"] as? Double }
        let variances = ([freeB["sd"] as? Double] + specifics.map { $0["sd"] as? Double }).map { $0.map { $0 * $0 } }
        #expect(zip(means, [-0.62306878, 0.05557585, 0.15090981, 0.16050999]).allSatisfy { abs(($0 ?? .nan) - $1) < 5e-4 }, "\(means)")
        #expect(zip(variances, [1.4105962, 0.9879794, 0.7070257, 1.1269510]).allSatisfy { abs(($0 ?? .nan) - $1) < 1e-3 }, "\(variances)")
        // Freed items do not go with the bifactor model.
        let refused = try ws.run(
            "calibrate", "bf_two_groups.csv", "--model", "bifactor", "--items", "bf_items.csv", "--factor-column", "domain",
            "--group-column", "group", "--reference", "A", "--free-items", "i1", "--out", "x.csv")
        #expect(refused.status == 64 && refused.stderr.contains("--free-items goes with --model 2pl or 3pl"), "\(refused.stderr)")
    }
}
