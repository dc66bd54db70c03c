import Foundation
import Integrity
@testable import Psychometrics
import Testing

/// The response-time flags, person fit, preknowledge test, CUSUM and item monitor: hand-computed values, and the
/// false-flag rates on model-generated data the definitions promise.
@Suite("Integrity statistics")
struct IntegrityTests {
    static let population = try! SpeedAccuracyPopulation(speedSD: 0.3, correlation: 0.3)

    /// A 2PL bank with time items.
    static func bank(_ count: Int, seed: UInt64) -> (parameters: [ItemParameters], times: [LognormalTimeItem]) {
        var rng = SeededGenerator(seed: seed)
        let bank = BankSpecification(model: .twoPL, itemCount: count).draw(using: &rng)
        return (bank.items.map(\.parameters), ResponseTimeSimulator.drawItems(count: count, using: &rng))
    }

    @Test func normativeThresholds() throws {
        let matrix = try ResponseMatrix(itemIDs: ["a", "b", "c"], rows: [[1, 0, nil], [0, 1, nil]])
        let times = try ResponseTimes(rows: [[40, 150, nil], [60, 250, nil]], for: matrix)
        let nt10 = RapidGuessThresholds.normative(matrix: matrix, times: times)
        #expect(nt10.seconds == [5, 10, 0]) // 10% of 50 s; 10% of 200 s capped at 10 s; no times
        let model = RapidGuessThresholds.normative(
            items: [try LognormalTimeItem(timeIntensity: log(30), timeDiscrimination: 2)], population: Self.population)
        // E[T] = exp(β + (σ² + 1/α²)/2) = 30·exp((0.09 + 0.25)/2)
        #expect(abs(model.seconds[0] - 3 * exp(0.17)) < 1e-12)
        let lognormal = RapidGuessThresholds.lognormal(
            items: [try LognormalTimeItem(timeIntensity: log(30), timeDiscrimination: 2)], population: Self.population,
            quantile: 0.001)
        #expect(abs(lognormal.seconds[0] - 30 * exp(-3.090232306167813 * 0.34.squareRoot())) < 1e-9)
    }

    /// On engaged, model-generated sessions the lognormal rule flags its quantile's share of responses (q = 0.01:
    /// 0.01 ± 3 binomial SEs over 100,000 responses) and NT10 almost none; rapid guesses of 1–4 s are caught by both.
    @Test func falseFlagsAndDetection() throws {
        let (parameters, times) = Self.bank(50, seed: 2)
        let simulator = ResponseTimeSimulator(items: times, population: Self.population)
        let lognormal = RapidGuessThresholds.lognormal(items: times, population: Self.population, quantile: 0.01)
        let nt10 = RapidGuessThresholds.normative(items: times, population: Self.population)
        var rng = SeededGenerator(seed: 3)
        var flagged = 0, flaggedNT = 0, total = 0, caught = 0, caughtNT = 0
        for _ in 0..<2000 {
            let theta = RandomVariate.normal(using: &rng), tau = simulator.speed(theta: theta, using: &rng)
            for j in 0..<50 {
                let t = simulator.seconds(item: j, speed: tau, using: &rng)
                total += 1
                if lognormal.isRapid(item: j, seconds: t) { flagged += 1 }
                if nt10.isRapid(item: j, seconds: t) { flaggedNT += 1 }
                let guess = 1 + 3 * RandomVariate.uniform(using: &rng)
                if lognormal.isRapid(item: j, seconds: guess) { caught += 1 }
                if nt10.isRapid(item: j, seconds: guess) { caughtNT += 1 }
            }
        }
        let rate = Double(flagged) / Double(total), se = (0.01 * 0.99 / Double(total)).squareRoot()
        #expect(abs(rate - 0.01) < 3 * se, "lognormal rule flags \(rate)")
        // NT10 flags P(T < 0.1 E[T]) ≈ 0.3% of an engaged population's responses here (0.5% measured); a guess of
        // 1–4 s falls below the lognormal rule's threshold (0.18 × the median time at q = 0.01) on all but the
        // quickest items.
        #expect(Double(flaggedNT) / Double(total) < 0.01, "NT10 flags \(Double(flaggedNT) / Double(total))")
        #expect(Double(caught) / Double(total) > 0.8 && Double(caughtNT) / Double(total) > 0.6, "caught \(caught) and \(caughtNT) of \(total)")
        _ = parameters
    }

    @Test func effort() {
        let thresholds = RapidGuessThresholds(rule: .nt10, seconds: [5, 5, 5, 5])
        let e = ResponseTimeEffort(items: [0, 1, 2, 3], seconds: [2, 30, .nan, 4.9], thresholds: thresholds)
        #expect(e.timedResponses == 3 && e.rapidGuesses == 2 && e.rapidPositions == [0, 3])
        #expect(abs(e.effort - 1.0 / 3) < 1e-12 && e.isDisengaged)
        #expect(ResponseTimeEffort(items: [0], seconds: [.nan], thresholds: thresholds).effort == 1)
    }

