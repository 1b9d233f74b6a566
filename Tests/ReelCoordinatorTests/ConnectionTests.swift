import Foundation
import ReelCoordinator
import ReelProtocol
import Testing

/// Authentication and isolation of bad connections.
@Suite(.database) struct ConnectionTests {
    @Test func aClientWithTheWrongSecretIsRefused() async throws {
        let harness = try await CoordinatorHarness()
        do {
            let client = try await harness.connect(role: .client, name: "mallory", secret: "a different secret, long enough")
            await client.close()
            Issue.record("a client with the wrong secret got in")
        } catch let error as ReelProtocolError {
            #expect(error.code == .authFailed)
        }
        try await harness.stop()
    }

    @Test func garbageClosesOnlyItsOwnConnection() async throws {
        let harness = try await CoordinatorHarness()
        let good = try await harness.connect(role: .client, name: "good@test")

        // Garbage before authenticating: refused and closed.
        let raw = try RawConnection(port: harness.port)
        try raw.send("this is not reel\n")
        let refusal = try raw.readLine()
        #expect(refusal.hasPrefix("ERR not_authenticated") || refusal.hasPrefix("ERR malformed"), "\(refusal)")
        #expect(raw.isClosedByPeer())

        // Authenticated, then an over-long line: ERR line_too_long and closed.
        let authed = try RawConnection(port: harness.port)
        try authed.authenticate(role: "client", name: "raw@test", secret: CoordinatorHarness.secret)
        try authed.send("PING x=\(String(repeating: "y", count: 20_000))\n")
        #expect(try authed.readLine().hasPrefix("ERR line_too_long"))
        #expect(authed.isClosedByPeer())

        // A malformed line after auth is answered but keeps the connection.
        let chatty = try RawConnection(port: harness.port)
        try chatty.authenticate(role: "client", name: "chatty@test", secret: CoordinatorHarness.secret)
        try chatty.send("STATUS bogus=1\n")
        #expect(try chatty.readLine().hasPrefix("ERR malformed"))
        try chatty.send("PING\n")
        #expect(try chatty.readLine() == "PONG")

        // The well-behaved connection never noticed.
        #expect(try await good.send(.ping) == .pong)
        guard case .report = try await good.send(.status(job: nil)) else { Issue.record("STATUS failed"); return }
        await good.close()
        try await harness.stop()
    }
}

/// A blocking loopback socket with a 10 s receive timeout, for sending bytes no client library would.
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure(description: "socket failed") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw TestFailure(description: "connect failed") }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestFailure(description: "send failed") }
            sent += n
        }
    }

    func readLine() throws -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            guard n == 1 else { throw TestFailure(description: "connection closed or timed out after \(line.count) bytes") }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Whether the peer closed (EOF) within the receive timeout.
    func isClosedByPeer() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    func authenticate(role: String, name: String, secret: String) throws {
        let nonce = Authenticator.makeNonce()
        try send("HELLO reel/1 role=\(role) name=\(name) cnonce=\(nonce)\n")
        let challenge = try readLine()
        guard challenge.hasPrefix("CHALLENGE nonce=") else { throw TestFailure(description: "got \(challenge)") }
        let serverNonce = String(challenge.dropFirst("CHALLENGE nonce=".count))
        let authenticator = try Authenticator(secret: Array(secret.utf8))
        let mac = authenticator.clientMAC(role: PeerRole(rawValue: role)!, name: name, serverNonce: serverNonce, clientNonce: nonce)
        try send("AUTH mac=\(mac)\n")
        let welcome = try readLine()
        guard welcome.hasPrefix("WELCOME ") else { throw TestFailure(description: "got \(welcome)") }
    }
}

