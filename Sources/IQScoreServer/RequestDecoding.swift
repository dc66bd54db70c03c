import Assembly
import Foundation
import NIOCore
import Norming
import Psychometrics

/// Reads request bodies into the request types, with every problem located by a JSON Pointer.
///
/// The body is parsed strictly (`StrictJSON`: RFC 8259, no repeated keys, bounded depth and array length); a
/// body that is not JSON is 400 `malformed-json`. Then each field is read by hand against the API: an unknown or
/// missing key, or a value of the wrong type, is 422 `invalid-request` naming the field; a response that is not
/// written `0` or `1` is 422 `invalid-response`. The blueprint of `POST /v1/forms` is checked against the
/// blueprint's own schema (its keys and whole-number fields, as `Blueprint.load(json:)` checks a file) and then
/// decoded with Foundation's `JSONDecoder`, as the file is.
enum RequestDecoding {
    /// A parsed body: its bytes and root value.
    struct Document {
        let bytes: [UInt8]
        let root: StrictJSON.Value

        func text(_ value: StrictJSON.Value) -> String { String(decoding: bytes[value.start..<value.end], as: UTF8.self) }
    }

    /// Parses `body`. An array longer than every limit of `limits` is refused while parsing (422 naming it), so
    /// the values held for one request stay within a small multiple of the body's size.
    static func document(_ body: ByteBuffer, limits: ServerLimits) throws(Problem) -> Document {
        let bytes = Array(body.readableBytesView)
        let longest = longestArray(limits)
        do {
            return Document(bytes: bytes, root: try StrictJSON.parse(bytes, input: .body, maximumArrayLength: longest))
        } catch let error as StrictJSON.SyntaxError {
            throw Problem(.malformedJSON, "line \(error.line), column \(error.column): \(error.sentence)")
        } catch let error as StrictJSON.ArrayTooLong {
            let pointer = JSONPointer.from(components: error.path)
            throw Problem(
                pointer == "/sessions" ? .tooManySessions : .tooManyItems,
                "the array has more than \(longest) elements, more than any limit of this server allows", field: pointer)
        } catch {
            throw Problem(.malformedJSON, "\(error)")
        }
    }

    /// The longest array a body may hold: the largest of `limits`' array limits.
    static func longestArray(_ limits: ServerLimits) -> Int {
        max(limits.maxItemsPerSession, limits.maxSessionsPerBatch, limits.maxExcludedItems)
    }

    // MARK: Requests

    static func scoreRequest(_ document: Document) throws(Problem) -> ScoreRequest {
        try scoreRequest(document.root, document, at: "")
    }

    /// One score request at `path` (`""` for the body, `/sessions/3` in a batch).
    static func scoreRequest(_ value: StrictJSON.Value, _ document: Document, at path: String) throws(Problem) -> ScoreRequest {
        let members = try object(value, at: path, keys: ScoreRequest.keys)
        return ScoreRequest(
            sessionID: try optionalSessionID(members["session_id"], document, at: path + "/session_id"),
            itemIDs: try strings(required(members, "item_ids", at: path), at: path + "/item_ids"),
            responses: try responses(required(members, "responses", at: path), document, at: path + "/responses"),
            method: try optionalString(members["method"], at: path + "/method"),
            age: try optionalAge(members["age"], document, at: path + "/age"),
            seconds: try optionalSeconds(members["seconds"], document, at: path + "/seconds"))
    }

    /// The sessions of a batch, each read on its own so that one with a problem is rejected alone (with its
    /// `session_id` when it has a string one).
    static func batchRequest(_ document: Document) throws(Problem) -> [(sessionID: String?, request: Result<ScoreRequest, Problem>)] {
        let members = try object(document.root, at: "", keys: ["sessions"])
        let sessions = try array(required(members, "sessions", at: ""), at: "/sessions")
        return sessions.enumerated().map { k, session in
            do throws(Problem) {
                let request = try scoreRequest(session, document, at: "/sessions/\(k)")
                return (request.sessionID, .success(request))
            } catch {
                var sessionID: String?
                if case .object(let fields) = session.kind, let value = fields.first(where: { $0.key == "session_id" })?.value {
                    sessionID = try? self.sessionID(value, document, at: "")
                }
                return (sessionID, .failure(error))
            }
        }
    }

