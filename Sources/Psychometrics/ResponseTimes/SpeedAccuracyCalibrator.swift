import Foundation

/// One item's estimates in the lognormal response-time model.
package struct TimedItemEstimate: Sendable, Hashable, Codable {
    package var itemID: String
    /// β and α; nil for an item with fewer than two timed responses (it keeps its IRT parameters only).
    package var parameters: LognormalTimeItem?
    /// Standard errors of β and α (cross-product information); nil where not computed.
    package var timeIntensityStandardError: Double?
    package var timeDiscriminationStandardError: Double?
    /// Responses with a recorded time.
    package var timedResponses: Int
}

/// One person's ability and speed from a joint fit: posterior means and SDs given responses and times.
package struct PersonSpeedEstimate: Sendable, Hashable, Codable {
    package var personID: String
    /// E[θ | responses, times] and its posterior SD.
    package var theta: Double
    package var thetaSD: Double
    /// The posterior SD of θ from the responses alone (the same items, times left out).
    package var thetaSDWithoutTimes: Double
    /// E[τ | responses, times] and its posterior SD.
    package var speed: Double
    package var speedSD: Double
    /// Responses with a recorded time.
    package var timedResponses: Int
}

/// The outcome of `SpeedAccuracyCalibrator`.
package struct SpeedAccuracyResult: Sendable, Hashable, Codable {
    /// The IRT items, estimated jointly with the times (their standard errors are the responses-only fit's: the
    /// times move the estimates little and their information less); its log-likelihood, parameter count, AIC and
    /// BIC are the joint model's.
    package var irt: CalibrationResult
    /// Per calibrated item, in the order of `irt.items`.
    package var timeItems: [TimedItemEstimate]
    package var population: SpeedAccuracyPopulation
    package var speedSDStandardError: Double?
    package var correlationStandardError: Double?
    /// Per person kept by the calibration, in data order.
    package var persons: [PersonSpeedEstimate]
    /// The joint marginal log-likelihood Σᵢ log ∫∫ Πⱼ P(uᵢⱼ | θ) f(tᵢⱼ | τ) dG(θ, τ), times in seconds.
    package var logLikelihood: Double
    /// The responses-only fit's marginal log-likelihood (`irt` before the times).
    package var responseOnlyLogLikelihood: Double
    package var cycles: Int
    package var converged: Bool
    package var timedResponses: Int
    /// How the standard errors of the time parameters were computed.
    package var standardErrorMethod: String
    package var warnings: [String]
    package var elapsedSeconds: Double

    /// The mean posterior SD of θ with times over without (< 1: the times' collateral information shrinks it).
    package var collateralSDRatio: Double {
        let with = persons.reduce(0.0) { $0 + $1.thetaSD }, without = persons.reduce(0.0) { $0 + $1.thetaSDWithoutTimes }
        return without > 0 ? with / without : 1
    }
}

