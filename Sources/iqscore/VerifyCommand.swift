import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check that a run's outputs are the complete set its manifest describes.",
        discussion: """
            MANIFEST is the summary JSON that `score` and `calibrate` write last (--summary-json): it lists each \
            output with its row count, size and CRC-32 (zlib's). verify reads every listed file and compares. \
            A run that was interrupted leaves no manifest, or one whose files do not match.

            Exit status: 0 every output matches; 1 a file is missing, differs, or MANIFEST is not a manifest \
            (each problem on stderr).
            """
    )

    @Argument(help: "Manifest JSON (score or calibrate --summary-json).")
    var manifest: String

    func run() throws {
        let problems = OutputSet.verify(manifest: manifest)
        if problems.isEmpty {
            printError("\(manifest): complete; every output matches its size and CRC-32")
            return
        }
        for problem in problems { printError("error: \(problem)") }
        throw ExitCode(ExitStatus.failure)
    }
}
