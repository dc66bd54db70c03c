import Foundation
import Numerics
import Psychometrics
import Testing

@Suite("The item response function: P, log P, derivatives, information")
struct ItemResponseFunctionTests {
    /// a = 1.5, b = 0.5, c = 0.2 at θ = 1 (z = 0.75); references from 40-digit decimal arithmetic.
    let item = ItemParameters(discrimination: 1.5, difficulty: 0.5, guessing: 0.2)

    @Test("P, log P, log Q and information equal 40-digit references (relative 1e-15)")
    func referenceValues() {
        let z = item.logit(at: 1)
        #expect(z == 0.75)
        #expect(item.probability(at: 1).isApproximatelyEqual(to: 0.7433429593403143785, relativeTolerance: 1e-15))
        let (logP, logQ) = item.logProbabilities(at: 1)
        #expect(logP.isApproximatelyEqual(to: -0.2965977534947537510, relativeTolerance: 1e-15))
        #expect(logQ.isApproximatelyEqual(to: -1.360014557429109699, relativeTolerance: 1e-15))
        #expect(item.information(at: 1).isApproximatelyEqual(to: 0.3583559187704755307, relativeTolerance: 1e-15))
    }

    @Test("slope–intercept and slope–difficulty logits agree (d = −ab, absolute 1e-15)")
    func parameterisations() {
        for theta in stride(from: -4.0, through: 4.0, by: 0.5) {
            let z1 = ItemResponseFunction.logit(slope: item.discrimination, difficulty: item.difficulty, at: theta)
            let z2 = ItemResponseFunction.logit(slope: item.discrimination, intercept: item.intercept, at: theta)
            #expect(z1.isApproximatelyEqual(to: z2, absoluteTolerance: 1e-15))
        }
    }

    @Test("log P and log Q stay finite and exact in both tails (z = ±800)")
    func tails() {
        let lo = ItemResponseFunction.logProbabilities(logit: -800, guessing: 0)
        #expect(lo.logP == -800 && lo.logQ == 0)
        let hi = ItemResponseFunction.logProbabilities(logit: 800, guessing: 0)
        #expect(hi.logP == 0 && hi.logQ == -800)
        let guessed = ItemResponseFunction.logProbabilities(logit: -800, guessing: 0.2)
        #expect(guessed.logP == log(0.2))
        let high = ItemResponseFunction.logProbabilities(logit: 800, guessing: 0.2)
        #expect(high.logQ.isApproximatelyEqual(to: log(0.8) - 800, relativeTolerance: 1e-15))
    }

    @Test(
        "θ-derivatives equal central differences (relative 1e-7; P″ 1e-5, absolute 1e-7); ItemParameters.thetaDerivatives(at:) is the same function")
    func thetaDerivatives() {
        let h = 1e-4
        for c in [0.0, 0.2] {
            let p = ItemParameters(discrimination: 1.3, difficulty: -0.4, guessing: c)
            for theta in [-2.5, -0.4, 0.3, 1.7] {
                let v = ItemResponseFunction.thetaDerivatives(slope: p.discrimination, logit: p.logit(at: theta), guessing: c)
                let w = p.thetaDerivatives(at: theta)
                let up = p.probability(at: theta + h), mid = p.probability(at: theta), down = p.probability(at: theta - h)
                #expect(v.first.isApproximatelyEqual(to: (up - down) / (2 * h), relativeTolerance: 1e-7))
                let numericSecond: Double = (up - 2 * mid + down) / (h * h)
                #expect(v.second.isApproximatelyEqual(to: numericSecond, absoluteTolerance: 1e-7, relativeTolerance: 1e-5))
                #expect(v.p == mid && v.q.isApproximatelyEqual(to: 1 - mid, relativeTolerance: 1e-14))
                #expect(v.scoreWeight.isApproximatelyEqual(to: v.first / (v.p * v.q), relativeTolerance: 1e-13))
                #expect(w.p == mid)
                #expect(w.first == v.first && w.second == v.second)
                // Birnbaum's information is P′² / (PQ).
                #expect(p.information(at: theta).isApproximatelyEqual(to: v.first * v.scoreWeight, relativeTolerance: 1e-13))
            }
        }
    }

    @Test("working-parameter gradient and curvature of P/(PQ) equal central differences in (s, d, γ), linear and log slope (relative 1e-6)")
    func workingDerivatives() {
        let h = 1e-5
        for logSlope in [false, true] {
            let s = logSlope ? log(1.4) : 1.4, d = -0.3, g = Logistic.logit(0.15), theta = 0.8
            func prob(_ s: Double, _ d: Double, _ g: Double) -> Double {
                let a = logSlope ? exp(s) : s
                return ItemResponseFunction.probability(
                    logit: ItemResponseFunction.logit(slope: a, intercept: d, at: theta),
                    guessing: Logistic.sigmoid(g))
            }
            let a = logSlope ? exp(s) : s, aS = logSlope ? a : 1, aSS = logSlope ? a : 0, c = Logistic.sigmoid(g)
            let t = ItemResponseFunction.trace(logit: ItemResponseFunction.logit(slope: a, intercept: d, at: theta), guessing: c)
            let pq = t.p * t.q
            let x = [s, d, g]
            func shifted(_ k: Int, _ by: Double) -> [Double] { var y = x; y[k] += by; return y }
            func p(_ y: [Double]) -> Double { prob(y[0], y[1], y[2]) }
            let gradient = ItemResponseFunction.workingGradientRatio(theta: theta, slopeDerivative: aS, trace: t, guessing: c)
            let analytic = [gradient.slope, gradient.intercept, gradient.guessing]
            for k in 0..<3 {
                let numeric = (p(shifted(k, h)) - p(shifted(k, -h))) / (2 * h) / pq
                #expect(analytic[k].isApproximatelyEqual(to: numeric, relativeTolerance: 1e-6))
            }
            let k = ItemResponseFunction.workingCurvatureRatio(theta: theta, slopeDerivative: aS, slopeSecondDerivative: aSS, trace: t, guessing: c)
            let curvature = [[k.ss, k.sd, k.sg], [k.sd, k.dd, k.dg], [k.sg, k.dg, k.gg]]
            let hh = 1e-4
            for i in 0..<3 {
                for j in 0..<3 {
                    var pp = x, pm = x, mp = x, mm = x
                    pp[i] += hh; pp[j] += hh; pm[i] += hh; pm[j] -= hh; mp[i] -= hh; mp[j] += hh; mm[i] -= hh; mm[j] -= hh
                    let difference: Double = p(pp) - p(pm) - p(mp) + p(mm)
                    let numeric = difference / (4 * hh * hh) / pq
                    #expect(curvature[i][j].isApproximatelyEqual(to: numeric, absoluteTolerance: 1e-7, relativeTolerance: 1e-5))
                }
            }
        }
    }
}
