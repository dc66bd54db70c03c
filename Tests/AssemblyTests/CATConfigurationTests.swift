import Assembly
import PsychometricsIO
import Foundation
import Psychometrics
import Testing

@Suite("CAT configuration: plausible bounds on every rule")
struct CATConfigurationBoundsTests {
    static func message(_ text: String) -> String? {
        do { _ = try CATConfiguration.decode(Data(text.utf8), file: "cat.json"); return nil } catch { return "\(error)" }
    }

    @Test("priors, SE target and quadrature far outside their ranges")
    func abilityRules() {
        #expect(
            Self.message(#"{"max_items": 25, "prior_mean": 1e300, "prior_sd": 1e300, "se_target": 1e-300, "quadrature_points": 100000000}"#)
                == "cat.json: error: prior_sd must be in [0.01, 100], got 1e+300; prior_mean must be in [-10, 10], got 1e+300; quadrature_points must be 5…401, got 100000000"
        )
        #expect(Self.message(#"{"max_items": 25, "se_target": 11}"#) == "cat.json: error: se_target must be in (0, 10], got 11.0")
    }

    @Test("sizes that allocate: max_items, calibration simulees and rounds")
    func allocations() {
        #expect(Self.message(#"{"max_items": 1000000000000000}"#) == "cat.json: error: max_items must be 1…10000, got 1000000000000000")
        #expect(
            Self.message(#"{"max_items": 25, "exposure_calibration_simulees": 1000000000000, "exposure_calibration_iterations": 1000000}"#)
                == "cat.json: error: exposure_calibration_simulees must be 100…1000000, got 1000000000000; exposure_calibration_iterations must be 1…1000, got 1000000"
        )
        #expect(Self.message(#"{"max_items": 25, "randomesque": 1000}"#) == "cat.json: error: randomesque must be 1…100, got 1000")
    }

    @Test("per-domain minima that would overflow a sum are errors, alone and on a bank")
    func minimaOverflow() throws {
        #expect(
            Self.message(#"{"max_items": 10, "min_per_domain": {"a": 9223372036854775807, "b": 9223372036854775807}}"#)
                == "cat.json: error: min_per_domain sums to more than 9223372036854775807, more than max_items (10)")
        #expect(
            Self.message(#"{"max_items": 10, "min_per_domain": 9223372036854775807}"#)
                == "cat.json: error: min_per_domain must be 0…10, got 9223372036854775807")
        // Bank checks saturate too (they run beside the configuration's own checks).
        let config = CATConfiguration(maxItems: 5, minPerDomain: .all(Int.max))
        let bank = AssemblyBank(items: ["a", "b", "c"].map { AssemblyItem(id: "i\($0)", domain: $0, parameters: ItemParameters(difficulty: 0)) })
        #expect(config.validationProblems(for: bank).last == "min_per_domain needs 9223372036854775807 items over 3 domains, more than max_items (5)")
        #expect(throws: AssemblyError.self) { try CATItemPool(bank: bank, configuration: config) }
    }

    @Test("a fraction or a huge number where a whole number belongs names the key (JSONDecoder says only \"not valid JSON\")")
    func wholeNumbers() {
        #expect(Self.message(#"{"max_items": 2.5}"#) == #"cat.json:1:15: error: "max_items" must be a whole number, got 2.5"#)
        #expect(
            Self.message(#"{"max_items": 10, "min_per_domain": {"a": 1e20}}"#)
                == #"cat.json:1:43: error: "min_per_domain.a" is too large for a whole number (at most 9223372036854775807), got 1e20"#)
        #expect(Self.message(#"{"max_items": 25.0}"#) == nil)
    }

    @Test("domain weights whose sum overflows")
    func weights() {
        #expect(
            Self.message(#"{"max_items": 10, "domain_weights": {"a": 1e308, "b": 1e308}}"#)
                == "cat.json: error: domain_weights must be non-negative numbers with a positive, finite sum")
    }

    @Test("the simulation study's settings")
    func study() {
        var options = CATSimulation.Options(simulees: 0, seed: 1)
        options.thetaMean = .nan
        options.thetaSD = 1e300
        options.threads = 100_000
        #expect(
            options.validationProblems(naming: .option) == [
                "--simulees must be 1…1000000, got 0", "--theta-mean must be in [-10, 10], got nan",
                "--theta-sd must be in (0, 10], got 1e+300", "--threads must be 1…256, got 100000"
            ])
    }
}

