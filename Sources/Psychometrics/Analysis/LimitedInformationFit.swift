import CLapack
import Foundation

/// A fitted model of n 0/1 items as the limited-information statistics see it: the probability that every item
/// of a set S (one to four distinct items) is answered correctly, P(u_j = 1 ∀ j ∈ S) = ∫ Π_{j ∈ S} P_j(θ) dF(θ).
package protocol JointCorrectProbabilities: Sendable {
    var itemCount: Int { get }
    /// P(u_j = 1 for every j in `items`): 1…4 distinct items.
    func allCorrect(_ items: UnsafeBufferPointer<Int>) -> Double
}

/// Maydeu-Olivares & Joe's (2005, 2006) M2, the limited-information goodness-of-fit statistic of an IRT model
/// of n 0/1 items, with the RMSEA and SRMSR built on it (as mirt's `M2()` reports them).
///
/// From N persons who answered every item, the univariate and bivariate proportions correct
/// p₂ = (p_1 … p_n, p_12 … p_(n−1)n) (m = n + n(n − 1)/2 moments) against the model's π₂(γ̂):
/// ```
/// Ξ₂[a, b] = π_{a ∪ b} − π_a π_b                        (the moments' covariance under the model, per person;
///                                                         a ∪ b joins the items of moments a and b: ≤ 4 items)
/// Δ₂ = ∂π₂/∂γ                                            (m × q, central differences, h = 1e-5)
/// C₂ = Ξ₂⁻¹ − Ξ₂⁻¹Δ₂(Δ₂ᵀΞ₂⁻¹Δ₂)⁻¹Δ₂ᵀΞ₂⁻¹
/// M2 = N (p₂ − π₂)ᵀ C₂ (p₂ − π₂)  ~  χ²(m − q)          (q = rank Δ₂)
/// RMSEA₂ = √(max(M2 − df, 0) / ((N − 1) df)), its 90% interval √(λ / (N df)) from the non-central χ²'s limits λ
/// (both as mirt's `M2()` computes RMSEA, RMSEA_5 and RMSEA_95, N − 1 in the one and N in the other)
/// SRMSR = √(mean over pairs j < k of (r_jk − ρ_jk)²)       (observed against model-implied φ correlations)
/// ```
/// Computed with Ξ₂ = LLᵀ (Cholesky): u = L⁻¹e, V = L⁻¹Δ₂, M2/N = uᵀu − (Vᵀu)ᵀ(VᵀV)⁺(Vᵀu), the pseudo-inverse by
/// the eigenvalues of VᵀV above 1e-10 of the largest, so an unidentified parameter direction lowers q instead of
/// failing. C₂ depends on Δ₂ only through its column space, so any smooth parametrisation of the same model gives
/// the same M2. Cost: m² moments of up to four items (1,830² for 60 items) and an m³/3 factorisation.
package struct LimitedInformationFit: Sendable, Hashable, Codable {
    package var m2: Double
    package var degreesOfFreedom: Int
    package var pValue: Double
    package var rmsea: Double
    /// The RMSEA's 90% interval (mirt's RMSEA_5 and RMSEA_95).
    package var rmseaLower: Double
    package var rmseaUpper: Double
    package var srmsr: Double
    /// The persons who answered every item (M2's N).
    package var persons: Int
    package var items: Int
    /// The model's free parameters as M2 counts them: the rank of Δ₂.
    package var parameters: Int

    /// The most items M2 is computed for: m = 3,240 moments, Ξ₂ 84 MB, its factorisation ~10¹⁰ operations.
    package static let maximumItems = 80
    /// The fewest complete response patterns M2 is computed from.
    package static let minimumPersons = 50

    /// The response patterns of the persons of `data` who answered every item (persons × items, row-major): M2's
    /// data.
    package static func completePatterns(_ data: ResponseMatrix) -> (patterns: [UInt8], persons: Int) {
        let complete = (0..<data.personCount).filter { data.cells(ofPerson: $0).count == data.itemCount }
        var patterns = [UInt8](repeating: 0, count: complete.count * data.itemCount)
        for (r, i) in complete.enumerated() {
            for cell in data.cells(ofPerson: i) { patterns[r * data.itemCount + Int(data.itemIndices[cell])] = data.responses[cell] }
        }
        return (patterns, complete.count)
    }

    /// M2 of a model of `itemCount` 0/1 items on the complete response patterns `responses` (persons × items,
    /// row-major, 0/1).
    /// - Parameters:
    ///   - parameters: the fitted model's free parameters γ̂.
    ///   - model: the model at parameters γ for sets of up to the given number of items: called at γ̂ for sets of
    ///     up to 4 items (Ξ₂) and at each γ̂ ± h e_k for sets of up to 2 (Δ₂), so a model that tabulates per set
    ///     size can tabulate less for the derivatives.
    /// - Throws: `PsychometricsError` `.insufficientData` for fewer than 3 items, more than `maximumItems`, fewer
    ///   than `minimumPersons` patterns, or no degrees of freedom left; `.numericalFailure` when Ξ₂ is not
    ///   positive definite (an item everybody or nobody answers correctly under the model).
    package static func evaluate(
        responses: [UInt8], persons: Int, itemCount n: Int, parameters: [Double],
        model: ([Double], _ largestSet: Int) throws(PsychometricsError) -> any JointCorrectProbabilities,
        workers: Int
    ) throws(PsychometricsError) -> LimitedInformationFit {
        guard n >= 3 else { throw PsychometricsError(.insufficientData, "M2 needs at least 3 items, got \(n)") }
        guard n <= maximumItems else {
            throw PsychometricsError(
                .insufficientData,
                "M2 is computed for at most \(maximumItems) items (\(n * (n + 1) / 2) moments; its matrix grows as the square of that), got \(n)")
        }
        guard persons >= minimumPersons else {
            throw PsychometricsError(.insufficientData, "M2 needs at least \(minimumPersons) persons who answered every item, got \(persons)")
        }
        precondition(responses.count == persons * n, "responses must be persons × items")
        let m = n + n * (n - 1) / 2, q = parameters.count
        // Moment a: item a (a < n), else the pair of `pairs[a − n]`.
        var sets = [(Int, Int)]()
        sets.reserveCapacity(m)
        for j in 0..<n { sets.append((j, -1)) }
        for j in 0..<n { for k in (j + 1)..<n { sets.append((j, k)) } }

        // Observed proportions.
        var observed = [Double](repeating: 0, count: m)
        var counts = [Int](repeating: 0, count: m)
        for i in 0..<persons {
            let row = i * n
            var pair = n
            for j in 0..<n {
                let uj = responses[row + j] == 1
                if uj { counts[j] += 1 }
                for k in (j + 1)..<n {
                    if uj && responses[row + k] == 1 { counts[pair] += 1 }
                    pair += 1
                }
            }
        }
        for a in 0..<m { observed[a] = Double(counts[a]) / Double(persons) }

        func moments(_ model: any JointCorrectProbabilities) -> [Double] {
            var out = [Double](repeating: 0, count: m)
            var buffer = [0, 0]
            buffer.withUnsafeMutableBufferPointer { b in
                for (a, s) in sets.enumerated() {
                    b[0] = s.0; b[1] = s.1
                    out[a] = model.allCorrect(UnsafeBufferPointer(rebasing: b[0..<(s.1 < 0 ? 1 : 2)]))
                }
            }
            return out
        }
        let fitted = try model(parameters, 4)
        let expected = moments(fitted)

        // Δ₂ (column-major m × q) by central differences; the columns in parallel.
        let h = 1e-5, lanes = max(1, min(workers, q))
        var delta = [Double](repeating: 0, count: m * max(q, 1))
        var failures = [PsychometricsError?](repeating: nil, count: lanes)
        delta.withUnsafeMutableBufferPointer { buffer in
            failures.withUnsafeMutableBufferPointer { failed in
                let box = UncheckedSendableBox(buffer.baseAddress!), failedBox = UncheckedSendableBox(failed.baseAddress!)
                parallelFor(lanes) { lane in
                    do throws(PsychometricsError) {
                        for k in stride(from: lane, to: q, by: lanes) {
                            var up = parameters, down = parameters
                            up[k] += h; down[k] -= h
                            let plus = moments(try model(up, 2)), minus = moments(try model(down, 2))
                            for a in 0..<m { box.value[k * m + a] = (plus[a] - minus[a]) / (2 * h) }
                        }
                    } catch { failedBox.value[lane] = error }
                }
            }
        }
        if let failure = failures.lazy.compactMap({ $0 }).first { throw failure }

        // Ξ₂ (symmetric; rows filled in parallel, strided so the triangle's work is shared evenly).
        var xi = [Double](repeating: 0, count: m * m)
        xi.withUnsafeMutableBufferPointer { buffer in
            let box = UncheckedSendableBox(buffer.baseAddress!)
            parallelFor(max(1, workers)) { lane in
                var union = [Int](repeating: 0, count: 4)
                for a in stride(from: lane, to: m, by: max(1, workers)) {
                    for b in a..<m {
                        var count = 0
                        for item in [sets[a].0, sets[a].1, sets[b].0, sets[b].1] where item >= 0 && !union[0..<count].contains(item) {
                            union[count] = item; count += 1
                        }
                        let joint = union.withUnsafeBufferPointer { fitted.allCorrect(UnsafeBufferPointer(rebasing: $0[0..<count])) }
                        let value = joint - expected[a] * expected[b]
                        box.value[a * m + b] = value
                        box.value[b * m + a] = value
                    }
                }
            }
        }
        var u = (0..<m).map { observed[$0] - expected[$0] }

        // Ξ₂ = LLᵀ; u = L⁻¹e; V = L⁻¹Δ₂.
        guard LAPACKE_dpotrf(LAPACK_COL_MAJOR, Int8(UInt8(ascii: "L")), Int32(m), &xi, Int32(m)) == 0 else {
            throw PsychometricsError(
                .numericalFailure,
                "M2: the moments' covariance matrix under the model is not positive definite (an item answered correctly by nearly everyone or no one under the model, or two items the model makes identical)"
            )
        }
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, Int32(m), xi, Int32(m), &u, 1)
        var projection = 0.0, rank = 0
        if q > 0 {
            cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, Int32(m), Int32(q), 1, xi, Int32(m), &delta, Int32(m))
            var gram = [Double](repeating: 0, count: q * q), b = [Double](repeating: 0, count: q), eigenvalues = b
            cblas_dgemm(
                CblasColMajor, CblasTrans, CblasNoTrans, Int32(q), Int32(q), Int32(m), 1, delta, Int32(m), delta, Int32(m), 0, &gram, Int32(q))
            cblas_dgemv(CblasColMajor, CblasTrans, Int32(m), Int32(q), 1, delta, Int32(m), u, 1, 0, &b, 1)
            guard LAPACKE_dsyev(LAPACK_COL_MAJOR, Int8(UInt8(ascii: "V")), Int8(UInt8(ascii: "U")), Int32(q), &gram, Int32(q), &eigenvalues) == 0
            else {
                throw PsychometricsError(.numericalFailure, "M2: the eigen-decomposition of ΔᵀΞ⁻¹Δ failed")
            }
            let largest = eigenvalues.max() ?? 0
            for k in 0..<q where eigenvalues[k] > 1e-10 * largest {
                var dot = 0.0
                for l in 0..<q { dot += gram[k * q + l] * b[l] }
                projection += dot * dot / eigenvalues[k]
                rank += 1
            }
        }
        let df = m - rank
        guard df > 0 else {
            throw PsychometricsError(.insufficientData, "M2 has no degrees of freedom: \(m) moments, \(rank) parameters")
        }
        let quadratic = u.reduce(0) { $0 + $1 * $1 }
        let m2 = max(0, Double(persons) * (quadratic - projection))
        let scale = Double(persons - 1) * Double(df)
        let (lower, upper) = ChiSquare.noncentralityInterval(m2, degreesOfFreedom: Double(df), level: 0.90)

        // SRMSR over the item pairs (φ correlations).
        var squares = 0.0
        var pair = n
        func phi(_ pj: Double, _ pk: Double, _ pjk: Double) -> Double {
            let v = pj * (1 - pj) * pk * (1 - pk)
            return v > 0 ? (pjk - pj * pk) / v.squareRoot() : 0
        }
        for j in 0..<n {
            for k in (j + 1)..<n {
                let r = phi(observed[j], observed[k], observed[pair]) - phi(expected[j], expected[k], expected[pair])
                squares += r * r
                pair += 1
            }
        }
        return LimitedInformationFit(
            m2: m2, degreesOfFreedom: df, pValue: ChiSquare.upperTail(m2, degreesOfFreedom: Double(df)),
            rmsea: (max(0, m2 - Double(df)) / scale).squareRoot(), rmseaLower: (lower / (Double(persons) * Double(df))).squareRoot(),
            rmseaUpper: (upper / (Double(persons) * Double(df))).squareRoot(), srmsr: (squares / Double(n * (n - 1) / 2)).squareRoot(),
            persons: persons, items: n, parameters: rank)
    }
}

