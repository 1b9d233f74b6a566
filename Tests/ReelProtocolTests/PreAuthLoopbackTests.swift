import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import ReelThreadTesting
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

/// Deadlines are generous (`deadline`, and 5 minutes a test): a correct server beats them by far,
/// a leak never gets there, and under CI's load the whole test process has been seen to get no
/// CPU for 40 s at a time while other suites generate their media.
@Suite("Pre-authentication limits over loopback", .timeLimit(.minutes(5)))
struct PreAuthLoopbackTests {
    static let auth = try! Authenticator(secret: Samples.secret)
    /// How long a close or a freed slot may take before the test fails (far below the 600 s
    /// handshake timeout, so that timeout is never the cause).
    static let deadline: Duration = .seconds(120)

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
        await expectCompletes(peer.channel.closeFuture, within: Self.deadline, "the server closing the connection")
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
        await expectCompletes(refused.channel.closeFuture, within: Self.deadline, "closing the connection over the cap")

        // One holder leaves; the server frees its slot when its event loop sees the close. Wait
        // for that, then connect once: a tight loop of refused connections here only competed
        // for the two cores with the server it waits for.
        try await holders[0].channel.close()
        await Self.expectSlotsHeld(server, atMost: 1, "after a holder closed")
        let connected = try await ReelClient.connect(
            configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "late"), authenticator: Self.auth)
        #expect(try await connected.request(.ping) == .pong)
        await connected.close()
        try await holders[1].channel.close()
        try await server.close()
    }

    /// A fresh client nonce (the server refuses a replayed one).
    static func nonce() -> String { (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() }

    /// Waits until `server` holds at most `limit` handshake slots (a generous deadline: a leak
    /// never gets there).
    static func expectSlotsHeld(_ server: ReelServer, atMost limit: Int, _ what: String) async {
        let deadline = ContinuousClock.now + Self.deadline
        while server.unauthenticatedConnections > limit, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        #expect(server.unauthenticatedConnections <= limit, "\(what): \(server.unauthenticatedConnections) slot(s) still held")
    }

    static func expectNoSlotHeld(_ server: ReelServer, _ what: String) async { await expectSlotsHeld(server, atMost: 0, what) }

    /// 256 leaked slots would lock every agent out of the farm: each way a connection can end
    /// before `WELCOME` — closed silent, after `HELLO`, reset, a bad `AUTH`, a malformed or
    /// over-long line, a payload before authentication, the handshake timeout, a TLS failure —
    /// and a login that succeeds must all give the slot back, many times over.
    @Test("every way a connection can end before WELCOME gives its handshake slot back")
    func noSlotLeaks() async throws {
        let cap = 3
        let (server, port) = try await Self.startServer(maxUnauthenticated: cap)
        for round in 0..<10 {
            let silent = try await RawPeer.connect(port: port)
            try await silent.channel.close()

            let greeted = try await RawPeer.connect(port: port)
            try await greeted.send("HELLO reel/1 role=agent name=a cnonce=\(Self.nonce())\n")
            #expect(await greeted.nextLine()?.hasPrefix("CHALLENGE ") == true)
            try await greeted.channel.close()

            let reset = try await RawPeer.connect(port: port)
            try await reset.send("HELLO reel/1 role=agent name=r cnonce=\(Self.nonce())\n")
            #expect(await reset.nextLine()?.hasPrefix("CHALLENGE ") == true)
            let options = try #require(reset.channel as? SocketOptionProvider)
            try await options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            try await reset.channel.close()  // RST, not FIN

            let impostor = try await RawPeer.connect(port: port)
            try await impostor.send("HELLO reel/1 role=client name=i cnonce=\(Self.nonce())\n")
            #expect(await impostor.nextLine()?.hasPrefix("CHALLENGE ") == true)
            try await impostor.send("AUTH mac=\(Samples.hashA)\n")
            #expect(await impostor.nextLine()?.hasPrefix("ERR auth_failed ") == true)
            await expectCompletes(impostor.channel.closeFuture, within: Self.deadline, "closing after a bad AUTH")

            for garbage in ["FROB\n", String(repeating: "x", count: 20_000), "HELLO reel/1 role=agent name=p cnonce=\(Self.nonce()) size=9\n"] {
                let peer = try await RawPeer.connect(port: port)
                try await peer.send(garbage)
                #expect(await peer.nextLine()?.hasPrefix("ERR ") == true)
                await expectCompletes(peer.channel.closeFuture, within: Self.deadline, "closing after \(garbage.prefix(20))")
            }

            let client = try await ReelClient.connect(
                configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "ok"), authenticator: Self.auth)
            #expect(try await client.request(.ping) == .pong)
            await client.close()
            await Self.expectNoSlotHeld(server, "round \(round)")
        }
        // All `cap` slots are free: as many peers as the cap are each answered CHALLENGE.
        var holders: [RawPeer] = []
        for _ in 0..<cap {
            let peer = try await RawPeer.connect(port: port)
            try await peer.send("HELLO reel/1 role=client name=h cnonce=\(Self.nonce())\n")
            #expect(await peer.nextLine()?.hasPrefix("CHALLENGE ") == true)
            holders.append(peer)
        }
        #expect(server.unauthenticatedConnections == cap)
        for holder in holders { try await holder.channel.close() }
        await Self.expectNoSlotHeld(server, "after the holders left")
        try await server.close()

        // The handshake timeout, and TLS failing (plain text to a TLS server).
        let timed = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0, handshakeTimeout: .milliseconds(200),
                                                   maxUnauthenticatedConnections: cap),
            authenticator: Self.auth, handler: EchoHandler())
        for _ in 0..<5 {
            let peer = try await RawPeer.connect(port: try #require(timed.localAddress?.port))
            #expect(await peer.nextLine()?.hasPrefix("ERR timeout ") == true)
        }
        await Self.expectNoSlotHeld(timed, "after handshake timeouts")
        try await timed.close()
    }

    @Test("a TLS handshake that fails or is abandoned gives its slot back")
    func noSlotLeaksThroughTLS() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path, cert = directory.appendingPathComponent("cert.pem").path
        let status = try await offThePool {
            TLSLoopbackTests.spawn(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                    "-nodes", "-subj", "/CN=localhost", "-days", "1", "-keyout", key, "-out", cert])
        }
        try #require(status == 0, "openssl failed")
        let serverTLS = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: [.certificate(try #require(try NIOSSLCertificate.fromPEMFile(cert).first))],
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))))
        let server = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0, tls: serverTLS, handshakeTimeout: .seconds(600),
                                                   maxUnauthenticatedConnections: 2),
            authenticator: Self.auth, handler: EchoHandler())
        let port = try #require(server.localAddress?.port)
        for _ in 0..<10 {
            // Not TLS at all: the server's TLS handler fails and closes.
            let plain = try await RawPeer.connect(port: port)
            try await plain.send("HELLO reel/1 role=agent name=a cnonce=\(Self.nonce())\n")
            await expectCompletes(plain.channel.closeFuture, within: Self.deadline, "closing a plain-text peer")
            // A client that trusts nothing: it abandons the handshake on the certificate.
            await #expect(throws: (any Error).self) {
                _ = try await ReelClient.connect(
                    configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "x",
                                                           tls: try NIOSSLContext(configuration: .makeClientConfiguration()),
                                                           tlsServerHostname: "localhost"),
                    authenticator: Self.auth)
            }
        }
        await Self.expectNoSlotHeld(server, "after failed TLS handshakes")
        try await server.close()
    }
}
