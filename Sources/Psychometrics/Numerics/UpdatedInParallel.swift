import Foundation

/// `values` with each index j for which `isUpdated(j)` holds replaced by `update(j)`, computed in parallel: the
/// indices are dealt round-robin to max(1, min(`workers`, count)) lanes (lane l takes l, l + lanes, …), the lanes
/// run by `parallelFor`. Each value is `update(j)`'s whatever the lanes, so the result does not depend on `workers`.
/// The EM engines' item M-steps (`ItemModelEngine`, `BifactorEngine`, `CorrelatedFactorsEngine`): every item
/// maximised on its own counts, independently of the others. `values` must not be empty.
func updatedInParallel<Value>(_ values: [Value], workers: Int, where isUpdated: (Int) -> Bool, _ update: (Int) -> Value) -> [Value] {
    let count = values.count, lanes = max(1, min(workers, count))
    var updated = values
    updated.withUnsafeMutableBufferPointer { buffer in
        let box = UncheckedSendableBox(buffer.baseAddress!)
        parallelFor(lanes) { lane in
            for j in stride(from: lane, to: count, by: lanes) where isUpdated(j) {
                box.value[j] = update(j)
            }
        }
    }
    return updated
}
