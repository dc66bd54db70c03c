import Hummingbird
import NIOCore

/// The request context of `IQScoreApplication`: Hummingbird's basic context plus the peer's address, by which the
/// rate limit (`ServerLimits.rateLimit`) counts a client without a token and the request log names the client.
public struct IQScoreRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
