import Foundation

/// The response time of every answered cell of a `ResponseMatrix`, in seconds: `seconds[k]` belongs to the
/// matrix's cell k (person i's cells are `cells(ofPerson: i)`), NaN where no time was recorded.
///
/// A recorded time is finite and in `allowedSeconds` (0.001 s … one day): the lognormal model takes its log, so a
/// zero, negative or infinite time has no place in it. Readers reject a cell that is not a number or negative and
/// drop (count, with the first line) a zero or a time beyond a day, which a clock glitch or an abandoned session
/// leaves; either way what is stored is usable as it stands.
public struct ResponseTimes: Sendable, Hashable {
    /// Per cell of the matrix, the time in seconds, or NaN for none (Float: 7 significant digits are a
    /// microsecond on a 10-second answer, at half the memory of Double on millions of cells).
    public let seconds: [Float]

    /// Times a reader or a caller may store: 1 ms … 86,400 s (a day).
    package static let allowedSeconds: ClosedRange<Float> = 0.001...86_400

    /// log t of a stored time, in the times' own (Float) precision: the one logarithm the calibrator and the scorer
    /// take of a time, so a session scored with the calibrated bank gets exactly the calibration's posterior. The
    /// error, under 1e-7 relative, is that of storing the time as a Float.
    @inline(__always)
    package static func logSeconds(_ t: Float) -> Double { Double(Foundation.log(t)) }

    /// Times for the cells of `matrix`, checked: one per cell, each NaN (not recorded) or in `allowedSeconds`.
    /// - Throws: `PsychometricsError.lengthMismatch` for a count other than the matrix's cells,
    ///   `.invalidResponse` for a time that is not NaN and outside `allowedSeconds`, naming the person and item.
    public init(seconds: [Float], for matrix: ResponseMatrix) throws(PsychometricsError) {
        guard seconds.count == matrix.cellCount else {
            throw PsychometricsError(.lengthMismatch, "one response time per answered cell: \(seconds.count) times for \(matrix.cellCount) cells")
        }
        for i in 0..<matrix.personCount {
            for k in matrix.cells(ofPerson: i) where !seconds[k].isNaN && !Self.allowedSeconds.contains(seconds[k]) {
                throw PsychometricsError(
                    .invalidResponse,
                    "person \(matrix.personIDs[i]), item \(matrix.itemIDs[Int(matrix.itemIndices[k])]): response time \(seconds[k]) s; allowed \(Self.allowedSeconds.lowerBound)…\(Self.allowedSeconds.upperBound) s or none (NaN)"
                )
            }
        }
        self.seconds = seconds
    }

    /// The package's path for times a reader or the simulator built and checked itself.
    package init(validatedSeconds seconds: [Float]) { self.seconds = seconds }

    /// Times for the rows of optional seconds (`nil`: none) aligned with `matrix`'s rows of optional responses, as
    /// `ResponseMatrix(itemIDs:rows:)` takes them: a time of an unanswered cell is ignored.
    /// - Throws: `.lengthMismatch` for rows not matching the matrix; as `init(seconds:for:)` for a bad time.
    public init(rows: [[Double?]], for matrix: ResponseMatrix) throws(PsychometricsError) {
        guard rows.count == matrix.personCount, rows.allSatisfy({ $0.count == matrix.itemCount }) else {
            throw PsychometricsError(.lengthMismatch, "one row of \(matrix.itemCount) times per person (\(matrix.personCount) rows) needed")
        }
        var seconds = [Float](repeating: .nan, count: matrix.cellCount)
        for i in 0..<matrix.personCount {
            for k in matrix.cells(ofPerson: i) { seconds[k] = rows[i][Int(matrix.itemIndices[k])].map { Float($0) } ?? .nan }
        }
        try self.init(seconds: seconds, for: matrix)
    }

    /// Cells with a recorded time.
    public var recordedCount: Int { seconds.reduce(0) { $0 + ($1.isNaN ? 0 : 1) } }

    /// The times of the cells `matrix.keepingItems(keep)` keeps, in its order (persons left with no responses
    /// dropped as it drops them).
    public func keepingItems(_ keep: [Bool], of matrix: ResponseMatrix) -> ResponseTimes {
        var out: [Float] = []
        out.reserveCapacity(seconds.count)
        for i in 0..<matrix.personCount {
            for k in matrix.cells(ofPerson: i) {
                let j = Int(matrix.itemIndices[k])
                if j < keep.count && keep[j] { out.append(seconds[k]) }
            }
        }
        return ResponseTimes(validatedSeconds: out)
    }
}
