import Foundation
import NIOCore
import NIOEmbedded
import Synchronization
import Testing
@testable import ReelProtocol
import ReelThreadTesting

/// Records what the server reports about refused logins; answers every request with `OK`.
final class RecordingHandler: ReelRequestHandler, Sendable {
    private let recorded = Mutex<[(failure: HandshakeFailure, remoteAddress: String)]>([])

    var failures: [(failure: HandshakeFailure, remoteAddress: String)] { recorded.withLock { $0 } }

    func handle(_ request: Message, from peer: Peer) async throws -> Message { .ok }

    func handshakeFailed(_ failure: HandshakeFailure, remoteAddress: String) {
        recorded.withLock { $0.append((failure, remoteAddress)) }
    }
}

/// Collects frames and, like the real server on a valid `AUTH`, answers `AUTH` with `WELCOME`
/// (or, with `welcomes: false`, does not: the login failed).
final class WelcomingHandler: ChannelInboundHandler {
    typealias InboundIn = Frame
    typealias OutboundOut = Message
    let welcomes: Bool
    var frames: [Frame] = []

    init(welcomes: Bool) { self.welcomes = welcomes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        frames.append(frame)
        if welcomes, frame.line.hasPrefix("AUTH ") {
            context.writeAndFlush(wrapOutboundOut(.welcome(mac: Samples.hashB)), promise: nil)
        }
    }
}

/// proto/PROTOCOL.md §7: before `WELCOME` only short handshake lines are read, never a payload.
@Suite("Pre-authentication limits", .blocking)
struct HandshakeLimitTests {
    static let hello = "HELLO reel/1 role=agent name=render-01 cnonce=\(Samples.hashA)"

    static func handshakeDecoder() -> ReelFrameDecoder {
        ReelFrameDecoder(handshakeLineLength: ProtocolLimits.maxHandshakeLineLength)
    }

    @Test("a pre-auth line declaring a 64 MiB payload is refused on its header; nothing after it is read")
    func payloadBeforeAuthRefused() throws {
        var decoder = Self.handshakeDecoder()
        let header = Self.hello + " size=67108864\n"
        var buffer = ByteBuffer(string: header)
        buffer.writeBytes([UInt8](repeating: 0x41, count: 1 << 20))
        #expect { try decoder.nextFrame(from: &buffer) } throws: { ($0 as? ReelProtocolError)?.code == .notAuthenticated }
        // The decoder consumed exactly the header line: not one payload byte was taken in.
        #expect(buffer.readerIndex == header.utf8.count)
    }

    @Test("any size=, even a tiny one or on a known handshake verb, is refused before WELCOME", arguments: [
        "AUTH mac=\(Samples.hashA) size=1", "SUBMIT size=0", "PUT size=x", hello + " size=2",
    ])
    func anySize(_ line: String) throws {
        var decoder = Self.handshakeDecoder()
        var buffer = ByteBuffer(string: line + "\n")
        #expect { try decoder.nextFrame(from: &buffer) } throws: { ($0 as? ReelProtocolError)?.code == .notAuthenticated }
    }

    @Test("pre-auth lines are capped at the handshake length, and the cap is lifted by WELCOME")
    func handshakeLineCap() throws {
        let cap = ProtocolLimits.maxHandshakeLineLength
        var decoder = Self.handshakeDecoder()
        var exact = ByteBuffer(string: String(repeating: "A", count: cap) + "\n")
        #expect(try decoder.nextFrame(from: &exact)?.line.utf8.count == cap)

        var tooLong = ByteBuffer(string: String(repeating: "A", count: cap + 1))
        #expect { try decoder.nextFrame(from: &tooLong) } throws: { ($0 as? ReelProtocolError)?.code == .lineTooLong }

        var welcomed = Self.handshakeDecoder()
        welcomed.endHandshake()
        #expect(!welcomed.isInHandshake)
        var long = ByteBuffer(string: "SUBMIT size=3\n" + "abc" + String(repeating: "B", count: 4 * cap) + "\n")
        #expect(try welcomed.nextFrame(from: &long) == Frame(line: "SUBMIT size=3", payload: Array("abc".utf8)))
        #expect(try welcomed.nextFrame(from: &long)?.line.utf8.count == 4 * cap)
    }

    @Test("the server decoder ends the handshake phase on a written WELCOME, and on nothing else")
    func onlyWelcomeEndsHandshake() throws {
        var decoder = ReelServerFrameDecoder()
        #expect(decoder.isInHandshake)
        decoder.write(data: .challenge(nonce: Samples.hashB))
        decoder.write(data: .error(code: .authFailed, message: "no"))
        #expect(decoder.isInHandshake)
        decoder.write(data: .welcome(mac: Samples.hashB))
        #expect(!decoder.isInHandshake)
    }

    /// HELLO, AUTH, then at once (one TCP read, as a client might pipeline) a request with a
    /// payload longer than the handshake line cap.
    static let handshakeThenPayload: [UInt8] = {
        let payload = [UInt8](repeating: 0x7B, count: 3000)
        return Array("\(hello)\nAUTH mac=\(Samples.hashA)\nSUBMIT size=\(payload.count)\n".utf8) + payload + Array("PING\n".utf8)
    }()

