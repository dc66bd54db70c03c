import Foundation

/// Responses as dense persons × items `Double` matrices for the BLAS E-step: U (1 = correct) and, when some
/// cells are missing, the answered mask M.
package struct DenseResponses: Sendable {
    package static let blockRows = 1024
    let rows: Int
    let columns: Int
    let u: [Double]
    let mask: [Double]?

    init(_ data: ResponseMatrix) {
        rows = data.personCount
        columns = data.itemCount
        var u = [Double](repeating: 0, count: rows * columns)
        var mask: [Double]? = data.isComplete ? nil : [Double](repeating: 0, count: rows * columns)
        for i in 0..<rows {
            for k in data.cells(ofPerson: i) {
                let j = Int(data.itemIndices[k])
                u[i * columns + j] = Double(data.responses[k])
                mask?[i * columns + j] = 1
            }
        }
        self.u = u
        self.mask = mask
    }
}
