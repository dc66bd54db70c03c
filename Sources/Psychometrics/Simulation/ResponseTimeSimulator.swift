import Foundation

/// Draws response times under the hierarchical speed–accuracy model (`SpeedAccuracyPopulation`,
/// `LognormalTimeItem`): a person's speed given ability, τ | θ ~ N(κ z, s²) with z = (θ − μ_θ)/σ_θ (the model's θ
/// is standard normal; a simulation may shift and scale it), then each response's time
/// log t = β − τ + ε/α, ε ~ N(0, 1), in seconds within `ResponseTimes.allowedSeconds`.
package struct ResponseTimeSimulator: Sendable {
    package var items: [LognormalTimeItem]
    package var population: SpeedAccuracyPopulation
    /// μ_θ and σ_θ of the simulated abilities (`ResponseSimulator.thetaMean`, `thetaSD`).
    package var thetaMean = 0.0
    package var thetaSD = 1.0

    package init(items: [LognormalTimeItem], population: SpeedAccuracyPopulation) {
        self.items = items
        self.population = population
    }

    /// Time intensities of drawn items: β ~ N(`intensityMean`, `intensitySD`²); time discriminations
    /// α = exp(N(log `discriminationMedian`, `discriminationSDLog`²)). The defaults — median item time e^3.4 ≈ 30 s,
    /// α ≈ 1.5 — are those of timed reasoning items (van der Linden 2006 reports α of 1.2–2.5 and β spread ~0.5).
    package static func drawItems(
        count: Int, intensityMean: Double = 3.4, intensitySD: Double = 0.5, discriminationMedian: Double = 1.5,
        discriminationSDLog: Double = 0.2, using rng: inout some RandomNumberGenerator
    ) -> [LognormalTimeItem] {
        (0..<count).map { _ in
            let beta = RandomVariate.normal(mean: intensityMean, sd: intensitySD, using: &rng)
            let alpha = exp(RandomVariate.normal(mean: log(discriminationMedian), sd: discriminationSDLog, using: &rng))
            return LognormalTimeItem(
                checkedTimeIntensity: min(max(beta, LognormalTimeItem.allowedTimeIntensities.lower), LognormalTimeItem.allowedTimeIntensities.upper),
                timeDiscrimination: min(max(alpha, 0.05), 100))
        }
    }

    /// τ for a person of ability θ.
    package func speed(theta: Double, using rng: inout some RandomNumberGenerator) -> Double {
        let z = (theta - thetaMean) / thetaSD
        return population.slope * z + RandomVariate.normal(mean: 0, sd: population.residualVariance.squareRoot(), using: &rng)
    }

    /// The time of a response to item j at speed τ, in seconds (clamped into `ResponseTimes.allowedSeconds`).
    package func seconds(item j: Int, speed tau: Double, using rng: inout some RandomNumberGenerator) -> Double {
        let item = items[j]
        let y = item.timeIntensity - tau + RandomVariate.normal(mean: 0, sd: 1, using: &rng) / item.timeDiscrimination
        return min(max(exp(y), Double(ResponseTimes.allowedSeconds.lowerBound)), Double(ResponseTimes.allowedSeconds.upperBound))
    }
}

extension ResponseSimulator {
    /// Convenience for tests: sessions as a `ResponseMatrix` with their `ResponseTimes`, the true θs and τs. The
    /// responses are those `matrix(count:itemIDs:using:)` draws from the same generator state only when no times
    /// are drawn in between, so the two are not interchangeable.
    package func timedMatrix(count: Int, itemIDs: [String], times: ResponseTimeSimulator, using rng: inout some RandomNumberGenerator)
        -> (matrix: ResponseMatrix, times: ResponseTimes, thetas: [Double], speeds: [Double])
    {
        var offsets = [0], items: [Int32] = [], values: [UInt8] = [], seconds: [Float] = [], thetas: [Double] = [], speeds: [Double] = []
        var sessions: [Session] = []
        generate(count: count, using: &rng) { sessions.append($0) }
        for session in sessions {
            let tau = times.speed(theta: session.theta, using: &rng)
            thetas.append(session.theta)
            speeds.append(tau)
            for (j, u) in session.responses.sorted(by: { $0.item < $1.item }) {
                items.append(Int32(j))
                values.append(u)
                seconds.append(Float(times.seconds(item: j, speed: tau, using: &rng)))
            }
            offsets.append(items.count)
        }
        let ids = (0..<count).map { "s\($0 + 1)" }
        let counts = categoryModels.isEmpty ? nil : categoryModels.map { $0?.categoryCount ?? 2 }
        let matrix = ResponseMatrix(
            validatedPersonIDs: ids, itemIDs: itemIDs, rowOffsets: offsets, itemIndices: items, responses: values,
            categoryCounts: counts)
        return (matrix, ResponseTimes(validatedSeconds: seconds), thetas, speeds)
    }
}
