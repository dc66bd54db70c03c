import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

@Suite("JSONInput: strict reading of every JSON input file")
struct JSONInputTests {
    /// The message of the error `Norms` JSON `text` gives, or nil when it reads.
    static func normsError(_ text: String) -> String? {
        do {
            _ = try JSONInput.decode(Norms.self, from: Data(text.utf8), file: "norms.json")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("a good document decodes")
    func good() throws {
        let norms = try JSONInput.decode(Norms.self, from: Data(#"{"name": "adults", "version": "2024", "mean": 0.1, "sd": 0.95}"#.utf8), file: "n.json")
        #expect(norms == Norms(name: "adults", version: "2024", mean: 0.1, sd: 0.95))
        // A byte-order mark and CRLF line ends are fine.
        let bom = Data([0xEF, 0xBB, 0xBF] + Array("{\"name\": \"a\",\r\n \"version\": \"1\", \"mean\": 0, \"sd\": 1}\r\n".utf8))
        #expect(try JSONInput.decode(Norms.self, from: bom, file: "n.json").name == "a")
    }

    @Test("unknown, misspelt and repeated keys are errors with line and column, listing the known keys")
    func keys() {
        #expect(Self.normsError("{\"name\": \"a\", \"version\": \"1\",\n \"mean\": 0, \"SD\": 1}")
                == #"norms.json:2:13: error: unknown key "SD" (known: name, version, mean, sd)"#)
        #expect(Self.normsError("{\"name\": \"a\", \"version\": \"1\",\n \"mean\": 0, \"sd\": 1,\n \"sd\": 2}")
                == #"norms.json:3:2: error: key "sd" appears twice in one object (first on line 2)"#)
        #expect(Self.normsError(#"{"nme": "a", "vers": "1", "mean": 0, "sd": 1}"#)
                == """
                norms.json:1:2: error: unknown key "nme" (known: name, version, mean, sd)
                norms.json:1:14: error: unknown key "vers" (known: name, version, mean, sd)
                """)
    }

    @Test("syntax errors Foundation tolerates or reports without a place are located")
    func syntax() {
        #expect(Self.normsError(#"{"name": "a", "version": "1", "mean": 0, "sd": 1,}"#) == "norms.json:1:50: error: not valid JSON: expected a key in double quotes, found '}'")
        #expect(Self.normsError("{\"name\": \"a\",\n  \"mean\": NaN}") == "norms.json:2:11: error: not valid JSON: expected a value, found 'N'")
        #expect(Self.normsError(#"{"mean": 1e400}"#) == "norms.json:1:10: error: not valid JSON: the number 1e400 is too large for a double")
        #expect(Self.normsError(#"{"mean": 0x10}"#) == "norms.json:1:11: error: not valid JSON: expected ',' or '}', found 'x'")
        #expect(Self.normsError(#"{"mean": 1} x"#) == "norms.json:1:13: error: not valid JSON: unexpected 'x' after the end of the JSON value")
        #expect(Self.normsError(#"{"name": "a"#) == "norms.json:1:12: error: not valid JSON: a string is not closed")
        #expect(Self.normsError("") == "norms.json:1:1: error: not valid JSON: expected a value, found the end of the file")
        #expect(Self.normsError("[1]") == #"norms.json: error: norms JSON must be a JSON object, e.g. {"name": "adults", "version": "2024", "mean": 0, "sd": 1}"#)
    }

    @Test("deep nesting is an error, not a stack overflow")
    func depth() {
        let deep = "{\"name\": " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        #expect(Self.normsError(deep) == "norms.json:1:73: error: not valid JSON: arrays and objects nested more than 64 deep")
    }

    @Test("decoding errors name the key and what was expected")
    func decoding() {
        #expect(Self.normsError(#"{"name": "a", "version": "1", "mean": "0", "sd": 1}"#) == #"norms.json: error: "mean" has the wrong type: expected a number"#)
        #expect(Self.normsError(#"{"name": "a", "version": "1", "mean": 0}"#) == #"norms.json: error: norms JSON lacks "sd"; expected {"name", "version", "mean", "sd"}"#)
        #expect(Self.normsError(#"{"name": "a", "version": "1", "mean": null, "sd": 1}"#) == #"norms.json: error: "mean" must not be null"#)
    }

    @Test("Norms.load: a missing file, a huge file and out-of-range values name the file")
    func load() throws {
        let files = try CSVFixtures()
        #expect(throws: InputError(file: files.directory.path + "/none.json", message: "cannot open file: No such file or directory")) {
            try Norms.load(json: files.directory.path + "/none.json")
        }
        let big = try files.write("big.json", "{\"name\": \"" + String(repeating: "x", count: 17 << 20) + "\"}")
        #expect(throws: InputError(file: big, message: "the file is larger than 16 MiB; norms JSON is a few kilobytes")) { try Norms.load(json: big) }
        let extreme = try files.write("n.json", #"{"name": "a", "version": "1", "mean": 1e300, "sd": 1e-300}"#)
        #expect(throws: InputError(file: extreme, message: "norms mean must be in [-10, 10], got 1e+300; norms sd must be in [0.01, 10], got 1e-300")) {
            try Norms.load(json: extreme)
        }
    }
}
