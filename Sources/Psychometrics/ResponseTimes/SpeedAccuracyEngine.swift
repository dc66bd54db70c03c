import CKernels
import Foundation

/// The EM state of a joint calibration of the hierarchical speed–accuracy model (van der Linden 2007): the IRT
/// items (an `EMEngine`, whose item M-step it reuses), the lognormal time items (β, log α) and the population
/// (κ, log s) of `SpeedAccuracyPopulation`. Internal: `SpeedAccuracyCalibrator` validates and wraps it.
///
/// The speed τ is integrated out in closed form (`SessionTimeEvidence`), so the E-step stays one-dimensional: on
/// the θ grid each person's log posterior is
/// ```
/// log π_q + Σⱼ log P(uᵢⱼ | θ_q) + linearᵢ θ_q + quadraticᵢ θ_q²
/// ```
/// whose weights give the IRT items' expected counts (as `EMEngine`'s sparse E-step) and E[θ], E[θ²]; with
/// τ | θ, t ~ N(Aᵢ + Bᵢθ, Vᵢ) they give E[τᵢ], Var[τᵢ], E[θτ], E[τ²]. The M-step: the IRT items as `EMEngine`
/// does from the counts, and in closed form (the expected complete-data log-likelihood is Gaussian in them)
/// ```
/// βⱼ = (1/nⱼ) Σᵢ (log tᵢⱼ + E τᵢ)
/// 1/αⱼ² = (1/nⱼ) Σᵢ [(βⱼ − log tᵢⱼ − E τᵢ)² + Var τᵢ]
/// κ = Σᵢ E[θτ] / Σᵢ E[θ²],   s² = (1/N) Σᵢ E[(τ − κθ)²]
/// ```
/// (sums over the persons with a time on item j, and over all persons). The cycles, SQUAREM and the stopping rule
/// are `EMRun`'s, over the natural parameters (a, d, c, β, α, σ_τ, ρ).
struct SpeedAccuracyEngine: EMIterable {
    var irt: EMEngine
    /// Per cell of `irt.data`, log seconds, NaN where no time was recorded (or the item has no time parameters).
    let logTimes: [Double]
    /// Per item: whether it has time parameters (at least `minimumTimedResponses` timed responses).
    let timed: [Bool]
    var beta: [Double]
    var logAlpha: [Double]
    var kappa: Double
    var logS: Double

    /// Items need this many timed responses for (β, α).
    static let minimumTimedResponses = 2
    /// α is kept in [e⁻⁵, 100] (`LognormalTimeItem.allowedTimeDiscriminations`), s ≥ 10⁻³.
    static let logAlphaRange = -5.0...log(100.0)
    static let minimumLogS = log(1e-3)

    struct Expectation: EMExpectation {
        var irt: EMEngine.Expectation
        /// Per person: E[τ] and Var[τ] given the responses and times.
        var speedMean: [Double]
        var speedVariance: [Double]
        /// Per person: E[θ] and Var[θ].
        var thetaMean: [Double]
        var thetaVariance: [Double]
        /// Σᵢ E[θ²], Σᵢ E[θτ], Σᵢ E[τ²].
        var thetaSquares: Double
        var thetaSpeed: Double
        var speedSquares: Double
        var logLikelihood: Double { irt.logLikelihood }
        var blasSeconds: Double { 0 }
    }

    /// Starts from `irt` (its items at their IRT-only estimates) and moment estimates of the time model: τ̂ᵢ the
    /// mean of (mean log t of the item − log tᵢⱼ), βⱼ the item's mean of log t + τ̂, αⱼ the inverse SD of the
    /// residuals, s the SD of τ̂, κ = 0.
    init(irt: EMEngine, logTimes: [Double]) {
        self.irt = irt
        self.logTimes = logTimes
        let data = irt.data, J = data.itemCount, N = data.personCount
        var n = [Int](repeating: 0, count: J), sum = [Double](repeating: 0, count: J)
        for k in 0..<data.cellCount where !logTimes[k].isNaN {
            n[Int(data.itemIndices[k])] += 1
            sum[Int(data.itemIndices[k])] += logTimes[k]
        }
        timed = n.map { $0 >= Self.minimumTimedResponses }
        let itemMean = (0..<J).map { n[$0] > 0 ? sum[$0] / Double(n[$0]) : 0 }
        var tau = [Double](repeating: 0, count: N)
        for i in 0..<N {
            var s = 0.0, c = 0
            for k in data.cells(ofPerson: i) where !logTimes[k].isNaN && timed[Int(data.itemIndices[k])] {
                s += itemMean[Int(data.itemIndices[k])] - logTimes[k]
                c += 1
            }
            tau[i] = c > 0 ? s / Double(c) : 0
        }
        var b = [Double](repeating: 0, count: J), r2 = [Double](repeating: 0, count: J)
        for i in 0..<N { for k in data.cells(ofPerson: i) where !logTimes[k].isNaN { b[Int(data.itemIndices[k])] += logTimes[k] + tau[i] } }
        for j in 0..<J { b[j] = n[j] > 0 ? b[j] / Double(n[j]) : 0 }
        for i in 0..<N {
            for k in data.cells(ofPerson: i) where !logTimes[k].isNaN {
                let j = Int(data.itemIndices[k]), e = b[j] - logTimes[k] - tau[i]
                r2[j] += e * e
            }
        }
        beta = b
        logAlpha = (0..<J).map { j in
            let variance = n[j] > 1 ? r2[j] / Double(n[j]) : 1
            return min(max(-0.5 * log(max(variance, 1e-8)), Self.logAlphaRange.lowerBound), Self.logAlphaRange.upperBound)
        }
        let timedPersons = tau.indices.filter { i in data.cells(ofPerson: i).contains { !logTimes[$0].isNaN } }
        let tauMean = timedPersons.isEmpty ? 0 : timedPersons.reduce(0.0) { $0 + tau[$1] } / Double(timedPersons.count)
        let tauVariance =
            timedPersons.isEmpty ? 0.09 : timedPersons.reduce(0.0) { $0 + (tau[$1] - tauMean) * (tau[$1] - tauMean) } / Double(timedPersons.count)
        kappa = 0
        logS = max(0.5 * log(max(tauVariance, 1e-6)), Self.minimumLogS)
    }

