import Foundation

/// How a validation message names a setting.
///
/// Every range is checked once, in a library type's `validationProblems(naming:)`; the command line asks for
/// option names (`--quadrature-points`), JSON readers for keys (`quadrature_points`), library callers for words
/// (`quadrature points`), so the same check reads right whichever way the value arrived.
package enum SettingNaming: Sendable, Hashable {
    /// Words: "quadrature points".
    case words
    /// The JSON key: "quadrature_points".
    case jsonKey
    /// The command-line option: "--quadrature-points".
    case option

    /// The name of the setting whose snake_case key is `key`; `words` when the words are not just the key with
    /// spaces ("prior SD" for `prior_sd`).
    public func name(_ key: String, words: String? = nil) -> String {
        switch self {
        case .words: return words ?? key.replacingOccurrences(of: "_", with: " ")
        case .jsonKey: return key
        case .option: return "--" + key.replacingOccurrences(of: "_", with: "-")
        }
    }
}

/// An interval of allowed real values, each end open or closed. NaN and infinities are never inside (every
/// range here has finite ends), so a range check is also the finiteness check.
package struct NumberRange: Sendable, Hashable, CustomStringConvertible {
    package let lower: Double
    package let upper: Double
    package let includesLower: Bool
    package let includesUpper: Bool

    package init(lower: Double, upper: Double, includesLower: Bool = true, includesUpper: Bool = true) {
        self.lower = lower
        self.upper = upper
        self.includesLower = includesLower
        self.includesUpper = includesUpper
    }

    /// [lower, upper].
    package static func closed(_ lower: Double, _ upper: Double) -> NumberRange { NumberRange(lower: lower, upper: upper) }
    /// (lower, upper].
    package static func aboveUpTo(_ lower: Double, _ upper: Double) -> NumberRange {
        NumberRange(lower: lower, upper: upper, includesLower: false)
    }
    /// (lower, upper).
    package static func open(_ lower: Double, _ upper: Double) -> NumberRange {
        NumberRange(lower: lower, upper: upper, includesLower: false, includesUpper: false)
    }

    package func contains(_ x: Double) -> Bool {
        (includesLower ? x >= lower : x > lower) && (includesUpper ? x <= upper : x < upper)
    }

    /// "(0, 20]", "[0.01, 10]".
    package var description: String {
        (includesLower ? "[" : "(") + Self.text(lower) + ", " + Self.text(upper) + (includesUpper ? "]" : ")")
    }

    /// "0 < a ≤ 50", "0 ≤ c < 1": the range as an inequality on `symbol`.
    package func inequality(_ symbol: String) -> String {
        "\(Self.text(lower)) \(includesLower ? "≤" : "<") \(symbol) \(includesUpper ? "≤" : "<") \(Self.text(upper))"
    }

    /// "NAME must be in (0, 20], got VALUE", or nil when `value` is inside.
    package func problem(_ value: Double, _ name: String) -> String? {
        contains(value) ? nil : "\(name) must be in \(self), got \(value)"
    }

    /// A bound as written in messages: "20", "0.01", "0.9999999999".
    static func text(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : "\(x)"
    }
}

extension ClosedRange where Bound == Int {
    /// "5…401", or "at least 1" when the range has no upper end (`1...Int.max`).
    package var text: String { upperBound == Int.max ? "at least \(lowerBound)" : "\(lowerBound)…\(upperBound)" }

    /// "NAME must be 5…401, got VALUE" ("must be at least 1" without an upper end), or nil when `value` is
    /// inside.
    package func problem(_ value: Int, _ name: String) -> String? {
        contains(value) ? nil : "\(name) must be \(text), got \(value)"
    }
}

/// The cap on worker threads that any option or setting may ask for.
///
/// Every worker gets its own scratch buffers (the scorer's per-thread tables, the E-step's per-thread
/// accumulators), sized before any work starts, so `--threads 100000` once asked for ~800 GB before reading a
/// line. 256 is well above the cores of any machine this runs on, and more workers than cores only adds
/// overhead.
@usableFromInline package enum WorkerThreads {
    /// The largest thread count accepted: 256.
    @usableFromInline package static let maximum = 256
    /// 1…256.
    package static let allowed = 1...maximum

    /// Problems with a requested thread count (nil: the default, all cores, which is always allowed).
    package static func validationProblems(_ count: Int?, naming: SettingNaming = .words) -> [String] {
        guard let count else { return [] }
        return [allowed.problem(count, naming.name("threads", words: "worker threads"))].compactMap { $0 }
    }

    /// The default thread count: every core, within the cap.
    @usableFromInline package static var all: Int { min(max(1, ProcessInfo.processInfo.activeProcessorCount), maximum) }
}

/// The longest test any setting may ask for: 10,000 items (a blueprint's `length`, a CAT's `max_items`, a
/// scorer's minimum item count). Sessions and forms reserve room for the whole test up front, so an absurd
/// length is an absurd allocation; a real test has tens of items, and 10,000 is already days of testing.
package enum TestLength {
    package static let maximum = 10_000
}
