import Foundation
import Psychometrics

/// One session as the item monitor reads it: its date (days since 1970-01-01), the bank indices it answered, its
/// responses (0/1) and times in seconds (NaN: none).
package struct DatedSession: Sendable, Hashable {
    package var day: Int
    package var items: [Int]
    package var responses: [UInt8]
    package var seconds: [Double]

    package init(day: Int, items: [Int], responses: [UInt8], seconds: [Double]) {
        self.day = day
        self.items = items
        self.responses = responses
        self.seconds = seconds
    }
}

/// Watches every item of a bank over time for the signature of a leak: from some date on, the item answered
/// correctly more often and faster than the test takers' ability and speed predict.
///
/// Each session's ability θ̂ (EAP from its responses, `AbilityEstimator`) and speed τ̂ (the lognormal ML speed,
/// `LognormalPersonFit`) give each response two standardised residuals,
/// ```
/// e = (u − P(θ̂)) / √(P(θ̂)(1 − P(θ̂)))          z = α (log t − (β − τ̂))
/// ```
/// and each item and day with responses the statistic (e up and z down when an item leaks; each N(0, 1) on a day
/// with nothing changed, a little narrower since θ̂ and τ̂ include the item)
/// ```
/// x_d = (Σ_d e / √n_d − Σ_d z / √m_d) / √2            (m_d timed responses; without any, Σ e / √n_d)
/// ```
/// fed to an upward `CUSUM` per item (k = 0.5: a shift of one SD detected fastest; h = 8: about one false alarm in
/// 19,000 item-days). An alarm names the item, the day it fired and the estimated day the change began. Each item-day
/// also reports its moving window (the last `windowDays` days): proportion correct and time intensity
/// β̂ = mean(log t + τ̂) beside the bank's β.
package struct ItemMonitor: Sendable {
    package var parameters: [ItemParameters]
    package var timeItems: [LognormalTimeItem?]
    package var estimator: AbilityEstimator
    package var reference = 0.5
    package var threshold = 8.0
    package var windowDays = 7
    /// Responses faster than these thresholds (rapid guesses) are left out of everything (nil: none): a burst of
    /// disengaged sessions is fast and wrong, which is not a leak but moves the residuals.
    package var rapidGuesses: RapidGuessThresholds?

    /// Window lengths: 1…365 days.
    package static let allowedWindowDays = 1...365

    package init(parameters: [ItemParameters], timeItems: [LognormalTimeItem?], estimator: AbilityEstimator) {
        self.parameters = parameters
        self.timeItems = timeItems
        self.estimator = estimator
    }

    /// One item on one day.
    package struct ItemDay: Sendable, Hashable {
        package var item: Int
        package var day: Int
        package var responses: Int
        package var timed: Int
        package var correct: Int
        /// Σe/√n and −Σz/√m (positive: faster than predicted), and x_d.
        package var responseResidual: Double
        package var timeResidual: Double?
        package var statistic: Double
        /// The CUSUM after this day (0 right after an alarm).
        package var cusum: Double
        package var alarm: Bool
        /// The trailing window: responses, proportion correct, time intensity (nil without times).
        package var windowResponses: Int
        package var windowProportionCorrect: Double
        package var windowTimeIntensity: Double?
    }

    package struct Alarm: Sendable, Hashable {
        package var item: Int
        /// The day the CUSUM crossed h, and the estimated first day of the change.
        package var day: Int
        package var changeDay: Int
    }

    package struct Report: Sendable {
        /// Item-days in item order, then day order.
        package var days: [ItemDay]
        package var alarms: [Alarm]
        package var sessions: Int
    }

    /// Runs the monitor over `sessions` (any order; each day's sessions are taken together).
    package func run(_ sessions: [DatedSession]) -> Report {
        struct Accumulator { var n = 0, m = 0, correct = 0; var e = 0.0, z = 0.0, intensity = 0.0 }
        var perItem = [[Int: Accumulator]](repeating: [:], count: parameters.count)
        for var s in sessions where !s.items.isEmpty {
            if let rapid = rapidGuesses {
                let keep = s.items.indices.filter { s.seconds[$0].isNaN || !rapid.isRapid(item: s.items[$0], seconds: s.seconds[$0]) }
                if keep.count < s.items.count {
                    s = DatedSession(
                        day: s.day, items: keep.map { s.items[$0] }, responses: keep.map { s.responses[$0] }, seconds: keep.map { s.seconds[$0] })
                    if s.items.isEmpty { continue }
                }
            }
            let theta = estimator.estimate(s.items.withUnsafeBufferPointer { $0 }, s.responses.withUnsafeBufferPointer { $0 }).theta
            let fit = LognormalPersonFit(items: s.items.map { timeItems[$0] }, seconds: s.seconds)
            for (k, j) in s.items.enumerated() {
                let p = min(max(parameters[j].probability(at: theta), 1e-6), 1 - 1e-6)
                var a = perItem[j][s.day] ?? Accumulator()
                a.n += 1
                a.correct += Int(s.responses[k])
                a.e += (Double(s.responses[k]) - p) / (p * (1 - p)).squareRoot()
                let r = fit.residuals[k]
                if !r.isNaN {
                    a.m += 1
                    a.z += r
                    a.intensity += log(s.seconds[k]) + fit.speed
                }
                perItem[j][s.day] = a
            }
        }
        var days: [ItemDay] = [], alarms: [Alarm] = []
        for j in 0..<parameters.count {
            let ordered = perItem[j].sorted { $0.key < $1.key }
            var cusum = CUSUM(k: reference, h: threshold)
            var window: [(day: Int, a: Accumulator)] = []
            var inWindow = Accumulator()
            for (day, a) in ordered {
                window.append((day, a))
                inWindow.n += a.n; inWindow.m += a.m; inWindow.correct += a.correct; inWindow.intensity += a.intensity
                while let first = window.first, first.day <= day - windowDays {
                    inWindow.n -= first.a.n; inWindow.m -= first.a.m; inWindow.correct -= first.a.correct; inWindow.intensity -= first.a.intensity
                    window.removeFirst()
                }
                let eStat = a.e / Double(a.n).squareRoot()
                let zStat: Double? = a.m > 0 ? -a.z / Double(a.m).squareRoot() : nil
                let x = zStat.map { (eStat + $0) / 2.0.squareRoot() } ?? eStat
                let change = cusum.add(x)
                if let change { alarms.append(Alarm(item: j, day: day, changeDay: ordered[change].key)) }
                days.append(
                    ItemDay(
                        item: j, day: day, responses: a.n, timed: a.m, correct: a.correct, responseResidual: eStat, timeResidual: zStat,
                        statistic: x, cusum: cusum.value, alarm: change != nil, windowResponses: inWindow.n,
                        windowProportionCorrect: Double(inWindow.correct) / Double(inWindow.n),
                        windowTimeIntensity: inWindow.m > 0 ? inWindow.intensity / Double(inWindow.m) : nil))
            }
        }
        return Report(days: days, alarms: alarms, sessions: sessions.count)
    }
}
