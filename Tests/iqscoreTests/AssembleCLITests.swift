import Foundation
import Testing
import TestSupport

@Suite("iqscore assemble end to end")
struct AssembleCLITests {
    /// A 120-item six-domain bank written by `iqscore simulate`.
    func bank(_ ws: CLIWorkspace) throws {
        let r = try ws.run(
            "simulate", "--model", "2pl", "--items", "120", "--persons", "1", "--domains",
            "pattern,logic,spatial,math,verbal,memory", "--out", "r.csv", "--bank-out", "bank.csv", "--seed", "3")
        #expect(r.status == 0)
    }

    @Test("writes FORM.csv with the contract columns; exact counts; --exclude and seeds")
    func assemble() throws {
        let ws = try CLIWorkspace()
        try bank(ws)
        try ws.write("bp.json", #"{"length": 12, "domain_counts": {"pattern": 2, "logic": 2, "spatial": 2, "math": 2, "verbal": 2, "memory": 2}}"#)
        try ws.write("seen.csv", "item_id,seen_at\ni0001,2026-01-01\ni0002,2026-01-02\nnot_in_bank,2026-01-03\n")
        let r = try ws.run(
            "assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form.csv", "--exclude", "seen.csv", "--seed", "7", "--forms", "2")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try ws.read("form.csv").split(separator: "\n").map(String.init)
        #expect(lines[0] == "form,position,item_id,domain,a,b,c,difficulty_class,anchor")
        #expect(lines.count == 1 + 24)
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(!rows.contains { $0[2] == "i0001" || $0[2] == "i0002" })
        for form in ["1", "2"] {
            let domains = rows.filter { $0[0] == form }.map { $0[3] }
            #expect(
                Dictionary(grouping: domains, by: { $0 }).mapValues(\.count) == [
                    "pattern": 2, "logic": 2, "spatial": 2, "math": 2, "verbal": 2, "memory": 2
                ])
            #expect(rows.filter { $0[0] == form }.map { $0[1] } == (1...12).map(String.init))
        }
        #expect(r.stderrLines.contains("note: 1 excluded item id is not in the bank"))
        // Same seed, same forms; another seed, other forms.
        let again = try ws.run(
            "assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form2.csv", "--exclude", "seen.csv", "--seed", "7", "--forms", "2")
        #expect(again.status == 0)
        #expect(try ws.read("form2.csv") == ws.read("form.csv"))
        _ = try ws.run("assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form3.csv", "--seed", "8")
        #expect(try ws.read("form3.csv") != ws.read("form.csv"))
    }

    @Test("an infeasible blueprint: exit 1, the named shortfall, no output")
    func infeasible() throws {
        let ws = try CLIWorkspace()
        try bank(ws)
        try ws.write("bp.json", #"{"length": 25, "domain_counts": {"pattern": 25}}"#)
        let before = try ws.contents()
        let r = try ws.run("assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form.csv")
        #expect(r.status == 1)
        #expect(r.stderr == "bp.json: error: the blueprint cannot be met: pattern needs 25 eligible items; the bank has 20 (20 in the domain)\n")
        #expect(try ws.contents() == before)
    }

    @Test("a malformed blueprint is an error naming the file; a bank without domains is the one domain 'all'")
    func badInput() throws {
        let ws = try CLIWorkspace()
        try bank(ws)
        try ws.write("bp.json", #"{"length": 10, "domain_counts": {"pattern": 4}}"#)
        var r = try ws.run("assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form.csv")
        #expect(r.status == 1)
        #expect(r.stderr == "bp.json: error: domain_counts sum to 4, but length is 10\n")
        try ws.write("nodomain.csv", "item_id,a,b,c\ni1,1,0,0\n")
        try ws.write("bp2.json", #"{"length": 1}"#)
        // A bank without a domain column is one domain, "all" (issue 26, item 11).
        r = try ws.run("assemble", "--bank", "nodomain.csv", "--blueprint", "bp2.json", "--out", "form.csv")
        #expect(r.status == 0, "\(r.stderr)")
        try ws.write("bp3.json", #"{"length": 1, "domain_counts": {"pattern": 1}}"#)
        r = try ws.run("assemble", "--bank", "nodomain.csv", "--blueprint", "bp3.json", "--out", "form.csv")
        #expect(r.status == 1)
        #expect(r.stderr.contains("pattern") && r.stderr.contains("all"), "\(r.stderr)")
    }
}
