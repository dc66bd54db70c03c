import Psychometrics
import PsychometricsIO

/// Bearer tokens (RFC 6750) and what each may do: `scoring` (`/v1/score`, `/v1/score/batch`, `/v1/cat/next`,
/// `/v1/forms`, `/v1/bank`) or `admin` (those and `POST /v1/admin/reload`). The probes (`/livez`, `/readyz`,
/// `/healthz`), `/metrics` and `/openapi.json` need none.
///
/// Tokens come from a file (`iqscore serve --tokens FILE`: one `scoring TOKEN` or `admin TOKEN` a line, `#`
/// comments) and from the environment (`IQSCORE_SCORING_TOKENS`, `IQSCORE_ADMIN_TOKENS`: comma-separated). The file
/// is read again at every reload, so a token is added or revoked without a restart. Only SHA-256 digests are
/// kept; a presented token is hashed and looked up, so the lookup's timing depends on the digest, not on how much
/// of a stored token was guessed. A token is 16…512 characters of visible ASCII (RFC 6750's `b64token` and more),
/// which makes a guess hopeless at any request rate.
///
/// Without scoring tokens the API is open to whoever can connect (`iqscore serve` allows that only on a loopback
/// address, or with `--allow-anonymous`); without admin tokens, `POST /v1/admin/reload` is refused (SIGHUP still
/// reloads): a load balancer on the same host relays requests from everywhere, so the peer address proves nothing.
package struct AccessTokens: Sendable, Hashable {
    /// What a token may do.
    package enum Scope: String, Sendable, Hashable, Comparable {
        case scoring, admin
        package static func < (a: Scope, b: Scope) -> Bool { a == .scoring && b == .admin }
    }

    /// SHA-256 digest of each token, and its scope.
    private var digests: [[UInt8]: Scope] = [:]

    /// Tokens of each scope (an admin token counts once, as admin).
    package private(set) var scoringCount = 0
    package private(set) var adminCount = 0

    /// The environment variables read: comma-separated tokens of each scope.
    package static let scoringVariable = "IQSCORE_SCORING_TOKENS"
    package static let adminVariable = "IQSCORE_ADMIN_TOKENS"
    /// The lengths a token may have.
    package static let allowedLength = 16...512
    /// The most tokens a file may hold (a bound on what a reload reads).
    package static let maxTokens = 10_000

    package init() {}

    /// Whether the scoring endpoints need a token: when scoring tokens are configured (admin tokens alone only
    /// open reloading over HTTP).
    package var requiresScoringToken: Bool { scoringCount > 0 }

    /// Adds `token` with `scope`; nil when it is acceptable, else why not.
    mutating func add(_ token: Substring, _ scope: Scope) -> String? {
        guard Self.allowedLength.contains(token.utf8.count) else {
            return "a token must be \(Self.allowedLength.lowerBound)…\(Self.allowedLength.upperBound) characters; this one has \(token.utf8.count)"
        }
        guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return "a token must be visible ASCII without spaces"
        }
        let digest = SHA256.digest(Array(token.utf8))
        let previous = digests[digest]
        digests[digest] = max(previous ?? scope, scope)
        if previous == nil {
            if scope == .admin { adminCount += 1 } else { scoringCount += 1 }
        } else if previous == .scoring && scope == .admin {
            scoringCount -= 1; adminCount += 1
        }
        return nil
    }

    /// The token in an `Authorization` header's value (`Bearer TOKEN`, the scheme case-insensitive): its scope, and
    /// an id for logs and rate limits (the first 12 hexadecimal digits of its SHA-256, never the token); nil for no
    /// header, another scheme, or a token not configured.
    package func identify(authorization: String?) -> (scope: Scope, id: String)? {
        guard var header = authorization, !digests.isEmpty else { return nil }
        // "Bearer" (any case), one or more spaces, the token, optional trailing white space (RFC 6750 §2.1).
        let digest: [UInt8]? = header.withUTF8 { value in
            let scheme = "bearer".utf8
            guard value.count > scheme.count, zip(value, scheme).allSatisfy({ ($0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0) == $1 }),
                value[scheme.count] == UInt8(ascii: " ")
            else { return nil }
            var start = scheme.count, end = value.count
            while start < end, value[start] == UInt8(ascii: " ") { start += 1 }
            while end > start, value[end - 1] == UInt8(ascii: " ") || value[end - 1] == UInt8(ascii: "\t") { end -= 1 }
            guard Self.allowedLength.contains(end - start) else { return nil }
            return SHA256.digest(Array(value[start..<end]))
        }
        guard let digest, let scope = digests[digest] else { return nil }
        return (scope, BankVersion.hex(digest.prefix(6)))
    }

    /// The tokens of `path` (when given) and of the environment. A malformed line throws an `InputError` naming the
    /// file, line and column; a malformed variable, one naming it.
    package static func load(file path: String?, environment: [String: String]) throws -> AccessTokens {
        var tokens = AccessTokens()
        var errors: [InputError] = []
        for (variable, scope) in [(scoringVariable, Scope.scoring), (adminVariable, .admin)] {
            guard let value = environment[variable] else { continue }
            for (k, token) in value.split(separator: ",").map({ $0.trimmingPrefix(while: { $0 == " " }).trimmingSuffix(while: { $0 == " " }) })
                .enumerated()
            where !token.isEmpty {
                if let problem = tokens.add(token, scope) {
                    errors.append(InputError(file: "$\(variable)", message: "token \(k + 1): \(problem)"))
                }
            }
        }
        if let path {
            let bytes = try readBoundedFile(path, limit: 4 << 20, tooLarge: "a tokens file is at most 4 MiB")
            let text = String(decoding: bytes, as: UTF8.self)
            var count = 0
            // "\r\n" is one Character in Swift: both ends of line are separators.
            for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
                let content = line.trimmingPrefix(while: { $0 == " " || $0 == "\t" })
                guard !content.isEmpty, !content.hasPrefix("#") else { continue }
                let column = line.count - content.count + 1
                let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count == 2, let scope = Scope(rawValue: String(fields[0])) else {
                    errors.append(
                        InputError(
                            file: path, line: number + 1, column: column,
                            message: "a line is `scoring TOKEN` or `admin TOKEN`; this one has \(fields.count) field(s)"
                                + (fields.count == 2 ? " and begins with neither word" : "")
                                + " (its text is not repeated here: it may hold a secret)"))
                    continue
                }
                count += 1
                guard count <= maxTokens else {
                    errors.append(InputError(file: path, line: number + 1, message: "more than \(maxTokens) tokens"))
                    break
                }
                if let problem = tokens.add(fields[1], scope) {
                    let tokenColumn = column + content.distance(from: content.startIndex, to: fields[1].startIndex)
                    errors.append(InputError(file: path, line: number + 1, column: tokenColumn, message: problem))
                }
            }
        }
        if errors.count == 1 { throw errors[0] }
        if !errors.isEmpty { throw InputErrors(errors) }
        return tokens
    }
}

private extension Substring {
    func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}
