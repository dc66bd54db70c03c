import Foundation
import Psychometrics

/// One age band of conventional norms: ages [lowerAge, upperAge) (the last band includes its upper age) and the
/// distribution of θ fitted to the band's persons.
package struct NormBand: Sendable, Hashable, Codable {
    package var lowerAge: Double
    package var upperAge: Double
    package var count: Int
    package var effectiveN: Double
    package var distribution: SinhArcsinh
    /// The family the criterion chose: (0, 0, nil, nil) normal, (0, 0, 0, nil) skewed, (0, 0, 0, 0) SHASH.
    package var degrees: SHASHDegrees

    package init(lowerAge: Double, upperAge: Double, count: Int, effectiveN: Double, distribution: SinhArcsinh, degrees: SHASHDegrees) {
        self.lowerAge = lowerAge
        self.upperAge = upperAge
        self.count = count
        self.effectiveN = effectiveN
        self.distribution = distribution
        self.degrees = degrees
    }
}

/// Options of `BandNorms.fit`.
package struct BandNormsOptions: Sendable, Hashable {
    /// Interior band edges in years (ascending); nil: automatic bands of at least `minimumEffectiveN`.
    package var edges: [Double]?
    /// Automatic bands hold at least this many effective persons (Kish n_eff of their weights; default 200).
    package var minimumEffectiveN = 200.0
    package var criterion = InformationCriterion.bic

    package init() {}

    /// n_eff per band allowed: 20–10,000,000.
    package static let allowedMinimumEffectiveN = NumberRange.closed(20, 10_000_000)

    package func validationProblems() -> [String] {
        var problems: [String] = []
        if let p = Self.allowedMinimumEffectiveN.problem(minimumEffectiveN, "the minimum n per band") { problems.append(p) }
        if let edges {
            if edges.contains(where: { !$0.isFinite }) { problems.append("band edges must be finite ages") }
            if zip(edges, edges.dropFirst()).contains(where: { $0 >= $1 }) {
                problems.append("band edges must be strictly increasing, got \(edges.map(fixedText).joined(separator: ", "))")
            }
        }
        return problems
    }
}

