import Assembly
import Foundation
import Psychometrics

// Reading the Assembly module's inputs from files (the module itself takes values: `decode(_:file:)`).

extension CATConfiguration {
    /// Reads a configuration JSON file; a malformed or inconsistent one is an error naming the file and the key
    /// (`CAT.json:1:17: error: unknown key …`, `CAT.json: error: max_items must be 1…10000, got 0`).
    /// - Throws: `InputError` naming the file, line and column (unreadable file, bad JSON, unknown key, wrong
    ///   type), or `InputErrors` listing every rule out of range.
    public static func load(json path: String) throws -> CATConfiguration {
        try validated(JSONInput.load(CATConfiguration.self, path: path), file: path)
    }
}

extension Blueprint {
    /// Reads a blueprint JSON file; a malformed or inconsistent one is an error naming the file and the field.
    /// Unknown or repeated keys, at the top level or in a `target_information` entry, are errors (see
    /// `JSONInput`).
    /// - Throws: `InputError` naming the file, line and column (unreadable file, bad JSON, unknown key, wrong
    ///   type), or `InputErrors` listing every problem of the blueprint.
    public static func load(json path: String) throws -> Blueprint {
        try validated(JSONInput.load(Blueprint.self, path: path), file: path)
    }
}

extension AssemblyBank {
    /// Loads `BANK.csv` and builds the assembly bank.
    /// - Throws: what `ItemBank.load(csv:)` and `AssemblyBank.init(bank:)` throw, each naming the file and line.
    public static func load(csv path: String) throws -> AssemblyBank {
        try AssemblyBank(bank: ItemBank.load(csv: path))
    }
}
