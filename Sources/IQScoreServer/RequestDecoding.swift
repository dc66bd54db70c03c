import Foundation
import NIOCore
import Psychometrics

/// What a request body must look like beyond what `JSONDecoder` checks: the keys each object may have, and the
/// numbers whose text matters (a response is `0` or `1`, not `1.0`; a seed is a whole number within UInt64).
indirect enum JSONShape: Sendable {
    /// An object with exactly these keys allowed (each optional here; `JSONDecoder` reports missing ones).
    case object([String: JSONShape])
    case array(JSONShape)
    /// A number written `0` or `1`. Strings, booleans and null are left to the decoder (a type error there).
    case binaryResponse
    /// A whole number 0 … 2⁶⁴ − 1 written in digits.
    case unsignedInteger
    /// An object of a library input type (the blueprint), checked against its own schema: its keys, nested
    /// objects and whole-number keys, as the same type is checked when read from a file (`JSONInput`).
    case checked(InputType)
    /// Anything; the decoder checks the type.
    case leaf
}

/// A library input type, for `JSONShape.checked`. A metatype holds no state, so sharing it is safe; Swift does
/// not infer `Sendable` for an existential metatype.
struct InputType: @unchecked Sendable {
    let type: any JSONObjectInput.Type
    init(_ type: any JSONObjectInput.Type) { self.type = type }
}

