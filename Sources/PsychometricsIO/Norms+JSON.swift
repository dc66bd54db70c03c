import Foundation
import Norming
import Psychometrics

extension Norms {
    /// Reads norms from JSON: `{"name": "...", "version": "...", "mean": 0.1, "sd": 0.95}`. Unknown or repeated
    /// keys, a syntax error, a missing key, a wrong type or a value outside `allowedMeans`/`allowedSDs` is an
    /// `InputError` naming the file (see `JSONInput`).
    /// A NORMS.json document (age-specific norms, with a `"format"` key) is refused with a message that says so;
    /// `AgeNorms.load(json:)` reads both kinds.
    /// - Throws: `InputError` naming the file, line and column (unreadable file, bad JSON, unknown key, a mean or
    ///   SD out of range).
    public static func load(json path: String) throws -> Norms {
        let data = try JSONInput.contents(of: path, description: Norms.jsonDescription)
        if try NormsDocument.hasFormatKey(data, file: path) {
            throw InputError(
                file: path,
                message:
                    "this is an age-specific norms document (\"format\", as `iqscore norms build` writes); here linear norms are needed, e.g. \(Norms.jsonExample)"
            )
        }
        let norms = try JSONInput.decode(Norms.self, from: data, file: path)
        let problems = norms.validationProblems()
        guard problems.isEmpty else { throw InputError(file: path, message: problems.joined(separator: "; ")) }
        return norms
    }
}
