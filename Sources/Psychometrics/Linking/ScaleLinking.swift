import Foundation

/// A method for estimating the linking constants of a common-item (non-equivalent groups anchor test) design.
package enum LinkingMethod: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Loyd & Hoover (1980): slope = μ(a_new)/μ(a_old), intercept = μ(b_old) − slope·μ(b_new).
    case meanMean = "mean-mean"
    /// Marco (1977): slope = σ(b_old)/σ(b_new), intercept = μ(b_old) − slope·μ(b_new).
    case meanSigma = "mean-sigma"
    /// Haebara (1980): least squares between the item characteristic curves of each common item.
    case haebara
    /// Stocking & Lord (1983): least squares between the test characteristic curves of the common items.
    case stockingLord = "stocking-lord"

    package var description: String { rawValue }

    /// Whether the method minimises a characteristic-curve criterion (rather than matching moments).
    package var isCharacteristicCurve: Bool { self == .haebara || self == .stockingLord }
}

/// Where the characteristic-curve criteria compare curves.
package enum LinkingDirection: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// On the old scale: old-form curves against the new-form curves carried to the old scale, weighted by the
    /// old-scale quadrature (plink's default, `symmetric = FALSE`).
    case newToOld = "new-to-old"
    /// On the new scale: new-form curves against the old-form curves carried back to the new scale, weighted by
    /// the new-scale quadrature.
    case oldToNew = "old-to-new"
    /// The sum of both (Haebara 1980; plink's `symmetric = TRUE`, STUIRT's `SY BI BI`).
    case symmetric

    package var description: String { rawValue }
}

/// θ points and weights on one scale for the characteristic-curve criteria. Weights are normalised to sum to 1,
/// which standardises the criteria as plink and STUIRT do.
package struct LinkingQuadrature: Sendable, Hashable, Codable {
    package let points: [Double]
    package let weights: [Double]

    /// Weights are normalised to sum to 1.
    /// - Throws: `PsychometricsError.invalidOptions` unless there are as many weights as points (at least 1),
    ///   the points are finite and the weights non-negative and finite with a positive sum.
    package init(points: [Double], weights: [Double]) throws(PsychometricsError) {
        var problems: [String] = []
        if points.isEmpty || points.count != weights.count {
            problems.append(
                "linking quadrature needs as many weights as points (at least 1), got \(points.count) points and \(weights.count) weights")
        }
        if !points.allSatisfy(\.isFinite) { problems.append("linking quadrature points must be finite") }
        if !weights.allSatisfy({ $0 >= 0 && $0.isFinite }) {
            problems.append("linking quadrature weights must be non-negative and finite")
        } else if !(weights.reduce(0, +) > 0) {
            problems.append("linking quadrature weights must have a positive, finite sum")
        }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, problems.joined(separator: "; ")) }
        self.init(grid: points, weights)
    }

    private init(grid points: [Double], _ weights: [Double]) {
        let total = weights.reduce(0, +)
        self.points = points
        self.weights = weights.map { $0 / total }
    }

    package init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case points, weights }
        let c = try decoder.container(keyedBy: Keys.self)
        let points = try c.decode([Double].self, forKey: .points), weights = try c.decode([Double].self, forKey: .weights)
        self = try PsychometricsError.decoding(at: c.codingPath) { () throws(PsychometricsError) in
            try LinkingQuadrature(points: points, weights: weights)
        }
    }

    /// The calibration grid: `count` equally spaced points on [−bound, bound] with N(0, 1) density weights — the
    /// latent distribution each calibration assumes on its own scale.
    /// - Throws: `PsychometricsError.invalidOptions` for a grid `QuadratureGrid` refuses.
    package static func standardNormal(count: Int = 61, bound: Double = 6) throws(PsychometricsError) -> LinkingQuadrature {
        try latent(.standard, count: count, bound: bound)
    }

    /// The grid with the density weights of a bank's latent distribution N(mean, sd²) (`ItemBank.latentScale`):
    /// a Rasch bank's population on its logit metric; `standardNormal` for a bank on the N(0, 1) metric.
    /// - Throws: `PsychometricsError.invalidOptions` for a grid `QuadratureGrid` refuses.
    package static func latent(_ scale: LatentScale, count: Int = 61, bound: Double = 6) throws(PsychometricsError) -> LinkingQuadrature {
        let grid = try QuadratureGrid(count: count, bound: bound, mean: scale.mean, sd: scale.sd)
        return LinkingQuadrature(grid: grid.points, grid.weights)
    }

    /// The default: 61 points on [−6, 6] with N(0, 1) weights.
    static let defaultGrid: LinkingQuadrature = {
        let grid = QuadratureGrid(validatedCount: 61, bound: 6)
        return LinkingQuadrature(grid: grid.points, grid.weights)
    }()

    package var count: Int { points.count }
}

