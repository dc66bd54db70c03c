import Foundation
import Numerics
@testable import Psychometrics
import Testing

/// The item models (`ItemResponseModel` conformances): category probabilities against 40-digit references
/// (mpmath, from the models' defining formulas), the closed-form identities between them, and every derivative
/// against central differences of the probabilities it differentiates.
@Suite("Item models: graded, partial credit, nominal, dichotomous as conformances")
struct ItemResponseModelTests {
    let graded = GradedResponseItem(discrimination: 1.5, thresholds: [-1, 0.5, 2])
    let partialCredit = GeneralizedPartialCreditItem(discrimination: 1.2, steps: [-0.5, 0.8])
    let nominal = NominalResponseItem(slopes: [0, 0.7, 1.9], intercepts: [0, 0.4, -0.6])

    func logs(_ item: some ItemResponseModel, _ theta: Double) -> [Double] {
        var out = [Double](repeating: 0, count: item.categoryCount)
        out.withUnsafeMutableBufferPointer { item.logCategoryProbabilities(at: theta, into: $0) }
        return out
    }

    @Test("graded: log P_k and I(θ) equal 40-digit references at θ = 0.3 and ±30 (relative 1e-14)")
    func gradedReferences() {
        let references: [(Double, [Double], Double)] = [
            (0.3, [-2.0830210750728672325, -0.79875404072643849879, -1.0409161922293613233, -2.625183226575790057], 0.64694562780086836972),
            (30, [-46.5, -44.361377721185044148, -42.111377721185044148, -5.749522264293559805e-19], 1.293642509466050955e-18),
            (-30, [-1.2828918236087848927e-19, -43.611377721185044148, -45.861377721185044148, -48.0], 2.886506603119766008e-19)
        ]
        for (theta, expected, information) in references {
            for (value, reference) in zip(logs(graded, theta), expected) {
                #expect(value.isApproximatelyEqual(to: reference, relativeTolerance: 1e-14), "θ = \(theta): \(value) vs \(reference)")
            }
            #expect(graded.information(at: theta).isApproximatelyEqual(to: information, relativeTolerance: 1e-9), "θ = \(theta)")
        }
    }

    @Test("generalized partial credit and nominal: log P_k and I(θ) equal 40-digit references (relative 1e-14)")
    func divideByTotalReferences() {
        for (value, reference) in zip(logs(partialCredit, 0.3), [-1.6184027852063725216, -0.65840278520637252156, -1.2584027852063725216]) {
            #expect(value.isApproximatelyEqual(to: reference, relativeTolerance: 1e-14))
        }
        #expect(partialCredit.information(at: 0.3).isApproximatelyEqual(to: 0.68392076801822992021, relativeTolerance: 1e-13))
        for (value, reference) in zip(logs(nominal, -0.8), [-0.67913720632044323597, -0.83913720632044323597, -2.799137206320443236]) {
            #expect(value.isApproximatelyEqual(to: reference, relativeTolerance: 1e-14))
        }
        #expect(nominal.information(at: -0.8).isApproximatelyEqual(to: 0.25662940835160824386, relativeTolerance: 1e-13))
    }