/// `/metrics` over HTTP.
@Suite(.database) struct MetricsEndpointTests {
    @Test func metricsAreServedAsPrometheusText() async throws {
        let harness = try await CoordinatorHarness()
        guard let port = harness.coordinator.metricsAddress?.port else { Issue.record("no metrics address"); return }
        func scrape() throws -> String {
            let http = try RawConnection(port: port)
            try http.send("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
            var text = ""
            while let line = try? http.readLine() { text += line + "\n" }
            return text
        }
        // The state gauges appear once the reaper loop has published them: wait for that
        // (generous deadline: CI shares its cores), not for a fixed time.
        var text = try scrape()
        let deadline = ContinuousClock.now + .seconds(60)
        while !text.contains(#"reel_jobs{state="queued"}"#), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            text = try scrape()
        }
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.contains("reel_claims_total 0"))
        #expect(text.contains(#"reel_jobs{state="queued"} 0"#))

        let missing = try RawConnection(port: port)
        try missing.send("GET /other HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try missing.readLine().hasPrefix("HTTP/1.1 404"))
        try await harness.stop()
    }

    /// One request on the metrics listener: the whole response.
    static func get(_ path: String, port: Int) throws -> String {
        let http = try RawConnection(port: port)
        try http.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        var text = ""
        while let line = try? http.readLine() { text += line + "\n" }
        return text
    }

    /// What a scaler reads: queued and leased tasks by encoder and the agents wanted, as
    /// Prometheus gauges and as `/scale` JSON. Leased tasks keep agents wanted while they render,
    /// even when their job is paused and nothing is queued.
    @Test func theWorkloadIsExportedForAScaler() async throws {
        let harness = try await CoordinatorHarness(leaseSeconds: 120) {
            $0.scaleTasksPerAgent = 2
            $0.scaleMaxAgents = 10
        }
        let media = try await TestMedia()
        defer { media.cleanUp() }
        guard let port = harness.coordinator.metricsAddress?.port else { Issue.record("no metrics address"); return }
        func scale() throws -> ScaleReport? {
            let text = try Self.get("/scale", port: port)
            guard let body = text.split(whereSeparator: \.isNewline).last(where: { $0.hasPrefix("{") }) else { return nil }
            return try? JSONDecoder().decode(ScaleReport.self, from: Data(body.utf8))
        }
        func until(_ what: String, _ condition: (ScaleReport) -> Bool) async throws -> ScaleReport {
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                if let report = try scale(), condition(report) { return report }
                guard ContinuousClock.now < deadline else { throw TestFailure(description: "\(what): \(String(describing: try scale()))") }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let client = try await harness.connect(role: .client, name: "ops@test")
        let job = try await LeaseTests.queuedJob(client, media)   // video chunks and the audio (and the finalise, not in `total`)
        let total = try await client.status(job: job).tasks.total
        let queued = try await until("the job's tasks are counted") { $0.tasksQueued > 0 }
        #expect(queued.tasksQueued == total, "every task but the finalise, claimable only once the rest are done")
        #expect(queued.encoders["libx264"] == ScaleReport.Work(queued: total - 1, leased: 0))
        #expect(queued.encoders["aac"] == ScaleReport.Work(queued: 1, leased: 0))
        #expect(queued.agentsWanted == (total + 1) / 2, "\(total) tasks at 2 per agent, rounded up")

        let agent = try await harness.agent("scaled")
        guard case .task = try await agent.send(.claim(waitSeconds: 5)) else { Issue.record("no task"); return }
        #expect(try await client.send(.pause(job: job)) == .ok)
        let paused = try await until("the paused job's queued tasks leave the count") { $0.tasksQueued == 0 }
        #expect(paused.tasksLeased == 1 && paused.agentsWanted == 1, "the chunk being rendered keeps its agent: \(paused)")
        let text = try Self.get("/metrics", port: port)
        #expect(text.contains(#"reel_tasks_queued{encoder="libx264"} 0"#), "an encoder with no work left reads 0")
        #expect(text.contains(#"reel_tasks_leased{encoder="libx264"} 1"#) || text.contains(#"reel_tasks_leased{encoder="aac"} 1"#))
        #expect(text.contains("reel_agents_wanted 1"))
        await agent.close(); await client.close()
        try await harness.stop()
    }
}
