import NIOCore
import NIOPosix
import NIOSSL

/// How a `ReelClient` reaches the coordinator.
public struct ReelClientConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// `agent` or `client` (`HELLO role=`).
    public var role: PeerRole
    /// `HELLO name=`: the agent's name or `user@host`.
    public var name: String
    /// When set, the connection runs inside TLS.
    public var tls: NIOSSLContext?
    /// Host name to verify the server's certificate against (defaults to `host`).
    public var tlsServerHostname: String?
    /// Time allowed for TCP connect plus handshake.
    public var connectTimeout: TimeAmount
    public var maxLineLength: Int
    public var maxPayloadLength: Int

    public init(host: String, port: Int, role: PeerRole, name: String, tls: NIOSSLContext? = nil,
                tlsServerHostname: String? = nil, connectTimeout: TimeAmount = .seconds(ProtocolLimits.handshakeTimeoutSeconds),
                maxLineLength: Int = ProtocolLimits.maxLineLength, maxPayloadLength: Int = ProtocolLimits.maxPayloadLength) {
        self.host = host; self.port = port; self.role = role; self.name = name
        self.tls = tls; self.tlsServerHostname = tlsServerHostname; self.connectTimeout = connectTimeout
        self.maxLineLength = maxLineLength; self.maxPayloadLength = maxPayloadLength
    }
}

/// An authenticated connection to a Reel coordinator, for agents and operator clients.
///
/// `request` may be called concurrently; requests are sent one at a time in call order, as the
/// protocol requires. An `ERR` reply is thrown as a `ReelProtocolError`.
public final class ReelClient: Sendable {
    private let channel: Channel

    private init(channel: Channel) { self.channel = channel }

    /// Connects, performs the handshake and verifies the server (mutual authentication).
    /// - Throws: `ReelProtocolError` (`auth_failed`, `unsupported_version`, …) or a connect error.
    public static func connect(configuration: ReelClientConfiguration, authenticator: Authenticator,
                               group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> ReelClient {
        let machine = ClientConnectionStateMachine(role: configuration.role, name: configuration.name,
                                                   authenticator: authenticator, clientNonce: Authenticator.makeNonce())
        let (channel, handshake) = try await ClientBootstrap(group: group)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tls = configuration.tls {
                        let name = configuration.tlsServerHostname ?? configuration.host
                        // A certificate names a host; an IP literal cannot be checked against it (nor sent as SNI).
                        guard name.isEmpty || (IPv4Address(name) == nil && !name.contains(":")) else {
                            throw ReelProtocolError(.malformed, "TLS to the IP address \(name) needs the name in the coordinator's certificate: "
                                                    + "add --tls-server-name NAME")
                        }
                        try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: name))
                    }
                    // Made only once nothing above can throw: an unfulfilled promise must not be dropped.
                    let handshake = channel.eventLoop.makePromise(of: Void.self)
                    try sync.addHandler(ByteToMessageHandler(ReelFrameDecoder(
                        maxLineLength: configuration.maxLineLength, maxPayloadLength: configuration.maxPayloadLength)))
                    try sync.addHandler(MessageToByteHandler(ReelMessageEncoder()))
                    try sync.addHandler(ReelClientConnectionHandler(machine: machine, handshake: handshake))
                    return (channel, handshake.futureResult)
                }
            }
        let timeout = channel.eventLoop.scheduleTask(in: configuration.connectTimeout) {
            // Through the pipeline, so the handshake fails as a timeout, not as "connection closed".
            channel.pipeline.fireErrorCaught(ReelProtocolError(.timeout, "no WELCOME within \(configuration.connectTimeout)"))
            channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        do {
            try await handshake.get()
        } catch {
            try? await channel.close()
            throw error
        }
        return ReelClient(channel: channel)
    }

    /// Sends `request` and waits for its reply.
    /// - Parameter timeout: how long to wait for the reply (counted from when the request is queued, so it
    ///   includes time queued behind earlier requests). On expiry the connection is closed —
    ///   a late reply would desynchronise the strictly ordered stream — and every pending
    ///   request fails with `ReelProtocolError` code `.timeout`. `nil` waits indefinitely
    ///   (the server's own timeouts still apply).
    /// - Throws: `ReelProtocolError` for an `ERR` reply, a timeout or a closed connection.
    public func request(_ request: Message, timeout: TimeAmount? = nil) async throws -> Message {
        let channel = channel
        let reply = channel.eventLoop.makePromise(of: Message.self)
        let deadline = timeout.map { NIODeadline.now() + $0 }
        // The write and the timer are set up in one task on the event loop, the write first: on
        // the loop the write reaches the handler (which then owns the reply) before the timer
        // exists, so the timer can never beat it. Scheduled from here instead, a timer that
        // expired while a loaded machine delayed the loop could run before the queued write,
        // close the connection, and the request would fail with "connection closed" rather than
        // `.timeout` (NIO runs due timers and queued tasks in no promised order).
        channel.eventLoop.execute {
            // A write on a closed channel never reaches the handler: fail the reply then.
            channel.writeAndFlush(OutboundRequest(message: request, reply: reply)).whenFailure { error in
                reply.fail(ReelProtocolError(.internal, "connection closed: \(error)"))
            }
            guard let deadline, let timeout else { return }
            let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
                // Routed through the pipeline so the handler, the promises' only completer, fails them.
                channel.pipeline.fireErrorCaught(ReelProtocolError(.timeout, "no reply to \(request.verb) within \(timeout)"))
            }
            reply.futureResult.whenComplete { _ in timer.cancel() }
        }
        return try await reply.futureResult.get()
    }

    /// Says `QUIT` (best effort) and closes the connection.
    public func close() async {
        _ = try? await request(.quit)
        try? await channel.close()
    }

    /// Closes the connection at once, without `QUIT` (as a crashed peer or a broken network
    /// would): requests still pending fail.
    public func abort() async {
        try? await channel.close()
    }

    /// Completes when the connection has closed (e.g. the server closed it).
    public var closeFuture: EventLoopFuture<Void> { channel.closeFuture }
}

/// Whether `text` is a dotted IPv4 literal (four decimal octets).
private struct IPv4Address {
    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && UInt8($0) != nil }) else { return nil }
    }
}
