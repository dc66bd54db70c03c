import Foundation

/// The Haebara or Stocking–Lord criterion as a function of x = (A, B), with its analytic gradient and Hessian,
/// and its minimisation by a modified Newton method.
///
/// Curves compared (for each θ_m with weight w_m, Σ w = 1):
/// ```
/// new→old: target P_j(θ_m; a_old, b_old, c_old), moving P_j with z = a_new((θ_m − B)/A − b_new)
/// old→new: target P_j(θ_m; a_new, b_new, c_new), moving P_j with z = a_old(A·θ_m + B − b_old)
/// Haebara:        Σ_m w_m Σ_j (T_jm − P_jm)² / n
/// Stocking–Lord:  Σ_m w_m (Σ_j T_jm − Σ_j P_jm)²
/// ```
/// With P = c + (1 − c)σ(z): ∂P/∂x = P′ z_x and ∂²P/∂x∂y = P″ z_x z_y + P′ z_xy, P′ = (1 − c)σ(1 − σ),
/// P″ = P′(1 − 2σ).
///
/// An item scored in more than two categories (`oldModels`/`newModels`; Kim & Lee 2006) moves as its category
/// curves at θ* = (θ − B)/A (new→old) or Aθ + B (old→new): ∂P_k/∂x = P_k′(θ*) θ*_x, ∂²P_k/∂x∂y = P_k″ θ*_x θ*_y
/// + P_k′ θ*_xy with P′, P″ from `categoryThetaDerivatives`. Haebara sums (T_k − P_k)² over its categories;
/// Stocking–Lord adds its expected score Σ_k k P_k to the test characteristic curve.
struct LinkingCriterion {
    let method: LinkingMethod
    let direction: LinkingDirection
    let old: [ItemParameters]
    let new: [ItemParameters]
    /// Per common item, its model when it is scored in more than two categories (empty: every item is 0/1).
    let oldModels: [(any ItemResponseModel)?]
    let newModels: [(any ItemResponseModel)?]
    let oldScale: LinkingQuadrature
    let newScale: LinkingQuadrature

    init(
        method: LinkingMethod, direction: LinkingDirection, old: [ItemParameters], new: [ItemParameters],
        oldModels: [(any ItemResponseModel)?] = [], newModels: [(any ItemResponseModel)?] = [],
        oldScale: LinkingQuadrature, newScale: LinkingQuadrature
    ) {
        precondition(method.isCharacteristicCurve, "LinkingCriterion is for haebara and stocking-lord, got \(method)")
        self.method = method
        self.direction = direction
        self.old = old
        self.new = new
        self.oldModels = oldModels
        self.newModels = newModels
        self.oldScale = oldScale
        self.newScale = newScale
    }

    /// Value, gradient (∂/∂A, ∂/∂B) and Hessian (AA, AB, BB) at x.
    struct Evaluation {
        var value = 0.0
        var gA = 0.0, gB = 0.0
        var hAA = 0.0, hAB = 0.0, hBB = 0.0

        static func += (lhs: inout Evaluation, rhs: Evaluation) {
            lhs.value += rhs.value
            lhs.gA += rhs.gA; lhs.gB += rhs.gB
            lhs.hAA += rhs.hAA; lhs.hAB += rhs.hAB; lhs.hBB += rhs.hBB
        }

        /// Adds f·r² for the residual r = T − P with the derivatives of P, and its gradient −2f r P_x and
        /// Gauss–Newton-plus-curvature Hessian 2f (P_x P_y − r P_xy).
        @inline(__always)
        mutating func addSquare(_ f: Double, _ r: Double, _ pA: Double, _ pB: Double, _ pAA: Double, _ pAB: Double, _ pBB: Double) {
            value += f * r * r
            gA -= 2 * f * r * pA
            gB -= 2 * f * r * pB
            hAA += 2 * f * (pA * pA - r * pAA)
            hAB += 2 * f * (pA * pB - r * pAB)
            hBB += 2 * f * (pB * pB - r * pBB)
        }
    }

