import Foundation
import Norming
import Psychometrics

extension AgeNorms {
    /// Reads norms from a JSON file of either kind, told apart by a top-level `"format"` key:
    /// - with it, a NORMS.json document as `iqscore norms build` writes it (`NormsDocument.decode`);
    /// - without it, linear norms `{"name", "version", "mean", "sd"}` (`Norms.load(json:)`), which apply at any age.
    /// Every problem is an `InputError` naming the file (and the line and column, or the key).
    /// - Throws: `InputError` naming the file, line and column (unreadable file, bad JSON, an unknown format, key
    ///   or value out of range).
    public static func load(json path: String) throws -> AgeNorms {
        let data = try JSONInput.contents(of: path, description: "a norms file")
        if try NormsDocument.hasFormatKey(data, file: path) {
            return try NormsDocument.decode(from: data, file: path).ageNorms()
        }
        let norms = try JSONInput.decode(Norms.self, from: data, file: path)
        let problems = norms.validationProblems()
        guard problems.isEmpty else { throw InputError(file: path, message: problems.joined(separator: "; ")) }
        return .linear(norms)
    }
}

extension NormsDocument {
    /// Reads a NORMS.json document (`decode(from:file:)`) from `path`.
    package static func load(json path: String) throws -> NormsDocument {
        try decode(from: JSONInput.contents(of: path, description: "a norms document"), file: path)
    }

    /// Whether the JSON text is an object with a top-level "format" key (a syntax error is reported here, naming
    /// the line and column).
    package static func hasFormatKey(_ data: Data, file: String) throws -> Bool {
        guard case .object(let members) = try JSONInput.document(Array(data), file: file).kind else { return false }
        return members.contains { $0.key == "format" }
    }
}