/// Conventional age-banded norms: within each band, θ follows one distribution whatever the age.
///
/// ```
/// F_age(θ) = F_b(θ)   for the band b with lowerAge_b ≤ age < upperAge_b
/// F_b = SHASH(μ_b, σ_b, ε_b, δ_b), fitted by weighted ML to the band's persons
/// ```
/// Within a band the weighted empirical distribution is smoothed by a parametric fit — normal, skewed
/// (ε free) or full SHASH (ε, δ free), chosen per band by the criterion — so that F_b is continuous and strictly
/// increasing (an empirical cdf is a step function: percentiles would jump and the area transformation would be
/// undefined between observed θ). Automatic bands cut the age range at weighted age quantiles into
/// ⌊n_eff / minimum⌋ bands, then merge any band below the minimum n_eff into its smaller neighbour; persons of
/// the same age are never split. IQ then jumps at band edges: the reason continuous norming exists (Lenhard et
/// al. 2016), and the comparison `Benchmarks/norms_recovery.sh` makes.
package struct BandNorms: Sendable, Hashable {
    /// Contiguous bands, youngest first.
    package var bands: [NormBand]

    package init(bands: [NormBand]) {
        precondition(!bands.isEmpty, "band norms need at least one band")
        self.bands = bands
    }

    /// The band of `age` (clamped to the covered range).
    package func band(age: Double) -> NormBand {
        var lo = 0, hi = bands.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if bands[mid].lowerAge <= age { lo = mid } else { hi = mid - 1 }
        }
        return bands[lo]
    }

    package var coveredAges: ClosedRange<Double> { bands[0].lowerAge...bands[bands.count - 1].upperAge }

    package func cdf(theta: Double, age: Double) -> Double { band(age: age).distribution.cdf(theta) }

    /// Fits band norms; `warnings` names bands below the minimum n_eff (given edges) and fits that did not
    /// converge.
    /// - Throws: `PsychometricsError.insufficientData` when a band has fewer than 10 persons or no spread of θ,
    ///   `.invalidOptions` for bad options.
    package static func fit(
        ages: [Double], thetas: [Double], weights: [Double]? = nil,
        options: BandNormsOptions = BandNormsOptions()
    ) throws -> (norms: BandNorms, warnings: [String]) {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "band norms: " + problems.joined(separator: "; ")) }
        precondition(ages.count == thetas.count && (weights?.count ?? ages.count) == ages.count, "ages, thetas and weights must have equal lengths")
        guard ages.count >= 10 else { throw PsychometricsError(.insufficientData, "band norms need at least 10 persons, got \(ages.count)") }
        let w = weights ?? [Double](repeating: 1, count: ages.count)
        let order = ages.indices.sorted { ages[$0] < ages[$1] }
        let low = ages[order.first!], high = ages[order.last!]
        var edges: [Double]
        var warnings: [String] = []
        if let given = options.edges {
            edges = given.filter { $0 > low && $0 < high }
            if edges.count < given.count {
                warnings.append(
                    "band edges outside the sample's ages \(fixedText(low))–\(fixedText(high)) were dropped: \(given.filter { !($0 > low && $0 < high) }.map(fixedText).joined(separator: ", "))"
                )
            }
        } else {
            edges = automaticEdges(order: order, ages: ages, weights: w, minimum: options.minimumEffectiveN)
        }
        let bounds = [low] + edges + [high]
        var bands: [NormBand] = []
        var start = 0
        for b in 0..<(bounds.count - 1) {
            let upper = bounds[b + 1], last = b == bounds.count - 2
            var end = start
            while end < order.count && (last || ages[order[end]] < upper) { end += 1 }
            let members = Array(order[start..<end])
            start = end
            let label = "band \(fixedText(bounds[b]))–\(fixedText(upper))"
            guard members.count >= 10 else {
                throw PsychometricsError(
                    .insufficientData,
                    "\(label) has \(members.count) person\(members.count == 1 ? "" : "s"); a band needs at least 10 (choose wider bands)")
            }
            let bandWeights = members.map { w[$0] }
            let kish = KishDesignEffect(weights: bandWeights)
            if options.edges != nil && kish.effectiveN < options.minimumEffectiveN {
                warnings.append(
                    "\(label) has \(fixedText(kish.effectiveN)) effective persons, fewer than the minimum \(fixedText(options.minimumEffectiveN))")
            }
            let likelihood = try SHASHLikelihood(
                ages: members.map { ages[$0] }, thetas: members.map { thetas[$0] }, weights: bandWeights, maximumDegree: 0)
            var best: (SHASHDegrees, SHASHLikelihood.Fit, Double)?
            var previous: SHASHLikelihood.Fit?
            for degrees in [
                SHASHDegrees(location: 0, logScale: 0), SHASHDegrees(location: 0, logScale: 0, skewness: 0),
                SHASHDegrees(location: 0, logScale: 0, skewness: 0, logTailWeight: 0)
            ] {
                let fit = likelihood.fit(degrees, start: previous)
                previous = fit
                let value = options.criterion.value(
                    logLikelihood: fit.logLikelihood, parameters: degrees.parameterCount, effectiveN: likelihood.effectiveN)
                guard fit.converged, value.isFinite else { continue }
                if best == nil || value < best!.2 { best = (degrees, fit, value) }
            }
            guard let (degrees, fit, _) = best else {
                throw PsychometricsError(.numericalFailure, "\(label): no distribution could be fitted to its \(members.count) persons")
            }
            bands.append(
                NormBand(
                    lowerAge: bounds[b], upperAge: upper, count: members.count, effectiveN: kish.effectiveN,
                    distribution: fit.norms.distribution(age: fit.norms.ages.minimum), degrees: degrees))
        }
        return (BandNorms(bands: bands), warnings)
    }

    /// Interior edges at weighted age quantiles k/B, B = ⌊n_eff / minimum⌋, moved up to the next change of age,
    /// then bands below the minimum merged into their smaller neighbour.
    static func automaticEdges(order: [Int], ages: [Double], weights: [Double], minimum: Double) -> [Double] {
        let total = KishDesignEffect(weights: weights).effectiveN
        let count = max(1, Int(total / minimum))
        guard count > 1 else { return [] }
        let sum = weights.reduce(0, +)
        var edges: [Double] = []
        var cumulative = 0.0, k = 1
        for (position, i) in order.enumerated() {
            cumulative += weights[i]
            guard position + 1 < order.count else { break }
            let next = ages[order[position + 1]]
            if cumulative >= sum * Double(k) / Double(count), next > ages[i] {
                edges.append(next)
                k += 1
                if k >= count { break }
            }
        }
        // Merge small bands: per band Σw and Σw², then repeatedly join the smallest band below the minimum to its
        // smaller neighbour (n_eff = (Σw)²/Σw² of the union from the sums).
        var sums = [Double](repeating: 0, count: edges.count + 1), squares = sums
        var b = 0
        for i in order {
            while b < edges.count && ages[i] >= edges[b] { b += 1 }
            sums[b] += weights[i]
            squares[b] += weights[i] * weights[i]
        }
        func neff(_ b: Int) -> Double { squares[b] > 0 ? sums[b] * sums[b] / squares[b] : 0 }
        while !edges.isEmpty, let small = sums.indices.filter({ neff($0) < minimum }).min(by: { neff($0) < neff($1) }) {
            let other = small == 0 ? 1 : small == sums.count - 1 ? small - 1 : (neff(small - 1) <= neff(small + 1) ? small - 1 : small + 1)
            let (keep, drop) = (min(small, other), max(small, other))
            sums[keep] += sums[drop]; squares[keep] += squares[drop]
            sums.remove(at: drop); squares.remove(at: drop)
            edges.remove(at: keep)
        }
        return edges
    }
}
