import NIOCore
import NIOPosix
import Testing
@testable import ReelProtocol

/// A fake coordinator: answers a few verbs, records the peers it saw.
struct EchoHandler: ReelRequestHandler {
    func handle(_ request: Message, from peer: Peer) async throws -> Message {
        switch request {
        case .status(let job, _):
            return .report(json: Array("{\"job\":\(job ?? 0),\"peer\":\"\(peer.name)\"}".utf8))
        case .fetch(_, let offset, let length):
            let total: Int64 = 100_000
            let end = min(total, offset + length)
            guard offset <= total else { throw ReelProtocolError(.badRange, "offset beyond end") }
            return .data(offset: offset, total: total, bytes: (offset..<end).map { UInt8(truncatingIfNeeded: $0) })
        case .capabilities: return .ok
        case .cancel: throw ReelProtocolError(.conflict, "job is done")
        case .retry: throw CancellationError() // any non-protocol error becomes ERR internal
        default: return .ok
        }
    }
}

@Suite("Loopback server and client", .timeLimit(.minutes(1)))
struct LoopbackTests {
    static let auth = try! Authenticator(secret: Samples.secret)

    static func startServer(handshakeTimeout: TimeAmount = .seconds(30)) async throws -> (ReelServer, Int) {
        let server = try await ReelServer.start(
            // Generous: a loaded CI machine (browsers starting beside this test) can take seconds
            // to run a handshake; nothing here relies on the timeout firing.
            configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0, handshakeTimeout: handshakeTimeout),
            authenticator: auth, handler: EchoHandler())
        return (server, try #require(server.localAddress?.port))
    }

    @Test("handshake, requests, errors; a garbage client is closed while the first keeps working")
    func endToEnd() async throws {
        let (server, port) = try await Self.startServer()
        let client = try await ReelClient.connect(
            configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "alice@test"),
            authenticator: Self.auth)
        #expect(try await client.request(.status(job: 4)) == .report(json: Array(#"{"job":4,"peer":"alice@test"}"#.utf8)))
        await #expect(throws: ReelProtocolError(.conflict, "job is done")) { try await client.request(.cancel(job: 1)) }
        await #expect(throws: ReelProtocolError(.internal, "internal error")) { try await client.request(.retry(job: 1)) }
        await #expect(throws: ReelProtocolError.self) { try await client.request(.claim(waitSeconds: 0)) } // forbidden

        // A raw peer sends garbage: the server closes it.
        let garbage = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).get()
        try await garbage.writeAndFlush(ByteBuffer(bytes: (0..<20_000).map { _ in UInt8(ascii: "x") }))
        try await garbage.closeFuture.get()

        // Concurrent requests from the first client are serialised and all answered.
        let replies = try await withThrowingTaskGroup(of: Message.self) { group in
            for job in 1...20 { group.addTask { try await client.request(.status(job: Int64(job))) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.count == 20)
        await client.close()
        try await server.close()
    }

    @Test("an agent fetches a source in ranges")
    func agentFetch() async throws {
        let (server, port) = try await Self.startServer()
        let agent = try await ReelClient.connect(
            configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .agent, name: "render-01"),
            authenticator: Self.auth)
        _ = try await agent.request(.capabilities(AgentCapabilities(threads: 2, encoders: ["libx264"], cacheBytes: 0, host: "h")))
        var received: [UInt8] = []
        var offset: Int64 = 0
        while true {
            guard case let .data(at, total, bytes) = try await agent.request(.fetch(sha256: Samples.hashA, offset: offset, length: 30_000)) else {
                Issue.record("not DATA"); break
            }
            #expect(at == offset)
            received += bytes
            offset += Int64(bytes.count)
            if offset == total { break }
        }
        #expect(received == (0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        await agent.close()
        try await server.close()
    }

    @Test("a wrong secret fails the connection attempt")
    func wrongSecret() async throws {
        let (server, port) = try await Self.startServer()
        let wrong = try Authenticator(secret: Array("definitely not the secret".utf8))
        await #expect(throws: ReelProtocolError.self) {
            _ = try await ReelClient.connect(
                configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .agent, name: "x"),
                authenticator: wrong)
        }
        try await server.close()
    }

    @Test("a silent peer is told ERR timeout and closed once the handshake timeout has passed, not before")
    func handshakeTimeout() async throws {
        let timeout = Duration.seconds(2)
        let (server, port) = try await Self.startServer(handshakeTimeout: .seconds(2))
        // Taken before connecting, so the server's timer (started at accept) runs within it.
        let start = ContinuousClock.now
        let silent = try await RawPeer.connect(port: port)
        let line = await silent.nextLine()
        // Not any close: the handshake timeout's own error, and only after the timeout (a lower
        // bound, which a loaded machine can only make later).
        #expect(line?.hasPrefix("ERR timeout ") == true, "\(line ?? "closed without a word")")
        try await silent.channel.closeFuture.get()
        #expect(ContinuousClock.now - start >= timeout, "closed after \(ContinuousClock.now - start)")
        try await server.close()
    }
}

