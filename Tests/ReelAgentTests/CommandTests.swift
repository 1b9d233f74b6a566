import Foundation
import ReelThreadTesting
import Testing
import ReelAgent
import ReelCore

/// `reel agent` as an operator runs it: exit status 1 with a message saying what to fix for a
/// bad secret file or coordinator address; logs on stderr; SIGTERM drains and exits 0.
@Suite(.serialized, .blocking) struct AgentCommandTests {
    static func secretFile(_ contents: String) throws -> String {
        let path = try RenderFixture.tempDirectory().appendingPathComponent("secret").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600) // secret files must be private
        return path
    }

    @Test(arguments: [
        (["--coordinator", "127.0.0.1:7400", "--secret-file", "/nonexistent/reel-secret"], "secret file"),
        (["--coordinator", "127.0.0.1:7400"], "REEL_SECRET_FILE"),
    ])
    func missingSecretFileExitsOne(arguments: [String], mention: String) throws {
        let r = try Spawn.run(Spawn.reel, ["agent"] + arguments, environment: ["REEL_SECRET_FILE": ""], allowFailure: true)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains(mention), "\(r.stderr)")
    }

    @Test func aWorldReadableSecretExitsOneSayingChmod600() throws {
        let path = try Self.secretFile("a-long-enough-shared-secret\n")
        chmod(path, 0o644)
        let r = try Spawn.run(Spawn.reel, ["agent", "--coordinator", "127.0.0.1:7400", "--secret-file", path], allowFailure: true)
        #expect(r.status == 1)
        #expect(r.stderr.contains("the secret file \(path) is accessible to other users (mode 0644)") && r.stderr.contains("chmod 600 \(path)"),
                "\(r.stderr)")
    }

    @Test func shortSecretExitsOneSayingHowLong() throws {
        let path = try Self.secretFile("too-short\n")
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent()) }
        let r = try Spawn.run(Spawn.reel, ["agent", "--coordinator", "127.0.0.1:7400", "--secret-file", path], allowFailure: true)
        #expect(r.status == 1)
        #expect(r.stderr.contains("at least 16 bytes"), "\(r.stderr)")
    }

    @Test(arguments: ["render-hq", "render-hq:", ":7400", "render-hq:99999", "render-hq:74x0", "a:b:c"])
    func malformedCoordinatorExitsOne(endpoint: String) throws {
        let path = try Self.secretFile("a-long-enough-shared-secret\n")
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent()) }
        let r = try Spawn.run(Spawn.reel, ["agent", "--coordinator", endpoint, "--secret-file", path], allowFailure: true)
        #expect(r.status == 1)
        #expect(r.stderr.contains("HOST:PORT"), "\(r.stderr)")
    }

    @Test func missingCoordinatorExitsOneNamingTheEnvironmentVariable() throws {
        let path = try Self.secretFile("a-long-enough-shared-secret\n")
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent()) }
        let r = try Spawn.run(Spawn.reel, ["agent", "--secret-file", path], environment: ["REEL_COORDINATOR": ""], allowFailure: true)
        #expect(r.status == 1)
        #expect(r.stderr.contains("REEL_COORDINATOR"), "\(r.stderr)")
    }

    /// The real `reel agent` in a fresh folder (its cache, a private secret file, its stdout
    /// and stderr files) with `arguments` after `--cache`, configured through the environment to
    /// use `coordinator`.
    static func spawnAgent(on coordinator: FakeCoordinator, _ arguments: [String]) throws -> (pid: pid_t, dir: URL, out: String, err: String) {
        let dir = try RenderFixture.tempDirectory()
        let secret = dir.appendingPathComponent("secret").path
        try "agent-tests-shared-secret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        chmod(secret, 0o600)
        let out = dir.appendingPathComponent("out").path, err = dir.appendingPathComponent("err").path
        let pid = try Spawn.start(Spawn.reel, ["agent", "--cache", dir.appendingPathComponent("cache").path] + arguments,
                                  environment: ["REEL_COORDINATOR": "127.0.0.1:\(coordinator.port)", "REEL_SECRET_FILE": secret],
                                  stdout: out, stderr: err)
        return (pid, dir, out, err)
    }

    /// The real binary against the fake coordinator, configured through the environment:
    /// it connects, advertises, renders a task from fetched sources, logs to stderr only, and
    /// exits 0 on SIGTERM.
    @Test func runsFromTheEnvironmentLogsOnStderrAndExitsZeroOnSIGTERM() async throws {
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        let fixture = try await RenderFixture.make(seconds: 1, audio: false)
        defer { fixture.remove() }
        fixture.serve(on: coordinator)
        try coordinator.enqueue(fixture.specification(task: 61, kind: .videoChunk, frames: FrameRange(start: 0, end: 25)))
        let (pid, dir, out, err) = try Self.spawnAgent(on: coordinator, ["--claim-wait", "1"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let advertised = await eventually(timeout: .seconds(60)) { !coordinator.results.isEmpty }
        if !advertised { kill(pid, SIGKILL) }
        #expect(advertised, "\((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")")
        kill(pid, SIGTERM)
        let status = await Spawn.wait(pid, timeout: .seconds(40))
        await coordinator.stop()
        let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("connected"), "\(stderr)")
        #expect(((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").isEmpty, "stdout stays clean")
        #expect(coordinator.capabilities.first?.threads == 1)
        #expect(coordinator.results.map(\.task) == [61] && coordinator.fetchedBytes > 0)
        #expect(stderr.contains("result accepted"), "\(stderr)")
    }
}

