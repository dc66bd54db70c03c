import HTTPTypes
import Hummingbird
import NIOCore
import Psychometrics

extension ScoringService {
    /// An endpoint of the API: its path, the route label, and the method it answers.
    struct Endpoint: Sendable {
        var path: String
        var route: ServerRoute
        var method: HTTPRequest.Method
    }

    /// Every endpoint, in the order of the OpenAPI document.
    static let endpoints: [Endpoint] = [
        Endpoint(path: "/v1/score", route: .score, method: .post),
        Endpoint(path: "/v1/score/batch", route: .scoreBatch, method: .post),
        Endpoint(path: "/v1/cat/next", route: .catNext, method: .post),
        Endpoint(path: "/v1/forms", route: .forms, method: .post),
        Endpoint(path: "/v1/bank", route: .bank, method: .get),
        Endpoint(path: "/livez", route: .live, method: .get),
        Endpoint(path: "/readyz", route: .ready, method: .get),
        Endpoint(path: "/healthz", route: .health, method: .get),
        Endpoint(path: "/metrics", route: .metrics, method: .get),
        Endpoint(path: "/openapi.json", route: .openAPI, method: .get),
        Endpoint(path: "/v1/admin/reload", route: .reload, method: .post)
    ]

    /// Methods that get 405 (with `Allow`) on a path that answers another one (HEAD is answered on GET paths).
    static let otherMethods: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .patch, .options]

    /// Adds the API to `router`: the endpoints of `endpoints`, and a 405 problem for the other common methods on
    /// their paths. Routes a team adds beside them are untouched; unknown paths are the router's (in
    /// `IQScoreApplication`'s router, a 404 problem). A request context that knows the peer's address
    /// (`RemoteAddressRequestContext`, as `IQScoreRequestContext`) lets the rate limit and the log name the client.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.post("/v1/score") { request, context in
            await self.answer(.score, request, peer: Self.peer(context), readsBody: true) { try self.score($0, $1) }
        }
        router.post("/v1/score/batch") { request, context in
            await self.answer(.scoreBatch, request, peer: Self.peer(context), readsBody: true) { try self.scoreBatch($0, $1) }
        }
        router.post("/v1/cat/next") { request, context in
            await self.answer(.catNext, request, peer: Self.peer(context), readsBody: true) { try self.catNext($0, $1) }
        }
        router.post("/v1/forms") { request, context in
            await self.answer(.forms, request, peer: Self.peer(context), readsBody: true) { try await self.forms($0, $1) }
        }
        get(router, "/v1/bank", .bank) { state in self.bank(state) }
        get(router, "/livez", .live) { _ in self.live() }
        get(router, "/readyz", .ready) { state in try self.ready(state) }
        get(router, "/healthz", .health) { state in self.health(state) }
        get(router, "/metrics", .metrics) { _ in self.metricsText() }
        get(router, "/openapi.json", .openAPI) { _ in self.openAPI() }
        router.post("/v1/admin/reload") { request, context in
            let peer = Self.peer(context)
            return await self.answer(.reload, request, peer: peer, readsBody: false) { state, _ in
                try await self.adminReload(state, peer: peer)
            }
        }
        for endpoint in Self.endpoints {
            for method in Self.otherMethods where method != endpoint.method && !(method == .head && endpoint.method == .get) {
                router.on(RouterPath(endpoint.path), method: method) { request, context in
                    await self.answer(endpoint.route, request, peer: Self.peer(context), readsBody: false) { _, _ in
                        let allowed = endpoint.method == .get ? "GET, HEAD" : endpoint.method.rawValue
                        throw Problem(.methodNotAllowed, "\(endpoint.path) answers \(allowed) only, not \(request.method.rawValue)", allow: allowed)
                    }
                }
            }
        }
    }

    /// A GET endpoint, and HEAD on the same path (its status and headers, no body), as RFC 9110 asks.
    private func get<Context: RequestContext>(
        _ router: Router<Context>, _ path: RouterPath, _ route: ServerRoute,
        _ handler: @escaping @Sendable (ServingState) throws -> Response
    ) {
        router.get(path) { request, context in
            await self.answer(route, request, peer: Self.peer(context), readsBody: false) { state, _ in try handler(state) }
        }
        router.head(path) { request, context in
            await self.answer(route, request, peer: Self.peer(context), readsBody: false) { state, _ in try handler(state) }.createHeadResponse()
        }
    }

    /// The peer's address when the context knows it.
    static func peer<Context: RequestContext>(_ context: Context) -> SocketAddress? {
        (context as? any RemoteAddressRequestContext)?.remoteAddress
    }

    /// The problem for a request no route took: 405 (with `Allow`) for a method the routes do not list on one of
    /// the API's paths (TRACE, CONNECT, an extension method), else 404.
    func notFound(_ request: Request, peer: SocketAddress?) async -> Response {
        if let endpoint = Self.endpoints.first(where: { $0.path == request.uri.path }) {
            return await answer(endpoint.route, request, peer: peer, readsBody: false) { _, _ in
                let allowed = endpoint.method == .get ? "GET, HEAD" : endpoint.method.rawValue
                throw Problem(
                    .methodNotAllowed, "\(endpoint.path) answers \(allowed) only, not \(TextFidelity.quoted(request.method.rawValue))", allow: allowed
                )
            }
        }
        return await answer(.unmatched, request, peer: peer, readsBody: false) { _, _ in
            throw Problem(.notFound, "no endpoint \(request.method.rawValue) \(TextFidelity.quoted(request.uri.path)); see GET /openapi.json")
        }
    }
}

/// Turns the router's 404 (`HTTPError(.notFound)` for a path no route matches) into a problem response.
struct NotFoundProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    let service: ScoringService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return await service.notFound(request, peer: ScoringService.peer(context))
        }
    }
}
