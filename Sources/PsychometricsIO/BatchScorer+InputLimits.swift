import Psychometrics
extension BatchScorer {
    /// The most session files one run may read: 1,000,000.
    ///
    /// Each file's index is kept per regrouped row (32 bits) and in the first-appearance key of a partitioned
    /// regroup (20 bits, `sessionKey`); a million paths is also far beyond what an argument list can carry
    /// (the kernel's ARG_MAX, 2 MiB here, holds about 100,000 short paths).
    package static let maximumInputFiles = 1_000_000

    /// Problems with the number of input files (`sessions` positional arguments).
    package static func validationProblems(fileCount: Int) -> [String] {
        [(1...maximumInputFiles).problem(fileCount, "the number of session files")].compactMap { $0 }
    }
}
