import Psychometrics
import PsychometricsIO

/// LSAT7 (Bock & Lieberman 1970): 1000 examinees × 5 items, as 32 response patterns with frequencies, in
/// binary order with Item.1 as the leading digit (mirt's `LSAT7`).
enum LSAT7 {
    static let frequencies = [
        12, 19, 1, 7, 3, 19, 3, 17, 10, 5, 3, 7, 7, 23, 8, 28,
        7, 39, 11, 34, 14, 51, 15, 90, 6, 25, 7, 35, 18, 136, 32, 308
    ]

    static var matrix: ResponseMatrix {
        var rows: [[UInt8?]] = []
        for (pattern, count) in frequencies.enumerated() {
            let row: [UInt8?] = (0..<5).map { UInt8((pattern >> (4 - $0)) & 1) }
            rows += Array(repeating: row, count: count)
        }
        return try! ResponseMatrix(itemIDs: (1...5).map { "Item.\($0)" }, rows: rows)
    }
}

/// Simulated data with known parameters for recovery tests.
struct Simulated {
    var truth: [ItemParameters]
    var data: ResponseMatrix
    var thetas: [Double]

    init(model: IRTModel, items: Int, persons: Int, perSession: Int? = nil, thetaSD: Double = 1, seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var spec = BankSpecification(model: model, itemCount: items)
        spec.slopeSDLog = 0.25
        let bank = spec.draw(using: &rng)
        truth = bank.items.map(\.parameters)
        var simulator = ResponseSimulator(parameters: truth, itemsPerSession: perSession)
        simulator.thetaSD = thetaSD
        (data, thetas) = simulator.matrix(count: persons, itemIDs: bank.items.map(\.itemID), using: &rng)
    }
}

func rmse(_ x: [Double], _ y: [Double]) -> Double {
    precondition(x.count == y.count)
    return (zip(x, y).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Double(x.count)).squareRoot()
}

/// −∇²f at `base` by central differences with step `h` (independent of the Louis code under test).
func negativeHessian(of f: ([Double]) -> Double, at base: [Double], step h: Double = 1e-4) -> [[Double]] {
    let n = base.count
    var hessian = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
    for x in 0..<n {
        for y in x..<n {
            func at(_ dx: Double, _ dy: Double) -> Double {
                var v = base
                v[x] += dx
                v[y] += dy
                return f(v)
            }
            let value = (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
            hessian[x][y] = -value
            hessian[y][x] = -value
        }
    }
    return hessian
}
