import Foundation
import NIOSSL
import ReelThreadTesting
import Testing
import ReelAgent
import ReelLogTesting
import ReelCore

/// `--tls-ca`: the agent trusts only the given CA and verifies the coordinator's name.
@Suite(.serialized) struct AgentTLSTests {
    @Test func rendersOverTLSTrustingOnlyTheGivenCA() async throws {
        let dir = try RenderFixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = dir.appendingPathComponent("key.pem").path, cert = dir.appendingPathComponent("cert.pem").path
        try await offThePool {
            try Spawn.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                               "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                                               "-days", "1", "-keyout", key, "-out", cert])
        }
        let serverTLS = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(cert).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))))

        let fixture = try await RenderFixture.make(seconds: 1, audio: false)

        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start(tls: serverTLS)
        fixture.serve(on: coordinator)
        try coordinator.enqueue(fixture.specification(task: 51, kind: .videoChunk, frames: FrameRange(start: 0, end: 25)))
        let running = try RunningAgent.start(on: coordinator, tls: try AgentConfiguration.tlsContext(trustingCAFile: cert),
                                             tlsServerHostname: "localhost")
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        // Generous: the first connection attempts may time out on a loaded machine, and the
        // agent then backs off before trying again.
        #expect(await eventually(timeout: .seconds(240)) { coordinator.results.count == 1 })
        #expect(try await running.group.shutDownGracefully())

        // The wrong server name is refused before HELLO: nothing reaches the handler.
        let connectionsBefore = coordinator.connectionCount
        let log = LogCapture()
        let wrongName = try RunningAgent.start(on: coordinator, tls: try AgentConfiguration.tlsContext(trustingCAFile: cert),
                                               tlsServerHostname: "render-hq.example", logger: log.logger)
        defer { try? FileManager.default.removeItem(at: wrongName.cacheDirectory) }
        #expect(await eventually(timeout: .seconds(60)) { log.count("cannot reach the coordinator") >= 2 }, "refused twice")
        #expect(try await wrongName.group.shutDownGracefully())
        await coordinator.stop()
        #expect(coordinator.connectionCount == connectionsBefore)
        #expect(coordinator.results.map(\.task) == [51])
    }
}
