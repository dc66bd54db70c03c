import Assembly
import PsychometricsIO
import Foundation
import Psychometrics
import Testing

@Suite("Blueprint: hostile values are errors, never traps")
struct BlueprintTests {
    /// The error decoding blueprint JSON `text` gives, or nil when it is valid.
    static func message(_ text: String) -> String? {
        do { _ = try Blueprint.decode(Data(text.utf8), file: "bp.json"); return nil } catch { return "\(error)" }
    }

    @Test("domain weights whose sum overflows are an error (they used to trap converting NaN to Int)")
    func weightOverflow() {
        #expect(
            Self.message(#"{"length": 25, "domain_weights": {"a": 1e308, "b": 1e308}}"#)
                == "bp.json: error: domain_weights must be non-negative numbers with a positive, finite sum")
        // Large but summable weights resolve like small ones.
        var blueprint = Blueprint(length: 25, domainWeights: ["a": 1e307, "b": 1e307])
        #expect(blueprint.resolvedDomainCounts() == ["a": 13, "b": 12] || blueprint.resolvedDomainCounts() == ["a": 12, "b": 13])
        blueprint.domainWeights = ["a": 2, "b": 1]
        #expect(blueprint.resolvedDomainCounts() == ["a": 17, "b": 8])
    }

    @Test("length, forms and counts have plausible bounds; counts are checked before they are summed")
    func bounds() {
        #expect(
            Self.message(#"{"length": 1000000000000000, "forms": 1000000000000}"#)
                == "bp.json: error: length must be 1…10000, got 1000000000000000; forms must be 1…1000, got 1000000000000")
        #expect(
            Self.message(#"{"length": 10, "domain_counts": {"a": 9223372036854775807, "b": 9223372036854775807}}"#)
                == #"bp.json: error: domain_counts for "a" must be 0…10, got 9223372036854775807; domain_counts for "b" must be 0…10, got 9223372036854775807"#
        )
        #expect(
            Self.message(#"{"length": 10, "difficulty_counts": {"easy": -1, "hard": 11}, "difficulty_bands": {"easy": [-6, 0], "hard": [0, 6]}}"#)
                == #"bp.json: error: difficulty_counts for "easy" must be 0…10, got -1; difficulty_counts for "hard" must be 0…10, got 11"#)
        #expect(Self.message(#"{"length": 10, "anchors_per_domain": 1000000}"#) == "bp.json: error: anchors_per_domain must be 0…10, got 1000000")
        #expect(
            Self.message(#"{"length": 6, "enemies": [["i1", "i2"], ["i3", "i3"]]}"#)
                == "bp.json: error: enemies set 2 names 'i3' twice (a set lists distinct items, at most one of which may appear)")
        #expect(
            Self.message(#"{"length": 10, "target_information": [{"theta": 1e300, "information": -1}]}"#)
                == "bp.json: error: target_information[0].theta must be in [-10, 10], got 1e+300; target_information[0].information must be in (0, 1000000], got -1.0"
        )
    }

    @Test("unknown keys are errors at the top level and inside target_information entries")
    func unknownKeys() {
        #expect(
            Self.message(#"{"length": 10, "form": 2}"#)
                == #"bp.json:1:16: error: unknown key "form" (known: length, domain_counts, domain_weights, difficulty_counts, difficulty_bands, anchors_per_domain, exclude, enemies, target_information, max_exposure, forms, max_overlap, statuses)"#
        )
        #expect(
            Self.message(#"{"length": 10, "target_information": [{"theta": 0, "information": 5}, {"thta": 1, "information": 5}]}"#)
                == #"bp.json:1:72: error: unknown key "thta" in target_information[1] (known: theta, information)"#)
        #expect(
            Self.message(#"{"length": 10, "target_information": [{"theta": 0}]}"#)
                == #"bp.json: error: the blueprint lacks "target_information[0].information""#)
        #expect(Self.message(#"{"length": "10"}"#) == #"bp.json: error: "length" has the wrong type: expected an integer"#)
    }
}