@Suite("CATConfiguration: an exposure target the bank cannot meet is found before any simulation")
struct CATExposureFeasibilityTests {
    @Test("fixed length: L/N is the mean exposure, so r_max < L/N is refused with the numbers")
    func fixedLength() {
        var c = CATConfiguration(maxItems: 10)
        c.minItems = 10
        #expect(
            c.exposureProblems(activeItems: 16, activeByDomain: [:]) == [
                "exposure_target 0.25 cannot be met: every test gives max_items = 10 items, so the exposure rates of the 16 active items sum to 10 per test and average 0.625; meeting 0.25 needs at least 40 active items (or exposure_target ≥ 0.625, or fewer items per test)"
            ])
        // Exactly L/N is feasible (40 items × 0.25 = 10), one item fewer is not.
        #expect(c.exposureProblems(activeItems: 40, activeByDomain: [:]).isEmpty)
        #expect(c.exposureProblems(activeItems: 39, activeByDomain: [:]).count == 1)
        // No exposure control: nothing to meet.
        c.exposureTarget = nil
        #expect(c.exposureProblems(activeItems: 16, activeByDomain: [:]).isEmpty)
    }

    @Test("variable length uses min_items; a bank smaller than the test caps the length; domain minima by domain")
    func variableAndDomains() {
        var c = CATConfiguration(maxItems: 30)
        c.minItems = 5
        c.seTarget = 0.3
        c.exposureTarget = 0.2
        #expect(c.exposureProblems(activeItems: 25, activeByDomain: [:]).isEmpty)
        #expect(
            c.exposureProblems(activeItems: 24, activeByDomain: [:]).first?.hasPrefix(
                "exposure_target 0.2 cannot be met: every test gives at least min_items = 5 items") == true)
        // A 12-item bank and 30-item tests: every test takes all 12 items, exposure 1 for each.
        c.seTarget = nil
        #expect(
            c.exposureProblems(activeItems: 12, activeByDomain: [:]).first?.contains("average 1; meeting 0.2 needs at least 60 active items") == true)
        c.maxItems = 5
        c.minPerDomain = .perDomain(["logic": 3, "math": 1])
        #expect(
            c.exposureProblems(activeItems: 100, activeByDomain: ["logic": 10, "math": 5]) == [
                "exposure_target 0.2 cannot be met in domain logic: min_per_domain gives every test 3 of its 10 active items, an average exposure of 0.3; it needs at least 15 active logic items"
            ])
    }

    /// A bank of `n` 2PL items in one domain.
    static func bank(_ n: Int) -> AssemblyBank {
        AssemblyBank(
            items: (0..<n).map {
                AssemblyItem(id: "q\($0)", domain: "all", parameters: ItemParameters(discrimination: 1.2, difficulty: Double($0 % 7) - 3))
            })
    }

    @Test(
        "the default target works on any bank (issue 26, item 12): raised to L/N + margin, off when every item is in every test; explicit targets are refused as before"
    )
    func defaultAdapts() throws {
        // The README's snippet on a 16-item bank threw "exposure_target 0.25 cannot be met".
        let small = try CATItemPool(bank: Self.bank(16), configuration: CATConfiguration(maxItems: 25))
        #expect(small.configuration.exposureTarget == nil)
        #expect(
            small.exposureTargetNote
                == "exposure control off: the default exposure_target 0.25 cannot be met, every test gives 16 of the bank's 16 active items (mean exposure 1); set exposure_target to choose"
        )
        let middle = try CATItemPool(bank: Self.bank(40), configuration: CATConfiguration(maxItems: 25))
        #expect(middle.configuration.exposureTarget == 0.65) // 25/40 + 0.02, rounded up to 0.01
        #expect(middle.exposureTargetNote?.hasPrefix("exposure_target raised from the default 0.25 to 0.65") == true)
        // A bank large enough keeps 0.25, untouched and without a note.
        let large = try CATItemPool(bank: Self.bank(100), configuration: CATConfiguration(maxItems: 25))
        #expect(large.configuration.exposureTarget == 0.25 && large.exposureTargetNote == nil)
        // Explicit choices stand: the same 0.25 given by the caller or the JSON is refused on 40 items.
        #expect(throws: AssemblyError.self) {
            try CATItemPool(bank: Self.bank(40), configuration: CATConfiguration(maxItems: 25, exposureTarget: 0.25))
        }
        var set = CATConfiguration(maxItems: 25)
        set.exposureTarget = 0.25
        #expect(throws: AssemblyError.self) { try CATItemPool(bank: Self.bank(40), configuration: set) }
        let fromJSON = try CATConfiguration.decode(Data(#"{"max_items": 25, "exposure_target": 0.25}"#.utf8), file: "cat.json")
        #expect(throws: AssemblyError.self) { try CATItemPool(bank: Self.bank(40), configuration: fromJSON) }
        let absent = try CATConfiguration.decode(Data(#"{"max_items": 25}"#.utf8), file: "cat.json")
        #expect(try CATItemPool(bank: Self.bank(40), configuration: absent).configuration.exposureTarget == 0.65)
    }
}
