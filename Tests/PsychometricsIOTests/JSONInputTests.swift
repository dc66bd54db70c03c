import Foundation
import InputSupport
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
        let norms = try JSONInput.decode(
            Norms.self, from: Data(#"{"name": "adults", "version": "2024", "mean": 0.1, "sd": 0.95}"#.utf8), file: "n.json")
        #expect(norms == Norms(name: "adults", version: "2024", mean: 0.1, sd: 0.95))
        // A byte-order mark and CRLF line ends are fine.
        let bom = Data([0xEF, 0xBB, 0xBF] + Array("{\"name\": \"a\",\r\n \"version\": \"1\", \"mean\": 0, \"sd\": 1}\r\n".utf8))
        #expect(try JSONInput.decode(Norms.self, from: bom, file: "n.json").name == "a")
    }

    @Test("unknown, misspelt and repeated keys are errors with line and column, listing the known keys")
    func keys() {
        #expect(
            Self.normsError("{\"name\": \"a\", \"version\": \"1\",\n \"mean\": 0, \"SD\": 1}")
                == #"norms.json:2:13: error: unknown key "SD" (known: name, version, mean, sd)"#)
        #expect(
            Self.normsError("{\"name\": \"a\", \"version\": \"1\",\n \"mean\": 0, \"sd\": 1,\n \"sd\": 2}")
                == #"norms.json:3:2: error: key "sd" appears twice in one object (first on line 2)"#)
        #expect(
            Self.normsError(#"{"nme": "a", "vers": "1", "mean": 0, "sd": 1}"#)
                == """
                norms.json:1:2: error: unknown key "nme" (known: name, version, mean, sd)
                norms.json:1:14: error: unknown key "vers" (known: name, version, mean, sd)
                """)
    }

    @Test("syntax errors Foundation tolerates or reports without a place are located")
    func syntax() {
        #expect(
            Self.normsError(#"{"name": "a", "version": "1", "mean": 0, "sd": 1,}"#)
                == "norms.json:1:50: error: not valid JSON: expected a key in double quotes, found '}'")
        #expect(Self.normsError("{\"name\": \"a\",\n  \"mean\": NaN}") == "norms.json:2:11: error: not valid JSON: expected a value, found 'N'")
        #expect(Self.normsError(#"{"mean": 1e400}"#) == "norms.json:1:10: error: not valid JSON: the number 1e400 is too large for a double")
        #expect(Self.normsError(#"{"mean": 0x10}"#) == "norms.json:1:11: error: not valid JSON: expected ',' or '}', found 'x'")
        #expect(Self.normsError(#"{"mean": 1} x"#) == "norms.json:1:13: error: not valid JSON: unexpected 'x' after the end of the JSON value")
        #expect(Self.normsError(#"{"name": "a"#) == "norms.json:1:12: error: not valid JSON: a string is not closed")
        #expect(Self.normsError("") == "norms.json:1:1: error: not valid JSON: expected a value, found the end of the file")
        #expect(
            Self.normsError("[1]")
                == #"norms.json: error: norms JSON must be a JSON object, e.g. {"name": "adults", "version": "2024", "mean": 0, "sd": 1}"#)
    }

    @Test("deep nesting is an error, not a stack overflow")
    func depth() {
        let deep = "{\"name\": " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        #expect(Self.normsError(deep) == "norms.json:1:73: error: not valid JSON: arrays and objects nested more than 64 deep")
    }

    @Test("decoding errors name the key and what was expected")
    func decoding() {
        #expect(
            Self.normsError(#"{"name": "a", "version": "1", "mean": "0", "sd": 1}"#)
                == #"norms.json: error: "mean" has the wrong type: expected a number"#)
        #expect(
            Self.normsError(#"{"name": "a", "version": "1", "mean": 0}"#)
                == #"norms.json: error: norms JSON lacks "sd"; expected {"name", "version", "mean", "sd"}"#)
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
        #expect(throws: InputError(file: extreme, message: "norms mean must be in [-10, 10], got 1e+300; norms sd must be in [0.01, 10], got 1e-300"))
        {
            try Norms.load(json: extreme)
        }
    }

    /// The error `StrictJSON` gives `text` read as `input`, or nil when it parses.
    static func parseError(_ text: [UInt8], _ input: StrictJSON.Input, maximumArrayLength: Int = .max) -> String? {
        do {
            _ = try StrictJSON.parse(text, input: input, maximumArrayLength: maximumArrayLength)
            return nil
        } catch let error as StrictJSON.SyntaxError {
            return "\(error.line):\(error.column): \(error.sentence)"
        } catch let error as StrictJSON.ArrayTooLong {
            return "too long: /" + error.path.joined(separator: "/")
        } catch {
            return "\(error)"
        }
    }

    @Test("one parser: a file and a request body get the same errors at the same places (only the end is named apart)")
    func oneParser() {
        let cases: [(String, String)] = [
            ("{\"a\": 1,\n \"b\": [1, 2,]}", "2:13: not valid JSON: expected a value, found ']'"),
            ("{\"a\": 1, \"a\": 2}", "1:10: key \"a\" appears twice in one object (first on line 1)"),
            ("[1e400]", "1:2: not valid JSON: the number 1e400 is too large for a double"),
            ("{\"s\": \"a\tb\"}", "1:9: not valid JSON: a control character (byte 0x09) inside a string; write it as an escape"),
            ("\"\\uD800\"", "1:8: not valid JSON: a \\u escape starts a surrogate pair that is not completed"),
            ("\"\\q\"", "1:3: not valid JSON: unknown escape \\q"),
            ("\u{FEFF}{\"é\": 01}", "1:8: not valid JSON: expected ',' or '}', found '1'"),
            ("[" + String(repeating: "[", count: 64) + "]", "1:65: not valid JSON: arrays and objects nested more than 64 deep")
        ]
        for (text, expected) in cases {
            #expect(Self.parseError(Array(text.utf8), .file) == expected, "\(text)")
            #expect(Self.parseError(Array(text.utf8), .body) == expected, "\(text)")
        }
        #expect(Self.parseError(Array("{\"a\": ".utf8), .file) == "1:7: not valid JSON: expected a value, found the end of the file")
        #expect(Self.parseError(Array("{\"a\": ".utf8), .body) == "1:7: not valid JSON: expected a value, found the end of the body")
        #expect(Self.parseError([0x22, 0xC3, 0x28, 0x22], .file) == "1:2: not valid JSON: a string is not valid UTF-8")
        // An array over the caller's limit is refused while it is read, naming where it is.
        #expect(Self.parseError(Array(#"{"x": [{"y": [0, 0, 0, 0]}]}"#.utf8), .body, maximumArrayLength: 3) == "too long: /x/0/y")
        // A key repeated after many: found through the table (first on its own line).
        let many = "{" + (0..<20).map { "\"k\($0)\": 1,\n" }.joined() + "\"k3\": 2}"
        #expect(Self.parseError(Array(many.utf8), .file) == "21:1: key \"k3\" appears twice in one object (first on line 4)")
    }

    @Test("the schema check a file gets is the one a request body gets: unknown keys and fractions, in document order")
    func schemaProblems() throws {
        let text = Array(#"{"name": "a", "extra": 1, "version": "1", "mean": 0, "sd": 1, "more": {}}"#.utf8)
        let root = try StrictJSON.parse(text)
        let problems = JSONInput.schemaProblems(root, of: Norms.self, bytes: text)
        #expect(
            problems.map(\.sentence) == [
                #"unknown key "extra" (known: name, version, mean, sd)"#,
                #"unknown key "more" (known: name, version, mean, sd)"#
            ])
        #expect(problems.map(\.offset) == [14, 62])
    }
}
