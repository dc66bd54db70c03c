import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1 child channel with a `ConnectionGuard` between parsing and the routes (and a byte counter
/// before parsing), then the `FastLane` when `fastLane` has the service: the pipeline is HTTP1Channel's, the
/// request loop is Hummingbird's (`handleHTTP`).
struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let shared: ConnectionGuardShared
    /// The service whose hot endpoints `FastLane` answers; nil sends every request to the routes.
    let fastLane: ScoringService?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            var decoderLimits = NIOHTTPDecoderLimitConfiguration()
            decoderLimits.maxHeaderFieldSize = shared.limits.maxHeaderBytes
            decoderLimits.maxHeaderListSize = shared.limits.maxHeaderBytes
            let connectionGuard = ConnectionGuard(shared: shared, channel: channel)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(ByteActivityHandler(connectionGuard))
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false, // NIOAsyncChannel reads one request at a time
                withErrorHandling: false, // the guard answers parse errors
                withOutboundHeaderValidation: false, // Swift HTTP Types validate
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: decoderLimits
            )
            try pipeline.addHandler(connectionGuard)
            if let fastLane { try pipeline.addHandler(FastLane(service: fastLane)) }
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}
