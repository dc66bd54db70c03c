import ArgumentParser
import Psychometrics
import PsychometricsIO

/// The `iqscore` executable: its subcommands, version and exit status. (`IQScore` is the library's IQ value.)
@main
struct IQScoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iqscore",
        abstract: "Psychometric engine: calibrate IRT item banks, score sessions to IQ, build age norms, assemble forms, simulate CAT.",
        discussion: """
            Exit status: 0 success; 1 failure (bad input or an error, named on stderr, or score rejected every \
            session; no output file is written); 2 score scored some sessions and rejected others (listed in \
            the rejects file), or assemble \
            wrote forms with a relaxed rule (listed on stderr); 3 calibrate (EM), link (Haebara/Stocking–Lord) \
            or norms build (raking or the fit) did not converge (the output is written, with a warning); 64 usage \
            error.
            """,
        version: iqscoreVersion,
        subcommands: [
            CalibrateCommand.self, ScoreCommand.self, AnalyzeCommand.self, ReportCommand.self, AssembleCommand.self, SimulateCommand.self,
            CATCommand.self, LinkCommand.self, DIFCommand.self, MonitorCommand.self, NormsCommand.self, VerifyCommand.self, ServeCommand.self
        ]
    )
}
