import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import IQScoreServer
import Testing
import TestSupport

/// The committed OpenAPI document matches the implementation: it is what the server serves, every path in it is
/// routed (and every route is in it), and real responses of every endpoint carry exactly the properties its
/// schemas require, with their types.
@Suite("iqscore serve: the OpenAPI document matches the server", .timeLimit(.minutes(2)))
struct OpenAPIDocumentTests {
    static let document: TestJSON = try! TestJSON.parse(OpenAPIDocument.json)

    @Test("the served document is Sources/IQScoreServer/openapi.json, which docs/openapi.json links to")
    func committed() throws {
        let source = try String(contentsOf: Repository.file("Sources/IQScoreServer/openapi.json"), encoding: .utf8)
        #expect(source == OpenAPIDocument.json)
        let linked = try String(contentsOf: Repository.file("docs/openapi.json"), encoding: .utf8)
        #expect(linked == source, "docs/openapi.json is not the served document")
        #expect(Self.document["openapi"]?.string == "3.1.0")
    }

    @Test("every path and method in the document is routed, and every route is documented")
    func paths() async throws {
        let documented = Set(
            try #require(Self.document["paths"]).keys.flatMap { path in
                (Self.document["paths"]?[path]?.keys ?? []).map { "\($0.uppercased()) \(path)" }
            })
        let routed = Set(ScoringService.endpoints.map { "\($0.method.rawValue) \($0.path)" })
        #expect(documented == routed)
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            for endpoint in ScoringService.endpoints {
                let response = try await client.execute(uri: endpoint.path, method: endpoint.method, body: Fixtures.body("{}"))
                #expect(![404, 405].contains(response.status.code), "\(endpoint.method) \(endpoint.path): \(response.status)")
            }
        }
    }

    /// What a local reference such as `#/components/schemas/Score` points to in the document.
    static func resolve(_ ref: String) -> TestJSON {
        ref.split(separator: "/").dropFirst().reduce(document) { node, name in node[String(name)]! }
    }

    /// The property names `schema` declares: its own `properties` and those of its `allOf` branches, following
    /// `$ref`s (what `unevaluatedProperties` sees as evaluated, in the document's use of it).
    static func declared(_ schema: TestJSON) -> Set<String> {
        if let ref = schema["$ref"]?.string { return declared(resolve(ref)) }
        var names = Set(schema["properties"]?.keys ?? [])
        for branch in schema["allOf"]?.array ?? [] { names.formUnion(declared(branch)) }
        return names
    }

    /// Checks `value` against `schema` (the subset of JSON Schema 2020-12 the document uses); returns the problems.
    static func problems(_ value: TestJSON, _ schema: TestJSON, at path: String = "") -> [String] {
        // The document's $refs have only descriptions beside them.
        if let ref = schema["$ref"]?.string { return problems(value, resolve(ref), at: path) }
        if let options = schema["oneOf"]?.array {
            let matches = options.filter { problems(value, $0, at: path).isEmpty }.count
            return matches == 1 ? [] : ["\(path): matches \(matches) of oneOf's \(options.count) schemas: \(value)"]
        }
        var found: [String] = []
        // Every branch of allOf must hold: each one's problems are the value's.
        for branch in schema["allOf"]?.array ?? [] { found += problems(value, branch, at: path) }
        if let constant = schema["const"], constant != value { found.append("\(path): \(value) is not the constant \(constant)") }
        if let allowed = schema["enum"]?.array, !allowed.contains(value) { found.append("\(path): \(value) is not one of \(allowed)") }
        if let type = schema["type"] {
            let types = type.array?.compactMap(\.string) ?? [type.string!]
            let actual: String
            switch value {
            case .object: actual = "object"
            case .array: actual = "array"
            case .string: actual = "string"
            case .bool: actual = "boolean"
            case .null: actual = "null"
            case .number(let text): actual = text.contains(where: { ".eE".contains($0) }) ? "number" : "integer"
            }
            if !(types.contains(actual) || (actual == "integer" && types.contains("number"))) {
                found.append("\(path): \(value) is \(actual), not \(types.joined(separator: " or "))")
                return found
            }
        }
        if case .number = value, let x = value.double {
            if let low = schema["minimum"]?.double, x < low { found.append("\(path): \(x) < minimum \(low)") }
            if let high = schema["maximum"]?.double, x > high { found.append("\(path): \(x) > maximum \(high)") }
            if let low = schema["exclusiveMinimum"]?.double, x <= low { found.append("\(path): \(x) ≤ exclusive minimum \(low)") }
        }
        if case .string(let s) = value, let pattern = schema["pattern"]?.string, s.range(of: pattern, options: .regularExpression) == nil {
            found.append("\(path): \(s) does not match \(pattern)")
        }
        if case .array(let elements) = value, let items = schema["items"] {
            for (k, element) in elements.enumerated() { found += problems(element, items, at: "\(path)/\(k)") }
        }
        if case .object(let members) = value {
            let properties = schema["properties"]
            for required in schema["required"]?.array?.compactMap(\.string) ?? [] where value[required] == nil {
                found.append("\(path): lacks required \(required)")
            }
            // unevaluatedProperties: false closes a schema built with allOf, whose branches declare its properties.
            let evaluated: Set<String>? = schema["unevaluatedProperties"] == TestJSON.bool(false) ? declared(schema) : nil
            for (key, member) in members {
                if let property = properties?[key] {
                    found += problems(member, property, at: "\(path)/\(key)")
                } else if let additional = schema["additionalProperties"] {
                    if additional == .bool(false) {
                        found.append("\(path): \(key) is not in the schema")
                    } else if case .object = additional {
                        found += problems(member, additional, at: "\(path)/\(key)")
                    }
                } else if let evaluated, !evaluated.contains(key) {
                    found.append("\(path): \(key) is not in the schema")
                }
            }
        }
        return found
    }

    /// The schema of `path`'s `method` response with `status` and its media type.
    static func responseSchema(_ path: String, _ method: String, _ status: Int) -> (TestJSON, String)? {
        guard var response = document["paths"]?[path]?[method]?["responses"]?[String(status)] else { return nil }
        if let ref = response["$ref"]?.string { response = resolve(ref) }
        guard case .object(let media) = response["content"], let (type, content) = media.first else { return nil }
        return (content["schema"]!, type)
    }

    /// Sends the request and checks its status is documented and its body matches the documented schema.
    static func check(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ path: String, _ body: String? = nil,
        headers: HTTPFields = [:], expect status: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestJSON {
        let response = try await client.execute(uri: path, method: method, headers: headers, body: body.map(Fixtures.body))
        #expect(response.status.code == status, "\(method) \(path) \(body ?? "")", sourceLocation: sourceLocation)
        let (schema, mediaType) = try #require(
            responseSchema(path, method.rawValue.lowercased(), response.status.code),
            "\(method) \(path): status \(response.status.code) is not documented", sourceLocation: sourceLocation)
        #expect(response.headers[.contentType]?.hasPrefix(mediaType) == true, sourceLocation: sourceLocation)
        #expect(response.headers[HTTPField.Name("X-Bank-Version")!] != nil, sourceLocation: sourceLocation)
        guard mediaType.hasSuffix("json") else { return .null }
        let json = try TestJSON.parse(response.body)
        let found = problems(json, schema)
        #expect(
            found.isEmpty, "\(method) \(path) → \(response.status.code):\n\(found.joined(separator: "\n"))\n\(json)", sourceLocation: sourceLocation)
        return json
    }

    @Test("real responses of every endpoint, successes and problems, match the document's schemas")
    func responses() async throws {
        let good = Fixtures.scoreBody(id: "s", items: ["i0001", "i0002", "i0003"], responses: [1, 0, 1])
        try await Fixtures.application(try Fixtures.service()).test(.router) { client in
            _ = try await Self.check(client, .post, "/v1/score", good, expect: 200)
            _ = try await Self.check(
                client, .post, "/v1/score", Fixtures.scoreBody(id: nil, items: ["i0001"], responses: [1], method: "ml"), expect: 200)
            _ = try await Self.check(client, .post, "/v1/score", "{", expect: 400)
            _ = try await Self.check(client, .post, "/v1/score", #"{"item_ids": ["x"], "responses": [1]}"#, expect: 422)
            _ = try await Self.check(
                client, .post, "/v1/score/batch", #"{"sessions": [\#(good), {"item_ids": ["x"], "responses": [1]}]}"#, expect: 200)
            _ = try await Self.check(client, .post, "/v1/score/batch", #"{"sessions": {}}"#, expect: 422)
            var history: [(String, Int)] = []
            while true {
                let json = try await Self.check(client, .post, "/v1/cat/next", CATNextTests.body("doc", history), expect: 200)
                guard let item = json["item_id"]?.string else { break }
                history.append((item, 1))
            }
            _ = try await Self.check(client, .post, "/v1/cat/next", #"{"session_id": 1.5, "administered": []}"#, expect: 422)
            _ = try await Self.check(client, .post, "/v1/forms", #"{"seed": 3}"#, expect: 200)
            _ = try await Self.check(client, .post, "/v1/forms", #"{"blueprint": {"length": 500}}"#, expect: 422)
            _ = try await Self.check(client, .get, "/v1/bank", expect: 200)
            _ = try await Self.check(client, .get, "/healthz", expect: 200)
            _ = try await Self.check(client, .get, "/metrics", expect: 200)
            _ = try await Self.check(client, .get, "/openapi.json", expect: 200)
            _ = try await Self.check(client, .get, "/livez", expect: 200)
            _ = try await Self.check(client, .get, "/readyz", expect: 200)
            _ = try await Self.check(client, .post, "/v1/admin/reload", expect: 401)
        }
        // Tokens, the rate limit and the drain: 401, 403, 429, 503.
        var limited = ServerLimits()
        limited.rateLimit = 0.01
        let guarded = try Fixtures.service(limits: limited, scoringToken: true)
        try await Fixtures.application(guarded).test(.router) { client in
            _ = try await Self.check(client, .post, "/v1/score", good, expect: 401)
            _ = try await Self.check(client, .post, "/v1/admin/reload", headers: Fixtures.scoringHeaders, expect: 403)
            _ = try await Self.check(client, .post, "/v1/score", good, headers: Fixtures.scoringHeaders, expect: 200)
            _ = try await Self.check(client, .post, "/v1/score", good, headers: Fixtures.scoringHeaders, expect: 429)
            guarded.beginDraining()
            _ = try await Self.check(client, .get, "/readyz", expect: 503)
        }
        var limits = ServerLimits()
        limits.maxBodyBytes = 1024
        try await Fixtures.application(try Fixtures.service(limits: limits)).test(.router) { client in
            _ = try await Self.check(client, .post, "/v1/score", String(repeating: " ", count: 2000) + "{}", expect: 413)
        }
        try await Fixtures.application(try Fixtures.service()).test(.live) { client in
            _ = try await Self.check(client, .post, "/v1/admin/reload", headers: Fixtures.adminHeaders, expect: 200)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-openapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("item_id,a,b,status\ni1,1.2,0,active\ni2,1.0,0.5,pretest\n".utf8).write(to: dir.appendingPathComponent("bank.csv"))
        try await Fixtures.application(try Fixtures.service(in: dir, cat: false, blueprint: false)).test(.router) { client in
            let json = try await Self.check(
                client, .post, "/v1/score", Fixtures.scoreBody(id: "u", items: ["i1", "i2"], responses: [1, 0]), expect: 200)
            #expect(json["n_unscored"]?.int == 1)
            // A bank without domains is one domain: adaptive tests are served; forms need a blueprint.
            _ = try await Self.check(client, .post, "/v1/cat/next", #"{"session_id": "s", "administered": []}"#, expect: 200)
            _ = try await Self.check(client, .post, "/v1/forms", "{}", expect: 422)
        }
    }
}
