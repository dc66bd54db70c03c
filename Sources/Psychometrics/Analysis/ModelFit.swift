import Foundation

/// Item and person fit of calibrated items to a response matrix, defined for complete and for incomplete
/// (missing-by-design) data alike: every statistic uses only the items each person answered.
///
/// One pass over the persons (on `workers` threads) computes, per person: the WLE θ̂ (l_z, l_z*, Q3 residuals),
/// the EAP θ̂ and its posterior SD (empirical reliability), the posterior on the quadrature grid (RMSD), and the
/// expected score of every answered item given the person's summed score on the items they answered (S-X²,
/// infit, outfit). The statistics, each in its own file:
/// - `OrlandoThissenSX2`: S-X² over each person's answered items (Orlando & Thissen 2000 on complete data).
/// - `ConditionalMeanSquares`: infit/outfit of the summed-score-conditional residuals, with Wilson–Hilferty
///   ZSTD from their model variance.
/// - `RootMeanSquareDeviation`: RMSD between the posterior-weighted observed ICC and the model's (PISA), with
///   a critical value for the item's n from posterior predictive replicates.
/// - `LocalDependenceQ3`: Yen's Q3, Q3* = Q3 − mean Q3, flags with n- and multiplicity-aware critical values.
/// - `PersonFitLz`: l_z and Snijders' l_z* at the WLE.
/// - Marginal (empirical) reliability: var(θ̂_EAP) / (var(θ̂_EAP) + mean SE²_EAP) (mirt's `empirical_rxx`),
///   defined for any design because each person's SE is their own.
///
/// A statistic that cannot be computed is nil, and `undefined` says which and why.
package struct ModelFit: Sendable {
    package struct Options: Sendable, Hashable {
        package var quadraturePoints = 61
        package var thetaBound = 6.0
        /// S-X² pools score groups until their expected counts reach this (1, mirt's `mincell`).
        package var minimumExpected = 1.0
        /// How S-X² pools sparse score groups: `.forward` (default) or mirt's rule (`SX2Pooling`).
        package var sx2Pooling = SX2Pooling.forward
        /// Level of RMSD's critical value (its replicates' 1 − α quantile).
        package var significance = 0.01
        /// Posterior predictive replicates behind RMSD's critical value.
        package var rmsdReplicates = 20
        package var q3 = LocalDependenceQ3.Options()
        package var workers = WorkerThreads.all
        package init() {}
    }

    package struct ItemFit: Sendable, Hashable {
        package var itemID: String
        /// Persons who answered the item.
        package var persons: Int
        /// Conditional infit/outfit mean squares (see `ConditionalMeanSquares`).
        package var infit: Double?
        package var outfit: Double?
        /// Their Wilson–Hilferty standardisations.
        package var infitZ: Double?
        package var outfitZ: Double?
        package var sx2: Double?
        package var sx2DegreesOfFreedom: Int?
        package var sx2P: Double?
        package var rmsd: Double?
        /// The RMSD this item's n reaches by chance with probability `Options.significance` under the model.
        package var rmsdCritical: Double?
    }

    package struct PersonFit: Sendable, Hashable {
        package var personID: String
        package var theta: Double
        package var standardError: Double
        package var lz: Double?
        package var lzStar: Double?
    }

    /// A flagged pair of items, by id.
    package struct Q3Pair: Sendable, Hashable {
        package var first: String
        package var second: String
        package var q3: Double
        package var persons: Int
        package var q3Star: Double
        package var z: Double
    }

    package var items: [ItemFit]
    package var persons: [PersonFit]
    /// Persons whose summed score lies strictly between 0 and the number of items they answered: the persons
    /// S-X² and the mean squares use (the others carry no information about fit given their score).
    package var sx2Persons: Int
    /// Empirical reliability of the EAP estimates (mirt's `empirical_rxx`): var(θ̂) / (var(θ̂) + mean PSD²).
    package var empiricalReliability: Double?
    /// mirt's `marginal_rxx`: the whole test's conditional reliability I/(I + 1) averaged over N(0, 1)
    /// (`MarginalRXX`).
    package var marginalRXX: Double?
    /// The reliability from the mean error variance, σ² / (σ² + mean 1/I), averaged over the persons' forms
    /// (`MeanErrorVarianceReliability`).
    package var meanErrorVarianceReliability: Double?
    package var localDependence: LocalDependenceQ3?
    /// Statistic → why it is undefined (for all or some items, pairs or persons).
    package var undefined: [String: String] = [:]

    package var q3Mean: Double? { localDependence?.mean }
    package var q3MaxAbs: Double? { localDependence?.maxAbs }
    package var q3Flagged: [Q3Pair] {
        guard let q3 = localDependence else { return [] }
        return q3.flagged.map {
            let p = q3.pairs[$0];
            return Q3Pair(first: itemIDs[p.first], second: itemIDs[p.second], q3: p.q3, persons: p.persons, q3Star: p.q3Star, z: p.z ?? .nan)
        }
    }
    /// Q3 of items j and k when the pair was compared.
    package func q3(_ j: Int, _ k: Int) -> Double? { localDependence?.q3(j, k) }
    private var itemIDs: [String]

    /// Largest pairwise Q3 table built (bytes); a larger bank leaves Q3 undefined.
    package static let q3TableLimit = 2 << 30

    /// - Parameters:
    ///   - parameters: the item parameters in `data`'s item order.
    ///   - freeParameters: free parameters per item for the S-X² df (Rasch/1PL 1, 2PL 2, 3PL 3).
    package init(data: ResponseMatrix, parameters: [ItemParameters], freeParameters: Int, options: Options = Options()) throws {
        precondition(parameters.count == data.itemCount, "one parameter set per item")
        guard data.isDichotomous else {
            throw PsychometricsError(.invalidResponse, "the fit statistics take 0/1 items; the data have items with more categories")
        }
        precondition(options.q3.minimumPairCount >= 10, "Q3 needs at least 10 persons per pair, got \(options.q3.minimumPairCount)")
        let J = data.itemCount, N = data.personCount
        itemIDs = data.itemIDs
        let context = try PersonPass.Context(data: data, parameters: parameters, options: options)
        let Q = context.grid.count, expectation = context.expectation

        // One pass over the persons, in chunks of 256 taken in turn by the workers.
        let outputs = PersonPass.Outputs(personCount: N, cellCount: data.cellCount)
        let workers = max(1, min(options.workers, (N + 255) / 256)), chunk = 256
        let parts = DisjointWrites<PersonPass?>(repeating: nil, count: workers)
        parallelFor(workers) { w in
            var pass = PersonPass(itemCount: J, nodes: Q, replicates: options.rmsdReplicates)
            var start = w * chunk
            while start < N {
                for i in start..<min(N, start + chunk) { pass.process(person: i, context, outputs) }
                start += workers * chunk
            }
            parts[w] = pass
        }
        var pass = parts[0]!
        for w in 1..<workers { pass.merge(parts[w]!) }
        let (sx2, ms, rmsd) = (pass.sx2, pass.meanSquares, pass.rmsd)
        let personFit = outputs.persons.array, eapTheta = outputs.eapTheta.array, eapVariance = outputs.eapVariance.array
        persons = personFit
        sx2Persons = pass.informative

        // Items.
        var noSX2 = 0, noP = 0, noMS = 0
        items = (0..<J).map { j in
            let chi = sx2.result(item: j, freeParameters: freeParameters, minimumExpected: options.minimumExpected, pooling: options.sx2Pooling)
            let mean = ms.result(item: j)
            if chi == nil { noSX2 += 1 } else if chi?.p == nil { noP += 1 }
            if mean == nil { noMS += 1 }
            let r = rmsd.result(item: j, probabilities: expectation.probabilities[(j * Q)..<((j + 1) * Q)], significance: options.significance)
            return ItemFit(
                itemID: data.itemIDs[j], persons: rmsd.persons(item: j), infit: mean?.infit, outfit: mean?.outfit,
                infitZ: mean?.infitZ, outfitZ: mean?.outfitZ, sx2: chi?.statistic, sx2DegreesOfFreedom: chi?.degreesOfFreedom,
                sx2P: chi?.p, rmsd: r?.rmsd, rmsdCritical: r?.critical)
        }
        func itemsText(_ k: Int) -> String { k == 1 ? "1 item" : "\(k) items" }
        if noSX2 > 0 || noMS > 0 {
            let reason =
                "no person who answered it has a summed score strictly between 0 and the number of items they answered (given such a score the response is certain)"
            if noSX2 > 0 { undefined["sx2"] = "\(itemsText(noSX2)): \(reason)" }
            if noMS > 0 { undefined["infit_outfit"] = "\(itemsText(noMS)): \(reason)" }
        }
        if noP > 0 {
            undefined["sx2_p"] =
                "\(itemsText(noP)): after pooling score groups to expected counts of at least \(options.minimumExpected.formatted6) there are no more groups than free parameters (\(freeParameters)), so df ≤ 0"
        }

        // Empirical reliability from the EAP estimates (mirt's empirical_rxx); mirt's marginal_rxx over the whole
        // test; the reliability from the mean error variance over the persons' forms.
        if N > 1 {
            let mean = eapTheta.reduce(0, +) / Double(N)
            let variance = eapTheta.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(N - 1)
            let errorVariance = eapVariance.reduce(0, +) / Double(N)
            empiricalReliability = variance + errorVariance > 0 ? variance / (variance + errorVariance) : nil
        }
        if empiricalReliability == nil { undefined["empirical_reliability"] = "needs at least 2 persons with responses, got \(N)" }
        marginalRXX = MarginalRXX.compute(parameters: parameters)
        meanErrorVarianceReliability = MeanErrorVarianceReliability.compute(parameters: parameters, data: data)
        if meanErrorVarianceReliability == nil { undefined["mean_error_variance_reliability"] = "no person answered any item" }
        let lzMissing = personFit.filter { $0.lz == nil }.count, lzStarMissing = personFit.filter { $0.lzStar == nil }.count
        if lzMissing > 0 { undefined["lz"] = "\(lzMissing) persons: the variance of their log-likelihood is 0 (fewer than 2 items with 0 < P < 1)" }
        if lzStarMissing > 0 {
            undefined["lz_star"] =
                "\(lzStarMissing) persons: the corrected variance is 0 (fewer than 2 items, or items whose weights are all proportional to the WLE's)"
        }

        // Q3 on the residuals at the WLE.
        if LocalDependenceQ3.tableBytes(itemCount: J) > Self.q3TableLimit {
            localDependence = nil
            undefined["q3"] =
                "\(J) items: the pairwise table would take \(LocalDependenceQ3.tableBytes(itemCount: J) >> 20) MiB (64 bytes per pair), more than the \(Self.q3TableLimit >> 20) MiB allowed"
        } else {
            let q3 = LocalDependenceQ3(
                itemCount: J, rowOffsets: data.rowOffsets, items: data.itemIndices, responses: data.responses,
                residuals: outputs.residuals.array,
                model: .init(probabilities: expectation.probabilities, logTable: context.table, logWeights: context.grid.logWeights),
                options: options.q3, workers: options.workers)
            localDependence = q3
            let total = J * (J - 1) / 2
            if q3.pairs.isEmpty {
                undefined["q3"] =
                    "no item pair was answered together by \(options.q3.minimumPairCount) or more persons (\(q3.pairsBelowMinimum) pairs by fewer, \(q3.pairsNeverTogether) by nobody)"
            } else if q3.pairsBelowMinimum + q3.pairsNeverTogether > 0 {
                undefined["q3"] =
                    "\(q3.pairsBelowMinimum + q3.pairsNeverTogether) of \(total) item pairs not compared: \(q3.pairsBelowMinimum) answered together by fewer than \(options.q3.minimumPairCount) persons (the SD of Q3 is about 1/√n), \(q3.pairsNeverTogether) by nobody"
            }
        }
    }

    /// Test information Σⱼ Iⱼ(θ) and SE = 1/√I at each θ.
    package static func testInformation(_ parameters: [ItemParameters], at thetas: [Double]) -> [(
        theta: Double, information: Double, standardError: Double
    )] {
        thetas.map { t in
            let info = parameters.reduce(0) { $0 + $1.information(at: t) }
            return (t, info, info > 0 ? 1 / info.squareRoot() : .infinity)
        }
    }
}
