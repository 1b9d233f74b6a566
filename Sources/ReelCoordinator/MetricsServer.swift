import Foundation
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import NIOPosix
import ReelProtocol

/// A minimal HTTP/1.1 server answering `GET /metrics` with the Prometheus text of a
/// `CoordinatorMetrics`, and `GET /scale` with its `ScaleReport` as JSON (for a scaler);
/// every other path is 404. No keep-alive subtleties: one response per
/// request, connection closed when the client asks.
final class MetricsServer: Sendable {
    private let channel: Channel

    var localAddress: SocketAddress? { channel.localAddress }

    private init(channel: Channel) { self.channel = channel }

    static func start(at address: HostPort, metrics: CoordinatorMetrics,
                      group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> MetricsServer {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(MetricsHTTPHandler(metrics: metrics))
                }
            }
            .bind(host: address.host, port: address.port)
            .get()
        return MetricsServer(channel: channel)
    }

    func close() async {
        try? await channel.close()
    }
}

extension MetricsServer: Service {
    /// Serves until graceful shutdown (bound already by `start`), then stops listening.
    func run() async throws {
        try? await gracefulShutdown()
        await close()
    }
}

private final class MetricsHTTPHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let metrics: CoordinatorMetrics
    init(metrics: CoordinatorMetrics) { self.metrics = metrics }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let found = head.method == .GET && (path == "/metrics" || path == "/scale")
        let body: String, type: String
        switch (found, path) {
        case (true, "/metrics"): (body, type) = (metrics.exposition(), "text/plain; version=0.0.4; charset=utf-8")
        case (true, _):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            (body, type) = (String(decoding: (try? encoder.encode(metrics.scale)) ?? Data("{}".utf8), as: UTF8.self) + "\n", "application/json")
        default: (body, type) = ("not found\n", "text/plain")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Connection", value: "close")
        let response = HTTPResponseHead(version: head.version, status: found ? .ok : .notFound, headers: headers)
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
