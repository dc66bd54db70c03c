import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The whole server: a Hummingbird application over a `ScoringService`, with 404/405 problems, connection limits,
/// reload on SIGHUP and graceful shutdown on SIGINT/SIGTERM.
public enum IQScoreApplication {
    /// Transport settings of the server (the API's own limits are `ServerLimits`).
    public struct Options: Sendable {
        public var host = "127.0.0.1"
        /// 0 asks the system for a free port (the one bound is passed to `onRunning`).
        public var port = 8080
        /// A connection that sends nothing for this long is closed: 60 s.
        public var idleTimeout: Duration = .seconds(60)
        /// Connections held open at once; beyond it new ones wait in the listen backlog: 4,096.
        public var maxConnections = 4_096

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
    public static func makeApplication(service: ScoringService, options: Options = Options(),
                                       onRunning: @escaping @Sendable (SocketAddress?) async -> Void = { _ in })
        -> Application<RouterResponder<IQScoreRequestContext>> {
        let (seconds, attoseconds) = options.idleTimeout.components
        let idle = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        return Application(
            router: makeRouter(service: service),
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: idle)),
            configuration: ApplicationConfiguration(address: .hostname(options.host, port: options.port),
                                                    availableConnectionsDelegate: MaximumAvailableConnections(options.maxConnections)),
            onServerRunning: { channel in await onRunning(channel.localAddress) },
            logger: service.logger
        )
    }

    /// Serves until SIGINT or SIGTERM, then stops accepting connections, lets requests under way finish, and
    /// returns. SIGHUP reloads the bank and configuration (`ScoringService.reload(trigger:)`).
    public static func run(service: ScoringService, options: Options = Options(),
                           onRunning: @escaping @Sendable (SocketAddress?) async -> Void = { _ in }) async throws {
        let application = makeApplication(service: service, options: options, onRunning: onRunning)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: application), .init(service: ReloadOnHangUp(service: service))],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: service.logger
        ))
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