    static func catNextRequest(_ document: Document) throws(Problem) -> CATNextRequest {
        let members = try object(document.root, at: "", keys: CATNextRequest.keys)
        let sessionID = try self.sessionID(required(members, "session_id", at: ""), document, at: "/session_id")
        let list = try array(required(members, "administered", at: ""), at: "/administered")
        var administered: [AdministeredItem] = []
        administered.reserveCapacity(list.count)
        var times: [Float] = [], timed = false
        for (k, entry) in list.enumerated() {
            let path = "/administered/\(k)"
            let fields = try object(entry, at: path, keys: CATNextRequest.administeredKeys)
            let itemID = try string(required(fields, "item_id", at: path), at: path + "/item_id")
            let response = try response(required(fields, "response", at: path), document, at: path + "/response")
            administered.append(AdministeredItem(itemID: itemID, response: response))
            if let value = fields["seconds"] {
                timed = true; times.append(try seconds(value, document, at: path + "/seconds"))
            } else {
                times.append(.nan)
            }
        }
        return CATNextRequest(
            sessionID: sessionID, administered: administered, seconds: timed ? times : nil,
            exclude: try members["exclude"].map { value throws(Problem) in try optionalStrings(value, at: "/exclude") } ?? [],
            age: try optionalAge(members["age"], document, at: "/age"))
    }

    static func formsRequest(_ document: Document) throws(Problem) -> FormsRequest {
        let members = try object(document.root, at: "", keys: FormsRequest.keys)
        var blueprint: Blueprint?
        if let value = members["blueprint"], !isNull(value) { blueprint = try self.blueprint(value, document, at: "/blueprint") }
        var seed: UInt64?
        if let value = members["seed"], !isNull(value) {
            let text = document.text(value)
            guard case .number = value.kind, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let s = UInt64(text) else {
                throw Problem(
                    .invalidRequest, "must be a whole number 0…\(UInt64.max), written in digits; got \(TextFidelity.quoted(text))", field: "/seed")
            }
            seed = s
        }
        return FormsRequest(
            blueprint: blueprint, exclude: try members["exclude"].map { value throws(Problem) in try optionalStrings(value, at: "/exclude") } ?? [],
            seed: seed)
    }

    /// A blueprint: its keys and whole-number fields checked as a blueprint file's are (`JSONObjectInput`), then
    /// decoded by `JSONDecoder` from its own bytes.
    static func blueprint(_ value: StrictJSON.Value, _ document: Document, at path: String) throws(Problem) -> Blueprint {
        guard case .object = value.kind else { throw Problem(.invalidRequest, "expected an object; found \(value.kindName)", field: path) }
        try checkInput(value, of: Blueprint.self, document, at: path)
        do {
            return try JSONDecoder().decode(Blueprint.self, from: Data(document.bytes[value.start..<value.end]))
        } catch let error as DecodingError {
            throw problem(for: error, at: path)
        } catch {
            throw Problem(.invalidRequest, "\(error)", field: path)
        }
    }

    // MARK: Fields

    static func isNull(_ value: StrictJSON.Value) -> Bool {
        if case .null = value.kind { return true }
        return false
    }

    /// An object's members by key; a key not in `keys` is an error naming it.
    static func object(_ value: StrictJSON.Value, at path: String, keys: [String]) throws(Problem) -> [String: StrictJSON.Value] {
        guard case .object(let members) = value.kind else {
            throw Problem(
                .invalidRequest, path.isEmpty ? "the request body must be a JSON object" : "expected an object; found \(value.kindName)", field: path)
        }
        var byKey: [String: StrictJSON.Value] = [:]
        for member in members {
            guard keys.contains(member.key) else {
                throw Problem(
                    .invalidRequest, "unknown key \(quoted(member.key)) (known: \(keys.sorted().joined(separator: ", ")))",
                    field: path + JSONPointer.from(components: [member.key]))
            }
            byKey[member.key] = member.value
        }
        return byKey
    }

    static func required(_ members: [String: StrictJSON.Value], _ key: String, at path: String) throws(Problem) -> StrictJSON.Value {
        guard let value = members[key] else { throw Problem(.invalidRequest, "\(quoted(key)) is required", field: path + "/" + key) }
        return value
    }

