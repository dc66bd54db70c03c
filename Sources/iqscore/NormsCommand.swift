import ArgumentParser
import Norming

/// `iqscore norms`: build norm-referenced, age-specific norms from a norm sample, and print norm tables.
struct NormsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "norms",
        abstract: "Build age-specific IQ norms from a weighted norm sample (NORMS.json), and write norm tables.",
        discussion: """
            build: a norm sample (age, θ, categorical variables) is weighted — raked to population margins, or \
            by a weight column — and the distribution of θ is modelled as a smooth function of age (continuous \
            norms, sinh–arcsinh in age) or per age band; the result is NORMS.json with an optional HTML report. \
            table: the IQ and percentile of every (age, θ) on a grid, as a test manual prints them.
            """,
        subcommands: [NormsBuildCommand.self, NormsTableCommand.self]
    )
}

extension NormingMethod: ExpressibleByArgument {}
extension InformationCriterion: ExpressibleByArgument {}
extension IQTransformation: ExpressibleByArgument {}