    /// Two items, α = 1, β = 0, times e⁰ and e⁻²: τ̂ = 1, residuals ±1, l_t = 2 on 1 df, p = P(χ²₁ ≥ 2) = 0.157299…
    @Test func personFitKnownValue() throws {
        let item = try LognormalTimeItem(timeIntensity: 0, timeDiscrimination: 1)
        let fit = LognormalPersonFit(items: [item, item, nil], seconds: [1, exp(-2), 5])
        #expect(fit.count == 2 && abs(fit.speed - 1) < 1e-12)
        #expect(abs(fit.statistic! - 2) < 1e-12)
        #expect(abs(fit.pValue! - 0.15729920705028513) < 1e-12)
        #expect(abs(fit.residuals[0] - 1) < 1e-12 && abs(fit.residuals[1] + 1) < 1e-12 && fit.residuals[2].isNaN)
        #expect(LognormalPersonFit(items: [item], seconds: [3]).statistic == nil)
    }

    /// l_t's p-values are uniform on model-generated sessions (exact χ²): 5% below 0.05 (± 3 SEs over 4,000), and
    /// sessions whose times on a third of the items come from a 10× faster speed are flagged far more often.
    @Test func personFitCalibration() {
        let (_, times) = Self.bank(25, seed: 4)
        let simulator = ResponseTimeSimulator(items: times, population: Self.population)
        var rng = SeededGenerator(seed: 5)
        var below = 0, aberrantBelow = 0
        let n = 4000
        for _ in 0..<n {
            let tau = simulator.speed(theta: RandomVariate.normal(using: &rng), using: &rng)
            let seconds = (0..<25).map { simulator.seconds(item: $0, speed: tau, using: &rng) }
            if LognormalPersonFit(items: times, seconds: seconds).pValue! < 0.05 { below += 1 }
            let aberrant = seconds.enumerated().map { $0.offset % 3 == 0 ? $0.element / 10 : $0.element }
            if LognormalPersonFit(items: times, seconds: aberrant).pValue! < 0.05 { aberrantBelow += 1 }
        }
        let rate = Double(below) / Double(n)
        #expect(abs(rate - 0.05) < 3 * (0.05 * 0.95 / Double(n)).squareRoot(), "false flags \(rate)")
        #expect(Double(aberrantBelow) / Double(n) > 0.95)
    }

    /// The speed statistic by hand: C = {item 0}, U = {item 1}, α = 1, β = 0, log t = −1 and 0: τ̂_C = 1, τ̂_U = 0,
    /// z = 1/√2. Responses: all correct on C and all wrong on U gives a positive signed LR.
    @Test func preknowledgeKnownValues() throws {
        let item = try LognormalTimeItem(timeIntensity: 0, timeDiscrimination: 1)
        let p = ItemParameters(discrimination: 1.5, difficulty: 0)
        let test = PreknowledgeTest(
            items: [0, 1], responses: [1, 0], seconds: [exp(-1), 1], parameters: [p, p], timeItems: [item, item],
            compromised: [true, false])
        #expect(abs(test.speedStatistic! - 1 / 2.0.squareRoot()) < 1e-12)
        #expect(abs(test.speedPValue! - (1 - StandardNormal.cdf(1 / 2.0.squareRoot()))) < 1e-12)
        #expect(test.responseStatistic! > 0)
        let x = -2 * (log(test.responsePValue!) + log(test.speedPValue!))
        #expect(abs(test.combinedPValue! - ChiSquare.upperTail(x, degreesOfFreedom: 4)) < 1e-12)
        // No compromised item answered: no test.
        let none = PreknowledgeTest(items: [1], responses: [1], seconds: [1], parameters: [p, p], timeItems: [item, item], compromised: [true, false])
        #expect(none.combinedPValue == nil)
    }

