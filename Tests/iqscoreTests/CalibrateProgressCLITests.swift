import Foundation
import Testing
import TestSupport

// Issue 15, item 6: `calibrate` shows each EM cycle on a terminal (as mirt prints its iterations) and nothing of
// the kind when stderr is piped.

@Suite("calibrate: a progress line per EM cycle on a terminal, silent when piped")
struct CalibrateProgressCLITests {
    @Test("on a pseudo-terminal (script(1)): cycle, log-likelihood, largest change, elapsed; then the standard errors")
    func terminal() throws {
        let binary = try #require(IQScoreCLI.executable)
        let script = URL(fileURLWithPath: "/usr/bin/script")
        try #require(FileManager.default.isExecutableFile(atPath: script.path), "script(1) (util-linux) is needed for a pseudo-terminal")
        let ws = try CLIWorkspace()
        let data = Repository.file("Data/icar16.csv").path
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "CI")
        let command = "'\(binary.path)' calibrate '\(data)' --model 3pl --out bank.csv"
        let run = try IQScoreCLI.launch(
            script, ["-qec", command, "/dev/null"], in: ws.directory, logs: ws.directory, environment: environment, timeout: 120)
        #expect(run.exited && run.status == 0)
        // script(1) puts the terminal's output (stdout and stderr) on its stdout.
        let text = String(decoding: run.stdout, as: UTF8.self)
        #expect(text.contains("\r\u{1B}[KEM cycle 1: log-likelihood -"), "\(text.prefix(300))")
        #expect(text.contains(#/EM cycle [0-9]+: log-likelihood -[0-9]+\.[0-9]{2}, largest change [0-9]\.[0-9]e[-+][0-9]{2}, [0-9]+\.[0-9] s/#))
        // 21 cycles with SQUAREM (the default since issue 13; plain EM, --acceleration none, takes 51).
        #expect(text.contains(#/EM stopped after 21 cycles \([0-9]+\.[0-9] s\); computing standard errors…/#))
        // The line is erased before the summary.
        #expect(text.contains("…\r\u{1B}[Kiqscore calibrate: 3PL on"))
    }

    @Test("piped stderr: the summary only, no carriage returns or escape sequences")
    func piped() throws {
        let ws = try CLIWorkspace()
        let data = Repository.file("Data/icar16.csv").path
        let r = try ws.run("calibrate", data, "--model", "2pl", "--out", "bank.csv")
        #expect(r.status == 0)
        #expect(!r.stderr.contains("\r") && !r.stderr.contains("\u{1B}") && !r.stderr.contains("EM cycle"))
        #expect(r.stderr.hasPrefix("iqscore calibrate: 2PL on "))
    }
}
