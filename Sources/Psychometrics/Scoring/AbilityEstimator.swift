import Foundation

/// How an ability θ is estimated from one response pattern.
public enum AbilityMethod: String, Sendable, Hashable, Codable, CaseIterable {
    /// Expected a posteriori: posterior mean over the quadrature grid; SE = posterior SD (Bock & Mislevy 1982).
    case eap
    /// Maximum a posteriori: mode of log L(θ) + log φ((θ − μ)/σ); SE = (I(θ̂) + 1/σ²)^(−1/2).
    case map
    /// Maximum likelihood: root of the score Σ (u − P) P′/(P(1 − P)); SE = I(θ̂)^(−1/2). All-correct and
    /// all-wrong patterns have no finite ML estimate: θ̂ is set to the bound ±B and flagged `atBound`.
    case ml
    /// Weighted likelihood (Warm 1989): root of Σ (u − P) P′/(PQ) + J(θ)/(2 I(θ)), with
    /// J = Σ P′P″/(PQ); finite for perfect and zero scores; SE = I(θ̂)^(−1/2).
    case wle
}

/// Options for ability estimation. Defaults: EAP with a N(0, 1) prior, 61 points on [−6, 6].
public struct AbilityOptions: Sendable, Hashable, Codable {
    public var method: AbilityMethod = .eap
    /// Prior mean and SD of θ (EAP, MAP).
    public var priorMean = 0.0
    public var priorSD = 1.0
    /// EAP quadrature: points equally spaced on [−thetaBound, thetaBound].
    public var quadraturePoints = 61
    /// ML, MAP and WLE estimates are confined to [−thetaBound, thetaBound] (and flagged when they reach it).
    public var thetaBound = 6.0
    /// Root-finding stops when the step is below this.
    public var tolerance = 1e-9

    public init(method: AbilityMethod = .eap) { self.method = method }

    /// Prior means a setting may ask for: [−10, 10]. θ is in SDs of the calibration population; a prior
    /// centred 10 SDs away (IQ 250) is a unit error, e.g. an IQ-scale mean entered as θ.
    public static let allowedPriorMeans = NumberRange.closed(-10, 10)

    /// Prior SDs a setting may ask for: [0.01, 100]. Below 0.01 the prior alone fixes θ whatever the answers;
    /// above 100 it is flat to double precision on any allowed grid (|θ| ≤ 20), so nothing is gained.
    public static let allowedPriorSDs = NumberRange.closed(0.01, 100)

    /// Root-finding tolerances: (0, 0.01).
    public static let allowedTolerances = NumberRange.open(0, 0.01)

    /// Problems with the options, each naming the setting as `naming` says (`--prior-sd`, `prior_sd`, "prior
    /// SD") with its allowed range.
    public func validationProblems(naming: SettingNaming = .words) -> [String] {
        var problems: [String] = []
        if let p = Self.allowedPriorSDs.problem(priorSD, naming.name("prior_sd", words: "prior SD")) { problems.append(p) }
        if let p = Self.allowedPriorMeans.problem(priorMean, naming.name("prior_mean")) { problems.append(p) }
        problems += QuadratureGrid.validationProblems(points: quadraturePoints, bound: thetaBound, naming: naming)
        // EAP integrates over the grid: a prior narrower than the grid's spacing falls between two points, the
        // posterior sits on one node, and its SD (the SE) is 0 — no score could be reported.
        // (Only once the ranges hold: the point count may be anything before that, Int.min included.)
        if problems.isEmpty && method == .eap, case let spacing = 2 * thetaBound / Double(quadraturePoints - 1), spacing > priorSD {
            problems.append("the θ grid's spacing 2·\(naming.name("theta_bound"))/(\(naming.name("quadrature_points")) − 1) = \(spacing.formatted6) is wider than the \(naming.name("prior_sd", words: "prior SD")) \(priorSD.formatted6), so EAP cannot resolve the prior: narrow the bound or add points")
        }
        if let p = Self.allowedTolerances.problem(tolerance, naming.name("tolerance")) { problems.append(p) }
        return problems
    }
}