    var population: SpeedAccuracyPopulation { SpeedAccuracyPopulation(slope: kappa, residualSD: exp(logS)) }

    /// Item j's time parameters, nil for an item without them.
    func timeItem(_ j: Int) -> LognormalTimeItem? {
        timed[j] ? LognormalTimeItem(checkedTimeIntensity: beta[j], timeDiscrimination: exp(logAlpha[j])) : nil
    }

    /// Person i's `SessionTimeEvidence` at the current time parameters.
    func evidence(ofPerson i: Int) -> SessionTimeEvidence {
        var e = SessionTimeEvidence()
        for k in irt.data.cells(ofPerson: i) where !logTimes[k].isNaN {
            let j = Int(irt.data.itemIndices[k])
            guard timed[j] else { continue }
            e.add(LognormalTimeItem(checkedTimeIntensity: beta[j], timeDiscrimination: exp(logAlpha[j])), logSeconds: logTimes[k])
        }
        return e
    }

    func eStep() -> Expectation {
        let data = irt.data, table = irt.logTable(), population = self.population
        let nq = table.nodeCount, persons = data.personCount, rows = table.rowCount, stride = table.stride, J = data.itemCount
        let w = irt.workers
        let counts = AlignedRows(rows: w * rows, length: nq)
        defer { counts.deallocate() }
        var sums = [Double](repeating: 0, count: 4 * w) // log-likelihood, Σ E θ², Σ E θτ, Σ E τ² per worker
        // Per person: E τ, Var τ, E θ, Var θ.
        var moments = [Double](repeating: 0, count: 4 * persons)
        let nodes = irt.nodes, logWeights = irt.grid.logWeights
        moments.withUnsafeMutableBufferPointer { momentsAll in
            sums.withUnsafeMutableBufferPointer { sumsAll in
                table.rowStart.withUnsafeBufferPointer { rowStart in
                    data.itemIndices.withUnsafeBufferPointer { items in
                        data.responses.withUnsafeBufferPointer { responses in
                            let box = UncheckedSendableBox((momentsAll.baseAddress!, sumsAll.baseAddress!))
                            parallelFor(w) { worker in
                                let (moments, sums) = box.value
                                let lo = persons * worker / w, hi = persons * (worker + 1) / w
                                let own = counts.row(worker * rows)
                                let acc = UnsafeMutablePointer<Double>.allocate(capacity: stride),
                                    prior = UnsafeMutablePointer<Double>.allocate(capacity: stride)
                                defer { acc.deallocate(); prior.deallocate() }
                                for t in nq..<stride { prior[t] = 0 }
                                var total = 0.0, t2 = 0.0, tt = 0.0, s2 = 0.0
                                for i in lo..<hi {
                                    let evidence = self.evidence(ofPerson: i)
                                    let terms = evidence.thetaTerms(population)
                                    for t in 0..<nq { prior[t] = logWeights[t] + (terms.linear + terms.quadratic * nodes[t]) * nodes[t] }
                                    let start = data.rowOffsets[i], end = data.rowOffsets[i + 1]
                                    let (logLikelihood, support) = GridPosterior.posterior(
                                        into: acc, prior: prior, items: items.baseAddress! + start,
                                        responses: responses.baseAddress! + start, count: end - start,
                                        table: table, rowStart: rowStart.baseAddress!)
                                    total += logLikelihood + terms.constant
                                    var m1 = 0.0, m2 = 0.0
                                    for t in support { m1 += acc[t] * nodes[t]; m2 += acc[t] * nodes[t] * nodes[t] }
                                    let (a, b, v) = evidence.speedGivenTheta(population)
                                    let thetaVariance = max(m2 - m1 * m1, 0)
                                    moments[4 * i] = a + b * m1
                                    moments[4 * i + 1] = v + b * b * thetaVariance
                                    moments[4 * i + 2] = m1
                                    moments[4 * i + 3] = thetaVariance
                                    t2 += m2
                                    tt += a * m1 + b * m2
                                    s2 += v + a * a + 2 * a * b * m1 + b * b * m2
                                    iqscore_add_posterior(
                                        acc, support.lowerBound, support.upperBound, items.baseAddress! + start,
                                        responses.baseAddress! + start, end - start, rowStart.baseAddress!, own, stride)
                                }
                                sums[4 * worker] = total
                                sums[4 * worker + 1] = t2
                                sums[4 * worker + 2] = tt
                                sums[4 * worker + 3] = s2
                            }
                        }
                    }
                }
            }
        }
        let folded = sumWorkers(counts.row(0), workers: w, workerStride: rows * stride, rows: rows, rowStride: stride, length: nq)
        var r = [Double](repeating: 0, count: J * nq), n = r
        for j in 0..<J {
            let wrong = Int(table.rowStart[j]) * nq, right = wrong + nq
            for t in 0..<nq {
                r[j * nq + t] = folded[right + t]
                n[j * nq + t] = folded[wrong + t] + folded[right + t]
            }
        }
        var total = 0.0, t2 = 0.0, tt = 0.0, s2 = 0.0
        for worker in 0..<w { total += sums[4 * worker]; t2 += sums[4 * worker + 1]; tt += sums[4 * worker + 2]; s2 += sums[4 * worker + 3] }
        func column(_ c: Int) -> [Double] { (0..<persons).map { moments[4 * $0 + c] } }
        return Expectation(
            irt: EMEngine.Expectation(r: r, n: n, logLikelihood: total), speedMean: column(0), speedVariance: column(1),
            thetaMean: column(2), thetaVariance: column(3), thetaSquares: t2, thetaSpeed: tt, speedSquares: s2)
    }

