import Foundation
import Psychometrics

/// An IRT test of one item for one focal group: the likelihood-ratio test (Thissen, Steinberg & Wainer 1993)
/// or the Wald test (Lord 1980's χ² with the covariance of the multiple-group fit, Langer 2008), with the item's
/// parameters in the two groups under the augmented model.
package struct IRTItemTest: Sendable, Hashable, Codable {
    package var chiSquare: Double
    package var degreesOfFreedom: Int
    package var p: Double
    /// The item's parameters for the reference group's and the focal group's responses in the model where it is
    /// free in the focal group.
    package var reference: ItemParameters
    package var focal: ItemParameters
}

/// The multiple-group fits an IRT DIF scan needs, each identified by which items are free in every group and
/// which one item (if any) is free in one focal group only, each started from the scan's base fit and kept
/// for reuse.
///
/// - **Likelihood ratio** (TSW IRT-LR): the compact model holds the studied item j invariant, the augmented model
///   frees it in focal group f (its own a, d[, c] there; the reference and other groups share one set); both free
///   the same other items in every group (none for all-others-as-anchor; the non-anchor items otherwise).
///   G² = 2(log L_augmented − log L_compact) on 2 (2PL) or 3 (3PL) df.
/// - **Wald**: in the augmented model with standard errors (Oakes' observed information), the difference δ of
///   the focal set's and the reference set's working parameters (a, d[, logit c]; a on the log scale with a
///   slope prior), W = δᵀ (Σ_ff + Σ_rr − Σ_fr − Σ_rf)⁻¹ δ on the same df — Lord's χ² with the covariance of the
///   joint fit, which accounts for the groups' estimated means and SDs (Langer 2008; mirt's `DIF(Wald = TRUE)`).
///
/// Thissen, D., Steinberg, L. & Wainer, H. (1993). Detection of differential item functioning using the
/// parameters of item response models. In P. W. Holland & H. Wainer (Eds.), *Differential Item Functioning*
/// (pp. 67–113). Langer, M. M. (2008). *A reexamination of Lord's Wald test for differential item functioning
/// using item response theory and modern error estimation* (doctoral dissertation, UNC Chapel Hill).
struct IRTDIFFits {
    let data: ResponseMatrix
    let groups: [String]
    let reference: String
    let calibrator: MultipleGroupCalibrator
    /// Every group's name, the reference first.
    let names: [String]
    private(set) var cache: [Key: MultipleGroupResult] = [:]
    private(set) var fitsRun = 0
    var base: MultipleGroupResult?

    struct Key: Hashable {
        var freeEverywhere: [Int]
        var studied: Int?
        var focal: String?
        var standardErrors: Bool
    }

    /// The data split by group once for every fit (nil until the first fit).
    private var prepared: MultipleGroupCalibrator.Prepared?

    init(data: ResponseMatrix, groups: [String], reference: String, calibrator: MultipleGroupCalibrator, names: [String]) {
        self.data = data
        self.groups = groups
        self.reference = reference
        self.calibrator = calibrator
        self.names = names
    }

    /// The fit with the items `free` free in every group and, when given, `studied` free in `focal` only.
    mutating func fit(free: Set<Int>, studied: Int? = nil, focal: String? = nil, standardErrors: Bool = false) throws(PsychometricsError)
        -> MultipleGroupResult
    {
        let key = Key(freeEverywhere: free.sorted(), studied: studied, focal: focal, standardErrors: standardErrors)
        if let done = cache[key] { return done }
        if prepared == nil { prepared = try calibrator.prepare(data, groups: groups, reference: reference) }
        let result = try Self.run(
            key, calibrator: calibrator, prepared: prepared!, itemIDs: data.itemIDs, names: names, start: base, remember: base == nil)
        fitsRun += 1
        cache[key] = result
        if base == nil { base = result }
        return result
    }

    /// One fit by its key, started from `start`.
    private static func run(
        _ key: Key, calibrator: MultipleGroupCalibrator, prepared: MultipleGroupCalibrator.Prepared, itemIDs: [String],
        names: [String], start: MultipleGroupResult?, remember: Bool = false
    ) throws(PsychometricsError) -> MultipleGroupResult {
        var freeItems: [String: Set<String>] = [:]
        for j in key.freeEverywhere { freeItems[itemIDs[j]] = Set(names) }
        if let studied = key.studied, let focal = key.focal { freeItems[itemIDs[studied], default: []].insert(focal) }
        var calibrator = calibrator
        calibrator.options.standardErrors = key.standardErrors
        return try calibrator.fit(prepared, freeItems: freeItems, start: start, remember: remember)
    }