    /// On honest sessions (30 items, 10 of them suspected) the combined test flags about its level (1%: within
    /// 0.3–2.5% over 3,000 sessions; the response LR is asymptotic), and sessions that knew the 10 items (correct
    /// with probability 0.95, in a fifth of their usual time) are flagged at least 90% of the time.
    @Test func preknowledgeRates() {
        let (parameters, times) = Self.bank(30, seed: 6)
        let simulator = ResponseTimeSimulator(items: times, population: Self.population)
        let compromised = (0..<30).map { $0 < 10 }
        var rng = SeededGenerator(seed: 7)
        var honest = 0, cheaters = 0
        let n = 3000
        for s in 0..<n {
            let theta = RandomVariate.normal(using: &rng), tau = simulator.speed(theta: theta, using: &rng)
            let knows = s % 2 == 1
            var responses: [UInt8] = [], seconds: [Double] = []
            for j in 0..<30 {
                var t = simulator.seconds(item: j, speed: tau, using: &rng)
                var correct = RandomVariate.uniform(using: &rng) < parameters[j].probability(at: theta)
                if knows && compromised[j] {
                    correct = RandomVariate.uniform(using: &rng) < 0.95
                    t /= 5
                }
                responses.append(correct ? 1 : 0)
                seconds.append(t)
            }
            let test = PreknowledgeTest(
                items: Array(0..<30), responses: responses, seconds: seconds, parameters: parameters, timeItems: times,
                compromised: compromised)
            if test.combinedPValue! < 0.01 { if knows { cheaters += 1 } else { honest += 1 } }
        }
        let falseRate = Double(honest) / Double(n / 2), power = Double(cheaters) / Double(n / 2)
        #expect(falseRate > 0.003 && falseRate < 0.025, "false flags \(falseRate)")
        #expect(power > 0.9, "detection \(power)")
    }

    @Test func cusumByHand() {
        var c = CUSUM(k: 0.5, h: 2)
        // S: 0, 0.5, 1.0, 2.0 → alarm at the 4th (index 3); the run began at index 1.
        #expect(c.add(0) == nil && c.value == 0)
        #expect(c.add(1) == nil && c.value == 0.5)
        #expect(c.add(1) == nil && c.value == 1)
        #expect(c.add(1.5) == nil && c.value == 2)
        // Alarm: the run is x = 1, 1, 1.5, 0.6; the tail sums² / length: 0.36, 4.41/2, 9.61/3, 16.81/4 → the
        // change at the run's first observation, index 1.
        #expect(c.add(0.6) == 1 && c.value == 0)
        #expect(c.add(-3) == nil && c.value == 0)
    }

    /// In control (x ~ N(0, 1)), k = 0.5 and h = 5 raise about one alarm per 930 observations (Montgomery's table:
    /// ARL₀ ≈ 930): 200,000 observations give 150–330.
    @Test func cusumFalseAlarmRate() {
        var rng = SeededGenerator(seed: 8)
        var c = CUSUM(k: 0.5, h: 5)
        var alarms = 0
        for _ in 0..<200_000 where c.add(RandomVariate.normal(using: &rng)) != nil { alarms += 1 }
        #expect(alarms > 150 && alarms < 330, "\(alarms) alarms")
    }

    /// 40 items over 60 days, 150 sessions a day of 20 items each; from day 30 on, 30% of the sessions know items
    /// 0–4 (correct with probability 0.95, in a fifth of the time). Each leaked item alarms within 7 days with the
    /// change estimated within days 25–36; at most two of the 35 others alarm at all.
    @Test func monitorFindsALeak() throws {
        let (parameters, times) = Self.bank(40, seed: 9)
        let simulator = ResponseTimeSimulator(items: times, population: Self.population)
        let responses = ResponseSimulator(parameters: parameters, itemsPerSession: 20)
        var rng = SeededGenerator(seed: 10)
        var sessions: [DatedSession] = []
        var timeRNG = SeededGenerator(seed: 11)
        for day in 0..<60 {
            var drawn: [ResponseSimulator.Session] = []
            responses.generate(count: 150, using: &rng) { drawn.append($0) }
            for session in drawn {
                let tau = simulator.speed(theta: session.theta, using: &timeRNG)
                let knows = day >= 30 && RandomVariate.uniform(using: &timeRNG) < 0.3
                var items: [Int] = [], answers: [UInt8] = [], seconds: [Double] = []
                for (j, u) in session.responses {
                    var t = simulator.seconds(item: j, speed: tau, using: &timeRNG), answer = u
                    if knows && j < 5 {
                        answer = RandomVariate.uniform(using: &timeRNG) < 0.95 ? 1 : 0
                        t /= 5
                    }
                    items.append(j); answers.append(answer); seconds.append(t)
                }
                sessions.append(DatedSession(day: 20_000 + day, items: items, responses: answers, seconds: seconds))
            }
        }
        let monitor = ItemMonitor(parameters: parameters, timeItems: times, estimator: try AbilityEstimator(parameters: parameters))
        let report = monitor.run(sessions)
        for j in 0..<5 {
            let first = try #require(report.alarms.first { $0.item == j }, "item \(j) never alarmed")
            #expect(first.day - 20_030 <= 7, "item \(j) alarmed on day \(first.day - 20_000)")
            #expect((25...36).contains(first.changeDay - 20_000), "item \(j) change estimated on day \(first.changeDay - 20_000)")
        }
        let falseItems = Set(report.alarms.filter { $0.item >= 5 }.map(\.item))
        #expect(falseItems.count <= 2, "false alarms on \(falseItems.sorted())")
        #expect(report.days.count == Set(report.days.map { "\($0.item)-\($0.day)" }).count)
    }
}
