import Foundation
import Testing
import TestSupport

// The README's samples of the main job (`bash scripts/icar16.sh`) are what its commands print and write: every
// line of the calibrate and score summaries (timings and rates masked) and the bank and score rows shown.

@Suite("README samples come from the commands shown")
struct ReadmeSamplesTests {
    /// Durations and rates vary from run to run: `0.13 s`, `557,388 sessions/s`, `17.5 MB/s` become `# s` etc.
    static func masked(_ line: String) -> String {
        line.replacing(#/[0-9][0-9,.]*( s\b| sessions/s| MB/s)/#) { "#" + $0.output.1 }
    }

    @Test("the main job's summaries, bank row and score rows as the README shows them")
    func mainJob() throws {
        let readme = try String(contentsOf: Repository.file("README.md"), encoding: .utf8)
        let readmeLines = Set(readme.split(separator: "\n", omittingEmptySubsequences: false).map { Self.masked(String($0)) })
        let ws = try CLIWorkspace()
        try FileManager.default.createSymbolicLink(at: ws.url("Data"), withDestinationURL: Repository.file("Data"))
        try FileManager.default.createDirectory(at: ws.url("out"), withIntermediateDirectories: true)

        // The commands exactly as the README lists them.
        let commands = readme.split(separator: "\n").filter {
            $0.hasPrefix("iqscore calibrate Data/icar16.csv") || $0.hasPrefix("iqscore score Data/icar16.csv")
        }
        #expect(commands.count == 3)
        var stderr: [String] = []
        for command in commands {
            let r = try IQScoreCLI.run(command.split(separator: " ").dropFirst().map(String.init), in: ws.directory)
            // The 16 empty rows are not administered, not an error (issue 26, item 9: was exit 2).
            #expect(r.status == 0, "\(r.stderr)")
            stderr.append(r.stderr)
        }
        // Every line of the 3PL calibration's and the score run's stderr.
        for text in [stderr[0], stderr[2]] {
            for line in text.split(separator: "\n") {
                #expect(readmeLines.contains(Self.masked(String(line))), "not in the README: \(line)")
            }
        }
        let bank = try ws.read("out/icar16_bank_3pl.csv").split(separator: "\n")
        #expect(readme.contains(bank[0] + "\n" + bank[1] + "\n…"))
        let scores = try ws.read("out/icar16_scores.csv").split(separator: "\n")
        #expect(readme.contains(scores[0] + "\n" + scores[1] + "\n" + scores[2] + "\n…"))
        #expect(readme.contains(scores[0] + "\n" + scores[1] + "\n```\n\n(the first row of the main job's"))
    }
}

extension IQScoreCLI {
    /// What `iqscore --version` prints.
    static let version = "0.11.0"
}

@Suite("Small truths: --version, JSON paths without escaped slashes")
struct SmallTruthsCLITests {
    @Test("iqscore --version prints the version on stdout, as every subcommand's --version does")
    func version() throws {
        let ws = try CLIWorkspace()
        for arguments in [["--version"], ["score", "--version"]] {
            let r = try IQScoreCLI.run(arguments, in: ws.directory)
            #expect(r.status == 0 && r.stdout == IQScoreCLI.version + "\n" && r.stderr.isEmpty)
        }
    }

    @Test("manifests and reports write paths with plain slashes (no \\/)")
    func slashes() throws {
        let ws = try CLIWorkspace()
        try FileManager.default.createDirectory(at: ws.url("in/sub"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: ws.url("out/sub"), withIntermediateDirectories: true)
        try ws.write("in/sub/BANK.csv", "item_id,a,b,c\nq1,1.2,-1.0,0\nq2,0.8,-0.5,0\nq3,1.5,0.0,0\n")
        try ws.write("in/sub/s.csv", "session_id,q1,q2,q3\nu1,1,0,1\n")
        let r = try ws.run("score", "in/sub/s.csv", "--bank", "in/sub/BANK.csv", "--out", "out/sub/scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let manifest = try ws.read("out/sub/scores.summary.json")
        #expect(manifest.contains("\"in/sub/s.csv\"") && manifest.contains("out/sub/scores.csv") && !manifest.contains("\\/"))
        #expect(manifest.contains("\"iqscore_version\" : \"\(IQScoreCLI.version)\""))
    }
}
