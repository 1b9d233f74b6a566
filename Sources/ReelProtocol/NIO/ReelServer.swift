import Foundation
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL
import Synchronization

/// How a `ReelServer` listens. Every parameter has a default suitable for production.
public struct ReelServerConfiguration: Sendable {
    /// Address to bind (`0.0.0.0` for all interfaces).
    public var host: String
    /// TCP port; 0 picks a free one (read it back from `ReelServer.localAddress`).
    public var port: Int
    /// When set, every connection is wrapped in TLS (the protocol inside is unchanged).
    public var tls: NIOSSLContext?
    /// Time from accept to `WELCOME`.
    public var handshakeTimeout: TimeAmount
    /// Time without a received byte after which a connection is closed.
    public var idleTimeout: TimeAmount
    /// Longest line after `WELCOME`.
    public var maxLineLength: Int
    /// Largest payload after `WELCOME` (none is accepted before).
    public var maxPayloadLength: Int
    /// Longest line before `WELCOME` (`HELLO`, `AUTH`).
    public var maxHandshakeLineLength: Int
    /// Most connections at once that have not reached `WELCOME`; more are refused at accept.
    public var maxUnauthenticatedConnections: Int

    public init(host: String = "0.0.0.0", port: Int = HostPort.defaultPort, tls: NIOSSLContext? = nil,
                handshakeTimeout: TimeAmount = .seconds(ProtocolLimits.handshakeTimeoutSeconds),
                idleTimeout: TimeAmount = .seconds(ProtocolLimits.idleTimeoutSeconds),
                maxLineLength: Int = ProtocolLimits.maxLineLength, maxPayloadLength: Int = ProtocolLimits.maxPayloadLength,
                maxHandshakeLineLength: Int = ProtocolLimits.maxHandshakeLineLength,
                maxUnauthenticatedConnections: Int = ProtocolLimits.maxUnauthenticatedConnections) {
        self.host = host; self.port = port; self.tls = tls
        self.handshakeTimeout = handshakeTimeout; self.idleTimeout = idleTimeout
        self.maxLineLength = maxLineLength; self.maxPayloadLength = maxPayloadLength
        self.maxHandshakeLineLength = maxHandshakeLineLength
        self.maxUnauthenticatedConnections = maxUnauthenticatedConnections
    }
}

/// A listening Reel protocol server: accepts agents and clients, authenticates them, and
/// delegates their requests to a `ReelRequestHandler`. Each connection has its own pipeline
/// (optional TLS → idle timer → message encoder → frame decoder → connection handler; the
/// decoder sits after the encoder so it sees the outgoing `WELCOME` and lifts its handshake
/// limits).
public final class ReelServer: Sendable {
    private let channel: Channel
    private let quiesce: ServerQuiescingHelper
    private let handshakeSlots: HandshakeSlots

    /// The bound address (useful with port 0).
    public var localAddress: SocketAddress? { channel.localAddress }

    /// Connections that hold a handshake slot now: accepted and not yet at `WELCOME` or closed.
    var unauthenticatedConnections: Int { handshakeSlots.count }

    private init(channel: Channel, quiesce: ServerQuiescingHelper, handshakeSlots: HandshakeSlots) {
        self.channel = channel
        self.quiesce = quiesce
        self.handshakeSlots = handshakeSlots
    }

    /// Binds and starts accepting connections.
    public static func start(configuration: ReelServerConfiguration, authenticator: Authenticator,
                             handler: any ReelRequestHandler,
                             group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> ReelServer {
        let replayCache = NonceReplayCache()
        let connectionIDs = ConnectionCounter()
        let handshakeSlots = HandshakeSlots(limit: configuration.maxUnauthenticatedConnections)
        let quiesce = ServerQuiescingHelper(group: group)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let machine = ServerConnectionStateMachine(
                        authenticator: authenticator, replayCache: replayCache,
                        serverNonce: Authenticator.makeNonce(), connectionID: connectionIDs.next())
                    let sync = channel.pipeline.syncOperations
                    if let tls = configuration.tls {
                        try sync.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    // Idle detection sees raw bytes, so a large payload trickling in is not "idle".
                    try sync.addHandler(IdleStateHandler(readTimeout: configuration.idleTimeout))
                    try sync.addHandler(MessageToByteHandler(ReelMessageEncoder()))
                    try sync.addHandler(ByteToMessageHandler(ReelServerFrameDecoder(
                        maxLineLength: configuration.maxLineLength, maxPayloadLength: configuration.maxPayloadLength,
                        handshakeLineLength: configuration.maxHandshakeLineLength)))
                    try sync.addHandler(ReelServerConnectionHandler(
                        machine: machine, requestHandler: handler, handshakeTimeout: configuration.handshakeTimeout,
                        handshakeSlots: handshakeSlots))
                }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        return ReelServer(channel: channel, quiesce: quiesce, handshakeSlots: handshakeSlots)
    }

    /// Graceful shutdown (SIGTERM): stop accepting, tell idle connections `ERR shutting_down`
    /// and close them, let in-flight requests get their reply and then close; returns when
    /// every connection has closed. Request handlers with long waits (`CLAIM wait=`) should
    /// observe their own shutdown and answer early.
    public func shutdown() async throws {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        quiesce.initiateShutdown(promise: promise)
        try await promise.futureResult.get()
    }

    /// Stops accepting at once; open connections are left to finish on their own.
    public func close() async throws {
        try await channel.close()
    }
}

/// Hands out connection ids.
final class ConnectionCounter: Sendable {
    private let value = Mutex<UInt64>(0)

    func next() -> UInt64 {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