    @Test("in a pipeline, the payload after AUTH is read with full limits once WELCOME is written — at every split")
    func pipelineSwitchesAtWelcome() throws {
        let bytes = Self.handshakeThenPayload
        for split in stride(from: 0, through: bytes.count, by: 1) {
            let handler = WelcomingHandler(welcomes: true)
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandlers([
                MessageToByteHandler(ReelMessageEncoder()), ByteToMessageHandler(ReelServerFrameDecoder()), handler,
            ])
            try channel.writeInbound(ByteBuffer(bytes: bytes[..<split]))
            try channel.writeInbound(ByteBuffer(bytes: bytes[split...]))
            #expect(handler.frames.map(\.line) == [Self.hello, "AUTH mac=\(Samples.hashA)", "SUBMIT size=3000", "PING"], "split at \(split)")
            #expect(handler.frames.count == 4 && handler.frames[2].payload?.count == 3000, "split at \(split)")
            _ = try channel.finish()
        }
    }

    @Test("in a pipeline without WELCOME (failed login), the same payload is refused")
    func pipelineWithoutWelcomeRefuses() throws {
        let handler = WelcomingHandler(welcomes: false)
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([
            MessageToByteHandler(ReelMessageEncoder()), ByteToMessageHandler(ReelServerFrameDecoder()), handler,
        ])
        #expect {
            try channel.writeInbound(ByteBuffer(bytes: Self.handshakeThenPayload))
        } throws: { ($0 as? ReelProtocolError)?.code == .notAuthenticated }
        #expect(handler.frames.map(\.line) == [Self.hello, "AUTH mac=\(Samples.hashA)"])
    }

    /// The server's real per-connection pipeline on an `EmbeddedChannel`.
    static func serverChannel(handler: RecordingHandler, slots: HandshakeSlots? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let machine = ServerConnectionStateMachine(authenticator: try Authenticator(secret: Samples.secret), replayCache: NonceReplayCache(),
                                                   serverNonce: Samples.hashB, connectionID: 1)
        try channel.pipeline.syncOperations.addHandlers([
            MessageToByteHandler(ReelMessageEncoder()),
            ByteToMessageHandler(ReelServerFrameDecoder()),
            ReelServerConnectionHandler(machine: machine, requestHandler: handler, handshakeTimeout: .seconds(10), handshakeSlots: slots),
        ])
        // Connecting makes the channel active (fires channelActive) with this peer address.
        try channel.connect(to: try SocketAddress(ipAddress: "192.0.2.7", port: 40123)).wait()
        return channel
    }

    static func outboundText(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) { text += buffer.readString(length: buffer.readableBytes) ?? "" }
        return text
    }

    @Test("the server refuses HELLO … size=67108864 on the header line, closes, and reports the peer")
    func serverRefusesPreAuthPayload() throws {
        let handler = RecordingHandler()
        let channel = try Self.serverChannel(handler: handler)
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(string: Self.hello + " size=67108864\n"))
        #expect(try Self.outboundText(channel) == "ERR not_authenticated no payload (size=) is accepted before authentication\n")
        #expect(!channel.isActive, "the connection must be closed after the header line")
        #expect(handler.failures.count == 1)
        #expect(handler.failures.first?.failure.error.code == .notAuthenticated)
        #expect(handler.failures.first?.remoteAddress == "192.0.2.7:40123")
    }

    @Test("a bad MAC is reported with the claimed role and name and the peer address")
    func serverReportsBadMAC() throws {
        let handler = RecordingHandler()
        let channel = try Self.serverChannel(handler: handler)
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(string: "HELLO reel/1 role=client name=mallory%1B%5B31m cnonce=\(Samples.hashA)\nAUTH mac=\(Samples.hashA)\n"))
        #expect(try Self.outboundText(channel) == "CHALLENGE nonce=\(Samples.hashB)\nERR auth_failed authentication failed\n")
        #expect(!channel.isActive)
        let reported = try #require(handler.failures.first)
        #expect(reported.failure == HandshakeFailure(role: .client, name: "mallory\u{1B}[31m", error: ReelProtocolError(.authFailed, "authentication failed")))
        #expect(reported.remoteAddress == "192.0.2.7:40123")
    }

    @Test("unauthenticated connections over the cap are refused at once; a slot frees on WELCOME or close")
    func handshakeSlots() throws {
        let slots = HandshakeSlots(limit: 1)
        let handler = RecordingHandler()
        let first = try Self.serverChannel(handler: handler, slots: slots)
        #expect(first.isActive && slots.count == 1)
        let second = try Self.serverChannel(handler: handler, slots: slots)
        #expect(try Self.outboundText(second).hasPrefix("ERR too_many_connections "))
        #expect(!second.isActive)
        #expect(handler.failures.map(\.failure.error.code) == [.tooManyConnections])
        #expect(slots.count == 1, "a refused connection must not take or give back a slot")

        // The first authenticates: its slot is free again.
        let client = try Authenticator(secret: Samples.secret)
        let mac = client.clientMAC(role: .agent, name: "render-01", serverNonce: Samples.hashB, clientNonce: Samples.hashA)
        try first.writeInbound(ByteBuffer(string: "\(Self.hello)\nAUTH mac=\(mac)\n"))
        #expect(try Self.outboundText(first).contains("WELCOME mac="))
        #expect(slots.count == 0)
        _ = try? first.finish()
        #expect(slots.count == 0, "released once only")

        let third = try Self.serverChannel(handler: handler, slots: slots)
        #expect(slots.count == 1)
        _ = try? third.close().wait()
        #expect(slots.count == 0)
    }
}