/// Joint marginal maximum-likelihood calibration of van der Linden's (2007) hierarchical model: an IRT model
/// (1PL, 2PL or 3PL) for the responses, the lognormal model (`LognormalTimeItem`) for the times, and a bivariate
/// normal population of ability and speed (`SpeedAccuracyPopulation`), by EM (`SpeedAccuracyEngine`; speed is
/// integrated in closed form, so the E-step runs on the θ grid alone).
///
/// The responses-only fit (`EMCalibrator`, the same options) comes first: it screens items as it always does and
/// starts the joint EM; the joint fit then moves the IRT items by the times' collateral information and
/// estimates β, α, σ_τ and ρ. Dense and missing-by-design data alike (sparse E-step: cost ∝ cells × nodes).
/// Times may be missing for any response (they then say nothing about speed); an item with fewer than two timed
/// responses gets no time parameters.
///
/// Standard errors of β, α, σ_τ and ρ: the inverse of the cross-product of the persons' scores (Fisher identity:
/// each person's expected complete-data score at the estimates; mirt's `SE.type = "crossprod"`), with the IRT items
/// held at their estimates, for at most `maximumStandardErrorParameters` time parameters.
///
/// Compared with LNIRT (Fox, Klotzke & Klein Entink 2021), which samples the same model by MCMC with a normal θ
/// and τ, this is its maximum-likelihood counterpart: the same parameters, the IRT scale fixed by θ ~ N(0, 1).
package struct SpeedAccuracyCalibrator: Sendable {
    package var options: CalibrationOptions

    package init(options: CalibrationOptions) { self.options = options }

    /// Time parameters for which standard errors are computed: 4,002 (2,000 items), a 128 MB information matrix.
    package static let maximumStandardErrorParameters = 4_002

    /// Calibrates responses and their times.
    /// - Throws: `PsychometricsError.invalidOptions` for the Rasch model or fixed items (the θ scale is the
    ///   population's N(0, 1) here), `.lengthMismatch` when `times` is not one per cell of `responses`, and
    ///   what `EMCalibrator.calibrate` throws; `.insufficientData` when fewer than two persons have times.
    package func calibrate(_ responses: ResponseMatrix, times: ResponseTimes, progress: ((CalibrationProgress) -> Void)? = nil) throws
        -> SpeedAccuracyResult
    {
        let started = DispatchTime.now().uptimeNanoseconds
        guard options.model != .rasch else {
            throw PsychometricsError(
                .invalidOptions, "the speed–accuracy model takes the 1PL, 2PL or 3PL (θ ~ N(0, 1) is its scale; the Rasch model estimates θ's SD)")
        }
        guard options.fixedItems.isEmpty else {
            throw PsychometricsError(
                .invalidOptions, "the speed–accuracy model does not take fixed items (calibrate the bank's times with all its items free)")
        }
        guard times.seconds.count == responses.cellCount else {
            throw PsychometricsError(
                .lengthMismatch, "one response time per answered cell: \(times.seconds.count) times for \(responses.cellCount) cells")
        }
        var irtOptions = options
        irtOptions.eStep = .sparse
        let irtOnly = try EMCalibrator(options: irtOptions).calibrate(responses, progress: progress)
        let keptIDs = Set(irtOnly.items.map(\.itemID))
        let keep = responses.itemIDs.map { keptIDs.contains($0) }
        let (data, _) = responses.keepingItems(keep)
        let keptTimes = times.keepingItems(keep, of: responses)
        let logTimes = keptTimes.seconds.map { $0.isNaN ? Double.nan : ResponseTimes.logSeconds($0) }
        let timedPersons = (0..<data.personCount).filter { i in data.cells(ofPerson: i).contains { !logTimes[$0].isNaN } }.count
        guard timedPersons >= 2 else {
            throw PsychometricsError(
                .insufficientData,
                "only \(timedPersons) person\(timedPersons == 1 ? " has" : "s have") response times on the calibrated items; at least 2 are needed")
        }

        var irt = EMEngine(model: options.model, options: irtOptions, data: data, useDense: false)
        // Start at the responses-only estimates.
        var x = irt.workingParameters()
        let byID = Dictionary(uniqueKeysWithValues: irtOnly.items.map { ($0.itemID, $0.parameters) })
        for j in 0..<data.itemCount {
            let p = byID[data.itemIDs[j]]!
            let a = p.discrimination
            for (t, value) in [irt.logSlope ? log(a) : a, -a * p.difficulty, options.model.hasGuessing ? Logistic.logit(max(p.guessing, 1e-9)) : 0]
                .enumerated()
            where t < irt.perItem {
                let index = irt.globalIndex(item: j, parameter: t)
                if index >= 0 { x[index] = value }
            }
        }
        irt.setWorkingParameters(x)
        var run = EMRun(engine: SpeedAccuracyEngine(irt: irt, logTimes: logTimes), options: options, started: started, progress: progress)
        switch options.acceleration {
        case .none: try run.runPlain()
        case .squarem: try run.runSQUAREM()
        }
        let engine = run.engine
        var warnings = irtOnly.warnings.filter { !$0.hasPrefix("EM did not converge") }
        if let note = run.nonConvergence { warnings.append(note) }
        let final = engine.eStep()

        // Persons: with times, and without (κ = 0 leaves the times nothing to say about θ).
        var withoutTimes = engine
        withoutTimes.kappa = 0
        let responsesOnly = withoutTimes.eStep()
        var timedCount = [Int](repeating: 0, count: data.personCount)
        for i in 0..<data.personCount { timedCount[i] = data.cells(ofPerson: i).reduce(0) { $0 + (logTimes[$1].isNaN ? 0 : 1) } }
        let persons = (0..<data.personCount).map { i in
            PersonSpeedEstimate(
                personID: data.personIDs[i], theta: final.thetaMean[i], thetaSD: final.thetaVariance[i].squareRoot(),
                thetaSDWithoutTimes: responsesOnly.thetaVariance[i].squareRoot(), speed: final.speedMean[i],
                speedSD: final.speedVariance[i].squareRoot(), timedResponses: timedCount[i])
        }

        // The IRT items at their joint estimates (flags and SEs from the responses-only fit).
        var irtResult = irtOnly
        for j in irtResult.items.indices {
            let a = engine.irt.slope(j), c = engine.irt.asymptote(j)
            irtResult.items[j].parameters = ItemParameters(discrimination: a, difficulty: -engine.irt.d[j] / a, guessing: c)
        }
        // The joint model's fit statistics: the IRT parameters plus β and α per timed item, σ_τ and ρ.
        irtResult.logLikelihood = final.logLikelihood
        irtResult.parameterCount += 2 * engine.timed.filter { $0 }.count + 2
        irtResult.aic = -2 * final.logLikelihood + 2 * Double(irtResult.parameterCount)
        irtResult.bic = -2 * final.logLikelihood + Double(irtResult.parameterCount) * log(Double(data.personCount))
        irtResult.cycles = run.cycles
        irtResult.converged = run.converged

        let errors = Self.crossProductErrors(engine, final, warnings: &warnings)
        var itemTimed = [Int](repeating: 0, count: data.itemCount)
        for k in 0..<data.cellCount where !logTimes[k].isNaN { itemTimed[Int(data.itemIndices[k])] += 1 }
        var timeItems: [TimedItemEstimate] = []
        for j in 0..<data.itemCount {
            let item = engine.timeItem(j)
            if item == nil {
                warnings.append(
                    "item \(data.itemIDs[j]): \(itemTimed[j]) timed response\(itemTimed[j] == 1 ? "" : "s"); no time parameters (at least \(SpeedAccuracyEngine.minimumTimedResponses) needed)"
                )
            }
            timeItems.append(
                TimedItemEstimate(
                    itemID: data.itemIDs[j], parameters: item, timeIntensityStandardError: errors?.beta[j],
                    timeDiscriminationStandardError: errors?.alpha[j], timedResponses: itemTimed[j]))
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return SpeedAccuracyResult(
            irt: irtResult, timeItems: timeItems, population: engine.population,
            speedSDStandardError: errors?.speedSD, correlationStandardError: errors?.correlation, persons: persons,
            logLikelihood: final.logLikelihood, responseOnlyLogLikelihood: irtOnly.logLikelihood, cycles: run.cycles,
            converged: run.converged, timedResponses: logTimes.reduce(0) { $0 + ($1.isNaN ? 0 : 1) },
            standardErrorMethod: errors == nil
                ? "not computed" : "cross-product of the persons' scores (time and population parameters; IRT items held at their estimates)",
            warnings: warnings, elapsedSeconds: elapsed)
    }

    /// Standard errors of β, α (per item, nil for untimed items), σ_τ and ρ from the inverse of Σᵢ sᵢ sᵢᵀ, with
    /// sᵢ person i's expected complete-data score in (β, log α, κ, log s):
    /// ```
    /// ∂/∂βⱼ = αⱼ² (log tᵢⱼ − βⱼ + E τᵢ),   ∂/∂log αⱼ = 1 − αⱼ² [(log tᵢⱼ − βⱼ + E τᵢ)² + Var τᵢ]
    /// ∂/∂κ = (E[θτ] − κ E[θ²]) / s²,        ∂/∂log s = −1 + E[(τ − κθ)²] / s²
    /// ```
    /// then the delta method: α = e^(log α), σ_τ = √(κ² + s²), ρ = κ/σ_τ. Nil (with a warning) above
    /// `maximumStandardErrorParameters` or when the matrix is not positive definite.
    private static func crossProductErrors(_ engine: SpeedAccuracyEngine, _ e: SpeedAccuracyEngine.Expectation, warnings: inout [String])
        -> (beta: [Double?], alpha: [Double?], speedSD: Double?, correlation: Double?)?
    {
        let data = engine.irt.data, J = data.itemCount
        var slot = [Int](repeating: -1, count: J), timedItems = 0
        for j in 0..<J where engine.timed[j] { slot[j] = timedItems; timedItems += 1 }
        let P = 2 * timedItems + 2
        guard P <= maximumStandardErrorParameters else {
            warnings.append("standard errors of the time parameters not computed: \(P) parameters, more than \(maximumStandardErrorParameters)")
            return nil
        }
        let population = engine.population, kappa = population.slope, s2 = population.residualVariance
        var info = [Double](repeating: 0, count: P * P)
        var index: [Int] = [], score: [Double] = []
        for i in 0..<data.personCount {
            index.removeAll(keepingCapacity: true)
            score.removeAll(keepingCapacity: true)
            let evidence = engine.evidence(ofPerson: i)
            let (a, b, _) = evidence.speedGivenTheta(population)
            let et = e.thetaMean[i], et2 = e.thetaVariance[i] + et * et
            let eTau = e.speedMean[i], vTau = e.speedVariance[i]
            let eThetaTau = a * et + b * et2, eTau2 = vTau + eTau * eTau
            for k in data.cells(ofPerson: i) where !engine.logTimes[k].isNaN {
                let j = Int(data.itemIndices[k])
                guard slot[j] >= 0 else { continue }
                let a2 = exp(2 * engine.logAlpha[j]), r = engine.logTimes[k] - engine.beta[j] + eTau
                index.append(2 * slot[j]); score.append(a2 * r)
                index.append(2 * slot[j] + 1); score.append(1 - a2 * (r * r + vTau))
            }
            index.append(P - 2); score.append((eThetaTau - kappa * et2) / s2)
            index.append(P - 1); score.append(-1 + (eTau2 - 2 * kappa * eThetaTau + kappa * kappa * et2) / s2)
            for (u, x) in index.enumerated() { for (v, y) in index.enumerated() where y >= x { info[x * P + y] += score[u] * score[v] } }
        }
        // Upper triangle (row-major x ≤ y) as CholeskyInverse reads it.
        guard info.allSatisfy(\.isFinite), let inverse = CholeskyInverse(upperTriangleOf: &info, n: P, workers: engine.irt.workers) else {
            warnings.append("standard errors of the time parameters unavailable: the cross-product information is not positive definite")
            return nil
        }
        var beta = [Double?](repeating: nil, count: J), alpha = beta
        for j in 0..<J where slot[j] >= 0 {
            beta[j] = inverse.entry(2 * slot[j], 2 * slot[j]).squareRoot()
            alpha[j] = exp(engine.logAlpha[j]) * inverse.entry(2 * slot[j] + 1, 2 * slot[j] + 1).squareRoot()
        }
        let sd = population.speedSD, s = exp(engine.logS)
        let gradSD = (kappa / sd, s * s / sd), gradRho = (s * s / (sd * sd * sd), -kappa * s * s / (sd * sd * sd))
        func variance(_ g: (Double, Double)) -> Double {
            g.0 * g.0 * inverse.entry(P - 2, P - 2) + 2 * g.0 * g.1 * inverse.entry(P - 2, P - 1) + g.1 * g.1 * inverse.entry(P - 1, P - 1)
        }
        return (beta, alpha, variance(gradSD).squareRoot(), variance(gradRho).squareRoot())
    }
}
