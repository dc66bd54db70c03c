import Foundation

/// A JSON object that iqscore reads from a file (norms, a blueprint, CAT rules), with its schema's keys so that
/// a misspelt key is an error instead of being ignored.
package protocol JSONObjectInput: Decodable {
    /// Every key the object may have, in documentation order (listed when a key is unknown).
    static var jsonKeys: [String] { get }
    /// Keys whose value is an object of another checked type, or an array of such objects (e.g. a blueprint's
    /// `target_information` entries). Keys not listed here hold data whose keys are free (domain names).
    static var nestedJSONObjects: [String: any JSONObjectInput.Type] { get }
    /// Keys whose value is a whole number, or an object or array of whole numbers (e.g. `domain_counts`).
    /// `JSONDecoder` reports 2.5 or 1e20 for an `Int` as "The given data was not valid JSON" without naming
    /// the key, so these are checked first.
    static var integerKeys: Set<String> { get }
    /// What the file holds, as messages name it: "the CAT configuration", "norms JSON".
    static var jsonDescription: String { get }
    /// A minimal valid document, shown when the file is not an object: `{"max_items": 25}`.
    static var jsonExample: String { get }
    /// Appended to "… lacks "KEY"" (default: nothing).
    static var missingKeyHint: String { get }
}

extension JSONObjectInput {
    package static var nestedJSONObjects: [String: any JSONObjectInput.Type] { [:] }
    package static var missingKeyHint: String { "" }
    package static var integerKeys: Set<String> { [] }
}

