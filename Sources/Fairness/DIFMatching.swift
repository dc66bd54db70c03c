import Foundation
import Psychometrics

/// The matching criterion of the observed-score DIF methods (Mantel–Haenszel, logistic regression): what
/// persons of equal ability share.
package enum DIFMatching: String, Sendable, Hashable, Codable, CaseIterable {
    /// `totalScore` when every person answered every item, `theta` otherwise.
    case automatic
    /// The number correct over the matching items including the studied item (Holland & Thayer 1988; the
    /// criterion under which MH is unbiased under the Rasch model whatever the groups' means, Zwick 1990).
    case totalScore = "total"
    /// The number correct over the matching items without the studied item.
    case restScore = "rest"
    /// The EAP of θ from the matching items plus the studied item under the given item parameters (for missing-by-
    /// design or adaptive data, where number-correct scores are not comparable); MH stratifies it into
    /// `DIFOptions.thetaStrata` equal-count strata of the two groups' persons who answered the item.
    case theta
}

/// Per person, the matching criterion for any studied item: the responses to the matching items (the anchor)
/// summed, or their log-likelihood on a θ grid, to which the studied item's own response is added (total score,
/// θ) or from which it is removed (rest score).
struct MatchingCriterion {
    let data: ResponseMatrix
    let matching: DIFMatching
    /// Per person: the number correct over the matching items (score matching).
    private var sums: [Double] = []
    /// Per person, `grid.count` log-likelihoods over the matching items (θ matching).
    private var logLikelihood: [Double] = []
    private let grid: QuadratureGrid
    private let parameters: [ItemParameters]
    private let inMatching: [Bool]

    /// - Parameters:
    ///   - anchor: per item, whether it belongs to the matching items.
    ///   - parameters: per item, its parameters (θ matching only).
    init(data: ResponseMatrix, matching: DIFMatching, anchor: [Bool], parameters: [ItemParameters], grid: QuadratureGrid) {
        self.data = data
        self.matching = matching
        self.grid = grid
        self.parameters = parameters
        self.inMatching = anchor
        let persons = data.personCount, q = grid.count
        if matching == .theta {
            var table = [Double](repeating: 0, count: persons * q)
            for i in 0..<persons {
                for c in data.cells(ofPerson: i) where anchor[Int(data.itemIndices[c])] {
                    Self.add(parameters[Int(data.itemIndices[c])], response: data.responses[c], grid: grid, into: &table, row: i * q)
                }
            }
            logLikelihood = table
        } else {
            var s = [Double](repeating: 0, count: persons)
            for i in 0..<persons {
                for c in data.cells(ofPerson: i) where anchor[Int(data.itemIndices[c])] { s[i] += Double(data.responses[c]) }
            }
            sums = s
        }
    }

    private static func add(_ item: ItemParameters, response: UInt8, grid: QuadratureGrid, into table: inout [Double], row: Int) {
        for t in 0..<grid.count {
            let v = ItemResponseFunction.logProbabilities(
                logit: ItemResponseFunction.logit(slope: item.discrimination, difficulty: item.difficulty, at: grid.points[t]),
                guessing: item.guessing)
            table[row + t] += response == 1 ? v.logP : v.logQ
        }
    }

    /// The criterion of person i for studied item j whose response is u.
    func value(person i: Int, item j: Int, response u: UInt8) -> Double {
        switch matching {
        case .theta:
            let q = grid.count
            var row = Array(logLikelihood[i * q..<(i + 1) * q])
            if !inMatching[j] { Self.add(parameters[j], response: u, grid: grid, into: &row, row: 0) }
            var top = -Double.infinity
            for t in 0..<q { row[t] += grid.logWeights[t]; top = max(top, row[t]) }
            var total = 0.0, mean = 0.0
            for t in 0..<q { let w = exp(row[t] - top); total += w; mean += w * grid.points[t] }
            return mean / total
        case .restScore:
            return sums[i] - (inMatching[j] ? Double(u) : 0)
        case .totalScore, .automatic:
            return sums[i] + (inMatching[j] ? 0 : Double(u))
        }
    }
}
