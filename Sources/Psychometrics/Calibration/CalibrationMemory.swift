extension EMCalibrator {
    /// An upper estimate of the bytes a fit allocates at its peak, beyond a fixed overhead: what `maxMemoryBytes`
    /// is compared with before the fit starts.
    ///
    /// ```
    /// data      2 × (5·cells + 64·persons)            the response matrix, and its copy without excluded items
    /// dense     8·N·J (+ 8·N·J mask when incomplete)  the dense E-step's response matrix
    /// E-step    workers × (16·J·Q + 32·1024·Q)        expected counts per worker, posterior blocks
    /// tables    16·J·Q                                 log P and log Q per item and node
    /// SEs       3 × 8·P² + 8·J·Q·k                     the information matrix, its inverse factor L⁻¹, and the
    ///           + 12·min(2²⁴, N·(k·cells/N + 2)²)      sparse path's chunk of local matrices and their indices
    ///                                                  (not for complete dense data, whose SEs use moments)
    /// ```
    /// with Q quadrature points, k parameters per item (Rasch/1PL 1, 2PL 2, 3PL 3) and P = k·J + 2. The terms
    /// follow the allocations in `EMEngine` `EMEngine+LouisInformation`, `EMEngine+PersonScoreCovariance` and `CholeskyInverse`; measured peaks are below the
    /// estimate (README, "Guarantees").
    package static func estimatedMemoryBytes(
        persons: Int, items: Int, cells: Int, options: CalibrationOptions,
        dense: Bool, complete: Bool
    ) -> Int {
        let q = options.quadraturePoints, w = max(1, options.workers)
        let k: Int
        switch options.model {
        case .rasch, .onePL: k = 1
        case .twoPL: k = 2
        case .threePL: k = 3
        }
        func product(_ factors: Int...) -> Double { factors.reduce(1.0) { $0 * Double($1) } }
        var total = 2 * (5 * Double(cells) + 64 * Double(persons))
        if dense { total += product(8, persons, items) * (complete ? 1 : 2) }
        total += Double(w) * (product(16, items, q) + product(32, 1024, q))
        total += product(16, items, q)
        if options.standardErrors {
            let p = k * items + 2
            let perPerson = Double(k) * Double(cells) / Double(max(1, persons)) + 2
            let chunk = dense && complete ? 0 : 12 * min(Double(1 << 24), Double(persons) * perPerson * perPerson)
            total += product(8, p, p) * 3 + product(8, items, q, k) + chunk
        }
        return total >= Double(Int.max) ? Int.max : Int(total)
    }
}