/// `JointCorrectProbabilities` of a unidimensional model: θ ~ N(0, 1) on a quadrature grid,
/// P(all of S) = Σ_q w_q Π_{j ∈ S} P_j(θ_q).
package struct UnidimensionalJointProbabilities: JointCorrectProbabilities {
    package let itemCount: Int
    let weights: [Double]
    /// P_j(θ_q), item-major.
    let table: [Double]

    package init(items: [ItemParameters], grid: QuadratureGrid) {
        itemCount = items.count
        weights = grid.weights
        table = items.flatMap { item in grid.points.map { item.probability(at: $0) } }
    }

    /// The free parameters of items of `model` on the N(0, 1) metric: (a, b) per item for the 2PL, (a, b, c) for
    /// the 3PL; for the Rasch model and the 1PL the common slope (the Rasch model's latent SD, standardized) then
    /// each b.
    package static func parameters(_ items: [ItemParameters], model: IRTModel) -> [Double] {
        switch model {
        case .rasch, .onePL: return [items.first?.discrimination ?? 1] + items.map(\.difficulty)
        case .twoPL: return items.flatMap { [$0.discrimination, $0.difficulty] }
        case .threePL: return items.flatMap { [$0.discrimination, $0.difficulty, $0.guessing] }
        }
    }

    /// The items at free parameters `x` (`parameters(_:model:)`'s layout).
    package static func items(_ x: [Double], count: Int, model: IRTModel) -> [ItemParameters] {
        switch model {
        case .rasch, .onePL: return (0..<count).map { ItemParameters(discrimination: x[0], difficulty: x[1 + $0]) }
        case .twoPL: return (0..<count).map { ItemParameters(discrimination: x[2 * $0], difficulty: x[2 * $0 + 1]) }
        case .threePL: return (0..<count).map { ItemParameters(discrimination: x[3 * $0], difficulty: x[3 * $0 + 1], guessing: x[3 * $0 + 2]) }
        }
    }

    /// M2 of unidimensional 0/1 items of `model` (on the N(0, 1) metric) on the persons of `data` who answered
    /// every item, integrated on `grid`; nil with the reason when it is not defined (items in more than two
    /// categories, mixed models, too few complete patterns, too many items, Ξ₂ not positive definite).
    package static func m2(
        _ data: ResponseMatrix, items: [ItemParameters], model: IRTModel, grid: QuadratureGrid,
        workers: Int
    ) -> (fit: LimitedInformationFit?, undefined: String?) {
        guard data.isDichotomous else { return (nil, "M2 is computed for 0/1 items") }
        let (patterns, persons) = LimitedInformationFit.completePatterns(data)
        do {
            let fit = try LimitedInformationFit.evaluate(
                responses: patterns, persons: persons, itemCount: data.itemCount, parameters: parameters(items, model: model),
                model: { x, _ in UnidimensionalJointProbabilities(items: Self.items(x, count: items.count, model: model), grid: grid) },
                workers: workers)
            return (fit, nil)
        } catch { return (nil, error.message) }
    }

    package func allCorrect(_ items: UnsafeBufferPointer<Int>) -> Double {
        let q = weights.count
        var total = 0.0
        for node in 0..<q {
            var p = weights[node]
            for j in items { p *= table[j * q + node] }
            total += p
        }
        return total
    }
}
