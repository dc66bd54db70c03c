import ArgumentParser
import Assembly
import Foundation
import IQScoreServer
import Logging
import Norming
import Psychometrics
import PsychometricsIO

/// `iqscore serve`: the engine over HTTP/JSON (the `IQScoreServer` library does the work).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve scoring, adaptive tests and forms over HTTP/JSON from one bank.",
        discussion: """
            Endpoints: POST /v1/score, POST /v1/score/batch, POST /v1/cat/next, POST /v1/forms, GET /v1/bank, \
            GET /livez, GET /readyz, GET /healthz, GET /metrics (Prometheus), GET /openapi.json (the OpenAPI 3.1 \
            document), and POST /v1/admin/reload (admin token only). Scores are the score command's fields with \
            the same numbers; every response carries bank_version (the first 16 hex digits of the bank file's \
            SHA-256) and the headers X-Bank-Version, X-Request-Id (the client's, or one made) and \
            X-IQScore-Instance. Errors are application/problem+json (RFC 9457) naming the field.

            Access: with --tokens FILE (lines `scoring TOKEN` / `admin TOKEN`) or $IQSCORE_SCORING_TOKENS and \
            $IQSCORE_ADMIN_TOKENS (comma-separated), the API's endpoints need Authorization: Bearer TOKEN (401 \
            without); reloading over HTTP needs an admin token and is off without one. Without scoring tokens the \
            API is open: allowed on a loopback address, elsewhere only with --allow-anonymous. TLS is the load \
            balancer's (deploy/haproxy.cfg). --rate-limit caps requests a second per token, else per address (429).

            Stateless: no session is kept between requests (an adaptive step carries the test's history and is \
            seeded from the session id and bank version), so instances behind a load balancer are \
            interchangeable. SIGHUP or POST /v1/admin/reload re-reads the bank and every configuration file; \
            a file that fails to load is refused (logged; the old bank keeps serving), and requests under way \
            finish on the bank they started with. A bank whose last record has no line end, or that differs \
            from the calibrate manifest beside it (BANK.summary.json), is refused. SIGINT/SIGTERM make \
            /readyz answer 503 for --drain-seconds while every request is still served, then stop accepting \
            connections, let requests finish within --shutdown-timeout (then close the rest), and exit 0.

            Connections are guarded: a head slower than --header-timeout or a body slower than --body-timeout \
            gets 408; a client that leaves responses unread for --send-timeout is closed; at \
            --max-connections a new connection closes the one that has waited longest without a request under way; request bodies held by all connections together stay within \
            --max-buffered-body-bytes (503 overloaded beyond it). Adaptive steps use Sympson–Hetter exposure \
            control, calibrated at start-up unless --exposure names parameters or none.

            A bifactor bank (calibrate --model bifactor|testlet, or mirt's bfactor coefficients) is served as a \
            battery, as `iqscore score` scores it: theta and the IQ are the general factor's EAP under --norms, and \
            each score carries an "indexes" object with the domains --indexes selects (default: those that add \
            value by Haberman's criterion, computed at load); the method is EAP or MAP (a request naming another \
            gets 422). Adaptive steps and forms see each item's general-factor marginal 2PL/3PL (the specific \
            factor integrated out): an adaptive test selects the item most informative about the general factor \
            at the interim estimate on those items, and its final score comes from POST /v1/score on the full model. A \
            correlated-factors bank (calibrate --model correlated) is served as a battery the same way, its \
            factors the indexes and theta their composite w·Σθ_f (w = 1/√(1ᵀR1)); adaptive steps and forms then \
            see each item's marginal on that composite.

            Logs go to stderr as text or JSON lines (--log-format), one line per request at info with its request \
            id, status, duration and client. Exit status: 0 after a graceful \
            shutdown; 1 a file could not be loaded at start-up, or the address could not be bound (named on \
            stderr); 64 usage error (also a non-loopback --host without scoring tokens or --allow-anonymous).
            """
    )

    @Option(
        help:
            "Item bank CSV (as written by calibrate; a domain column enables adaptive tests and forms; a bifactor or correlated-factors bank is served as a battery)."
    )
    var bank: String

    @Option(name: .customLong("cat-config"), help: "CAT rules JSON (as cat simulate --config; default: at most 25 items, EAP).")
    var catConfig: String?

    @Option(help: "Default blueprint JSON of POST /v1/forms (as assemble --blueprint; one form).")
    var blueprint: String?

    @Option(
        help:
            "Sympson–Hetter exposure parameters CSV item_id,k for adaptive steps (as cat simulate --exposure-out writes), or none for no exposure control (default: calibrated at start-up and each reload to the CAT configuration's exposure_target, 0.25)."
    )
    var exposure: String?

    @Option(
        help:
            "Norms for the IQ scale: linear JSON {\"name\", \"version\", \"mean\", \"sd\"}, or NORMS.json from `iqscore norms build` (age-specific: POST /v1/score then needs \"age\") (default: calibration population N(0, 1))."
    )
    var norms: String?

    @Option(name: .customLong("iq-transform"), help: "IQ under age-specific norms: area (100 + 15·Φ⁻¹(F_age(θ))) or linear (z at the person's age).")
    var iqTransform: IQTransformation = .area

    @Option(help: "Address to listen on (0.0.0.0 for every interface).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on, 0…65535 (0: any free port, printed on stderr).")
    var port = 8080

    @Option(help: "Default estimator (a request may name another): eap, map, ml or wle.")
    var method: AbilityMethod = .eap

    @OptionGroup var indexSelection: IndexSelection

    @Option(
        name: .customLong("index-form-length"),
        help: ArgumentHelp(
            "On a battery bank: the indexes' added value is computed for tests of this many items drawn from the bank (default: the whole bank as one form; needed by --indexes auto beyond \(Battery.maximumFixedFormItems) items).",
            valueName: "items"))
    var indexFormLength: Int?

    @Option(
        name: .customLong("index-norms"),
        help: ArgumentHelp(
            "On a battery bank: the norms of one reported index, NAME=NORMS.json (repeat for more; linear, or age-specific: POST /v1/score then needs \"age\"), read again at every reload; an index without one is normed on the calibration population.",
            valueName: "name=norms.json"))
    var indexNorms: [String] = []

    @OptionGroup var scoring: ScoringSettings

    @Option(
        name: .customLong("max-body-bytes"),
        help:
            "Largest request body, \(ServerLimits.allowedMaxBodyBytes.lowerBound)…\(ServerLimits.allowedMaxBodyBytes.upperBound) bytes; larger gets 413."
    )
    var maxBodyBytes = ServerLimits.defaultMaxBodyBytes

    @Option(
        name: .customLong("max-items-per-session"),
        help:
            "Most items in one session, adaptive history or form, \(ServerLimits.allowedMaxItemsPerSession.lowerBound)…\(ServerLimits.allowedMaxItemsPerSession.upperBound); more gets 422."
    )
    var maxItemsPerSession = ServerLimits.defaultMaxItemsPerSession

    @Option(
        name: .customLong("max-sessions-per-batch"),
        help:
            "Most sessions in one batch, \(ServerLimits.allowedMaxSessionsPerBatch.lowerBound)…\(ServerLimits.allowedMaxSessionsPerBatch.upperBound); more gets 422."
    )
    var maxSessionsPerBatch = ServerLimits.defaultMaxSessionsPerBatch

    @Option(
        name: .customLong("max-excluded-items"),
        help:
            "Most item ids in an exclude list, \(ServerLimits.allowedMaxExcludedItems.lowerBound)…\(ServerLimits.allowedMaxExcludedItems.upperBound); more gets 422."
    )
    var maxExcludedItems = ServerLimits.defaultMaxExcludedItems

    @Option(
        name: .customLong("max-concurrent-forms"),
        help:
            "Form assemblies run at once, \(ServerLimits.allowedMaxConcurrentForms.lowerBound)…\(ServerLimits.allowedMaxConcurrentForms.upperBound) (default: half the cores, at least 1); a blueprint decides an assembly's cost."
    )
    var maxConcurrentForms = ServerLimits.defaultMaxConcurrentForms

    @Option(
        name: .customLong("max-queued-forms"),
        help:
            "Form requests that may wait, \(ServerLimits.allowedMaxQueuedForms.lowerBound)…\(ServerLimits.allowedMaxQueuedForms.upperBound); one more gets 503 busy."
    )
    var maxQueuedForms = ServerLimits.defaultMaxQueuedForms

    @Option(
        name: .customLong("header-timeout"),
        help:
            "Seconds a request head may take (a new connection's first from opening), \(ConnectionLimits.allowedTimeoutSeconds.lowerBound)…\(ConnectionLimits.allowedTimeoutSeconds.upperBound); slower gets 408 and is closed."
    )
    var headerTimeout = Int(ConnectionLimits().headerTimeout.components.seconds)

    @Option(
        name: .customLong("send-timeout"),
        help:
            "Seconds a client may leave responses unread (its connection's output backed up), \(ConnectionLimits.allowedTimeoutSeconds.lowerBound)…\(ConnectionLimits.allowedTimeoutSeconds.upperBound); then it is closed."
    )
    var sendTimeout = Int(ConnectionLimits().sendTimeout.components.seconds)

    @Option(
        name: .customLong("body-timeout"),
        help:
            "Seconds a request body may take after its head, \(ConnectionLimits.allowedTimeoutSeconds.lowerBound)…\(ConnectionLimits.allowedTimeoutSeconds.upperBound); slower gets 408 and is closed."
    )
    var bodyTimeout = Int(ConnectionLimits().bodyTimeout.components.seconds)

    @Option(
        name: .customLong("idle-timeout"),
        help:
            "Seconds a kept-alive connection may wait for its next request, \(ConnectionLimits.allowedTimeoutSeconds.lowerBound)…\(ConnectionLimits.allowedTimeoutSeconds.upperBound)."
    )
    var idleTimeout = Int(ConnectionLimits().idleTimeout.components.seconds)

    @Option(
        name: .customLong("max-connections"),
        help:
            "Connections open at once, \(ConnectionLimits.allowedMaxConnections.lowerBound)…\(ConnectionLimits.allowedMaxConnections.upperBound); at the limit a new one closes the stalest idle or slow one."
    )
    var maxConnections = ConnectionLimits().maxConnections

    @Option(
        name: .customLong("max-header-bytes"),
        help:
            "Largest request head, \(ConnectionLimits.allowedMaxHeaderBytes.lowerBound)…\(ConnectionLimits.allowedMaxHeaderBytes.upperBound) bytes; larger gets 431."
    )
    var maxHeaderBytes = ConnectionLimits().maxHeaderBytes

    @Option(
        name: .customLong("max-buffered-body-bytes"),
        help:
            "Request-body bytes all connections together may hold, \(ConnectionLimits.allowedMaxBufferedBodyBytes.lowerBound)…\(ConnectionLimits.allowedMaxBufferedBodyBytes.upperBound); beyond it 503 overloaded."
    )
    var maxBufferedBodyBytes = ConnectionLimits().maxBufferedBodyBytes

    @Option(
        name: .customLong("shutdown-timeout"),
        help:
            "Seconds requests under way may take to finish after SIGTERM/SIGINT, \(ConnectionLimits.allowedShutdownSeconds.lowerBound)…\(ConnectionLimits.allowedShutdownSeconds.upperBound); then every connection is closed."
    )
    var shutdownTimeout = Int(ConnectionLimits().shutdownTimeout.components.seconds)

    @Option(
        name: .customLong("drain-seconds"),
        help:
            "Seconds to keep serving after SIGTERM/SIGINT with GET /readyz at 503, so the load balancer takes the instance out first, \(IQScoreApplication.Options.allowedDrainSeconds.lowerBound)…\(IQScoreApplication.Options.allowedDrainSeconds.upperBound)."
    )
    var drainSeconds = 0

    @Option(
        help:
            "Bearer tokens file: lines `scoring TOKEN` or `admin TOKEN` (16–512 visible ASCII characters; # comments), read again at every reload. Also $IQSCORE_SCORING_TOKENS and $IQSCORE_ADMIN_TOKENS (comma-separated)."
    )
    var tokens: String?

    @Flag(
        name: .customLong("allow-anonymous"),
        help: "Serve the API without scoring tokens on an address other than loopback (anyone who can connect reads the item bank).")
    var allowAnonymous = false

    @Option(
        name: .customLong("rate-limit"),
        help: "Requests a second per client (its token, else its address) to the API's endpoints, 0 (no limit)…1000000; more gets 429.")
    var rateLimit: Double = 0

    @Option(name: .customLong("rate-burst"), help: "Requests a client may make at once above --rate-limit (default: one second's worth).")
    var rateBurst: Double = 0

    @Flag(
        name: .customLong("client-from-forwarded-for"),
        help: "Name a client without a token by the last X-Forwarded-For address (only behind a proxy that sets it, as deploy/haproxy.cfg does).")
    var clientFromForwardedFor = false

    @Flag(
        name: .customLong("fast-lane"), inversion: .prefixedNo,
        help:
            "Answer POST /v1/score, GET /healthz, /livez and /readyz on the connection's event loop when the answer is a 200 (the same bytes, without the router's per-request task); --no-fast-lane sends every request through the router."
    )
    var fastLane = true

    @Option(help: "This instance's name, in the X-IQScore-Instance header of every response (default: the host name).")
    var instance: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info (start-up, reloads, one line per request), notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .customLong("log-format"), help: "text or json (one JSON object a line, for a log collector).")
    var logFormat: ServerLogHandler.Format = .text

    var ability: AbilityOptions { scoring.ability(method) }

    var limits: ServerLimits {
        var limits = ServerLimits()
        limits.naming = .option
        limits.maxBodyBytes = maxBodyBytes
        limits.maxItemsPerSession = maxItemsPerSession
        limits.maxSessionsPerBatch = maxSessionsPerBatch
        limits.maxExcludedItems = maxExcludedItems
        limits.maxConcurrentForms = maxConcurrentForms
        limits.maxQueuedForms = maxQueuedForms
        limits.rateLimit = rateLimit
        limits.rateBurst = rateBurst
        limits.clientFromForwardedFor = clientFromForwardedFor
        return limits
    }

    var connections: ConnectionLimits {
        var connections = ConnectionLimits()
        connections.naming = .option
        connections.headerTimeout = .seconds(headerTimeout)
        connections.bodyTimeout = .seconds(bodyTimeout)
        connections.sendTimeout = .seconds(sendTimeout)
        connections.idleTimeout = .seconds(idleTimeout)
        connections.maxConnections = maxConnections
        connections.maxHeaderBytes = maxHeaderBytes
        connections.maxBufferedBodyBytes = maxBufferedBodyBytes
        connections.shutdownTimeout = .seconds(shutdownTimeout)
        return connections
    }

    /// Every range is the library's (`AbilityOptions`, `IQScale`, `ServerLimits`), named as options here.
    func validate() throws {
        var problems = scoring.validationProblems(method) + limits.validationProblems() + connections.validationProblems()
        if !(0...65_535).contains(port) { problems.append("--port must be 0…65535, got \(port)") }
        if !IQScoreApplication.Options.allowedDrainSeconds.contains(drainSeconds) {
            problems.append(
                "--drain-seconds must be \(IQScoreApplication.Options.allowedDrainSeconds.lowerBound)…\(IQScoreApplication.Options.allowedDrainSeconds.upperBound), got \(drainSeconds)"
            )
        }
        if let instance,
            !(1...64).contains(instance.utf8.count)
                || !instance.unicodeScalars.allSatisfy({
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._:-".unicodeScalars.contains($0))
                })
        {
            problems.append("--instance must be 1…64 characters of letters, digits and . _ : -, got \(instance.debugDescription.prefix(80))")
        }
        var named = Set<String>()
        for value in indexNorms {
            do {
                let name = try ScoreCommand.indexNormsArgument(value).name
                if !named.insert(name).inserted { problems.append("--index-norms names \(TextFidelity.quoted(name)) twice") }
            } catch let error as ValidationError { problems.append(error.message) }
        }
        try throwIfAny(problems)
    }

    func run() async throws {
        // SIGHUP reloads; until the server's handler is installed, it must not end the process (its default).
        signal(SIGHUP, SIG_IGN)
        let level = logLevel
        let format = logFormat
        LoggingSystem.bootstrap { label in ServerLogHandler(label: label, level: level, format: format) }
        var logger = Logger(label: "iqscore.serve")
        logger.logLevel = level
        var configuration = ServerConfiguration(
            bankPath: bank, catConfigurationPath: catConfig, blueprintPath: blueprint,
            exposurePath: exposure == "none" ? nil : exposure, normsPath: norms, ability: ability, confidenceLevel: scoring.confidence,
            lowPrecisionSE: scoring.lowPrecisionSE, minimumItems: scoring.minItems, iqTransformation: iqTransform)
        configuration.naming = .option
        configuration.exposureControl = exposure != "none"
        configuration.indexes = indexSelection.indexes
        configuration.indexFormLength = indexFormLength
        for value in indexNorms {
            let (name, normsPath) = try ScoreCommand.indexNormsArgument(value)
            configuration.indexNormsPaths[name] = normsPath
        }
        if let points = scoring.quadraturePoints { configuration.batteryQuadraturePoints = points }
        configuration.tokensPath = tokens
        configuration.tokenEnvironment = ProcessInfo.processInfo.environment.filter {
            [AccessTokens.scoringVariable, AccessTokens.adminVariable].contains($0.key)
        }
        let service: ScoringService
        do {
            service = try ScoringService(
                configuration: configuration, limits: limits, instance: instance ?? ScoringService.defaultInstance, logger: logger,
                requestLog: ServerLogHandler(label: logger.label, level: level, format: format))
        } catch {
            printError(Self.startupMessage(error))
            throw ExitCode(ExitStatus.failure)
        }
        let state = service.state
        let access = state.access
        if !access.requiresScoringToken {
            guard Self.isLoopback(host) || allowAnonymous else {
                LogSink.standardError.flush()
                printError(
                    "iqscore serve: error: listening on \(host) without scoring tokens would give the item bank to anyone who can connect; give tokens (--tokens FILE or $\(AccessTokens.scoringVariable)) or --allow-anonymous"
                )
                throw ExitCode.validationFailure
            }
            logger.warning(
                "no scoring tokens: the API, item bank included, is open to whoever can reach \(host):\(port), through a proxy too (--tokens)")
        }
        logger.info(
            "tokens: \(access.scoringCount) scoring, \(access.adminCount) admin\(access.adminCount == 0 ? " (POST /v1/admin/reload is off; SIGHUP reloads)" : "")"
        )
        if let warning = Self.raiseDescriptorLimit(toHold: maxConnections) { logger.warning("\(warning)") }
        var options = IQScoreApplication.Options(host: host, port: port)
        options.connections = connections
        options.drain = .seconds(drainSeconds)
        options.fastLane = fastLane
        let memoryBound = connections.memoryBound(maxBodyBytes: maxBodyBytes, parseWorkers: ProcessInfo.processInfo.activeProcessorCount)
        logger.info(
            "connections: at most \(maxConnections), holding at most \(memoryBound >> 20) MiB with their requests (ConnectionLimits.memoryBound)")
        let summary =
            "bank \(bank) (\(state.bank.items.count) items, version \(state.bankVersion))"
            + "; exposure control \(state.exposureControl)"
        if state.exposure == nil {
            logger.warning(
                "adaptive tests are served without exposure control, \(state.exposureControl): the most informative items will reach most examinees")
        }
        let urlHost = Self.urlHost(host)
        do {
            try await IQScoreApplication.run(service: service, options: options) { address in
                let port = address?.port.map(String.init) ?? "?"
                LogSink.standardError.flush()
                printError("iqscore serve: \(summary), listening on http://\(urlHost):\(port)")
            }
        } catch {
            LogSink.standardError.flush()
            printError("iqscore serve: error: cannot serve on \(urlHost):\(port): \(error)")
            throw ExitCode(ExitStatus.failure)
        }
        LogSink.standardError.flush()
        printError("iqscore serve: stopped")
    }

    /// A start-up failure as the other commands write them: `file:line:column: error: …`.
    static func startupMessage(_ error: any Error) -> String {
        switch error {
        case let error as InputErrors: error.description
        case let error as InputError: error.description
        case let error as PsychometricsError: "error: \(error.message)"
        case let error as AssemblyError: "error: \(error.message)"
        default: "error: \(error)"
        }
    }

    /// Raises the soft limit on open files to the hard one, which `--max-connections` connections need (one
    /// descriptor each, plus the bank, logs and listening socket); a warning when even the hard limit is lower.
    static func raiseDescriptorLimit(toHold connections: Int) -> String? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let needed = rlim_t(connections + 64)
        if limit.rlim_cur < needed && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = min(limit.rlim_max, needed)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        guard limit.rlim_cur < needed else { return nil }
        return
            "--max-connections \(connections) needs \(needed) open files, but the limit is \(limit.rlim_cur) (ulimit -n): connections beyond it are refused by the system; raise the limit or lower --max-connections"
    }

    /// Whether `host` is a loopback address or name: 127.0.0.0/8, ::1, localhost.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// An IPv6 literal in brackets, as a URL writes it.
    static func urlHost(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension ServerLogHandler.Format: ExpressibleByArgument {}
