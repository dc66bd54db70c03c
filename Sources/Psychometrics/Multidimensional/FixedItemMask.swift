import Foundation

/// Which of a multidimensional fit's items are held at a bank's values (online calibration), shared by
/// `BifactorCalibrator` and `CorrelatedFactorsCalibrator`: per data item whether it is fixed, and the fixed ids that
/// are not among the data's calibrated items (named in a warning, not written); a warning when no fixed item was
/// answered, so nothing links the new items to the bank's scale beyond the factors' `distribution`.
/// - Throws: `PsychometricsError(.insufficientData)` when every item is fixed.
package func fixedItemMask(
    itemIDs: [String], fixedIDs: some Collection<String>, distribution: String,
    warnings: inout [String]
) throws(PsychometricsError) -> (isFixed: [Bool], notInData: [String]) {
    let fixed = Set(fixedIDs), present = Set(itemIDs)
    let isFixed = itemIDs.map { fixed.contains($0) }
    guard isFixed.contains(false) else {
        throw PsychometricsError(.insufficientData, "every calibrated item is fixed: there is nothing to estimate")
    }
    let notInData = fixed.filter { !present.contains($0) }.sorted()
    if !notInData.isEmpty {
        warnings.append(
            "\(notInData.count) fixed item\(notInData.count == 1 ? " is" : "s are") not among the calibrated items of the data (not written): \(notInData.prefix(10).joined(separator: ", "))\(notInData.count > 10 ? ", …" : "")"
        )
    }
    if !fixed.isEmpty && !isFixed.contains(true) {
        warnings.append("no fixed item was answered: the new items are not linked to the bank's scale beyond the \(distribution) factors")
    }
    return (isFixed, notInData)
}