    static func string(_ value: StrictJSON.Value, at path: String) throws(Problem) -> String {
        guard case .string(let s) = value.kind else { throw Problem(.invalidRequest, "expected a string; found \(value.kindName)", field: path) }
        return s
    }

    /// A session id: a string, or a whole number written in digits (an optional `-`, then digits), as
    /// a back end with integer keys sends it (`{"session_id": 8812}` from Python's `json.dumps`). A number is
    /// taken as its digits: the response echoes `"8812"`, and the adaptive test's draws are those of `"8812"`.
    static func sessionID(_ value: StrictJSON.Value, _ document: Document, at path: String) throws(Problem) -> String {
        switch value.kind {
        case .string(let s): return s
        case .number:
            let text = document.text(value)
            let digits = text.hasPrefix("-") ? text.utf8.dropFirst() : text.utf8[...]
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw Problem(
                    .invalidRequest, "a session id must be a string or a whole number written in digits; got \(TextFidelity.quoted(text))",
                    field: path)
            }
            return text
        default:
            throw Problem(.invalidRequest, "a session id must be a string or a whole number; found \(value.kindName)", field: path)
        }
    }

    static func optionalSessionID(_ value: StrictJSON.Value?, _ document: Document, at path: String) throws(Problem) -> String? {
        guard let value, !isNull(value) else { return nil }
        return try sessionID(value, document, at: path)
    }

    static func optionalString(_ value: StrictJSON.Value?, at path: String) throws(Problem) -> String? {
        guard let value, !isNull(value) else { return nil }
        return try string(value, at: path)
    }

    static func array(_ value: StrictJSON.Value, at path: String) throws(Problem) -> [StrictJSON.Value] {
        guard case .array(let elements) = value.kind else {
            throw Problem(.invalidRequest, "expected an array; found \(value.kindName)", field: path)
        }
        return elements
    }

    static func strings(_ value: StrictJSON.Value, at path: String) throws(Problem) -> [String] {
        let elements = try array(value, at: path)
        var out: [String] = []
        out.reserveCapacity(elements.count)
        for (k, element) in elements.enumerated() {
            guard case .string(let s) = element.kind else {
                throw Problem(.invalidRequest, "expected a string; found \(element.kindName)", field: "\(path)/\(k)")
            }
            out.append(s)
        }
        return out
    }

    /// An array of strings, or null for none.
    static func optionalStrings(_ value: StrictJSON.Value, at path: String) throws(Problem) -> [String] {
        isNull(value) ? [] : try strings(value, at: path)
    }

    /// An age in years: a JSON number in `AgeNormScale.allowedAges` (0–130), or null / absent for none.
    static func optionalAge(_ value: StrictJSON.Value?, _ document: Document, at path: String) throws(Problem) -> Double? {
        guard let value, !isNull(value) else { return nil }
        guard case .number = value.kind else { throw Problem(.invalidRequest, "age must be a number of years; found \(value.kindName)", field: path) }
        let text = document.text(value)
        guard let age = Double(text), AgeNormScale.allowedAges.contains(age) else {
            throw Problem(.invalidRequest, "age must be a number of years in 0–130; got \(TextFidelity.quoted(text))", field: path)
        }
        return age
    }

    /// Response times: an array of numbers of seconds in `ResponseTimes.allowedSeconds` or `null` (none: NaN); nil
    /// for a missing or `null` member. Zero, negative and absurd times are refused at their position.
    static func optionalSeconds(_ value: StrictJSON.Value?, _ document: Document, at path: String) throws(Problem) -> [Float]? {
        guard let value, !isNull(value) else { return nil }
        let list = try array(value, at: path)
        var out: [Float] = []
        out.reserveCapacity(list.count)
        for (k, entry) in list.enumerated() { out.append(try seconds(entry, document, at: "\(path)/\(k)")) }
        return out
    }

    /// One response time: a number of seconds in `ResponseTimes.allowedSeconds`, or `null` (NaN: none).
    static func seconds(_ entry: StrictJSON.Value, _ document: Document, at path: String) throws(Problem) -> Float {
        if isNull(entry) { return .nan }
        let seconds: Float? = if case .number = entry.kind, let t = Double(document.text(entry)), t.isFinite { Float(t) } else { nil }
        guard let seconds, ResponseTimes.allowedSeconds.contains(seconds) else {
            let got: String = if case .number = entry.kind { "got \(TextFidelity.quoted(document.text(entry)))" } else { "found \(entry.kindName)" }
            throw Problem(
                .invalidRequest,
                "a response time must be a number of seconds \(ResponseTimes.allowedSeconds.lowerBound)…\(Int(ResponseTimes.allowedSeconds.upperBound)), or null for none; \(got)",
                field: path)
        }
        return seconds
    }

    /// A response: a category written as a JSON integer 0…255 in plain digits (`0`, `1`, `3`; an item in K
    /// categories takes 0…K−1, a 0/1 item 0 or 1, checked against the bank by `scoreMembers`), or the boolean
    /// false or true (0 and 1, as a back end's booleans serialise). `1.0`, `01`, `-1`, `"1"` are refused.
    static func response(_ value: StrictJSON.Value, _ document: Document, at path: String) throws(Problem) -> Int {
        if case .bool(let correct) = value.kind { return correct ? 1 : 0 }
        if case .number = value.kind, value.end - value.start <= 3 {
            var v = 0, digits = true
            for i in value.start..<value.end {
                let c = document.bytes[i]
                guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { digits = false; break }
                v = 10 * v + Int(c - UInt8(ascii: "0"))
            }
            if digits && v <= 255 && (value.end - value.start == 1 || document.bytes[value.start] != UInt8(ascii: "0")) { return v }
        }
        let got: String = if case .number = value.kind { "got \(TextFidelity.quoted(document.text(value)))" } else { "found \(value.kindName)" }
        throw Problem(
            .invalidResponse,
            "a response must be 0 or 1 (or false or true), or an item's category 0…K−1, written as a JSON integer or boolean; \(got)", field: path)
    }

    static func responses(_ value: StrictJSON.Value, _ document: Document, at path: String) throws(Problem) -> [Int] {
        let elements = try array(value, at: path)
        var out: [Int] = []
        out.reserveCapacity(elements.count)
        for (k, element) in elements.enumerated() { out.append(try response(element, document, at: "\(path)/\(k)")) }
        return out
    }

    // MARK: Library input types

    /// Checks an object against a library input type's schema (`JSONInput.schemaProblems`, the check a file gets):
    /// the first unknown key at any level of its nested objects, or number that must be whole, is 422 naming it.
    static func checkInput(_ value: StrictJSON.Value, of type: any JSONObjectInput.Type, _ document: Document, at path: String) throws(Problem) {
        guard let problem = JSONInput.schemaProblems(value, of: type, bytes: document.bytes).first else { return }
        let field = path + JSONPointer.from(components: problem.path.map(\.component))
        switch problem.kind {
        case .unknownKey(let key, let known):
            throw Problem(.invalidRequest, "unknown key \(quoted(key)) (known: \(known.joined(separator: ", ")))", field: field)
        case .notWholeNumber(let text, let tooLarge):
            throw Problem(
                .invalidRequest, "must be a whole number\(tooLarge ? " within ±\(Int.max)" : ""); got \(TextFidelity.quoted(text))", field: field)
        }
    }

    /// A decoding error of a library type read at `path`, naming the field.
    static func problem(for error: DecodingError, at path: String) -> Problem {
        func pointer(_ codingPath: [any CodingKey]) -> String { path + JSONPointer.from(codingPath: codingPath) }
        switch error {
        case .keyNotFound(let key, let context):
            return Problem(.invalidRequest, "\(quoted(key.stringValue)) is required", field: pointer(context.codingPath + [key]))
        case .typeMismatch(let type, let context):
            return Problem(.invalidRequest, "expected \(expectation(type)); \(found(context))", field: pointer(context.codingPath))
        case .valueNotFound(let type, let context):
            return Problem(.invalidRequest, "must not be null (expected \(expectation(type)))", field: pointer(context.codingPath))
        case .dataCorrupted(let context):
            return Problem(.invalidRequest, context.debugDescription, field: pointer(context.codingPath))
        @unknown default:
            return Problem(.invalidRequest, "\(error)", field: path)
        }
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

    /// A key or value quoted for a message, at most 100 bytes (`TextFidelity.quoted`).
    static func quoted(_ text: String) -> String { TextFidelity.quoted(text) }
}
