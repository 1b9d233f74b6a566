import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import ServiceLifecycle

/// What a scraper or a scaler reads, on a listener of its own (`reel coordinator --metrics`):
/// a few documents at fixed paths (the coordinator's `/metrics` and `/scale`), plain HTTP, no
/// token, and nothing else — no dashboard and no API, so it can be opened to a cluster that
/// should not reach the console. The same Hummingbird server as the console (`--http`, which
/// serves `/metrics` too); every other path is 404. Each answer closes its connection: its
/// clients (Prometheus, KEDA, `curl`) open one a request.
public final class MetricsListener: Sendable {
    /// One path's answer, made anew for each `GET`.
    public struct Document: Sendable {
        public var path: String
        public var contentType: String
        public var body: @Sendable () -> String

        public init(path: String, contentType: String, body: @escaping @Sendable () -> String) {
            self.path = path; self.contentType = contentType; self.body = body
        }
    }

    /// The content type of Prometheus's text exposition format (version 0.0.4).
    public static let prometheusText = "text/plain; version=0.0.4; charset=utf-8"

    /// Serves until graceful shutdown, in its owner's `ServiceGroup`; it binds when it runs.
    public let service: any Service
    private let bound: BoundAddress

    public init(host: String, port: Int, documents: [Document], logger: Logger) {
        let router = Router(context: ConsoleContext.self)
        for document in documents {
            router.get(RouterPath(document.path)) { _, _ in
                var response = ConsoleResponses.text(document.body(), contentType: document.contentType)
                response.headers[.connection] = "close"
                return response
            }
        }
        let bound = BoundAddress()
        self.bound = bound
        service = ConsoleHTTPService(serving: router, as: "metrics", host: host, port: port,
                                     server: .http1(configuration: .init(additionalChannelHandlers: [ClosingAfterAnswer()])),
                                     bound: bound, logger: logger)
    }

    /// The bound address once listening (useful with port 0); nil if it could not listen.
    public func waitUntilListening() async -> SocketAddress? { await bound.wait() }

    /// The bound address, once listening.
    public var localAddress: SocketAddress? { bound.address }
}

/// Marks every request `Connection: close`, so that Hummingbird closes the connection once it
/// has answered (it keeps one open unless the request asks otherwise).
private final class ClosingAfterAnswer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        head.headerFields[.connection] = "close"
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