/// Answers a request only once the test opens its gate, so a shutdown can find it in flight
/// (one request per handler).
final class GatedHandler: ReelRequestHandler, Sendable {
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation
    private let gate: AsyncStream<Void>
    private let opener: AsyncStream<Void>.Continuation

    init() {
        (arrivals, arrived) = AsyncStream<Void>.makeStream()
        (gate, opener) = AsyncStream<Void>.makeStream()
    }

    func handle(_ request: Message, from peer: Peer) async throws -> Message {
        arrived.yield()
        for await _ in gate {}
        return .report(json: Array("slow".utf8))
    }

    func open() { opener.finish() }
}

@Suite("Graceful shutdown", .timeLimit(.minutes(1)))
struct ShutdownTests {
    @Test("in-flight requests get their reply, idle connections are told shutting_down, then all close")
    func drain() async throws {
        let auth = try Authenticator(secret: Samples.secret)
        let handler = GatedHandler()
        let server = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0), authenticator: auth, handler: handler)
        let port = try #require(server.localAddress?.port)
        let configuration = ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "c")
        let busy = try await ReelClient.connect(configuration: configuration, authenticator: auth)
        let idle = try await ReelClient.connect(configuration: configuration, authenticator: auth)
        async let reply = busy.request(.status(job: nil))
        for await _ in handler.arrivals { break }
        let shutdown = Task { try await server.shutdown() }
        try await idle.closeFuture.get() // the drain has begun, with the request still in flight
        handler.open()
        #expect(try await reply == .report(json: Array("slow".utf8)))
        try await busy.closeFuture.get()
        try await shutdown.value
        await #expect(throws: ReelProtocolError.self) { try await idle.request(.ping) }
    }
}

@Suite("Client request timeout", .timeLimit(.minutes(1)))
struct ClientTimeoutTests {
    @Test("a reply that does not come in time fails the request with timeout and closes the connection")
    func timeout() async throws {
        let auth = try Authenticator(secret: Samples.secret)
        let handler = GatedHandler()
        // A generous handshake timeout, as in LoopbackTests: a loaded machine once took over 10 s
        // to get here, and the server's default 10 s must not be what closes the connection.
        let server = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0, handshakeTimeout: .seconds(120)),
            authenticator: auth, handler: handler)
        let port = try #require(server.localAddress?.port)
        let client = try await ReelClient.connect(
            configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "c"), authenticator: auth)
        do {
            _ = try await client.request(.status(job: nil), timeout: .milliseconds(50))
            Issue.record("no timeout")
        } catch let error as ReelProtocolError {
            #expect(error.code == .timeout, "\(error)")
        }
        try await client.closeFuture.get()
        handler.open()
        try await server.close()
    }
}