    func evaluate(_ A: Double, _ B: Double) -> Evaluation {
        var total = Evaluation()
        if direction != .oldToNew { total += oneSide(A, B, towardOld: true) }
        if direction != .newToOld { total += oneSide(A, B, towardOld: false) }
        return total
    }

    func value(_ A: Double, _ B: Double) -> Double { evaluate(A, B).value }

    private func oneSide(_ A: Double, _ B: Double, towardOld: Bool) -> Evaluation {
        let quadrature = towardOld ? oldScale : newScale
        let targets = towardOld ? old : new
        let moving = towardOld ? new : old
        let targetModels = towardOld ? oldModels : newModels, movingModels = towardOld ? newModels : oldModels
        let n = Double(targets.count)
        var e = Evaluation()
        for (theta, w) in zip(quadrature.points, quadrature.weights) where w > 0 {
            // Stocking–Lord accumulates the test characteristic curve and its derivatives over items.
            var tSum = 0.0, s = 0.0, sA = 0.0, sB = 0.0, sAA = 0.0, sAB = 0.0, sBB = 0.0
            for (index, (target, item)) in zip(targets, moving).enumerated() {
                if !movingModels.isEmpty, let movingModel = movingModels[index], let targetModel = targetModels[index] {
                    // θ* and its derivatives in (A, B).
                    let u = (theta - B) / A
                    let (x, xA, xB, xAA, xAB) = towardOld ? (u, -u / A, -1 / A, 2 * u / (A * A), 1 / (A * A)) : (A * theta + B, theta, 1.0, 0.0, 0.0)
                    let k = movingModel.categoryCount
                    withUnsafeTemporaryAllocation(of: Double.self, capacity: 4 * k) { buffer in
                        let p = UnsafeMutableBufferPointer(rebasing: buffer[0..<k]), p1 = UnsafeMutableBufferPointer(rebasing: buffer[k..<(2 * k)])
                        let p2 = UnsafeMutableBufferPointer(rebasing: buffer[(2 * k)..<(3 * k)]),
                            t = UnsafeMutableBufferPointer(rebasing: buffer[(3 * k)...])
                        movingModel.categoryThetaDerivatives(at: x, probability: p, first: p1, second: p2)
                        targetModel.logCategoryProbabilities(at: theta, into: t)
                        for c in 0..<k {
                            let pA = p1[c] * xA, pB = p1[c] * xB
                            let pAA = p2[c] * xA * xA + p1[c] * xAA, pAB = p2[c] * xA * xB + p1[c] * xAB, pBB = p2[c] * xB * xB
                            if method == .haebara {
                                e.addSquare(w / n, exp(t[c]) - p[c], pA, pB, pAA, pAB, pBB)
                            } else {
                                let score = Double(c)
                                tSum += score * exp(t[c])
                                s += score * p[c]; sA += score * pA; sB += score * pB
                                sAA += score * pAA; sAB += score * pAB; sBB += score * pBB
                            }
                        }
                    }
                    continue
                }
                let t = target.probability(at: theta)
                let a = item.discrimination, b = item.difficulty, c = item.guessing
                let z: Double, zA: Double, zB: Double, zAA: Double, zAB: Double
                if towardOld {
                    let u = (theta - B) / A
                    z = ItemResponseFunction.logit(slope: a, difficulty: b, at: u)
                    zA = -a * u / A
                    zB = -a / A
                    zAA = 2 * a * u / (A * A)
                    zAB = a / (A * A)
                } else {
                    z = ItemResponseFunction.logit(slope: a, difficulty: b, at: A * theta + B)
                    zA = a * theta
                    zB = a
                    zAA = 0
                    zAB = 0
                }
                // P and its derivatives in z (θ-derivatives at slope 1), chained through z(A, B).
                let (p, _, p1, p2, _) = ItemResponseFunction.thetaDerivatives(slope: 1, logit: z, guessing: c)
                let pA = p1 * zA, pB = p1 * zB
                let pAA = p2 * zA * zA + p1 * zAA, pAB = p2 * zA * zB + p1 * zAB, pBB = p2 * zB * zB
                if method == .haebara {
                    e.addSquare(w / n, t - p, pA, pB, pAA, pAB, pBB)
                } else {
                    tSum += t
                    s += p; sA += pA; sB += pB; sAA += pAA; sAB += pAB; sBB += pBB
                }
            }
            if method == .stockingLord { e.addSquare(w, tSum - s, sA, sB, sAA, sAB, sBB) }
        }
        return e
    }