/// An ability estimate with its standard error.
public struct AbilityEstimate: Sendable, Hashable, Codable {
    public var theta: Double
    public var standardError: Double
    public var method: AbilityMethod
    public var itemCount: Int
    public var correctCount: Int
    /// The estimate sits at ±thetaBound (ML for an all-correct/all-wrong pattern, or an extreme pattern).
    public var atBound: Bool

    public init(theta: Double, standardError: Double, method: AbilityMethod, itemCount: Int, correctCount: Int, atBound: Bool) {
        self.theta = theta
        self.standardError = standardError
        self.method = method
        self.itemCount = itemCount
        self.correctCount = correctCount
        self.atBound = atBound
    }

    public var isPerfect: Bool { itemCount > 0 && correctCount == itemCount }
    public var isZero: Bool { itemCount > 0 && correctCount == 0 }
}

/// Estimates abilities for response patterns on a fixed set of items.
///
/// Built once from a bank and reused: immutable, `Sendable`, safe to call from many threads at once. EAP reads
/// precomputed log P / log(1 − P) tables (items × nodes); per call it allocates nothing on the heap for
/// patterns up to 256 items.
public struct AbilityEstimator: Sendable {
    public let parameters: [ItemParameters]
    public let options: AbilityOptions
    public let grid: QuadratureGrid
    /// EAP tables in blocks of four nodes (the grid padded to a multiple of 4): for item j, row 2j holds
    /// log(1 − P_j(θ_t)) and row 2j + 1 log P_j(θ_t); padding is 0. The log prior's padding is −1e300 (weight 0).
    private let logPQ: [SIMD4<Double>]
    private let logPrior: [SIMD4<Double>]
    private let paddedPoints: [SIMD4<Double>]
    private let blocks: Int

