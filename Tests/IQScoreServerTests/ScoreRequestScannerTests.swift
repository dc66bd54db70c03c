@testable import IQScoreServer
import NIOCore
import Testing
import TestSupport

/// The fast path of `POST /v1/score` (`ScoreRequestScanner`) against the strict one (`StrictJSON` +
/// `RequestDecoding`): every body the scanner reads, the strict way reads to the same request; the bodies clients
/// send are read by the scanner; the rest goes the strict way.
@Suite("ScoreRequestScanner: the fast path of POST /v1/score reads what the strict path reads, or nothing")
struct ScoreRequestScannerTests {
    static let limits = ServerLimits()

    static func strict(_ text: [UInt8]) -> ScoreRequest? {
        try? RequestDecoding.scoreRequest(RequestDecoding.document(ByteBuffer(bytes: text), limits: limits))
    }

    /// The scanner's reading as the strict reader's type, item ids made strings.
    static func fast(_ text: [UInt8]) -> ScoreRequest? {
        ScoreRequestScanner.scan(ByteBuffer(bytes: text), maximumArrayLength: RequestDecoding.longestArray(limits)) { scanned, bytes in
            ScoreRequest(
                sessionID: scanned.sessionID, itemIDs: scanned.itemIDs.map { String(decoding: bytes[$0], as: UTF8.self) },
                responses: scanned.responses.map(Int.init), method: scanned.method, age: nil, seconds: scanned.seconds)
        }
    }

    static func same(_ a: ScoreRequest, _ b: ScoreRequest) -> Bool {
        a.sessionID == b.sessionID && a.itemIDs == b.itemIDs && a.responses == b.responses && a.method == b.method && a.age == b.age
            && a.seconds?.map(\.bitPattern) == b.seconds?.map(\.bitPattern)
    }

    /// A valid body as clients write it: keys in any order, optional members present or not (or null), white
    /// space between tokens.
    static func body(_ rng: inout SplitMix64) -> String {
        let space = ["", " ", "\n", "\t ", "\r\n  "]
        func ws() -> String { space.randomElement(using: &rng)! }
        let n = Int.random(in: 0...30, using: &rng)
        let ids = (0..<n).map { _ in "\"i\(String(Int.random(in: 1...1500, using: &rng)).leftPadded(4))\"" }
        let responses = (0..<n).map { _ in Bool.random(using: &rng) ? "1" : "0" }
        var members = [
            "\"item_ids\"\(ws()):\(ws())[\(ws())\(ids.joined(separator: ws() + "," + ws()))\(ws())]",
            "\"responses\"\(ws()):\(ws())[\(responses.joined(separator: ws() + "," + ws()))]"
        ]
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: members.append("\"session_id\":\(ws())\"s-\(Int.random(in: 0...99_999, using: &rng))\"")
        case 1: members.append("\"session_id\": null")
        default: break
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: members.append("\"method\": \"\(["eap", "map", "mle", "wle"].randomElement(using: &rng)!)\"")
        case 1: members.append("\"method\":null")
        default: break
        }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0:
            // Response times as apps write them: whole seconds, milliseconds, nulls.
            let times = (0..<n).map { _ in
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: "null"
                case 1: String(Int.random(in: 1...600, using: &rng))
                case 2: "0.\(Int.random(in: 100...999, using: &rng))"
                default: "\(Int.random(in: 1...120, using: &rng)).\(Int.random(in: 0...999, using: &rng))"
                }
            }
            members.append("\"seconds\"\(ws()):\(ws())[\(times.joined(separator: ws() + "," + ws()))]")
        case 1: members.append("\"seconds\": null")
        default: break
        }
        members.shuffle(using: &rng)
        return ws() + "{" + ws() + members.joined(separator: ws() + "," + ws()) + ws() + "}" + ws()
    }

    @Test("valid bodies: the scanner reads every one, to the strict reader's request")
    func validBodies() {
        var rng = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        for _ in 0..<2_000 {
            let text = Array(Self.body(&rng).utf8)
            guard let strict = Self.strict(text) else { Issue.record("the strict reader refused \(String(decoding: text, as: UTF8.self))"); continue }
            guard let fast = Self.fast(text) else { Issue.record("the scanner gave up on \(String(decoding: text, as: UTF8.self))"); continue }
            #expect(Self.same(fast, strict), "\(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test("mutated bodies: whatever the scanner reads, the strict reader reads the same; it gives up on the rest")
    func mutatedBodies() {
        var rng = SplitMix64(seed: 0xD1B5_4A32_D192_ED03)
        let alphabet: [UInt8] = Array("\"\\,:[]{}012.eE-+ \n\tnulltruefalsex".utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xEF, 0xBB, 0xBF]
        var read = 0, refusedByBoth = 0
        for _ in 0..<20_000 {
            var text = Array(Self.body(&rng).utf8)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let at = Int.random(in: 0...text.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: text.insert(alphabet.randomElement(using: &rng)!, at: at)
                case 1: if at < text.count { text.remove(at: at) }
                default: if at < text.count { text[at] = alphabet.randomElement(using: &rng)! }
                }
            }
            let strict = Self.strict(text)
            if let fast = Self.fast(text) {
                read += 1
                guard let strict else {
                    Issue.record("the scanner read what the strict reader refuses: \(String(decoding: text, as: UTF8.self))"); continue
                }
                #expect(Self.same(fast, strict), "\(String(decoding: text, as: UTF8.self))")
            } else if strict == nil {
                refusedByBoth += 1
            }
        }
        // Both outcomes occur often, so the comparison above is not vacuous.
        #expect(read > 2_000 && refusedByBoth > 2_000, "read \(read), refused by both \(refusedByBoth)")
    }

    @Test("bodies outside the subset go the strict way: an age, escapes, non-ASCII, 1.0, a repeated key, a byte-order mark, an over-long array")
    func outsideTheSubset() {
        let bodies = [
            #"{"item_ids": ["i0001"], "responses": [1], "age": 30}"#,
            #"{"item_ids": ["i\u0030001"], "responses": [1]}"#,
            #"{"session_id": "é", "item_ids": ["i0001"], "responses": [1]}"#,
            #"{"item_ids": ["i0001"], "responses": [1.0]}"#,
            #"{"item_ids": ["i0001"], "responses": [10]}"#,
            #"{"item_ids": ["i0001"], "item_ids": ["i0001"], "responses": [1]}"#,
            "\u{FEFF}{\"item_ids\": [\"i0001\"], \"responses\": [1]}",
            #"{"item_ids": ["i0001"], "responses": [1], "extra": 1}"#,
            #"{"item_ids": ["i0001"], "responses": [true]}"#,
            #"{"item_ids": ["i0001"]}"#,
            "{\"item_ids\": [\(Array(repeating: "\"i\"", count: RequestDecoding.longestArray(Self.limits) + 1).joined(separator: ","))], \"responses\": []}"
        ]
        for body in bodies { #expect(Self.fast(Array(body.utf8)) == nil, "\(body.prefix(80))") }
        // Times outside the plain subset or the allowed range: the strict way reads 1e1 and refuses the rest.
        for times in ["[1e1]", "[01]", "[1.]", "[-1]", "[0]", "[0.0001]", "[100000]", "[\"3\"]", "[true]"] {
            let body = #"{"item_ids": ["i0001"], "responses": [1], "seconds": "# + times + "}"
            #expect(Self.fast(Array(body.utf8)) == nil, "\(body)")
            #expect((Self.strict(Array(body.utf8)) != nil) == (times == "[1e1]"), "\(body)")
        }
        #expect(Self.fast(Array(#"{"item_ids": ["i0001", "i0002"], "responses": [1, 0], "seconds": [0.5, null]}"#.utf8))?.seconds?.first == 0.5)
        // The strict reader still reads the valid ones (the age, the escape, the é, the byte-order mark).
        #expect(Self.strict(Array(bodies[0].utf8))?.age == 30)
        #expect(Self.strict(Array(bodies[1].utf8))?.itemIDs == ["i0001"])
        #expect(Self.strict(Array(bodies[2].utf8))?.sessionID == "é")
        #expect(Self.strict(Array(bodies[6].utf8))?.itemIDs == ["i0001"])
    }
}

