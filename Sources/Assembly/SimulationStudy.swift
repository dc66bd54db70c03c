import Psychometrics

/// Settings shared by the CAT and the fixed-form simulation studies (`CATSimulation.Options`,
/// `FormSimulation.Options`), checked in one place.
package enum SimulationStudy {
    /// Simulees one study may ask for: 1…1,000,000. Every simulee's outcome is kept until the report is
    /// summed (about 50 bytes each) and each takes a whole adaptive test; 10⁶ simulees put the Monte Carlo
    /// error of every reported rate below 0.001.
    package static let allowedSimulees = 1...1_000_000

    /// θ-bin widths [0.01, 10] and bounds (0, 20] of the conditional recovery figures; the bins are allocated
    /// up front, 2·bound/width + 2 of them.
    package static let allowedBinWidths = NumberRange.closed(0.01, 10)
    package static let allowedBinBounds = NumberRange.aboveUpTo(0, 20)

    /// Problems with a study's settings, naming each as `naming` says (`--simulees`, `--theta-sd`, …).
    package static func validationProblems(
        simulees: Int, thetaMean: Double, thetaSD: Double, threads: Int,
        binWidth: Double, binBound: Double, naming: SettingNaming = .words
    ) -> [String] {
        var problems: [String] = []
        if let p = allowedSimulees.problem(simulees, naming.name("simulees", words: "the number of simulees")) { problems.append(p) }
        if let p = ResponseSimulator.allowedThetaMeans.problem(thetaMean, naming.name("theta_mean", words: "θ mean")) { problems.append(p) }
        if let p = ResponseSimulator.allowedThetaSDs.problem(thetaSD, naming.name("theta_sd", words: "θ SD")) { problems.append(p) }
        problems += WorkerThreads.validationProblems(threads, naming: naming)
        if let p = allowedBinWidths.problem(binWidth, "the θ bin width") { problems.append(p) }
        if let p = allowedBinBounds.problem(binBound, "the θ bin bound") { problems.append(p) }
        return problems
    }
}

extension CATSimulation.Options {
    /// Problems with the study's settings (see `SimulationStudy`).
    package func validationProblems(naming: SettingNaming = .words) -> [String] {
        SimulationStudy.validationProblems(
            simulees: simulees, thetaMean: thetaMean, thetaSD: thetaSD, threads: threads,
            binWidth: binWidth, binBound: binBound, naming: naming)
    }
}

extension FormSimulation.Options {
    /// Standard-error targets whose share is reported: (0, 10] (θ units; 10 is 150 IQ points).
    package static let allowedSETargets = NumberRange.aboveUpTo(0, 10)

    /// Problems with the study's settings (see `SimulationStudy`; `fixedForms` as a blueprint's `forms`).
    package func validationProblems(naming: SettingNaming = .words) -> [String] {
        var problems = SimulationStudy.validationProblems(
            simulees: simulees, thetaMean: thetaMean, thetaSD: thetaSD, threads: threads,
            binWidth: binWidth, binBound: binBound, naming: naming)
        if let seTarget, let p = Self.allowedSETargets.problem(seTarget, naming.name("se_target", words: "the SE target")) { problems.append(p) }
        if let fixedForms, let p = Blueprint.allowedFormCounts.problem(fixedForms, naming.name("forms", words: "the number of forms")) {
            problems.append(p)
        }
        return problems
    }
}
