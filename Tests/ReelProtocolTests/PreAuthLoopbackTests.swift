import NIOCore
import NIOPosix
import Testing
@testable import ReelProtocol

/// A raw TCP peer that speaks lines by hand, to do what a real client never would.
struct RawPeer {
    let channel: Channel
    let lines: AsyncStream<String>

    /// Passes every received line (payloads dropped) into an `AsyncStream`.
    final class LineSink: ChannelInboundHandler, Sendable {
        typealias InboundIn = Frame
        let continuation: AsyncStream<String>.Continuation
        init(_ continuation: AsyncStream<String>.Continuation) { self.continuation = continuation }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { continuation.yield(unwrapInboundIn(data).line) }
        func channelInactive(context: ChannelHandlerContext) { continuation.finish() }
        func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
    }

    static func connect(port: Int) async throws -> RawPeer {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ReelFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(LineSink(continuation))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return RawPeer(channel: channel, lines: lines)
    }

    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text))
    }

    /// The next line from the server, or nil once it closed.
    func nextLine() async -> String? {
        var iterator = lines.makeAsyncIterator()
        return await iterator.next()
    }
}

/// Waits for `future` but fails the test if `deadline` passes first (a generous bound that a
/// correct server beats by far; the handshake timeout is much longer, so it cannot be the cause).
func expectCompletes(_ future: EventLoopFuture<Void>, within deadline: Duration, _ what: String) async {
    let completed = await withTaskGroup(of: Bool.self) { group in
        group.addTask { _ = try? await future.get(); return true }
        group.addTask { try? await Task.sleep(for: deadline); return false }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
    #expect(completed, "\(what) did not happen within \(deadline)")
}

@Suite("Pre-authentication limits over loopback", .timeLimit(.minutes(1)))
struct PreAuthLoopbackTests {
    static let auth = try! Authenticator(secret: Samples.secret)

    /// A handshake timeout far beyond the tests' deadlines: a close is never the timeout's doing.
    static func startServer(maxUnauthenticated: Int = ProtocolLimits.maxUnauthenticatedConnections) async throws -> (ReelServer, Int) {
        let server = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0, handshakeTimeout: .seconds(600),
                                                   maxUnauthenticatedConnections: maxUnauthenticated),
            authenticator: auth, handler: EchoHandler())
        return (server, try #require(server.localAddress?.port))
    }

    @Test("HELLO … size=67108864 followed by data is answered not_authenticated and closed promptly")
    func preAuthPayloadClosed() async throws {
        let (server, port) = try await Self.startServer()
        let peer = try await RawPeer.connect(port: port)
        try await peer.send("HELLO reel/1 role=agent name=x cnonce=\(Samples.hashA) size=67108864\n")
        // Only the header was sent: a server that waited for the declared payload would never
        // answer (until the 600 s handshake timeout, far beyond the suite's time limit).
        let reply = await peer.nextLine()
        #expect(reply?.hasPrefix("ERR not_authenticated ") == true, "\(reply ?? "closed without a word")")
        // Whatever "payload" an attacker still pushes, the connection is closed.
        for _ in 0..<4 { try? await peer.send(String(repeating: "A", count: 256 * 1024)) }
        await expectCompletes(peer.channel.closeFuture, within: .seconds(20), "the server closing the connection")
        try await server.close()
    }

    @Test("connections beyond the unauthenticated cap are refused until a slot frees")
    func unauthenticatedCap() async throws {
        let (server, port) = try await Self.startServer(maxUnauthenticated: 2)
        // Two peers hold both slots: each has been answered CHALLENGE, so the server counted it.
        var holders: [RawPeer] = []
        for index in 0..<2 {
            let peer = try await RawPeer.connect(port: port)
            let nonce = String(repeating: String(index), count: 64)
            try await peer.send("HELLO reel/1 role=client name=holder cnonce=\(nonce)\n")
            #expect(await peer.nextLine()?.hasPrefix("CHALLENGE ") == true)
            holders.append(peer)
        }
        let refused = try await RawPeer.connect(port: port)
        #expect(await refused.nextLine()?.hasPrefix("ERR too_many_connections ") == true)
        await expectCompletes(refused.channel.closeFuture, within: .seconds(20), "closing the connection over the cap")

        // One holder leaves; the server frees its slot when it sees the close, so retry until then.
        try await holders[0].channel.close()
        let configuration = ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "late")
        let deadline = ContinuousClock.now + .seconds(20)
        var client: ReelClient?
        while client == nil, ContinuousClock.now < deadline {
            do {
                client = try await ReelClient.connect(configuration: configuration, authenticator: Self.auth)
            } catch let error as ReelProtocolError where error.code == .tooManyConnections {
                await Task.yield()
            }
        }
        let connected = try #require(client, "no slot became free after a holder closed")
        #expect(try await connected.request(.ping) == .pong)
        await connected.close()
        try await holders[1].channel.close()
        try await server.close()
    }
}
