import Hummingbird
import NIOCore

/// The request context of `IQScoreApplication`: Hummingbird's basic context plus the peer's address, which
/// `POST /v1/admin/reload` checks (loopback only).
public struct IQScoreRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
