import Foundation
import Psychometrics

/// One population margin: the share of `category` of `variable` (e.g. education = high: 0.30).
package struct RakingMargin: Sendable, Hashable, Codable {
    package var variable: String
    package var category: String
    package var share: Double

    package init(variable: String, category: String, share: Double) {
        self.variable = variable
        self.category = category
        self.share = share
    }
}

/// Population margins to rake a sample to: per variable, categories with shares in (0, 1] summing to 1.
package struct RakingTargets: Sendable, Hashable {
    /// Variables in order of first appearance.
    package let variables: [String]
    /// Per variable: its categories in order of appearance, and their shares rescaled to sum to exactly 1.
    package let categories: [[String]]
    package let shares: [[Double]]

    /// How far a variable's shares may sum from 1: 1e-6 (shares written to six decimals).
    package static let shareSumTolerance = 1e-6

    /// Validates the margins: every share finite in (0, 1], no (variable, category) twice, no empty name, and
    /// the shares of each variable summing to 1 within `shareSumTolerance`; they are then rescaled to sum to 1
    /// exactly.
    /// - Throws: `PsychometricsError.invalidOptions` naming the variable, category and value.
    package init(_ margins: [RakingMargin]) throws {
        var variables: [String] = [], categories: [[String]] = [], shares: [[Double]] = []
        var index: [String: Int] = [:]
        var problems: [String] = []
        for m in margins {
            if m.variable.isEmpty || m.category.isEmpty {
                problems.append("a margin needs a variable and a category, got variable '\(m.variable)', category '\(m.category)'")
                continue
            }
            guard m.share.isFinite, m.share > 0, m.share <= 1 else {
                problems.append("margin \(m.variable) = '\(m.category)': share \(m.share) is outside (0, 1]")
                continue
            }
            let v: Int
            if let known = index[m.variable] {
                v = known
            } else {
                v = variables.count
                index[m.variable] = v
                variables.append(m.variable); categories.append([]); shares.append([])
            }
            if categories[v].contains(m.category) {
                problems.append("margin \(m.variable) = '\(m.category)' is given twice")
                continue
            }
            categories[v].append(m.category)
            shares[v].append(m.share)
        }
        if margins.isEmpty { problems.append("no margins given") }
        for v in variables.indices {
            let sum = shares[v].reduce(0, +)
            if abs(sum - 1) > Self.shareSumTolerance {
                problems.append("the shares of \(variables[v]) sum to \(String(format: "%.6f", sum)), not 1 (allowed ±\(Self.shareSumTolerance))")
            }
            shares[v] = shares[v].map { $0 / sum }
        }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, problems.joined(separator: "; ")) }
        self.variables = variables
        self.categories = categories
        self.shares = shares
    }

    /// The margins (shares as rescaled).
    package var margins: [RakingMargin] {
        variables.indices.flatMap { v in
            categories[v].indices.map { RakingMargin(variable: variables[v], category: categories[v][$0], share: shares[v][$0]) }
        }
    }
}

/// Raking options.
package struct RakingOptions: Sendable, Hashable {
    /// Converged when the largest |achieved share − target share| over every margin is at most this (default 1e-10).
    package var tolerance = 1e-10
    /// Sweeps over all variables before giving up (default 1000).
    package var maximumIterations = 1000
    /// Weights above `trimFactor` × the mean weight are cut to it and the sample re-raked (default 5; nil: no
    /// trimming).
    package var trimFactor: Double? = 5
    /// Trim-and-rake rounds before giving up (default 20).
    package var maximumTrimRounds = 20

    package init() {}

    package func validationProblems() -> [String] {
        var problems: [String] = []
        if !(tolerance > 0 && tolerance < 1) { problems.append("the raking tolerance must be in (0, 1), got \(tolerance)") }
        if !(1...1_000_000 ~= maximumIterations) { problems.append("the raking iteration limit must be 1–1000000, got \(maximumIterations)") }
        if let k = trimFactor, !(k > 1 && k <= 1000) { problems.append("the trim factor must be in (1, 1000], got \(k)") }
        if !(0...1000 ~= maximumTrimRounds) { problems.append("the trimming rounds must be 0–1000, got \(maximumTrimRounds)") }
        return problems
    }
}

/// A margin after raking: its target, the weighted share achieved and the unweighted sample share.
package struct AchievedMargin: Sendable, Hashable, Codable {
    package var variable: String
    package var category: String
    package var target: Double
    package var achieved: Double
    package var sample: Double
    package var count: Int

    package init(variable: String, category: String, target: Double, achieved: Double, sample: Double, count: Int) {
        self.variable = variable
        self.category = category
        self.target = target
        self.achieved = achieved
        self.sample = sample
        self.count = count
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case variable, category, target, achieved, sample, count = "n" }
}

