import Foundation
import Logging
import NIOCore
import NIOPosix
import ReelAgent
import ReelLogTesting
import ReelProtocol
import Testing

/// Agents against a coordinator whose pre-authentication limit is full (`ERR
/// too_many_connections`): a busy coordinator is retried soon, not backed off from like a
/// failed one, and a herd of agents larger than the limit all register, and register again
/// after the coordinator restarts, without one giving up.
@Suite(.serialized) struct HerdTests {
    @Test func aBusyRefusalIsRetriedWithinTheBusyWindowNotAfterTheBackoff() async throws {
        let coordinator = try FakeCoordinator()
        // Held slots are not timed out during the test.
        try await coordinator.start(handshakeLimit: 2, handshakeTimeout: .seconds(600))
        // Two peers hold both handshake slots: each was answered CHALLENGE, so the server counted it.
        var holders: [HandshakeHolder] = []
        for index in 0..<2 { holders.append(try await HandshakeHolder.hold(port: coordinator.port, index: index)) }

        // A failed attempt would make this agent wait most of an hour; a busy one, 50 ms at most.
        let cache = try RenderFixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        var configuration = AgentConfiguration(
            coordinatorHost: "127.0.0.1", coordinatorPort: coordinator.port, name: "patient", cacheDirectory: cache,
            claimWaitSeconds: 1, reconnectInitial: .seconds(3600), reconnectMaximum: .seconds(3600))
        configuration.reconnectBusyWindow = .milliseconds(50)
        let log = LogCapture()
        let agent = try Agent(configuration: configuration, authenticator: coordinator.authenticator, logger: log.logger)
        let group = ServiceGroupHandle(service: agent, logger: testLogger())
        #expect(await eventually { log.count("the coordinator is busy") >= 3 }, "refused as busy, and retried soon, several times")

        for holder in holders { try await holder.channel.close() }
        #expect(await eventually { coordinator.capabilities.count == 1 }, "registered once a slot was free")
        #expect(log.count("cannot reach the coordinator") == 0, "no refusal counted as a failure")
        #expect(try await group.shutDownGracefully())
        await coordinator.stop()
    }

    @Test func aHerdLargerThanTheLimitRegistersAndRegistersAgainAfterARestart() async throws {
        let agents = 100
        // Claims held a second: a hundred agents polling stay light on a shared machine.
        let coordinator = try FakeCoordinator(claimHoldMillis: 1000)
        try await coordinator.startOnFixedPort(handshakeLimit: 8)
        let log = LogCapture()
        var running: [(agent: Agent, group: ServiceGroupHandle, cache: URL)] = []
        defer { for agent in running { try? FileManager.default.removeItem(at: agent.cache) } }
        for index in 0..<agents {
            let cache = try RenderFixture.tempDirectory()
            var configuration = AgentConfiguration(
                coordinatorHost: "127.0.0.1", coordinatorPort: coordinator.port, name: "herd-\(index)", cacheDirectory: cache,
                claimWaitSeconds: 1, reconnectInitial: .milliseconds(100), reconnectMaximum: .seconds(2))
            configuration.reconnectBusyWindow = .milliseconds(200)
            let agent = try Agent(configuration: configuration, authenticator: coordinator.authenticator, logger: log.logger)
            running.append((agent, ServiceGroupHandle(service: agent, logger: testLogger()), cache))
        }
        #expect(await eventually { coordinator.registeredNames(since: 0).count == agents }, "every agent registered")

        // The coordinator goes away and comes back on the same port, with the same small limit.
        let mark = coordinator.capabilities.count
        try await coordinator.restart(handshakeLimit: 8)
        #expect(await eventually { coordinator.registeredNames(since: mark).count == agents },
                "every agent registered again: \(coordinator.registeredNames(since: mark).count) of \(agents)")
        #expect(running.allSatisfy { !$0.group.hasExited }, "no agent gave up")
        #expect(log.count("refused our credentials") == 0)

        for agent in running { await agent.group.triggerShutdown() }
        for agent in running { #expect(try await agent.group.waitForExit(timeout: .seconds(120))) }
        await coordinator.stop()
    }
}

/// A raw connection that says `HELLO` and stops there, holding one of the server's handshake
/// slots until it closes.
struct HandshakeHolder {
    let channel: Channel

    /// Passes the first received line to a continuation.
    final class FirstLine: ChannelInboundHandler, Sendable {
        typealias InboundIn = Frame
        let continuation: AsyncStream<String>.Continuation
        init(_ continuation: AsyncStream<String>.Continuation) { self.continuation = continuation }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { continuation.yield(unwrapInboundIn(data).line) }
        func channelInactive(context: ChannelHandlerContext) { continuation.finish() }
        func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
    }

    static func hold(port: Int, index: Int) async throws -> HandshakeHolder {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ReelFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(FirstLine(continuation))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        let nonce = String(repeating: String(index % 10), count: 64)
        try await channel.writeAndFlush(ByteBuffer(string: "HELLO reel/1 role=agent name=holder-\(index) cnonce=\(nonce)\n"))
        var iterator = lines.makeAsyncIterator()
        let line = await iterator.next()
        guard line?.hasPrefix("CHALLENGE ") == true else {
            throw AgentError.protocolViolation("a slot holder was answered \(line ?? "nothing")")
        }
        return HandshakeHolder(channel: channel)
    }
}
