import Dispatch
import Psychometrics

/// A physical reference for benchmarks: how long this machine's OpenBLAS takes for a given number of
/// multiply-adds on the dense E-step's shape (1,024-row blocks × items × quadrature nodes), with one block per
/// worker at a time as the calibrator runs. Best of `repeats`.
package enum BLASReference {
    package static func seconds(multiplyAdds: Double, items: Int, nodes: Int, workers: Int = 2, repeats: Int = 3) throws -> Double {
        precondition(items > 0 && nodes > 0 && workers > 0, "positive sizes needed")
        let rows = DenseResponses.blockRows
        let perCall = Double(rows * items * nodes)
        let calls = max(1, Int((multiplyAdds / perCall).rounded(.up)))
        var best = Double.infinity
        for _ in 0..<repeats {
            let start = DispatchTime.now().uptimeNanoseconds
            parallelFor(workers) { worker in
                let a = [Double](repeating: 0.5, count: rows * items), b = [Double](repeating: 0.25, count: items * nodes)
                var c = [Double](repeating: 0, count: rows * nodes)
                a.withUnsafeBufferPointer { a in
                    b.withUnsafeBufferPointer { b in
                        c.withUnsafeMutableBufferPointer { c in
                            for _ in stride(from: worker, to: calls, by: workers) {
                                BLAS.gemm(
                                    m: rows, n: nodes, k: items, a: a.baseAddress!, lda: items, b: b.baseAddress!, ldb: nodes,
                                    beta: 0, c: c.baseAddress!, ldc: nodes)
                            }
                        }
                    }
                }
            }
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return best
    }
}