/// Reads JSON input files strictly, for every JSON file the command line takes.
///
/// Before decoding, the text is parsed by `StrictJSON` (RFC 8259, no repeated keys, bounded depth, numbers within
/// a double's range; each error names the file, line and column) and checked against the type's schema
/// (`schemaProblems`): a key the type does not know at any level of `nestedJSONObjects`, or a fraction or an
/// out-of-range number where the schema has a whole number (`integerKeys`), is an error naming its line and
/// column. A file larger than `maximumBytes` is refused. Decoding errors then name the key path
/// (`target_information[1].theta`) and the expected type. The server checks request bodies against the same
/// schemas with the same function, naming JSON pointers instead.
package enum JSONInput {
    /// The largest JSON input file read: 16 MiB. Configuration files are a few kilobytes; a blueprint's
    /// exclusion list of 100,000 item ids is about 2 MB.
    package static let maximumBytes = 16 << 20

    /// Checks and decodes `data` as `T`; errors name `file`.
    /// - Throws: `InputError` (one problem) or `InputErrors` (several), each with its line and column.
    package static func decode<T: JSONObjectInput>(_ type: T.Type, from data: Data, file: String) throws -> T {
        guard data.count <= maximumBytes else {
            throw InputError(file: file, message: "the input is larger than 16 MiB; \(T.jsonDescription) is a few kilobytes")
        }
        let bytes = Array(data)
        let root = try document(bytes, file: file)
        guard case .object = root.kind else {
            throw InputError(file: file, message: "\(T.jsonDescription) must be a JSON object, e.g. \(T.jsonExample)")
        }
        var errors = ErrorCollector()
        for problem in schemaProblems(root, of: T.self, bytes: bytes) {
            guard errors.errors.count < errors.limit else { errors.omitted += 1; continue }
            let (line, column) = StrictJSON.location(of: problem.offset, in: bytes)
            errors.add(InputError(file: file, line: line, column: column, message: problem.sentence))
        }
        if errors.errors.count == 1 && errors.omitted == 0 { throw errors.errors[0] }
        try errors.throwIfAny()
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw InputError(file: file, message: message(for: error, description: T.jsonDescription, missingKeyHint: T.missingKeyHint))
        }
    }

    /// `bytes` parsed strictly (`StrictJSON`).
    /// - Throws: `InputError` naming `file`, the line and column of a syntax error.
    package static func document(_ bytes: [UInt8], file: String) throws -> StrictJSON.Value {
        do {
            return try StrictJSON.parse(bytes, input: .file)
        } catch let error as StrictJSON.SyntaxError {
            throw InputError(file: file, line: error.line, column: error.column, message: error.sentence)
        }
    }

    /// A value that breaks its type's schema, found by `schemaProblems`.
    package struct SchemaProblem {
        package enum Kind {
            /// A key the type does not have; `known` lists the keys it has, in documentation order.
            case unknownKey(String, known: [String])
            /// A number where a whole number belongs; `tooLarge` when it is whole but beyond `Int`.
            case notWholeNumber(String, tooLarge: Bool)
        }

        package var kind: Kind
        /// The unknown key, or the number, from the root of the checked value.
        package var path: [StrictJSON.PathStep]
        /// Where the key or the number is in the input.
        package var offset: Int

        /// A path as a file's messages write it: `target_information[1].theta`.
        package static func dotted(_ path: some Collection<StrictJSON.PathStep>) -> String {
            var text = ""
            for step in path {
                switch step {
                case .key(let key): text += (text.isEmpty ? "" : ".") + key
                case .index(let k): text += "[\(k)]"
                }
            }
            return text
        }

        /// The problem as a file's message states it.
        package var sentence: String {
            switch kind {
            case .unknownKey(let key, let known):
                let place = path.count > 1 ? " in \(Self.dotted(path.dropLast()))" : ""
                return "unknown key \"\(key.escapingControlCharacters)\"\(place) (known: \(known.joined(separator: ", ")))"
            case .notWholeNumber(let text, let tooLarge):
                let problem = tooLarge ? "is too large for a whole number (at most \(Int.max))" : "must be a whole number"
                return "\"\(Self.dotted(path))\" \(problem), got \(text)"
            }
        }
    }

    /// The values of `value` that break `type`'s schema, in document order: unknown keys at any level of its
    /// nested checked objects, and numbers that must be whole (`JSONDecoder` reports 2.5 for an `Int` as "not
    /// valid JSON", naming no key). A value of the wrong type is left to the decoder to report.
    package static func schemaProblems(
        _ value: StrictJSON.Value, of type: any JSONObjectInput.Type,
        bytes: [UInt8]
    ) -> [SchemaProblem] {
        var problems: [SchemaProblem] = []
        collect(value, of: type, at: [], bytes: bytes, into: &problems)
        return problems
    }

    private static func collect(
        _ value: StrictJSON.Value, of type: any JSONObjectInput.Type, at path: [StrictJSON.PathStep],
        bytes: [UInt8], into problems: inout [SchemaProblem]
    ) {
        guard case .object(let members) = value.kind else { return }
        for member in members {
            let here = path + [.key(member.key)]
            guard type.jsonKeys.contains(member.key) else {
                problems.append(SchemaProblem(kind: .unknownKey(member.key, known: type.jsonKeys), path: here, offset: member.keyOffset))
                continue
            }
            if type.integerKeys.contains(member.key) { wholeNumbers(member.value, at: here, bytes: bytes, into: &problems) }
            guard let nested = type.nestedJSONObjects[member.key] else { continue }
            if case .array(let elements) = member.value.kind {
                for (k, element) in elements.enumerated() { collect(element, of: nested, at: here + [.index(k)], bytes: bytes, into: &problems) }
            } else {
                collect(member.value, of: nested, at: here, bytes: bytes, into: &problems)
            }
        }
    }

    /// Numbers in `value` (itself, or inside its objects and arrays) that are not whole numbers within `Int`.
    private static func wholeNumbers(
        _ value: StrictJSON.Value, at path: [StrictJSON.PathStep], bytes: [UInt8],
        into problems: inout [SchemaProblem]
    ) {
        switch value.kind {
        case .number:
            let text = String(decoding: bytes[value.start..<value.end], as: UTF8.self)
            if Int(text) != nil { return }
            let v = Double(text) ?? .nan
            if v == v.rounded() && abs(v) < 0x1p63 { return }
            problems.append(SchemaProblem(kind: .notWholeNumber(text, tooLarge: v == v.rounded()), path: path, offset: value.start))
        case .object(let members):
            for member in members { wholeNumbers(member.value, at: path + [.key(member.key)], bytes: bytes, into: &problems) }
        case .array(let elements):
            for (k, element) in elements.enumerated() { wholeNumbers(element, at: path + [.index(k)], bytes: bytes, into: &problems) }
        default:
            break
        }
    }

    /// A decoding error as a sentence naming the key path.
    static func message(for error: DecodingError, description: String, missingKeyHint: String) -> String {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            var text = ""
            for key in codingPath + (last.map { [$0] } ?? []) {
                if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == String(index) {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(description) lacks \"\(path(context.codingPath, key))\"" + missingKeyHint
        case .typeMismatch(let type, let context):
            return "\"\(path(context.codingPath))\" has the wrong type: expected \(expectation(type, context))"
        case .valueNotFound(_, let context):
            return "\"\(path(context.codingPath))\" must not be null"
        case .dataCorrupted(let context):
            let key = path(context.codingPath)
            return key.isEmpty
                ? "not a valid \(description.replacingOccurrences(of: "the ", with: "")): \(context.debugDescription)"
                : "\"\(key)\": \(context.debugDescription)"
        @unknown default:
            return "not a valid \(description): \(error)"
        }
    }

    /// "an integer", "a number", "a string", … for a type the decoder expected.
    static func expectation(_ type: Any.Type, _ context: DecodingError.Context) -> String {
        switch type {
        case is Int.Type, is Int32.Type, is Int64.Type, is UInt64.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return context.debugDescription
        }
    }
}