extension AgentCommandTests {
    /// `reel drain` as the binary sees it: its claim answered `DRAIN`, it says `DRAINING` with
    /// its --drain-seconds, goodbye, and exits 0 (a drained agent ending by itself is normal).
    @Test func aDrainedAgentSaysSoAndExitsZero() async throws {
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        let (pid, dir, _, err) = try Self.spawnAgent(on: coordinator, ["--claim-wait", "1", "--threads", "2", "--drain-seconds", "90"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let connected = await eventually(timeout: .seconds(60)) { coordinator.capabilities.count == 2 }
        #expect(connected && coordinator.capabilities.allSatisfy(\.drain), "both slots say they understand DRAIN")
        coordinator.drainAgents = true
        let status = await Spawn.wait(pid, timeout: .seconds(60))   // killed, and nil, if it does not exit
        await coordinator.stop()
        let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(stderr)")
        #expect(coordinator.drainingSaid.contains(90), "DRAINING seconds=90: \(coordinator.drainingSaid)")
        #expect(stderr.contains("drained; said goodbye"), "\(stderr)")
    }

    /// `--exit-when-idle`: with nothing to claim for that long, the agent drains and exits 0.
    @Test func anIdleAgentExitsWhenToldTo() async throws {
        let coordinator = try FakeCoordinator(claimHoldMillis: 200)
        try await coordinator.start()
        let (pid, dir, _, err) = try Self.spawnAgent(on: coordinator, ["--claim-wait", "1", "--exit-when-idle", "2"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let status = await Spawn.wait(pid, timeout: .seconds(90))
        await coordinator.stop()
        let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(stderr)")
        #expect(coordinator.claims >= 2, "it asked for work before giving up: \(coordinator.claims) claims")
        #expect(stderr.contains("--exit-when-idle"), "\(stderr)")
    }
}

/// Pure parts of the configuration.
@Suite(.blocking) struct AgentConfigurationTests {
    @Test func defaultNameIsStablePerCacheDirectoryAndHasNoPid() {
        let a = AgentConfiguration.defaultName(cacheDirectory: URL(fileURLWithPath: "/var/cache/reel"), host: "render-01")
        let b = AgentConfiguration.defaultName(cacheDirectory: URL(fileURLWithPath: "/var/cache/reel"), host: "render-01")
        let c = AgentConfiguration.defaultName(cacheDirectory: URL(fileURLWithPath: "/srv/reel-cache"), host: "render-01")
        #expect(a == b && a != c && a.hasPrefix("render-01-"))
        #expect(!a.contains(String(getpid())))
    }

    @Test func defaultCacheDirectoryFollowsXDG() {
        #expect(AgentConfiguration.defaultCacheDirectory(environment: ["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"]).path == "/x/cache/reel")
        #expect(AgentConfiguration.defaultCacheDirectory(environment: ["HOME": "/home/u"]).path == "/home/u/.cache/reel")
    }
}