/// Decodes request bodies strictly, with problems that name the field.
///
/// Two passes: first the repository's RFC 8259 scanner (`JSONScanner`, as for every JSON file iqscore reads),
/// which refuses what Foundation would tolerate — trailing commas, a key twice in one object, nesting deeper than
/// 64 — and keeps each number's text; then the shape check (`JSONShape`: unknown keys, `0`/`1` responses); then
/// `JSONDecoder` into the `Decodable` request, whose errors become JSON Pointers. A syntax error is 400
/// `malformed-json`; everything else is 422 with the `field`.
enum RequestDecoding {
    /// Decodes one request object.
    static func decode<T: Decodable>(_ type: T.Type, from body: ByteBuffer, shape: JSONShape) throws(Problem) -> T {
        let bytes = Array(body.readableBytesView)
        let root = try scan(bytes)
        var path: [String] = []
        if let problem = check(root, against: shape, path: &path) { throw problem }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw problem(for: error)
        } catch {
            throw Problem(.invalidRequest, "\(error)")
        }
    }

    /// Decodes a batch: the envelope must be right, but a session with a problem only marks that session (the
    /// problem by index); the others decode.
    static func decodeBatch(from body: ByteBuffer, sessionShape: JSONShape) throws(Problem) -> (BatchRequest, [Int: Problem]) {
        let bytes = Array(body.readableBytesView)
        let root = try scan(bytes)
        var path: [String] = []
        if let problem = check(root, against: .object(["sessions": .leaf]), path: &path) { throw problem }
        var sessionProblems: [Int: Problem] = [:]
        if case .object(let members) = root.kind, let sessions = members.first(where: { $0.key == "sessions" }),
           case .array(let elements) = sessions.value.kind {
            for (k, element) in elements.enumerated() {
                var path = ["sessions", String(k)]
                if let problem = check(element, against: sessionShape, path: &path) { sessionProblems[k] = problem }
            }
        }
        do {
            return (try JSONDecoder().decode(BatchRequest.self, from: Data(bytes)), sessionProblems)
        } catch let error as DecodingError {
            throw problem(for: error)
        } catch {
            throw Problem(.invalidRequest, "\(error)")
        }
    }

    /// The scanner's document, or 400 naming line and column. The root must be an object.
    static func scan(_ bytes: [UInt8]) throws(Problem) -> JSONScanner.Value {
        var scanner = JSONScanner(bytes: bytes, file: "request body")
        let root: JSONScanner.Value
        do {
            root = try scanner.document()
        } catch let error as InputError {
            let place = [error.line.map { "line \($0)" }, error.column.map { "column \($0)" }].compactMap { $0 }.joined(separator: ", ")
            throw Problem(.malformedJSON, (place.isEmpty ? "" : place + ": ") + error.message)
        } catch {
            throw Problem(.malformedJSON, "\(error)")
        }
        guard case .object = root.kind else { throw Problem(.invalidRequest, "the request body must be a JSON object", field: "") }
        return root
    }

    /// The first way `value` departs from `shape`, located by `path` (keys and array positions).
    static func check(_ value: JSONScanner.Value, against shape: JSONShape, path: inout [String]) -> Problem? {
        switch (shape, value.kind) {
        case (.object(let keys), .object(let members)):
            for member in members {
                guard let inner = keys[member.key] else {
                    path.append(member.key)
                    return Problem(.invalidRequest, "unknown key \(quoted(member.key)) (known: \(keys.keys.sorted().joined(separator: ", ")))",
                                   field: JSONPointer.from(components: path))
                }
                path.append(member.key)
                if let problem = check(member.value, against: inner, path: &path) { return problem }
                path.removeLast()
            }
        case (.array(let inner), .array(let elements)):
            for (k, element) in elements.enumerated() {
                path.append(String(k))
                if let problem = check(element, against: inner, path: &path) { return problem }
                path.removeLast()
            }
        case (.binaryResponse, .number(let text, _, _, _)):
            if text != "0" && text != "1" {
                return Problem(.invalidResponse, "a response must be 0 or 1, written as a JSON integer; got \(TextFidelity.quoted(text))",
                               field: JSONPointer.from(components: path))
            }
        case (.unsignedInteger, .number(let text, _, _, _)):
            if !text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) || UInt64(text) == nil {
                return Problem(.invalidRequest, "must be a whole number 0…\(UInt64.max), written in digits; got \(TextFidelity.quoted(text))",
                               field: JSONPointer.from(components: path))
            }
        case (.checked(let input), .object(let members)):
            let type = input.type
            let known = Set(type.jsonKeys)
            for member in members {
                path.append(member.key)
                defer { path.removeLast() }
                guard known.contains(member.key) else {
                    return Problem(.invalidRequest, "unknown key \(quoted(member.key)) (known: \(type.jsonKeys.joined(separator: ", ")))",
                                   field: JSONPointer.from(components: path))
                }
                if type.integerKeys.contains(member.key), let problem = checkWholeNumbers(member.value, path: &path) { return problem }
                if let nested = type.nestedJSONObjects[member.key] {
                    // A nested object, or an array of them (a blueprint's target_information entries).
                    let inner: JSONShape = if case .array = member.value.kind { .array(.checked(InputType(nested))) } else { .checked(InputType(nested)) }
                    if let problem = check(member.value, against: inner, path: &path) { return problem }
                }
            }
        default:
            break // a type the shape does not expect: the decoder names it
        }
        return nil
    }

    /// Numbers in `value` (itself, or inside its objects and arrays) that are not whole numbers within `Int`:
    /// `JSONDecoder` reports 2.5 for an `Int` as invalid JSON without naming the key.
    static func checkWholeNumbers(_ value: JSONScanner.Value, path: inout [String]) -> Problem? {
        switch value.kind {
        case .number(let text, _, _, _):
            if Int(text) != nil { return nil }
            let v = Double(text) ?? .nan
            if v == v.rounded() && abs(v) < 0x1p63 { return nil }
            return Problem(.invalidRequest, "must be a whole number\(v == v.rounded() ? " within ±\(Int.max)" : ""); got \(TextFidelity.quoted(text))",
                           field: JSONPointer.from(components: path))
        case .object(let members):
            for member in members {
                path.append(member.key)
                if let problem = checkWholeNumbers(member.value, path: &path) { return problem }
                path.removeLast()
            }
        case .array(let elements):
            for (k, element) in elements.enumerated() {
                path.append(String(k))
                if let problem = checkWholeNumbers(element, path: &path) { return problem }
                path.removeLast()
            }
        case .scalar:
            break
        }
        return nil
    }

    /// A decoding error as a problem naming the field.
    static func problem(for error: DecodingError) -> Problem {
        switch error {
        case .keyNotFound(let key, let context):
            return Problem(.invalidRequest, "\(quoted(key.stringValue)) is required", field: JSONPointer.from(codingPath: context.codingPath + [key]))
        case .typeMismatch(let type, let context):
            let field = JSONPointer.from(codingPath: context.codingPath)
            if isResponse(context.codingPath) {
                return Problem(.invalidResponse, "a response must be 0 or 1, written as a JSON integer; \(found(context))", field: field)
            }
            return Problem(.invalidRequest, "expected \(expectation(type)); \(found(context))", field: field)
        case .valueNotFound(let type, let context):
            if isResponse(context.codingPath) {
                return Problem(.invalidResponse, "a response must be 0 or 1, written as a JSON integer; found null", field: JSONPointer.from(codingPath: context.codingPath))
            }
            return Problem(.invalidRequest, "must not be null (expected \(expectation(type)))", field: JSONPointer.from(codingPath: context.codingPath))
        case .dataCorrupted(let context):
            return Problem(.invalidRequest, context.debugDescription, field: JSONPointer.from(codingPath: context.codingPath))
        @unknown default:
            return Problem(.invalidRequest, "\(error)")
        }
    }

    /// Whether a coding path ends at a response (`responses[k]`, `administered[k].response`).
    static func isResponse(_ path: [any CodingKey]) -> Bool {
        guard let last = path.last else { return false }
        if last.stringValue == "response" { return true }
        return last.intValue != nil && path.dropLast().last?.stringValue == "responses"
    }

    /// "found a string" from Foundation's "Expected to decode Int but found a string instead."
    static func found(_ context: DecodingError.Context) -> String {
        let text = context.debugDescription
        if let range = text.range(of: "but found ") {
            return "found " + text[range.upperBound...].replacingOccurrences(of: " instead.", with: "")
        }
        return text
    }

    static func expectation(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type, is UInt64.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        default:
            String(describing: type).hasPrefix("Array") ? "an array" : String(describing: type).hasPrefix("Dictionary") ? "an object" : "\(type)"
        }
    }

    static func quoted(_ key: String) -> String { TextFidelity.quoted(key) }
}