    @Test("with two categories the graded and partial-credit items are the 2PL (absolute 1e-15)")
    func twoCategoriesAreTheTwoPL() {
        let twoPL = ItemParameters(discrimination: 1.3, difficulty: 0.4)
        let g = GradedResponseItem(discrimination: 1.3, thresholds: [0.4]), p = GeneralizedPartialCreditItem(discrimination: 1.3, steps: [0.4])
        for theta in stride(from: -5.0, through: 5.0, by: 0.25) {
            let expected = logs(twoPL, theta)
            for item in [logs(g, theta), logs(p, theta)] {
                for k in 0..<2 { #expect(item[k].isApproximatelyEqual(to: expected[k], absoluteTolerance: 1e-15)) }
            }
            #expect(g.information(at: theta).isApproximatelyEqual(to: twoPL.information(at: theta), absoluteTolerance: 1e-15))
        }
    }

    @Test("a nominal item with slopes a·k and the partial-credit intercepts is that partial-credit item (1e-14)")
    func nominalContainsPartialCredit() {
        let same = NominalResponseItem(slopes: [0, 1.2, 2.4], intercepts: partialCredit.intercepts)
        for theta in stride(from: -4.0, through: 4.0, by: 0.5) {
            for (x, y) in zip(logs(same, theta), logs(partialCredit, theta)) { #expect(x.isApproximatelyEqual(to: y, absoluteTolerance: 1e-14)) }
        }
    }

    @Test("the dichotomous conformance: (log Q, log P) and the protocol's information equal ItemParameters' own (1e-15)")
    func dichotomousConformance() {
        let item = ItemParameters(discrimination: 1.5, difficulty: 0.5, guessing: 0.2)
        for theta in stride(from: -6.0, through: 6.0, by: 0.5) {
            let v = item.logProbabilities(at: theta), l = logs(item, theta)
            #expect(l[0] == v.logQ && l[1] == v.logP)
            let generic: any ItemResponseModel = item
            #expect(
                generic.information(at: theta).isApproximatelyEqual(
                    to: item.information(at: theta), absoluteTolerance: 1e-15, relativeTolerance: 1e-12))
            #expect(generic.expectedScore(at: theta).isApproximatelyEqual(to: item.probability(at: theta), absoluteTolerance: 1e-15))
        }
    }

    @Test("P′, P″ and ∂ log P/∂x equal central differences (relative 1e-6) for every model, the 3PL included")
    func derivativesMatchDifferences() {
        let items: [any CalibratableItemModel] = [
            graded, partialCredit, nominal,
            GradedResponseItem(discrimination: 0.8, thresholds: [-2, -1.5, 0, 3]),
            RatingScaleItem(discrimination: 1.3, location: 0.4, thresholds: [-1.2, -0.1, 0.3, 1.0]),
            RatingScaleItem(discrimination: 0.9, location: -0.5, thresholds: [0]),
            ThreeParameterLogisticItem(ItemParameters(discrimination: 1.4, difficulty: 0.3, guessing: 0.22))
        ]
        for item in items {
            checkThetaDerivatives(item)
            checkWorkingGradient(item)
        }
    }

    @Test("a rating-scale item is the gpcm item with steps (location + τ)/a (probabilities to 1e-14)")
    func ratingScaleIsPartialCredit() {
        let rating = RatingScaleItem(discrimination: 1.3, location: 0.4, thresholds: [-1.2, -0.1, 0.3, 1.0])
        let pcm = GeneralizedPartialCreditItem(discrimination: 1.3, steps: [-0.8, 0.3, 0.7, 1.4].map { $0 / 1.3 })
        for theta in stride(from: -5.0, through: 5.0, by: 0.5) {
            for (x, y) in zip(rating.categoryProbabilities(at: theta), pcm.categoryProbabilities(at: theta)) {
                #expect(abs(x - y) < 1e-14)
            }
        }
        #expect(zip(rating.parameterValues, pcm.parameterValues).allSatisfy { abs($0 - $1) < 1e-15 })
        // The bank's rsm row reads back as the same item, location and centred thresholds recovered.
        let read = try? ItemModelKind.ratingScale.item(values: [1, -0.8, 0.3, 0.7, 1.4]) as? RatingScaleItem
        #expect(read.map { abs($0.location - 0.4) < 1e-15 && zip($0.thresholds, [-1.2, -0.1, 0.3, 1.0]).allSatisfy { abs($0 - $1) < 1e-15 } } == true)
    }

    func checkThetaDerivatives(_ item: any ItemResponseModel) {
        let k = item.categoryCount, h = 1e-5
        for theta in [-2.3, -0.4, 0.7, 1.9] {
            var p = [Double](repeating: 0, count: k), d1 = p, d2 = p
            p.withUnsafeMutableBufferPointer { p in
                d1.withUnsafeMutableBufferPointer { d1 in
                    d2.withUnsafeMutableBufferPointer { d2 in
                        item.categoryThetaDerivatives(at: theta, probability: p, first: d1, second: d2)
                    }
                }
            }
            let up = item.categoryProbabilities(at: theta + h), down = item.categoryProbabilities(at: theta - h),
                at = item.categoryProbabilities(at: theta)
            #expect(abs(p.reduce(0, +) - 1) < 1e-14)
            for c in 0..<k {
                #expect(p[c].isApproximatelyEqual(to: at[c], relativeTolerance: 1e-13))
                #expect(d1[c].isApproximatelyEqual(to: (up[c] - down[c]) / (2 * h), absoluteTolerance: 1e-9, relativeTolerance: 1e-6))
                let second = (up[c] - 2 * at[c] + down[c]) / (h * h)
                #expect(d2[c].isApproximatelyEqual(to: second, absoluteTolerance: 1e-5, relativeTolerance: 1e-4))
            }
        }
    }

    func checkWorkingGradient<Item: CalibratableItemModel>(_ item: Item) {
        let x = item.workingParameters, m = x.count, k = item.categoryCount, h = 1e-6
        #expect(
            item.withWorkingParameters(x)!.parameterValues.enumerated().allSatisfy {
                $0.element.isApproximatelyEqual(to: item.parameterValues[$0.offset], absoluteTolerance: 1e-14)
            }, "working parameters round-trip")
        for theta in [-1.7, 0.2, 2.4] {
            var g = [Double](repeating: 0, count: k * m)
            g.withUnsafeMutableBufferPointer { item.workingLogGradient(at: theta, into: $0) }
            for i in 0..<m {
                var up = x, down = x
                up[i] += h; down[i] -= h
                let lu = logs(item.withWorkingParameters(up)!, theta), ld = logs(item.withWorkingParameters(down)!, theta)
                for c in 0..<k {
                    let difference: Double = (lu[c] - ld[c]) / (2 * h), value: Double = g[c * m + i]
                    #expect(
                        value.isApproximatelyEqual(to: difference, absoluteTolerance: 1e-8, relativeTolerance: 1e-6),
                        "\(Item.self) θ = \(theta), category \(c), parameter \(i)")
                }
            }
        }
    }

    @Test("out-of-domain working parameters and parameters are refused")
    func domains() {
        #expect(graded.withWorkingParameters([1.5, 1, 2, -1]) == nil, "graded intercepts must decrease")
        #expect(graded.withWorkingParameters([-1, 1, 0, -1]) == nil, "slope must be positive")
        #expect(throws: PsychometricsError.self) { try GradedResponseItem(validating: 1, thresholds: [0.5, 0.5]) }
        #expect(throws: PsychometricsError.self) { try GeneralizedPartialCreditItem(validating: 0, steps: [0]) }
        #expect(throws: PsychometricsError.self) { try NominalResponseItem(validating: [0, 1], intercepts: [0]) }
    }

    @Test("LogCategoryTable: one row per (item, category) with the models' own values, mixed models")
    func mixedTable() {
        let items: [any ItemResponseModel] = [ItemParameters(discrimination: 1, difficulty: 0), graded, nominal]
        let nodes = [-1.0, 0, 2.5]
        let table = LogCategoryTable(items: items, nodes: nodes)
        #expect(table.rowStart == [0, 2, 6, 9])
        #expect(table.stride == 8)
        for (j, item) in items.enumerated() {
            for (t, theta) in nodes.enumerated() {
                var l = [Double](repeating: 0, count: item.categoryCount)
                l.withUnsafeMutableBufferPointer { item.logCategoryProbabilities(at: theta, into: $0) }
                for k in 0..<item.categoryCount { #expect(table.row(item: j, category: k)[t] == l[k]) }
            }
        }
    }

    @Test("GridPosterior: weights sum to 1, log L = log Σ π L, moments of a known posterior (1e-13)")
    func gridPosterior() {
        let items: [any ItemResponseModel] = [graded, partialCredit, nominal]
        let grid = QuadratureGrid(validatedCount: 41, bound: 5)
        let table = LogCategoryTable(items: items, nodes: grid.points)
        let answered: [Int32] = [0, 1, 2], responses: [UInt8] = [2, 0, 1]
        var post = [Double](repeating: 0, count: 41)
        let result = grid.logWeights.withUnsafeBufferPointer { prior in
            table.rowStart.withUnsafeBufferPointer { rowStart in
                post.withUnsafeMutableBufferPointer { post in
                    GridPosterior.accumulate(
                        into: post.baseAddress!, prior: prior.baseAddress!, items: answered, responses: responses, count: 3,
                        table: table, rowStart: rowStart.baseAddress!)
                    return GridPosterior.normalize(post.baseAddress!, 41)
                }
            }
        }
        var direct = 0.0, mean = 0.0
        for (t, theta) in grid.points.enumerated() {
            let l = grid.weights[t] * exp(logs(graded, theta)[2] + logs(partialCredit, theta)[0] + logs(nominal, theta)[1])
            direct += l
            mean += l * theta
        }
        #expect(result.logLikelihood.isApproximatelyEqual(to: log(direct), relativeTolerance: 1e-13))
        #expect(abs(post.reduce(0, +) - 1) < 1e-14)
        let points = stride(from: 0, to: 44, by: 4).map { b in SIMD4((0..<4).map { b + $0 < 41 ? grid.points[b + $0] : 0 }) }
        let weights = stride(from: 0, to: 44, by: 4).map { b in SIMD4((0..<4).map { b + $0 < 41 ? post[b + $0] : 0 }) }
        let moments = GridPosterior.moments(weights: weights, points: points, blocks: 11)
        #expect(moments.mean.isApproximatelyEqual(to: mean / direct, absoluteTolerance: 1e-13))
    }
}