/// The fast path of the service (`ScoringService.plainScoreMembers`: the scanner, item ids looked up from the
/// body's bytes) against `scoreMembers` on the strict reader's request: the same bytes, or nil where the strict
/// way refuses.
@Suite("ScoringService.plainScoreMembers answers as scoreMembers does, or leaves the body to it")
struct PlainScoreMembersTests {
    @Test("bank sessions (valid, with unknown and repeated items, wrong methods, mutations): same members or nil")
    func sameMembers() throws {
        let service = try Fixtures.service()
        let state = service.state
        let ids = state.bank.items.map(\.itemID)
        var rng = SplitMix64(seed: 0x2545_F491_4F6C_DD1D)
        var fast = 0, strictOnly = 0, refused = 0
        for round in 0..<3_000 {
            let n = Int.random(in: 0...min(ids.count + 2, 70), using: &rng)
            var items = Array(ids.shuffled(using: &rng).prefix(n))
            if round % 7 == 0, !items.isEmpty { items[Int.random(in: 0..<items.count, using: &rng)] = "no-such-item" }
            if round % 11 == 0, items.count > 1 { items[1] = items[0] }
            var responses = items.map { _ in Int.random(in: 0...1, using: &rng) }
            if round % 13 == 0 { responses.append(1) }
            let method: String? = [nil, "eap", "map", "mle", "wle", "nope"][Int.random(in: 0..<6, using: &rng)]
            var text = Array(Fixtures.scoreBody(id: round % 3 == 0 ? nil : "s\(round)", items: items, responses: responses, method: method).utf8)
            if round % 5 == 0, !text.isEmpty { text[Int.random(in: 0..<text.count, using: &rng)] = Array(",]0 1\"".utf8).randomElement(using: &rng)! }
            let body = ByteBuffer(bytes: text)
            let strict = try? service.scoreMembers(
                RequestDecoding.scoreRequest(RequestDecoding.document(body, limits: service.limits)), state, at: "")
            if let plain = try service.plainScoreMembers(state, body) {
                fast += 1
                #expect(plain == strict, "\(String(decoding: text, as: UTF8.self).prefix(200))")
            } else if strict == nil {
                refused += 1
            } else {
                strictOnly += 1
            }
        }
        // The fast way takes most valid sessions (all but those over 64 items); both outcomes are exercised.
        #expect(fast > 1_000 && refused > 500, "fast \(fast), refused by both \(refused), strict only \(strictOnly)")
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
