extension BatchScorer {
    /// The most session files one run may read: 32,767.
    ///
    /// When rows of a session are not contiguous, the scorer regroups them in memory and stores each row's file
    /// index in 16 bits (`BatchScorer.swift`, the gather path), so file 32,768 trapped converting to `Int16`
    /// (reproduced with 33,000 one-row files). Callers check the count against this before `run`; widening that
    /// field would lift the limit.
    public static let maximumInputFiles = Int(Int16.max)

    /// Problems with the number of input files (`sessions` positional arguments).
    public static func validationProblems(fileCount: Int) -> [String] {
        [(1...maximumInputFiles).problem(fileCount, "the number of session files")].compactMap { $0 }
    }
}