    struct Fit {
        var transformation: ScaleTransformation
        var value: Double
        var converged: Bool
        var iterations: Int
        var lastStep: Double
    }

    /// Modified Newton: the Hessian, shifted to be positive definite when it is not, gives a descent direction;
    /// a backtracking (Armijo) line search keeps A > 0 and the criterion decreasing. Converged when a full step
    /// moves A and B by less than `tolerance · (1 + |value|)`, or when the gradient vanishes to rounding.
    func minimise(from start: ScaleTransformation, tolerance: Double, maxIterations: Int) -> Fit {
        var A = start.slope, B = start.intercept
        var e = evaluate(A, B)
        var lastStep = Double.infinity
        for iteration in 0..<maxIterations {
            // Newton direction d = −H⁻¹g with H made positive definite (shift by the most negative eigenvalue).
            let trace = e.hAA + e.hBB, det = e.hAA * e.hBB - e.hAB * e.hAB
            let disc = ((e.hAA - e.hBB) * (e.hAA - e.hBB) / 4 + e.hAB * e.hAB).squareRoot()
            let smallest = trace / 2 - disc, largest = trace / 2 + disc
            var shift = 0.0
            if !(smallest > 1e-12 * max(1, abs(largest))) || !(det > 0) {
                shift = max(0, -smallest) + 1e-8 * max(1, abs(largest))
            }
            let h11 = e.hAA + shift, h22 = e.hBB + shift, h12 = e.hAB
            let d = h11 * h22 - h12 * h12
            var dA = -(h22 * e.gA - h12 * e.gB) / d
            var dB = -(h11 * e.gB - h12 * e.gA) / d
            if !dA.isFinite || !dB.isFinite { dA = -e.gA; dB = -e.gB }
            let fullStep = max(abs(dA) / (1 + abs(A)), abs(dB) / (1 + abs(B)))
            if fullStep < tolerance || (e.gA == 0 && e.gB == 0) {
                return Fit(
                    transformation: ScaleTransformation(checkedSlope: A, intercept: B), value: e.value, converged: true,
                    iterations: iteration, lastStep: fullStep)
            }
            // Backtracking line search (Armijo, c1 = 1e-4), keeping A positive.
            let slopeAlong = e.gA * dA + e.gB * dB
            var t = 1.0
            var accepted = false
            while t > 1e-12 {
                let nA = A + t * dA, nB = B + t * dB
                if nA > 0 && nA.isFinite && nB.isFinite {
                    let candidate = evaluate(nA, nB)
                    if candidate.value <= e.value + 1e-4 * t * slopeAlong {
                        A = nA; B = nB; e = candidate
                        accepted = true
                        break
                    }
                }
                t /= 2
            }
            lastStep = t * fullStep
            if !accepted {
                // No decrease is possible along a Newton direction: the criterion is flat to rounding here. That
                // is a minimum when the Newton step was already tiny.
                return Fit(
                    transformation: ScaleTransformation(checkedSlope: A, intercept: B), value: e.value,
                    converged: fullStep < 1e-6, iterations: iteration, lastStep: fullStep)
            }
        }
        return Fit(
            transformation: ScaleTransformation(checkedSlope: A, intercept: B), value: e.value, converged: false,
            iterations: maxIterations, lastStep: lastStep)
    }
}
