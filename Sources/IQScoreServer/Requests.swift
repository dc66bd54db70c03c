import Assembly
import Psychometrics

// The request bodies of the API, decoded by `RequestDecoding` (a strict JSON check, then `JSONDecoder`). Keys are
// snake_case as the `score` CSV columns are; a key the API does not define is an error (422 `invalid-request`),
// so a misspelt `"methd"` is never silently ignored.

/// `POST /v1/score`, and each entry of `POST /v1/score/batch`.
struct ScoreRequest: Decodable, Sendable {
    var sessionID: String?
    var itemIDs: [String]
    /// Each 0 or 1, written as the JSON numbers `0` and `1`: `1.0`, `true` and `"1"` are refused (422
    /// `invalid-response` naming `/responses/k`), so a client's type confusion is caught, not guessed at.
    var responses: [Int]
    var method: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case sessionID = "session_id", itemIDs = "item_ids", responses, method
    }

    static let shape = JSONShape.object([
        "session_id": .leaf, "item_ids": .leaf, "responses": .array(.binaryResponse), "method": .leaf,
    ])
}

/// `POST /v1/score/batch`: sessions decoded one by one, so that one malformed session is rejected alone.
struct BatchRequest: Decodable, Sendable {
    var sessions: [Decoded<ScoreRequest>]

    static let keys: Set<String> = ["sessions"]
}

/// A value that decoded, or the error that one entry of an array gave (the rest of the array still decodes).
enum Decoded<Value: Decodable & Sendable>: Decodable, Sendable {
    case value(Value)
    case failure(Problem)

    init(from decoder: any Decoder) throws {
        do {
            self = .value(try Value(from: decoder))
        } catch let error as DecodingError {
            self = .failure(RequestDecoding.problem(for: error))
        } catch {
            // Foundation's own error for a number no Swift type holds (1.5 or 1e20 where an integer belongs).
            self = .failure(Problem(.invalidRequest, "a value does not fit its type (\(error))", field: JSONPointer.from(codingPath: decoder.codingPath)))
        }
    }
}

/// `POST /v1/cat/next`.
struct CATNextRequest: Decodable, Sendable {
    var sessionID: String
    var administered: [AdministeredEntry]
    var exclude: [String]?

    struct AdministeredEntry: Decodable, Sendable {
        var itemID: String
        var response: Int

        enum CodingKeys: String, CodingKey, CaseIterable { case itemID = "item_id", response }
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case sessionID = "session_id", administered, exclude }

    static let shape = JSONShape.object([
        "session_id": .leaf,
        "administered": .array(.object(["item_id": .leaf, "response": .binaryResponse])),
        "exclude": .leaf,
    ])
}

/// `POST /v1/forms`.
struct FormsRequest: Decodable, Sendable {
    var blueprint: Blueprint?
    var exclude: [String]?
    var seed: UInt64?

    static let shape = JSONShape.object([
        "blueprint": .checked(InputType(Blueprint.self)), "exclude": .leaf, "seed": .unsignedInteger,
    ])
}