    /// Runs the fits a round of tests will ask for, several at once: with W worker threads (the calibration's
    /// `workers`), W fits run side by side on one thread each — independent fits scale with the threads where one
    /// fit's E-step over a few thousand persons would not. First the compact fits (free everywhere: `free` less
    /// the studied item), then the augmented ones (the item also free in one focal group), all started from the
    /// base fit. Fits already made are skipped; `fit` then finds every one in the cache.
    mutating func prefetch(tests: [(item: Int, focal: String)], free: Set<Int>, standardErrors: Bool) throws(PsychometricsError) {
        let lanes = max(1, min(calibrator.options.workers, tests.count))
        guard lanes > 1 else { return }
        if base == nil { _ = try fit(free: []) }
        var compact: [Key] = [], augmented: [Key] = [], seen = Set<Key>(cache.keys)
        for (j, focal) in tests {
            let others = free.subtracting([j]).sorted()
            let c = Key(freeEverywhere: others, studied: nil, focal: nil, standardErrors: false)
            let a = Key(freeEverywhere: others, studied: j, focal: focal, standardErrors: standardErrors)
            if !standardErrors && seen.insert(c).inserted { compact.append(c) }
            if seen.insert(a).inserted { augmented.append(a) }
        }
        var single = calibrator
        single.options.workers = 1
        let prepared = self.prepared!, itemIDs = data.itemIDs, names = self.names, start = base
        for batch in [compact, augmented] where !batch.isEmpty {
            var results = [Result<MultipleGroupResult, PsychometricsError>?](repeating: nil, count: batch.count)
            results.withUnsafeMutableBufferPointer { buffer in
                let box = UncheckedSendableBox(buffer.baseAddress!)
                parallelFor(min(lanes, batch.count)) { lane in
                    for k in stride(from: lane, to: batch.count, by: lanes) {
                        do throws(PsychometricsError) {
                            box.value[k] = .success(
                                try Self.run(batch[k], calibrator: single, prepared: prepared, itemIDs: itemIDs, names: names, start: start))
                        } catch { box.value[k] = .failure(error) }
                    }
                }
            }
            for (key, result) in zip(batch, results) {
                cache[key] = try result!.get()
                fitsRun += 1
            }
        }
    }

    /// The likelihood-ratio test of item j in focal group f with the items `free` (j excluded) free everywhere;
    /// the reason instead when the focal group's responses to j could not be fitted apart.
    mutating func likelihoodRatio(item j: Int, focal: String, free: Set<Int>) throws(PsychometricsError) -> Result<IRTItemTest, Untestable> {
        var others = free
        others.remove(j)
        let compact = try fit(free: others)
        let augmented = try fit(free: others, studied: j, focal: focal)
        let id = data.itemIDs[j]
        guard let ref = augmented.parameters(item: id, group: reference), let foc = augmented.parameters(item: id, group: focal),
            augmented.freedItemIDs.contains(id)
        else {
            return .failure(Untestable(reason: Self.reasonNotSeparated(augmented, item: id, focal: focal)))
        }
        let df = augmented.model == .threePL ? 3 : 2
        let g2 = max(0, 2 * (augmented.logLikelihood - compact.logLikelihood))
        return .success(
            IRTItemTest(chiSquare: g2, degreesOfFreedom: df, p: ChiSquare.upperTail(g2, degreesOfFreedom: Double(df)), reference: ref, focal: foc))
    }

    /// The Wald test of item j in focal group f (see the type), in the augmented model with standard errors.
    mutating func wald(item j: Int, focal: String, free: Set<Int>) throws(PsychometricsError) -> Result<IRTItemTest, Untestable> {
        var others = free
        others.remove(j)
        let augmented = try fit(free: others, studied: j, focal: focal, standardErrors: true)
        let id = data.itemIDs[j]
        guard let r = augmented.items.firstIndex(where: { $0.item.itemID == id && $0.groups.contains(reference) }),
            let f = augmented.items.firstIndex(where: { $0.item.itemID == id && $0.groups == [focal] }), r != f
        else {
            return .failure(Untestable(reason: Self.reasonNotSeparated(augmented, item: id, focal: focal)))
        }
        guard let covariance = augmented.workingCovariance else {
            return .failure(
                Untestable(reason: "no standard errors in the augmented model: " + (augmented.warnings.last ?? augmented.standardErrorMethod)))
        }
        let p = augmented.model == .threePL ? 3 : 2, P = augmented.workingParameters.count
        let or = augmented.workingOffsets[r], of = augmented.workingOffsets[f]
        let delta = (0..<p).map { augmented.workingParameters[of + $0] - augmented.workingParameters[or + $0] }
        var sigma = [Double](repeating: 0, count: p * p)
        for a in 0..<p {
            for b in 0..<p {
                sigma[a * p + b] =
                    covariance[(of + a) * P + of + b] + covariance[(or + a) * P + or + b]
                    - covariance[(of + a) * P + or + b] - covariance[(or + a) * P + of + b]
            }
        }
        let solved = solveSmallSPD(sigma, delta, n: p)
        let w = max(0, zip(delta, solved).reduce(0) { $0 + $1.0 * $1.1 })
        return .success(
            IRTItemTest(
                chiSquare: w, degreesOfFreedom: p, p: ChiSquare.upperTail(w, degreesOfFreedom: Double(p)),
                reference: augmented.items[r].item.parameters, focal: augmented.items[f].item.parameters))
    }

    static func reasonNotSeparated(_ fit: MultipleGroupResult, item id: String, focal: String) -> String {
        if let excluded = fit.excludedGroupItems.first(where: { $0.itemID == id && $0.groups.contains(focal) }) {
            return "the focal group's responses cannot estimate the item apart: \(excluded.reason)"
        }
        if let excluded = fit.excludedItems.first(where: { $0.itemID == id }) { return "item excluded from the calibration: \(excluded.reason)" }
        return "group \(focal) has no calibrated responses to this item"
    }
}

/// Why a test could not be run for one item and focal group.
package struct Untestable: Error, Sendable, Hashable, Codable {
    package var reason: String
}