    public init(parameters: [ItemParameters], options: AbilityOptions = AbilityOptions()) throws {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw CalibrationError("invalid scoring options: " + problems.joined(separator: "; ")) }
        for (j, p) in parameters.enumerated() {
            guard p.discrimination.isFinite, p.difficulty.isFinite, p.guessing.isFinite, p.guessing >= 0, p.guessing < 1 else {
                throw CalibrationError("item \(j + 1) has unusable parameters a = \(p.discrimination.formatted6), b = \(p.difficulty.formatted6), c = \(p.guessing.formatted6)")
            }
        }
        self.parameters = parameters
        self.options = options
        let grid = QuadratureGrid(count: options.quadraturePoints, bound: options.thetaBound)
        self.grid = grid
        let nq = grid.count
        var lp = [Double](repeating: 0, count: parameters.count * nq), lq = lp
        for (j, p) in parameters.enumerated() {
            for t in 0..<nq {
                (lp[j * nq + t], lq[j * nq + t]) = p.logProbabilities(at: grid.points[t])
            }
        }
        let blocks = (nq + 3) / 4
        self.blocks = blocks
        func padded(_ values: some Collection<Double>, fill: Double) -> [SIMD4<Double>] {
            let v = Array(values) + [Double](repeating: fill, count: 4 * blocks - values.count)
            return (0..<blocks).map { SIMD4(v[4 * $0], v[4 * $0 + 1], v[4 * $0 + 2], v[4 * $0 + 3]) }
        }
        var table: [SIMD4<Double>] = []
        table.reserveCapacity(2 * parameters.count * blocks)
        for j in 0..<parameters.count {
            table += padded(lq[(j * nq)..<((j + 1) * nq)], fill: 0)
            table += padded(lp[(j * nq)..<((j + 1) * nq)], fill: 0)
        }
        logPQ = table
        logPrior = padded(grid.points.map { -0.5 * (($0 - options.priorMean) / options.priorSD) * (($0 - options.priorMean) / options.priorSD) },
                          fill: -1e300)
        paddedPoints = padded(grid.points, fill: 0)
    }

    /// Estimates θ from `responses` (0/1) to the items at `items` (indices into `parameters`).
    /// - Precondition: same lengths, indices in range, responses 0 or 1.
    public func estimate(items: some Collection<Int>, responses: some Collection<UInt8>) -> AbilityEstimate {
        precondition(items.count == responses.count, "one response per item, got \(items.count) items and \(responses.count) responses")
        let n = items.count
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { idx in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: n) { resp in
                var k = 0
                for (j, u) in zip(items, responses) {
                    precondition(j >= 0 && j < parameters.count, "item index \(j) out of range")
                    precondition(u <= 1, "responses must be 0 or 1, got \(u)")
                    idx[k] = j
                    resp[k] = u
                    k += 1
                }
                return estimate(UnsafeBufferPointer(idx), UnsafeBufferPointer(resp))
            }
        }
    }

    /// Pointer-based entry point for batch scoring (no copies).
    public func estimate(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> AbilityEstimate {
        let correct = responses.reduce(0) { $0 + Int($1) }
        switch options.method {
        case .eap: return eap(items, responses, correct)
        case .map, .ml, .wle: return root(items, responses, correct)
        }
    }

    // MARK: EAP

    /// Posterior over the grid: log prior + Σ_k log P or log(1 − P) of item k's row, four nodes per step;
    /// weights w_t = exp(ℓ_t − max ℓ) (`exp4`); θ̂ = Σ w θ / Σ w and SE² = Σ w (θ − θ̂)² / Σ w.
    private func eap(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int) -> AbilityEstimate {
        let v = blocks
        return withUnsafeTemporaryAllocation(of: SIMD4<Double>.self, capacity: v) { acc in
            let a = acc.baseAddress!
            var mean = 0.0, variance = 0.0
            logPrior.withUnsafeBufferPointer { prior in
            logPQ.withUnsafeBufferPointer { table in
            paddedPoints.withUnsafeBufferPointer { points in
                // Four blocks (16 nodes) at a time held in registers over all items: the table loads are
                // independent (no read-modify-write of the accumulator through memory), so the cache misses of
                // a session's rows overlap.
                let t = table.baseAddress!
                let n = items.count
                withUnsafeTemporaryAllocation(of: UnsafePointer<SIMD4<Double>>.self, capacity: n) { rows in
                    for k in 0..<n { rows[k] = t + (2 * items[k] + Int(responses[k])) * v }
                    var base = 0
                    while base < v {
                        if base + 4 <= v {
                            var r0 = prior[base], r1 = prior[base + 1], r2 = prior[base + 2], r3 = prior[base + 3]
                            for k in 0..<n {
                                let row = rows[k] + base
                                r0 += row[0]; r1 += row[1]; r2 += row[2]; r3 += row[3]
                            }
                            a[base] = r0; a[base + 1] = r1; a[base + 2] = r2; a[base + 3] = r3
                            base += 4
                        } else {
                            var r0 = prior[base]
                            for k in 0..<n { r0 += rows[k][base] }
                            a[base] = r0
                            base += 1
                        }
                    }
                }
                var m = a[0]
                for i in 1..<v { m = m.replacing(with: a[i], where: a[i] .> m) }
                let top = SIMD4<Double>(repeating: m.max())
                var total = SIMD4<Double>(), first = SIMD4<Double>()
                for i in 0..<v {
                    let w = exp4(a[i] - top)
                    a[i] = w
                    total += w
                    first += w * points[i]
                }
                let sum = total.sum()
                mean = first.sum() / sum
                var second = SIMD4<Double>()
                let center = SIMD4<Double>(repeating: mean)
                for i in 0..<v {
                    let d = points[i] - center
                    second += a[i] * d * d
                }
                variance = second.sum() / sum
            }}}
            let spacing = 2 * options.thetaBound / Double(grid.count - 1)
            if variance < spacing * spacing {
                return refinedEAP(items, responses, correct, mean: mean, step: spacing)
            }
            return AbilityEstimate(theta: mean, standardError: variance.squareRoot(), method: .eap,
                                   itemCount: items.count, correctCount: correct, atBound: false)
        }
    }

    /// EAP for a posterior narrower than the grid's spacing (steep items, long tests): on the fixed grid such a
    /// posterior sits on one or two nodes, so θ snaps to a node and the SD (the SE) collapses towards 0. The
    /// posterior is integrated again on a local grid of 81 nodes, a tenth of the previous spacing apart, around
    /// the mean found so far (clipped to [−B, B]), and again while it is still narrower than that spacing
    /// (at most four times: spacing 0.2 → 0.00002).
    private func refinedEAP(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int,
                            mean start: Double, step coarse: Double) -> AbilityEstimate {
        let bound = options.thetaBound, half = 40
        var mean = start, variance = 0.0, step = coarse
        for _ in 0..<4 {
            step /= 10
            var nodes: [Double] = [], logPost: [Double] = []
            for k in -half...half {
                let theta = mean + Double(k) * step
                if theta < -bound || theta > bound { continue }
                let z = (theta - options.priorMean) / options.priorSD
                var l = -0.5 * z * z
                for i in 0..<items.count {
                    let v = parameters[items[i]].logProbabilities(at: theta)
                    l += responses[i] == 1 ? v.logP : v.logQ
                }
                nodes.append(theta)
                logPost.append(l)
            }
            let top = logPost.max() ?? 0
            var total = 0.0, first = 0.0
            for k in nodes.indices { let w = exp(logPost[k] - top); logPost[k] = w; total += w; first += w * nodes[k] }
            mean = first / total
            var second = 0.0
            for k in nodes.indices { second += logPost[k] * (nodes[k] - mean) * (nodes[k] - mean) }
            variance = second / total
            if variance >= step * step { break }
        }
        return AbilityEstimate(theta: mean, standardError: variance.squareRoot(), method: .eap,
                               itemCount: items.count, correctCount: correct, atBound: false)
    }

    // MARK: ML, MAP, WLE

    /// Score-type quantities at θ: the estimating function g(θ), the test information I(θ), and the objective
    /// whose maximiser is the root (used to choose among several roots).
    @inline(__always)
    private func evaluate(_ theta: Double, _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>)
        -> (g: Double, info: Double, objective: Double)
    {
        var score = 0.0, info = 0.0, warm = 0.0, loglik = 0.0
        for k in 0..<items.count {
            let p = parameters[items[k]]
            // P, Q, P′, P″ and h = P′/(PQ) = a ψ / P (stable for c = 0 and c > 0).
            let (prob, qrob, dP, d2P, h) = ItemResponseFunction.thetaDerivatives(slope: p.discrimination, logit: p.logit(at: theta),
                                                                                 guessing: p.guessing)
            let u = Double(responses[k])
            // (u − P) P′ / (P Q)
            score += (u - prob) * h
            info += dP * h                                        // P′² / (P Q)
            warm += d2P * h                                       // P′ P″ / (P Q)
            loglik += responses[k] == 1 ? log(prob) : log(qrob)
        }
        switch options.method {
        case .ml:
            return (score, info, loglik)
        case .map:
            let z = (theta - options.priorMean) / options.priorSD
            return (score - z / options.priorSD, info + 1 / (options.priorSD * options.priorSD), loglik - 0.5 * z * z)
        case .wle:
            return (score + (info > 0 ? warm / (2 * info) : 0), info, loglik + 0.5 * log(max(info, 1e-300)))
        case .eap:
            preconditionFailure("EAP has no estimating equation")
        }
    }

    /// Finds the root of g on [−B, B]: a coarse scan picks the bracket around the largest objective (so a 3PL
    /// pattern with several roots gets the global maximiser), then safeguarded Newton (bisection when a Newton
    /// step leaves the bracket) refines it.
    private func root(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int) -> AbilityEstimate {
        let bound = options.thetaBound
        func result(_ theta: Double, atBound: Bool) -> AbilityEstimate {
            let info = evaluate(theta, items, responses).info
            let se = info > 0 ? 1 / info.squareRoot() : .infinity
            return AbilityEstimate(theta: theta, standardError: se, method: options.method, itemCount: items.count,
                                   correctCount: correct, atBound: atBound)
        }
        if items.isEmpty {
            return result(options.method == .map ? options.priorMean : 0, atBound: false)
        }
        // Without a lower asymptote the ML/MAP/WLE estimating function is decreasing in θ (the log-likelihood
        // is concave), so it has one root: bracket [−B, B] directly.
        var hasGuessing = false
        for k in 0..<items.count where parameters[items[k]].guessing > 0 { hasGuessing = true; break }
        if !hasGuessing {
            let gHigh = evaluate(bound, items, responses).g, gLow = evaluate(-bound, items, responses).g
            if gHigh >= 0 { return result(bound, atBound: true) }
            if gLow <= 0 { return result(-bound, atBound: true) }
            return refine(lo: -bound, hi: bound, start: options.method == .map ? min(max(options.priorMean, -bound), bound) : 0,
                          items, responses, result)
        }
        // 3PL: a coarse scan finds the bracket of the global maximum.
        let steps = 24
        let h = 2 * bound / Double(steps)
        var best = 0, bestValue = -Double.infinity
        var values = [(g: Double, objective: Double)]()
        values.reserveCapacity(steps + 1)
        for s in 0...steps {
            let v = evaluate(-bound + Double(s) * h, items, responses)
            values.append((v.g, v.objective))
            if v.objective > bestValue { bestValue = v.objective; best = s }
        }
        // Monotone-in-the-limit checks: the maximiser at an end with g still pointing outwards is a boundary
        // estimate (ML for all-correct / all-wrong patterns).
        if best == steps && values[steps].g >= 0 { return result(bound, atBound: true) }
        if best == 0 && values[0].g <= 0 { return result(-bound, atBound: true) }
        // Bracket [lo, hi] with g(lo) > 0 > g(hi) around the best scan point.
        var lo = -bound + Double(max(best - 1, 0)) * h, hi = -bound + Double(min(best + 1, steps)) * h
        var gLo = values[max(best - 1, 0)].g, gHi = values[min(best + 1, steps)].g
        if !(gLo >= 0 && gHi <= 0) {
            // Fall back to the first sign change from + to − anywhere.
            guard let s = (0..<steps).first(where: { values[$0].g >= 0 && values[$0 + 1].g <= 0 }) else {
                let theta = -bound + Double(best) * h
                return result(theta, atBound: best == 0 || best == steps)
            }
            lo = -bound + Double(s) * h; hi = lo + h
            gLo = values[s].g; gHi = values[s + 1].g
        }
        return refine(lo: lo, hi: hi, start: 0.5 * (lo + hi), items, responses, result)
    }

    /// Safeguarded Newton on g within [lo, hi] where g(lo) > 0 > g(hi): a Newton step that leaves the bracket is
    /// replaced by bisection.
    private func refine(lo: Double, hi: Double, start: Double, _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>,
                        _ result: (Double, Bool) -> AbilityEstimate) -> AbilityEstimate {
        let bound = options.thetaBound
        var lo = lo, hi = hi
        var theta = start
        for _ in 0..<100 {
            let v = evaluate(theta, items, responses)
            if v.g > 0 { lo = theta } else { hi = theta }
            // Newton with the (expected) information as the slope of g.
            var next = v.info > 0 ? theta + v.g / v.info : .nan
            if !(next > lo && next < hi) { next = 0.5 * (lo + hi) }
            if abs(next - theta) < options.tolerance || hi - lo < options.tolerance { theta = next; break }
            theta = next
        }
        let atBound = abs(theta) >= bound - 1e-6
        return result(theta, atBound)
    }
}