/// Settings of `ScaleLinking.link`.
package struct ScaleLinkingOptions: Sendable, Hashable, Codable {
    package var method: LinkingMethod
    /// Which curves the characteristic-curve criteria compare (ignored by the moment methods).
    package var direction: LinkingDirection = .newToOld
    /// Points and weights on the old scale (used by `newToOld` and `symmetric`). Default: 61 points on [−6, 6],
    /// N(0, 1) weights.
    package var oldScaleQuadrature: LinkingQuadrature = .defaultGrid
    /// Points and weights on the new scale (used by `oldToNew` and `symmetric`). Default as the old scale.
    package var newScaleQuadrature: LinkingQuadrature = .defaultGrid
    /// Newton stops when a step changes slope and intercept by less than `tolerance · (1 + |value|)`.
    package var tolerance: Double = 1e-10
    package var maxIterations: Int = 100

    package init(method: LinkingMethod = .stockingLord) {
        self.method = method
    }
}

/// Why linking could not be done (too few common items, degenerate parameters, invalid options). The message
/// carries the numbers that explain it.

/// The outcome of linking a new calibration onto an old one.
package struct ScaleLinkingResult: Sendable, Hashable, Codable {
    package var method: LinkingMethod
    /// θ_old = slope · θ_new + intercept.
    package var transformation: ScaleTransformation
    /// The items in both banks, in new-bank order.
    package var commonItemIDs: [String]
    /// The characteristic-curve methods' direction; nil for the moment methods.
    package var direction: LinkingDirection?
    /// The standardised criterion at the solution (Haebara: weighted mean squared ICC difference per item;
    /// Stocking–Lord: weighted mean squared TCC difference); nil for the moment methods.
    package var criterion: Double?
    /// Always true for the moment methods; for Haebara and Stocking–Lord, whether Newton met the tolerance.
    package var converged: Bool
    /// Newton iterations (0 for the moment methods).
    package var iterations: Int
    /// The mean–sigma or mean–mean constants the characteristic-curve search started from.
    package var start: ScaleTransformation?
    package var warnings: [String]

    package var slope: Double { transformation.slope }
    package var intercept: Double { transformation.intercept }
    package var commonItemCount: Int { commonItemIDs.count }

    /// The new bank on the old scale (all its items, not only the common ones).
    package func linkedBank(_ newBank: ItemBank) -> ItemBank { transformation.bank(newBank) }
}

