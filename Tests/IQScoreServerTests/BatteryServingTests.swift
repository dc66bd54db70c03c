import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IQScoreServer
import Psychometrics
import PsychometricsIO
import Testing

/// `iqscore serve` on a bifactor bank (issue 28): scores carry the battery's indexes, with the library's numbers
/// and the OpenAPI document's schemas; EAP only; adaptive steps and forms on the general-factor marginal items.
@Suite("iqscore serve with a bifactor bank", .timeLimit(.minutes(2)))
struct BatteryServingTests {
    /// The shared 2PL bank as a bifactor bank: each item's slope on the general factor and 0.9 on its domain's.
    static func batteryDirectory() throws -> URL {
        let directory = try Fixtures.copyOfData()
        let bank = try ItemBank.load(csv: directory.appendingPathComponent("bank.csv").path)
        var lines = ["item_id,a_general,a_a,a_b,a_c,d,c,domain"]
        for item in bank.items {
            let domain = item.metadata["domain"]!, p = item.parameters
            let slopes = ["a", "b", "c"].map { $0 == domain ? "0.9" : "0" }
            lines.append(([item.itemID, String(p.discrimination)] + slopes + [String(p.intercept), "0", domain]).joined(separator: ","))
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: directory.appendingPathComponent("battery.csv"))
        return directory
    }

    static func service(_ directory: URL, indexes: IndexReporting = .all, method: AbilityMethod = .eap, indexNorms: [String: String] = [:]) throws
        -> ScoringService
    {
        var configuration = ServerConfiguration(
            bankPath: directory.appendingPathComponent("battery.csv").path,
            catConfigurationPath: directory.appendingPathComponent("cat.json").path,
            blueprintPath: directory.appendingPathComponent("blueprint.json").path,
            ability: AbilityOptions(method: method))
        configuration.exposureControl = false
        configuration.indexes = indexes
        configuration.batteryQuadraturePoints = 15
        configuration.indexNormsPaths = indexNorms
        return try ScoringService(configuration: configuration, limits: ServerLimits(), instance: "test-instance", logger: Fixtures.quietLogger)
    }

    @Test("scores are SessionScorer's on the battery, with every index; the bank says bifactor; EAP and MAP, another method is a 422")
    func score() async throws {
        let directory = try Self.batteryDirectory()
        let service = try Self.service(directory)
        let file = try BifactorBank.load(csv: directory.appendingPathComponent("battery.csv").path)
        let battery = try Battery(items: file.items, structure: file.structure, quadraturePoints: 15)
        let scorer = try SessionScorer(battery: battery, bank: file.scoringBank, scale: IQScale())
        try await Fixtures.application(service).test(.router) { client in
            let info = try await OpenAPIDocumentTests.check(client, .get, "/v1/bank", expect: 200)
            #expect(info["model"]?.string == "bifactor" && info["factors"]?["specific"]?.array?.compactMap(\.string) == ["a", "b", "c"])
            #expect(info["indexes"]?.array?.compactMap(\.string) == ["a", "b", "c"])
            let items = ["i0001", "i0002", "i0003", "i0041", "i0042"], responses = [1, 0, 1, 1, 1]
            let json = try await OpenAPIDocumentTests.check(
                client, .post, "/v1/score", Fixtures.scoreBody(id: "b", items: items, responses: responses), expect: 200)
            let expected = try scorer.score(itemIDs: items, responses: responses)
            func rounded(_ x: Double) -> Double { (x * 10_000).rounded(.toNearestOrAwayFromZero) / 10_000 }
            #expect(json["theta"]?.double == rounded(expected.estimate.theta) && json["iq"]?.int == expected.score.iq)
            for index in expected.indexes {
                #expect(json["indexes"]?[index.factor]?["theta"]?.double == rounded(index.theta), "\(index.factor)")
                #expect(json["indexes"]?[index.factor]?["iq"]?.int == index.score.iq)
                #expect(json["indexes"]?[index.factor]?["answered"]?.int == index.answered)
            }
            _ = try await OpenAPIDocumentTests.check(
                client, .post, "/v1/score/batch",
                #"{"sessions": [\#(Fixtures.scoreBody(id: "x", items: items, responses: responses))]}"#, expect: 200)
            try await ProblemTests.expectProblem(
                client, "/v1/score", Fixtures.scoreBody(id: "m", items: items, responses: responses, method: "wle"),
                status: .unprocessableContent, kind: "invalid-request", field: "/method",
                detail: "the bank is a battery (bifactor), scored by EAP or MAP; got method 'wle'")
            // MAP as the library gives it.
            let map = try await OpenAPIDocumentTests.check(
                client, .post, "/v1/score", Fixtures.scoreBody(id: "p", items: items, responses: responses, method: "map"), expect: 200)
            let modal = try SessionScorer(battery: battery, bank: file.scoringBank, ability: AbilityOptions(method: .map), scale: IQScale())
                .score(itemIDs: items, responses: responses)
            #expect(map["method"]?.string == "map" && map["theta"]?.double == rounded(modal.estimate.theta))
            // Adaptive steps run on the general-factor marginal items.
            var history: [(String, Int)] = []
            for _ in 0..<8 {
                let step = try await OpenAPIDocumentTests.check(client, .post, "/v1/cat/next", CATNextTests.body("bat", history), expect: 200)
                guard let item = step["item_id"]?.string else { break }
                history.append((item, history.count % 2))
            }
            #expect(history.count >= 6)
            _ = try await OpenAPIDocumentTests.check(client, .post, "/v1/forms", #"{"seed": 3}"#, expect: 200)
        }
    }

    @Test("a battery that cannot be served as configured is refused at load, naming the bank")
    func refusals() throws {
        let directory = try Self.batteryDirectory()
        #expect { try Self.service(directory, method: .ml) } throws: {
            "\($0)".contains(
                "a multidimensional (battery) bank is scored by EAP or MAP with the model's factor distribution; the configuration asks for method ml"
            )
        }
        #expect { try Self.service(directory, indexes: .named(["memory"])) } throws: {
            "\($0)".contains("the configured indexes: no index \"memory\"")
        }
        // Only the indexes that add value, by default.
        let service = try Self.service(directory, indexes: .addingValue)
        #expect(service.state.battery?.reportedNames == service.state.indexAddedValue.filter(\.hasAddedValue).map(\.factor))
    }