    mutating func mStep(_ e: Expectation) {
        irt.mStep(e.irt)
        let data = irt.data, J = data.itemCount, N = data.personCount
        var n = [Int](repeating: 0, count: J), sum = [Double](repeating: 0, count: J)
        for i in 0..<N {
            for k in data.cells(ofPerson: i) where !logTimes[k].isNaN {
                let j = Int(data.itemIndices[k])
                n[j] += 1
                sum[j] += logTimes[k] + e.speedMean[i]
            }
        }
        var newBeta = beta
        for j in 0..<J where timed[j] { newBeta[j] = sum[j] / Double(n[j]) }
        var squares = [Double](repeating: 0, count: J)
        for i in 0..<N {
            for k in data.cells(ofPerson: i) where !logTimes[k].isNaN {
                let j = Int(data.itemIndices[k]), r = newBeta[j] - logTimes[k] - e.speedMean[i]
                squares[j] += r * r + e.speedVariance[i]
            }
        }
        for j in 0..<J where timed[j] {
            beta[j] = newBeta[j]
            logAlpha[j] = Self.clampedLogAlpha(-0.5 * log(squares[j] / Double(n[j])))
        }
        let k = e.thetaSquares > 0 ? e.thetaSpeed / e.thetaSquares : 0
        let residual = (e.speedSquares - 2 * k * e.thetaSpeed + k * k * e.thetaSquares) / Double(N)
        kappa = k
        logS = max(0.5 * log(max(residual, 1e-12)), Self.minimumLogS)
    }

    static func clampedLogAlpha(_ x: Double) -> Double {
        x.isNaN ? 0 : min(max(x, logAlphaRange.lowerBound), logAlphaRange.upperBound)
    }

    func naturalParameters() -> [Double] {
        let p = population
        var out = irt.naturalParameters()
        for j in 0..<beta.count where timed[j] { out.append(beta[j]); out.append(exp(logAlpha[j])) }
        out.append(p.speedSD)
        out.append(p.correlation)
        return out
    }

    /// The IRT engine's working parameters, then β and log α of every item (those without time parameters keep
    /// theirs), then κ and log s.
    func workingParameters() -> [Double] { irt.workingParameters() + beta + logAlpha + [kappa, logS] }

    mutating func setWorkingParameters(_ x: [Double]) {
        let p = irt.freeParameterCount, J = beta.count
        irt.setWorkingParameters(Array(x[0..<p]))
        for j in 0..<J where timed[j] {
            beta[j] = min(max(x[p + j], LognormalTimeItem.allowedTimeIntensities.lower), LognormalTimeItem.allowedTimeIntensities.upper)
            logAlpha[j] = Self.clampedLogAlpha(x[p + J + j])
        }
        kappa = x[p + 2 * J].isFinite ? min(max(x[p + 2 * J], -10), 10) : 0
        logS = x[p + 2 * J + 1].isFinite ? min(max(x[p + 2 * J + 1], Self.minimumLogS), log(10.0)) : 0
    }

    /// The IRT blocks, then each timed item's (β, log α) can't be one contiguous block in this layout, so β and
    /// log α are two blocks over all items, and (κ, log s) one.
    func parameterBlocks() -> [Range<Int>] {
        let p = irt.freeParameterCount, J = beta.count
        return irt.parameterBlocks() + [p..<(p + J), (p + J)..<(p + 2 * J), (p + 2 * J)..<(p + 2 * J + 2)]
    }

    func logPrior() -> Double { irt.logPrior() }
}