/// Common-item linking of two dichotomous IRT calibrations (1PL/2PL/3PL, logistic metric D = 1, slope–difficulty
/// form) by mean–mean, mean–sigma, Haebara or Stocking–Lord, as described by Kolen & Brennan (2014, §6.3–6.4)
/// and implemented in plink (Weeks 2010):
/// ```
/// θ_old = A · θ_new + B,   a* = a/A,   b* = A·b + B,   c* = c
/// ```
/// Common items are matched by item id. The characteristic-curve methods minimise
/// ```
/// Haebara:        Q = Σ_m w_m Σ_j [P_j(θ_m; old) − P_j(θ_m; new→old)]² / n
/// Stocking–Lord:  F = Σ_m w_m [Σ_j P_j(θ_m; old) − Σ_j P_j(θ_m; new→old)]²
/// ```
/// over (A, B) on the old-scale points θ_m with weights w_m (Σ w = 1) — or the mirror image on the new scale, or
/// their sum (`LinkingDirection`) — by Newton's method with the analytic gradient and Hessian, a positive-definite
/// modification and a backtracking line search, starting from mean–sigma (mean–mean when the common
/// difficulties do not vary).
package enum ScaleLinking {
    /// Links `new` onto the scale of `old`.
    ///
    /// Common items scored in more than two categories (`BankItem.categoryModel`) must have the same model and
    /// number of categories in both banks. The characteristic-curve methods compare their category curves
    /// (Haebara) or expected scores (Stocking–Lord; not for nominal items, whose options are no scores), as Kim &
    /// Lee (2006) extend them; the moment methods count each threshold b_k of a graded, gpcm or pcm item as a
    /// difficulty with the item's slope (nominal items have neither, and are refused).
    package static func link(old: ItemBank, new: ItemBank, options: ScaleLinkingOptions = ScaleLinkingOptions()) throws(PsychometricsError)
        -> ScaleLinkingResult
    {
        let oldByID = Dictionary(old.items.map { ($0.itemID, $0) }, uniquingKeysWith: { first, _ in first })
        var ids: [String] = [], oldItems: [ItemParameters] = [], newItems: [ItemParameters] = []
        var oldModels: [(any ItemResponseModel)?] = [], newModels: [(any ItemResponseModel)?] = []
        var seen = Set<String>()
        for item in new.items where seen.insert(item.itemID).inserted {
            guard let match = oldByID[item.itemID] else { continue }
            let (a, b) = (match.categoryModel, item.categoryModel)
            guard a?.kind == b?.kind && a?.categoryCount == b?.categoryCount else {
                throw PsychometricsError(
                    .invalidParameters,
                    "common item '\(item.itemID)' is \(match.modelName) with \(match.categoryCount) categories in the old bank and \(item.modelName) with \(item.categoryCount) in the new one; linking compares an item with itself"
                )
            }
            ids.append(item.itemID)
            newItems.append(item.parameters)
            oldItems.append(match.parameters)
            oldModels.append(a?.model)
            newModels.append(b?.model)
        }
        if ids.isEmpty {
            throw PsychometricsError(
                .insufficientData,
                "no common items: none of the \(new.items.count) item ids of the new bank is in the old bank (\(old.items.count) items); items are matched by item_id"
            )
        }
        guard oldModels.contains(where: { $0 != nil }) else { return try link(commonItemIDs: ids, old: oldItems, new: newItems, options: options) }
        try validate(options)
        if ids.count < 2 {
            throw PsychometricsError(.insufficientData, "only \(ids.count) common item (\(ids.joined(separator: ", "))); linking needs at least 2")
        }
        // The moment methods' (a, b) pairs: one per threshold of an item in more than two categories.
        func momentItems(_ parameters: [ItemParameters], _ models: [(any ItemResponseModel)?]) throws(PsychometricsError) -> [ItemParameters] {
            var out: [ItemParameters] = []
            for (k, p) in parameters.enumerated() {
                guard let model = models[k] else { out.append(p); continue }
                let values = model.parameterValues
                guard model.categoriesAreScores, model.parameterNames.first == "a" else {
                    throw PsychometricsError(
                        .invalidParameters,
                        "common item '\(ids[k])' is a nominal item, which has no slope and difficulties for \(options.method); use haebara")
                }
                for b in values.dropFirst() { out.append(ItemParameters(discrimination: values[0], difficulty: b)) }
            }
            return out
        }
        if options.method == .stockingLord, let k = oldModels.firstIndex(where: { $0.map { !$0.categoriesAreScores } ?? false }) {
            throw PsychometricsError(
                .invalidParameters,
                "common item '\(ids[k])' is a nominal item: its options are no scores, so it has no expected score for stocking-lord; use haebara")
        }
        var warnings: [String] = []
        let momentOld: [ItemParameters], momentNew: [ItemParameters]
        do {
            momentOld = try momentItems(oldItems, oldModels)
            momentNew = try momentItems(newItems, newModels)
        } catch {
            guard options.method.isCharacteristicCurve else { throw error }
            // Haebara on nominal items starts from no change.
            let identity = try ScaleTransformation(slope: 1, intercept: 0)
            warnings.append("no moment start (\(error.message)); started from slope 1, intercept 0")
            return characteristicCurve(
                ids: ids, old: oldItems, new: newItems, oldModels: oldModels, newModels: newModels, start: identity,
                warnings: warnings, options: options)
        }
        switch options.method {
        case .meanSigma, .meanMean:
            let t = try options.method == .meanSigma ? meanSigma(old: momentOld, new: momentNew) : meanMean(old: momentOld, new: momentNew)
            return ScaleLinkingResult(
                method: options.method, transformation: t, commonItemIDs: ids, direction: nil, criterion: nil,
                converged: true, iterations: 0, start: nil, warnings: [])
        case .haebara, .stockingLord:
            let start: ScaleTransformation
            do { start = try meanSigma(old: momentOld, new: momentNew) } catch {
                start = try meanMean(old: momentOld, new: momentNew)
                warnings.append("mean-sigma start unavailable (\(error.message)); started from mean-mean")
            }
            return characteristicCurve(
                ids: ids, old: oldItems, new: newItems, oldModels: oldModels, newModels: newModels, start: start,
                warnings: warnings, options: options)
        }
    }

    /// Haebara or Stocking–Lord from `start`: the criterion minimised, a warning when Newton does not converge.
    static func characteristicCurve(
        ids: [String], old: [ItemParameters], new: [ItemParameters], oldModels: [(any ItemResponseModel)?] = [],
        newModels: [(any ItemResponseModel)?] = [], start: ScaleTransformation, warnings: [String],
        options: ScaleLinkingOptions
    ) -> ScaleLinkingResult {
        var warnings = warnings
        let criterion = LinkingCriterion(
            method: options.method, direction: options.direction, old: old, new: new, oldModels: oldModels,
            newModels: newModels, oldScale: options.oldScaleQuadrature, newScale: options.newScaleQuadrature)
        let fit = criterion.minimise(from: start, tolerance: options.tolerance, maxIterations: options.maxIterations)
        if !fit.converged {
            warnings.append(
                "\(options.method) did not converge in \(fit.iterations) Newton iterations (last step \(String(format: "%.1e", fit.lastStep)), criterion \(String(format: "%.6g", fit.value))); the constants may be inaccurate"
            )
        }
        return ScaleLinkingResult(
            method: options.method, transformation: fit.transformation, commonItemIDs: ids,
            direction: options.direction, criterion: fit.value, converged: fit.converged,
            iterations: fit.iterations, start: start, warnings: warnings)
    }

    /// Links from parallel arrays of common-item parameters (`old[k]` and `new[k]` are the same item).
    package static func link(
        commonItemIDs ids: [String], old: [ItemParameters], new: [ItemParameters],
        options: ScaleLinkingOptions = ScaleLinkingOptions()
    ) throws(PsychometricsError) -> ScaleLinkingResult {
        precondition(ids.count == old.count && ids.count == new.count, "linking needs one old and one new parameter set per common item")
        try validate(options)
        if ids.count < 2 {
            throw PsychometricsError(
                .insufficientData,
                "only \(ids.count) common item\(ids.count == 1 ? "" : "s")\(ids.isEmpty ? "" : " (\(ids.joined(separator: ", ")))"); linking needs at least 2"
            )
        }
        for (side, items) in [("old", old), ("new", new)] {
            for (id, p) in zip(ids, items) {
                if !(p.discrimination > 0 && p.discrimination.isFinite) || !p.difficulty.isFinite || !(p.guessing >= 0 && p.guessing < 1) {
                    throw PsychometricsError(
                        .invalidParameters,
                        "common item '\(id)' has unusable parameters in the \(side) bank: a = \(p.discrimination.formatted6), b = \(p.difficulty.formatted6), c = \(p.guessing.formatted6); linking needs a > 0, finite b and 0 ≤ c < 1"
                    )
                }
            }
        }

        switch options.method {
        case .meanSigma:
            let t = try meanSigma(old: old, new: new)
            return ScaleLinkingResult(
                method: .meanSigma, transformation: t, commonItemIDs: ids, direction: nil, criterion: nil,
                converged: true, iterations: 0, start: nil, warnings: [])
        case .meanMean:
            let t = try meanMean(old: old, new: new)
            return ScaleLinkingResult(
                method: .meanMean, transformation: t, commonItemIDs: ids, direction: nil, criterion: nil,
                converged: true, iterations: 0, start: nil, warnings: [])
        case .haebara, .stockingLord:
            let start: ScaleTransformation
            var warnings: [String] = []
            do {
                start = try meanSigma(old: old, new: new)
            } catch {
                start = try meanMean(old: old, new: new)
                warnings.append("mean-sigma start unavailable (\(error.message)); started from mean-mean")
            }
            return characteristicCurve(ids: ids, old: old, new: new, start: start, warnings: warnings, options: options)
        }
    }

    /// Marco's (1977) mean–sigma constants: slope = σ(b_old)/σ(b_new), intercept = μ(b_old) − slope·μ(b_new).
    package static func meanSigma(old: [ItemParameters], new: [ItemParameters]) throws(PsychometricsError) -> ScaleTransformation {
        guard old.count >= 2, old.count == new.count else {
            throw PsychometricsError(.insufficientData, "mean-sigma needs at least 2 common items, got \(min(old.count, new.count))")
        }
        let bOld = old.map(\.difficulty), bNew = new.map(\.difficulty)
        let sdOld = standardDeviation(bOld), sdNew = standardDeviation(bNew)
        // "Does not vary" up to rounding: an SD below 1e-12 of the difficulties' magnitude.
        func varies(_ sd: Double, _ b: [Double]) -> Bool { sd.isFinite && sd > 1e-12 * max(1, b.map(abs).max()!) }
        guard varies(sdNew, bNew) else {
            throw PsychometricsError(
                .insufficientData,
                "mean-sigma: the difficulties of the \(new.count) common items do not vary in the new bank (SD \(String(format: "%.3g", sdNew))); the slope σ(b_old)/σ(b_new) is undefined"
            )
        }
        guard varies(sdOld, bOld) else {
            throw PsychometricsError(
                .insufficientData,
                "mean-sigma: the difficulties of the \(old.count) common items do not vary in the old bank (SD \(String(format: "%.3g", sdOld))); the slope σ(b_old)/σ(b_new) would be 0"
            )
        }
        let slope = sdOld / sdNew
        return try ScaleTransformation(slope: slope, intercept: mean(bOld) - slope * mean(bNew))
    }

    /// Loyd & Hoover's (1980) mean–mean constants: slope = μ(a_new)/μ(a_old), intercept = μ(b_old) − slope·μ(b_new).
    package static func meanMean(old: [ItemParameters], new: [ItemParameters]) throws(PsychometricsError) -> ScaleTransformation {
        guard !old.isEmpty, old.count == new.count else {
            throw PsychometricsError(.insufficientData, "mean-mean needs at least 1 common item, got \(min(old.count, new.count))")
        }
        let aOld = mean(old.map(\.discrimination)), aNew = mean(new.map(\.discrimination))
        guard aOld > 0 && aOld.isFinite && aNew > 0 && aNew.isFinite else {
            throw PsychometricsError(
                .insufficientData,
                "mean-mean: the mean slope of the common items must be positive and finite in both banks (old \(aOld), new \(aNew))")
        }
        let slope = aNew / aOld
        return try ScaleTransformation(slope: slope, intercept: mean(old.map(\.difficulty)) - slope * mean(new.map(\.difficulty)))
    }

    private static func validate(_ options: ScaleLinkingOptions) throws(PsychometricsError) {
        var problems: [String] = []
        if !(options.tolerance > 0 && options.tolerance < 1) { problems.append("tolerance must be in (0, 1), got \(options.tolerance)") }
        if options.maxIterations < 1 { problems.append("maxIterations must be at least 1, got \(options.maxIterations)") }
        if !problems.isEmpty { throw PsychometricsError(.invalidOptions, "invalid linking options: " + problems.joined(separator: "; ")) }
    }

    static func mean(_ x: [Double]) -> Double { x.reduce(0, +) / Double(x.count) }

    /// Population SD (divisor n); the mean–sigma ratio is the same with n − 1.
    static func standardDeviation(_ x: [Double]) -> Double {
        let m = mean(x)
        return (x.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(x.count)).squareRoot()
    }
}