    @Test(
        "a correlated-factors bank: the bank says correlated with the composite as the full-scale factor, scores are SessionScorer's on the battery")
    func correlated() async throws {
        let directory = try Fixtures.copyOfData()
        let bank = try ItemBank.load(csv: directory.appendingPathComponent("bank.csv").path)
        var lines = ["item_id,model,a_a,a_b,a_c,d,c,factor,r_a,r_b,r_c,domain"]
        let rows = ["a": "1,0.5,0.4", "b": "0.5,1,0.6", "c": "0.4,0.6,1"]
        for item in bank.items {
            let domain = item.metadata["domain"]!, p = item.parameters
            let slopes = ["a", "b", "c"].map { $0 == domain ? String(p.discrimination) : "0" }
            lines.append(([item.itemID, "2pl"] + slopes + [String(p.intercept), "0", domain, rows[domain]!, domain]).joined(separator: ","))
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: directory.appendingPathComponent("battery.csv"))
        let service = try Self.service(directory)
        let file = try BatteryBank.load(csv: directory.appendingPathComponent("battery.csv").path, quadraturePoints: 15, bound: 6)
        let scorer = try SessionScorer(battery: file.battery, bank: file.bank, scale: IQScale())
        try await Fixtures.application(service).test(.router) { client in
            let info = try await OpenAPIDocumentTests.check(client, .get, "/v1/bank", expect: 200)
            #expect(info["model"]?.string == "correlated" && info["factors"]?["general"]?.string == "full_scale")
            #expect(info["factors"]?["specific"]?.array?.compactMap(\.string) == ["a", "b", "c"])
            let items = ["i0001", "i0002", "i0003", "i0041", "i0042"], responses = [1, 0, 1, 1, 1]
            let json = try await OpenAPIDocumentTests.check(
                client, .post, "/v1/score", Fixtures.scoreBody(id: "c", items: items, responses: responses), expect: 200)
            let expected = try scorer.score(itemIDs: items, responses: responses)
            func rounded(_ x: Double) -> Double { (x * 10_000).rounded(.toNearestOrAwayFromZero) / 10_000 }
            #expect(json["theta"]?.double == rounded(expected.estimate.theta) && json["iq"]?.int == expected.score.iq)
            #expect(expected.indexes.count == 3)
            for index in expected.indexes {
                #expect(json["indexes"]?[index.factor]?["theta"]?.double == rounded(index.theta), "\(index.factor)")
                #expect(json["indexes"]?[index.factor]?["iq"]?.int == index.score.iq)
            }
        }
        // Index norms: index b on its own linear norms, the others and the full scale as before.
        let normsPath = directory.appendingPathComponent("b.json").path
        try Data(#"{"name": "b-norms", "version": "2", "mean": 0.4, "sd": 1.5}"#.utf8).write(to: URL(fileURLWithPath: normsPath))
        let normed = try Self.service(directory, indexNorms: ["b": normsPath])
        #expect { try Self.service(directory, indexNorms: ["memory": normsPath]) } throws: {
            "\($0)".contains("index norms are configured for memory, which is not a reported index (reported: a, b, c)")
        }
        try await Fixtures.application(normed).test(.router) { client in
            let items = ["i0001", "i0002", "i0003", "i0041", "i0042"], responses = [1, 0, 1, 1, 1]
            let json = try await OpenAPIDocumentTests.check(
                client, .post, "/v1/score", Fixtures.scoreBody(id: "c", items: items, responses: responses), expect: 200)
            let expected = try scorer.score(itemIDs: items, responses: responses)
            #expect(json["iq"]?.int == expected.score.iq)
            for index in expected.indexes {
                let iq = json["indexes"]?[index.factor]?["iq"]?.int
                if index.factor == "b" {
                    #expect(
                        iq == Int((100 + 15 * (index.theta - 0.4) / 1.5).rounded(.toNearestOrAwayFromZero)),
                        "b: θ \(index.theta), IQ \(String(describing: iq))")
                } else {
                    #expect(iq == index.score.iq, "\(index.factor)")
                }
            }
        }
    }
}
