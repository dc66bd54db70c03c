import Foundation
import Psychometrics

extension Norms {
    /// Reads norms from JSON: `{"name": "...", "version": "...", "mean": 0.1, "sd": 0.95}`. Unknown or repeated
    /// keys, a syntax error, a missing key, a wrong type or a value outside `allowedMeans`/`allowedSDs` is an
    /// `InputError` naming the file (see `JSONInput`).
    public static func load(json path: String) throws -> Norms {
        let norms = try JSONInput.load(Norms.self, path: path)
        let problems = norms.validationProblems()
        guard problems.isEmpty else { throw InputError(file: path, message: problems.joined(separator: "; ")) }
        return norms
    }
}