/// The outcome of raking: weights (summing to the sum of the base weights), convergence, trimming, design effect.
package struct RakingResult: Sendable, Hashable {
    package var weights: [Double]
    package var converged: Bool
    /// Sweeps in the last raking (all rounds: `totalIterations`).
    package var iterations: Int
    package var totalIterations: Int
    /// max |achieved − target| over every margin at the end.
    package var maximumMarginError: Double
    /// Persons whose weight was cut at least once.
    package var trimmedCount: Int
    package var trimRounds: Int
    package var trimFactor: Double?
    /// Largest final weight / mean weight.
    package var largestWeightRatio: Double
    package var designEffect: KishDesignEffect
    package var margins: [AchievedMargin]
    package var warnings: [String]
}

/// Raking (iterative proportional fitting) of sample weights to population margins: Deming, W. E. & Stephan,
/// F. F. (1940), "On a least squares adjustment of a sampled frequency table when the expected marginal totals
/// are known", Ann. Math. Statist. 11, 427–444; as cNORM uses it for norm samples (Gary, S., Lenhard, W.,
/// Lenhard, A. & Herzberg, D. (2023), "Reducing the bias of norm scores in non-representative samples:
/// weighting as an adjunct to continuous norming methods", Assessment 30(8)).
///
/// ```
/// sweep: for each variable v, for each category c of v:   w_i ← w_i · π_vc · W / W_vc   (i in c)
///        W = Σ w_i (kept),  W_vc = Σ_{i in c} w_i,  π_vc = target share
/// stop:  max_{v,c} |W_vc / W − π_vc| ≤ tolerance
/// trim:  w_i ← min(w_i, k · mean w), then rake again; repeat until no weight exceeds k · mean w
/// ```
/// The raked weights are the base weights times one factor per (variable, category): the solution closest to
/// the base weights in the discrimination-information sense that matches every margin, when one exists (Ireland
/// & Kullback 1968). When none exists (a margin unreachable from the sample's joint distribution), the sweeps
/// do not converge: the result says so, with the margin error reached.
package enum Raking {
    /// Rakes `baseWeights` (nil: all 1) so that the weighted shares of each variable's categories match
    /// `targets`. `values[variable]` holds each person's category of that variable.
    /// - Throws: `PsychometricsError.invalidOptions` when a margin variable is not among `values`, a person's
    ///   category has no margin, a margin's category has no person, lengths differ, or a base weight is not
    ///   positive and finite.
    package static func rake(
        values: [String: [String]], targets: RakingTargets, baseWeights: [Double]? = nil,
        options: RakingOptions = RakingOptions()
    ) throws -> RakingResult {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "raking: " + problems.joined(separator: "; ")) }
        let n = baseWeights?.count ?? values.values.map(\.count).max() ?? 0
        var codes: [[Int]] = []
        var errors: [String] = []
        for (v, variable) in targets.variables.enumerated() {
            guard let column = values[variable] else {
                errors.append(
                    "the margins' variable '\(variable)' is not a column of the sample (columns given: \(values.keys.sorted().joined(separator: ", ")))"
                )
                continue
            }
            guard column.count == n else {
                errors.append("variable '\(variable)' has \(column.count) values for \(n) persons")
                continue
            }
            var index: [String: Int] = [:]
            for (c, category) in targets.categories[v].enumerated() { index[category] = c }
            var code = [Int](repeating: 0, count: n)
            var counts = [Int](repeating: 0, count: targets.categories[v].count)
            var unknown: [String: Int] = [:]
            for (i, category) in column.enumerated() {
                if let c = index[category] { code[i] = c; counts[c] += 1 } else { unknown[category, default: 0] += 1 }
            }
            for (category, count) in unknown.sorted(by: { $0.key < $1.key }) {
                errors.append(
                    "the sample has \(variable) = '\(category.escapingControlCharacters)' (\(count) person\(count == 1 ? "" : "s")), which the margins do not list"
                )
            }
            for (c, count) in counts.enumerated() where count == 0 {
                errors.append(
                    "margin \(variable) = '\(targets.categories[v][c])' (share \(String(format: "%.6f", targets.shares[v][c]))) has no person in the sample; raking cannot give it weight"
                )
            }
            codes.append(code)
        }
        if let w = baseWeights, let bad = w.firstIndex(where: { !($0 > 0 && $0.isFinite) }) {
            errors.append("base weight \(bad + 1) is \(w[bad]); weights must be positive and finite")
        }
        if n == 0 { errors.append("the sample is empty") }
        guard errors.isEmpty else { throw PsychometricsError(.invalidOptions, errors.joined(separator: "; ")) }

        let base = baseWeights ?? [Double](repeating: 1, count: n)
        var weights = base
        let total = base.reduce(0, +)
        var raking = rakeOnce(&weights, codes: codes, targets: targets, total: total, options: options)
        var totalIterations = raking.iterations
        var trimmed = Set<Int>()
        var rounds = 0
        var warnings: [String] = []
        if let k = options.trimFactor {
            while rounds < options.maximumTrimRounds {
                let cap = k * total / Double(n)
                var cut = false
                for i in 0..<n where weights[i] > cap * (1 + 1e-9) {
                    weights[i] = cap
                    trimmed.insert(i)
                    cut = true
                }
                guard cut else { break }
                rounds += 1
                raking = rakeOnce(&weights, codes: codes, targets: targets, total: total, options: options)
                totalIterations += raking.iterations
            }
            let cap = k * total / Double(n)
            let over = weights.filter { $0 > cap * (1 + 1e-9) }.count
            if over > 0 {
                warnings.append(
                    "after \(rounds) trimming round\(rounds == 1 ? "" : "s"), \(over) weight\(over == 1 ? "" : "s") still exceed\(over == 1 ? "s" : "") \(fixedText(k)) × the mean weight (the margins need them)"
                )
            }
        }
        if !raking.converged {
            warnings.append(
                "raking did not converge: after \(raking.iterations) sweeps the largest margin error is \(String(format: "%.3e", raking.error)) (tolerance \(String(format: "%.0e", options.tolerance))); the margins may be unreachable from this sample's joint distribution"
            )
        }
        let mean = total / Double(n)
        var achieved: [AchievedMargin] = []
        for v in targets.variables.indices {
            var weighted = [Double](repeating: 0, count: targets.categories[v].count)
            var counts = [Int](repeating: 0, count: targets.categories[v].count)
            for i in 0..<n { weighted[codes[v][i]] += weights[i]; counts[codes[v][i]] += 1 }
            for c in targets.categories[v].indices {
                achieved.append(
                    AchievedMargin(
                        variable: targets.variables[v], category: targets.categories[v][c], target: targets.shares[v][c],
                        achieved: weighted[c] / total, sample: Double(counts[c]) / Double(n), count: counts[c]))
            }
        }
        return RakingResult(
            weights: weights, converged: raking.converged, iterations: raking.iterations, totalIterations: totalIterations,
            maximumMarginError: raking.error, trimmedCount: trimmed.count, trimRounds: rounds, trimFactor: options.trimFactor,
            largestWeightRatio: (weights.max() ?? 0) / mean, designEffect: KishDesignEffect(weights: weights),
            margins: achieved, warnings: warnings)
    }

    /// IPF sweeps until the margin error is within tolerance; returns sweeps, convergence and the error.
    static func rakeOnce(
        _ weights: inout [Double], codes: [[Int]], targets: RakingTargets, total: Double,
        options: RakingOptions
    ) -> (iterations: Int, converged: Bool, error: Double) {
        var error = marginError(weights, codes: codes, targets: targets, total: total)
        if error <= options.tolerance { return (0, true, error) }
        var iterations = 0
        while iterations < options.maximumIterations {
            iterations += 1
            for v in codes.indices {
                var sums = [Double](repeating: 0, count: targets.shares[v].count)
                for (i, c) in codes[v].enumerated() { sums[c] += weights[i] }
                let factors = sums.indices.map { targets.shares[v][$0] * total / sums[$0] }
                for (i, c) in codes[v].enumerated() { weights[i] *= factors[c] }
            }
            error = marginError(weights, codes: codes, targets: targets, total: total)
            if error <= options.tolerance { return (iterations, true, error) }
            if !error.isFinite { break }
        }
        return (iterations, false, error)
    }

    /// max |W_vc / W − π_vc|.
    static func marginError(_ weights: [Double], codes: [[Int]], targets: RakingTargets, total: Double) -> Double {
        var error = 0.0
        for v in codes.indices {
            var sums = [Double](repeating: 0, count: targets.shares[v].count)
            for (i, c) in codes[v].enumerated() { sums[c] += weights[i] }
            for c in sums.indices { error = max(error, abs(sums[c] / total - targets.shares[v][c])) }
        }
        return error
    }
}
