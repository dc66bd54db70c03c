import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The whole server: a Hummingbird application over a `ScoringService`, with 404/405 problems, every connection
/// guarded (`ConnectionGuard`: timeouts, the connection limit, the process's body budget, HTTP/1.1's rules), reload
/// on SIGHUP, and on SIGINT/SIGTERM a drain (`Options.drain`: `GET /readyz` answers 503 while everything else is
/// served) followed by a graceful shutdown within `ConnectionLimits.shutdownTimeout`.
public enum IQScoreApplication {
    /// Transport settings of the server (the API's own limits are `ServerLimits`).
    public struct Options: Sendable {
        public var host = "127.0.0.1"
        /// 0 asks the system for a free port (the one bound is passed to `onRunning`).
        public var port = 8080
        /// Timeouts, the connection limit, the process's body budget, the shutdown deadline.
        public var connections = ConnectionLimits()
        /// After SIGTERM/SIGINT, how long the server keeps serving with `GET /readyz` at 503 before it stops
        /// accepting connections: long enough for the load balancer's health check to take the instance out, so
        /// no request is sent to a closed port (a second signal ends the drain at once). Default 0.
        public var drain: Duration = .zero
        /// Whether `POST /v1/score`, `GET /healthz`, `/livez` and `/readyz` are answered on the connection's event
        /// loop when their answer is a 200 (`FastLane`; the same answer, without Hummingbird's per-request task);
        /// false sends every request through the router. Default true.
        package var fastLane = true
        /// The range `drain` may be set to: 0 … 300 s.
        package static let allowedDrainSeconds = 0...300

        public init(host: String = "127.0.0.1", port: Int = 8080) {
            self.host = host
            self.port = port
        }
    }

    /// A router with the API (`ScoringService.addRoutes(to:)`) and problem responses for unknown paths.
    public static func makeRouter(service: ScoringService) -> Router<IQScoreRequestContext> {
        let router = Router(context: IQScoreRequestContext.self)
        router.add(middleware: NotFoundProblemMiddleware(service: service))
        service.addRoutes(to: router)
        return router
    }

    /// The Hummingbird application; `onRunning` gets the bound address once the server listens.
    package static func makeApplication(
        service: ScoringService, options: Options = Options(),
        onRunning: @escaping @Sendable (SocketAddress?) async -> Void = { _ in }
    )
        -> Application<RouterResponder<IQScoreRequestContext>>
    {
        let store = service.store
        let shared = ConnectionGuardShared(
            limits: options.connections, maxBodyBytes: service.limits.maxBodyBytes, metrics: service.metrics,
            logger: service.logger, bankVersion: { store.current.bankVersion })
        service.metrics.setConnectionSource { [registry = shared.registry, budget = shared.budget] in (registry.openCount, budget.bytesHeld) }
        return Application(
            router: makeRouter(service: service),
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(responder: responder, shared: shared, fastLane: options.fastLane ? service : nil)
            },
            // The guard keeps the connection limit (closing the stalest to admit a new one); the listen backlog
            // takes what arrives faster than accepts.
            configuration: ApplicationConfiguration(address: .hostname(options.host, port: options.port), backlog: 4_096),
            onServerRunning: { channel in await onRunning(channel.localAddress) },
            logger: service.logger
        )
    }

    /// Serves until SIGINT or SIGTERM, then drains for `options.drain` (`ScoringService.beginDraining()`), stops
    /// accepting connections, lets requests under way finish within `ConnectionLimits.shutdownTimeout` (then closes
    /// what remains), and returns. SIGHUP reloads the bank and configuration (`ScoringService.reload(trigger:)`).
    /// - Throws: what binding the address throws (an address in use, a port not allowed); errors of single requests
    ///   and connections are answered or logged, never thrown here.
    public static func run(
        service: ScoringService, options: Options = Options(),
        onRunning: @escaping @Sendable (SocketAddress?) async -> Void = { _ in }
    ) async throws {
        let application = makeApplication(service: service, options: options, onRunning: onRunning)
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: application),
                .init(service: ReloadOnHangUp(service: service)),
                // Its return (after the drain) shuts the group down gracefully.
                .init(service: DrainOnTerminate(service: service, drain: options.drain), successTerminationBehavior: .gracefullyShutdownGroup)
            ],
            gracefulShutdownSignals: [],
            logger: service.logger
        )
        // The guard closes every connection at the shutdown deadline; this is the backstop behind it.
        configuration.maximumGracefulShutdownDuration = options.connections.shutdownTimeout + .seconds(5)
        configuration.maximumCancellationDuration = .seconds(5)
        let group = ServiceGroup(configuration: configuration)
        try await group.run()
    }
}

/// Reloads the service on every SIGHUP until the server shuts down.
struct ReloadOnHangUp: Service {
    let service: ScoringService

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            // A refused reload is logged by the service; the old bank keeps serving.
            _ = try? await service.reload(trigger: "SIGHUP")
        }
    }
}

/// On the first SIGTERM or SIGINT, marks the service draining and waits `drain` (or until a second signal), then
/// returns, which shuts the server down gracefully.
struct DrainOnTerminate: Service {
    let service: ScoringService
    let drain: Duration

    func run() async throws {
        for await signal in await UnixSignalsSequence(trapping: .sigterm, .sigint).cancelOnGracefulShutdown() {
            service.beginDraining()
            if drain > .zero {
                service.logger.info("\(signal): draining for \(drain) (GET /readyz answers 503, every request is still served), then shutting down")
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { try? await Task.sleep(for: drain) }
                    group.addTask { for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) { return } }
                    await group.next()
                    group.cancelAll()
                }
            }
            return
        }
    }
}
