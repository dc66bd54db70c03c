import Foundation

/// The items a multidimensional 0/1 calibration (`BifactorCalibrator`, `CorrelatedFactorsCalibrator`) keeps:
/// those with at least `minimumResponses` responses and both answers seen, as the unidimensional calibrators
/// screen them; persons left without a response to a kept item are dropped.
struct ZeroOneItemScreen {
    var data: ResponseMatrix
    /// Excluded items and why.
    var excluded: [(itemID: String, reason: String)]
    /// Indices (in the input) of the persons left without a response to a kept item.
    var droppedPersonIndices: [Int]
    var droppedPersons: Int { droppedPersonIndices.count }

    /// - Throws: `PsychometricsError` `.invalidOptions` for an item in more than two categories (`model` names the
    ///   model in the message); `.insufficientData` when fewer than 2 items or 2 persons remain.
    init(_ input: ResponseMatrix, minimumResponses: Int, model: String) throws {
        if let j = input.categoryCounts.firstIndex(where: { $0 != 2 }) {
            throw PsychometricsError(
                .invalidOptions, "item \(input.itemIDs[j]) has \(input.categoryCounts[j]) categories; the \(model) model's items are scored 0/1")
        }
        let totals = input.categoryTotals()
        var keep = [Bool](repeating: true, count: input.itemCount), excluded: [(String, String)] = []
        for j in 0..<input.itemCount {
            let n = totals[j][0] + totals[j][1]
            if n < minimumResponses {
                keep[j] = false
                excluded.append((input.itemIDs[j], "\(n) responses (at least \(minimumResponses) needed)"))
            } else if totals[j][0] == 0 || totals[j][1] == 0 {
                keep[j] = false
                excluded.append((input.itemIDs[j], "every response is \(totals[j][1] == 0 ? 0 : 1)"))
            }
        }
        let (kept, dropped) = input.keepingItems(keep)
        guard kept.itemCount >= 2 else {
            throw PsychometricsError(
                .insufficientData,
                "only \(kept.itemCount) of \(input.itemCount) items can be calibrated (at least 2 needed)"
                    + (excluded.isEmpty ? "" : "; excluded: " + excluded.map { "\($0.0) (\($0.1))" }.joined(separator: ", ")))
        }
        guard kept.personCount >= 2 else {
            throw PsychometricsError(.insufficientData, "only \(kept.personCount) person has responses to calibrated items; at least 2 are needed")
        }
        self.data = kept
        self.excluded = excluded
        self.droppedPersonIndices = dropped
    }

    /// The warnings of the exclusions: one per item, one for the persons.
    var warnings: [String] {
        excluded.map { "item \($0.itemID) excluded: \($0.reason)" }
            + (droppedPersons > 0 ? ["\(droppedPersons) person\(droppedPersons == 1 ? "" : "s") excluded: no responses to any calibrated item"] : [])
    }
}
