import Foundation
import Testing
import ReelAgent
import ReelLogTesting
import ReelCore
import ReelMedia
import ReelThreadTesting
import ReelProtocol

/// The agent against a fake coordinator (a real `ReelServer`, no PostgreSQL): it renders what
/// it is given from sources it can only reach through `FETCH`, uploads byte-identical results,
/// caches sources, and handles lost leases, render errors, dropped connections and shutdown.
///
/// Serialized: the media registry is process-wide, and one agent at a time keeps the 2-core
/// test machine's timing (lease/heartbeat windows) meaningful.
@Suite(.serialized) struct AgentTests {
    @Test func rendersVideoChunkAndAudioByteIdenticalToADirectRender() async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: true)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        let frames = FrameRange(start: 25, end: 50)
        try coordinator.enqueue(fixture.specification(task: 11, kind: .videoChunk, frames: frames))
        try coordinator.enqueue(fixture.specification(task: 12, kind: .audio))

        let running = try RunningAgent.start(on: coordinator)

        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 2 }, "results: \(coordinator.results.map(\.task)) fails: \(coordinator.fails.map(\.reason))")
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()

        // What the agent advertised.
        let caps = try #require(coordinator.capabilities.first)
        #expect(caps.threads == 1 && caps.encoders == ["libx264", "aac"] && caps.cacheBytes == 64 << 20 && !caps.host.isEmpty)

        // The reference: the same tasks rendered directly from the local files.
        let video = try #require(coordinator.results.first { $0.task == 11 })
        let audio = try #require(coordinator.results.first { $0.task == 12 })
        let videoPath = fixture.directory.appendingPathComponent("direct-video.mp4").path
        let audioPath = fixture.directory.appendingPathComponent("direct-audio.m4a").path
        let plan = fixture.localPlan
        let (directVideo, directAudio) = try await offThePool {
            (try ChunkRenderer.renderVideo(plan, frames: frames, to: videoPath, encoderThreads: 1), try ChunkRenderer.renderAudio(plan, to: audioPath))
        }
        #expect(video.bytes == [UInt8](try Data(contentsOf: URL(fileURLWithPath: videoPath))), "video chunk differs from the direct render")
        #expect(audio.bytes == [UInt8](try Data(contentsOf: URL(fileURLWithPath: audioPath))), "audio differs from the direct render")
        #expect(video.sha256 == directVideo.sha256 && audio.sha256 == directAudio.sha256)
        #expect(video.epoch == 1 && audio.epoch == 1)

        // A poster of the video chunk's last frame came before its result: a JPEG at most 320 wide.
        let posters = coordinator.posters
        #expect(posters.map(\.task) == [11], "one poster, for the video chunk only")
        let poster = fixture.directory.appendingPathComponent("poster.jpg").path
        try Data(posters.first?.jpeg ?? []).write(to: URL(fileURLWithPath: poster))
        let posterImage = try StillImage.load(path: poster)
        #expect(posterImage.width <= PosterFrame.maxWidth && posterImage.width > 0)

        // The uploaded chunk decodes (by ffprobe) to exactly its frames.
        let uploaded = fixture.directory.appendingPathComponent("uploaded.mp4").path
        try Data(video.bytes).write(to: URL(fileURLWithPath: uploaded))
        #expect(try await offThePool { try Spawn.videoFrameCount(uploaded) } == frames.count)

        // Sources came only through FETCH, progress was reported, nothing is left behind.
        #expect(coordinator.fetchedBytes > 0 && coordinator.fetchedBytes == Int(running.agent.cache.fetchedBytes))
        #expect(coordinator.progressFrames.last.map { $0 <= Int64(frames.count) } ?? true)
        #expect(coordinator.fails.isEmpty && coordinator.releases.isEmpty)
        #expect(running.workFiles.isEmpty, "left in work/: \(running.workFiles)")
    }

    @Test func aSecondTaskOnTheSameAssetFetchesNothingNew() async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }

        try coordinator.enqueue(fixture.specification(task: 1, kind: .videoChunk, frames: FrameRange(start: 0, end: 25)))
        #expect(await eventually { coordinator.results.count == 1 })
        let fetchedAfterFirst = coordinator.fetchedBytes
        let fetchesAfterFirst = coordinator.fetchCount
        #expect(fetchedAfterFirst > 0)
        let clip = try #require(fixture.manifest["clip"])
        #expect(running.agent.cache.isComplete(hash: clip.sha256, size: clip.size))

        try coordinator.enqueue(fixture.specification(task: 2, kind: .videoChunk, frames: FrameRange(start: 25, end: 50)))
        #expect(await eventually { coordinator.results.count == 2 })
        #expect(coordinator.fetchedBytes == fetchedAfterFirst && coordinator.fetchCount == fetchesAfterFirst,
                "the second task fetched \(coordinator.fetchedBytes - fetchedAfterFirst) more bytes")
        #expect(try await running.group.shutDownGracefully())

        // The cache is on disk: a restarted agent on the same directory fetches nothing either.
        let restarted = try RunningAgent.start(on: coordinator, cacheDirectory: running.cacheDirectory)
        defer { try? FileManager.default.removeItem(at: restarted.cacheDirectory) }
        try coordinator.enqueue(fixture.specification(task: 3, kind: .videoChunk, frames: FrameRange(start: 0, end: 25)))
        #expect(await eventually { coordinator.results.count == 3 })
        #expect(try await restarted.group.shutDownGracefully())
        #expect(restarted.agent.cache.fetchedBytes == 0 && coordinator.fetchedBytes == fetchedAfterFirst)
        #expect(coordinator.results.map(\.bytes)[0] == coordinator.results.map(\.bytes)[2], "same chunk, same bytes")
        await coordinator.stop()
    }

    @Test func aLostLeaseAbandonsTheRenderWithoutAResult() async throws {
        let fixture = try await RenderFixture.make(seconds: 10, audio: false)
        defer { fixture.remove() }
        // A 600 ms lease: the agent heartbeats every ~200 ms; every reply is LOST.
        let coordinator = try FakeCoordinator(leaseMillis: 600)
        try await coordinator.start()
        fixture.serve(on: coordinator)
        coordinator.loseLeases = true
        try coordinator.enqueue(fixture.specification(task: 5, kind: .videoChunk))
        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }

        // After LOST the agent is back to claiming (a second CLAIM) with the render abandoned.
        #expect(await eventually { coordinator.lostSent >= 1 && coordinator.claims >= 2 })
        let claimsAfterLoss = coordinator.claims
        #expect(await eventually { coordinator.claims > claimsAfterLoss }, "the agent keeps claiming after a lost lease")
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        #expect(coordinator.results.isEmpty, "no RESULT for a lost lease")
        #expect(coordinator.fails.isEmpty && coordinator.releases.isEmpty)
        #expect(coordinator.progressFrames.allSatisfy { $0 < Int64(fixture.localPlan.frameCount) }, "the render was cut short")
        #expect(running.workFiles.isEmpty, "abandoned output discarded: \(running.workFiles)")
    }

    @Test func aRenderErrorIsReportedWithFail() async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        // The "clip" the coordinator holds is not media at all.
        let garbage = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        let garbagePath = fixture.directory.appendingPathComponent("garbage.bin").path
        try Data(garbage).write(to: URL(fileURLWithPath: garbagePath))
        let hash = try FileDigest.sha256(path: garbagePath).hex
        coordinator.addAsset(garbage, hash: hash)
        try coordinator.enqueue(fixture.specification(task: 7, kind: .videoChunk, frames: FrameRange(start: 0, end: 25),
                                                      manifest: ["clip": AssetManifestEntry(sha256: hash, size: Int64(garbage.count))]))
        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.fails.count == 1 })
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        let failure = try #require(coordinator.fails.first)
        #expect(failure.task == 7 && failure.epoch == 1 && !failure.reason.isEmpty)
        #expect(failure.reason.contains("reel-asset:\(hash)"), "the reason names the source: \(failure.reason)")
        #expect(coordinator.results.isEmpty)
    }

    @Test func reconnectsAfterTheServerDropsTheConnectionAndAbandonsTheTaskInFlight() async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        coordinator.dropConnectionAtFetch = 1
        let spec = fixture.specification(task: 9, kind: .videoChunk, frames: FrameRange(start: 0, end: 25))
        try coordinator.enqueue(spec, epoch: 1)  // its first FETCH kills the connection
        try coordinator.enqueue(spec, epoch: 2)  // re-queued, as a coordinator would after the lease expired
        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 1 })
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        #expect(coordinator.results.map(\.epoch) == [2], "only the re-claimed task is uploaded")
        #expect(coordinator.connectionCount >= 2 && coordinator.capabilities.count >= 2, "reconnected and re-advertised")
        #expect(coordinator.fails.isEmpty)
    }

    @Test func aResultRefusedWithAnInternalErrorIsSentAgainNotRenderedAgain() async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        // The coordinator's database is down for the first RESULT.
        coordinator.refuseResults = [ReelProtocolError(.internal, "internal error handling RESULT; see the coordinator's log")]
        let frames = FrameRange(start: 0, end: 25)
        try coordinator.enqueue(fixture.specification(task: 51, kind: .videoChunk, frames: frames))  // queued once: no second render possible
        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 1 }, "attempts: \(coordinator.resultAttempts.count)")
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()

        let attempts = coordinator.resultAttempts
        #expect(attempts.count == 2, "refused once, then sent again and accepted")
        #expect(attempts.map(\.task) == [51, 51] && attempts.map(\.epoch) == [1, 1])
        #expect(attempts[0].bytes == attempts[1].bytes && attempts[0].sha256 == attempts[1].sha256, "the same artifact both times")
        #expect(attempts[0].connection == attempts[1].connection, "ERR internal keeps the connection")
        #expect(coordinator.heartbeats >= 1, "the lease is renewed before re-sending")
        // The accepted bytes are the chunk itself, as rendered directly from the local files.
        let direct = fixture.directory.appendingPathComponent("direct.mp4").path
        let plan = fixture.localPlan
        _ = try await offThePool { try ChunkRenderer.renderVideo(plan, frames: frames, to: direct, encoderThreads: 1) }
        #expect(coordinator.results.first?.bytes == [UInt8](try Data(contentsOf: URL(fileURLWithPath: direct))))
        #expect(coordinator.fails.isEmpty && coordinator.releases.isEmpty && coordinator.queuedTasks == 0)
        #expect(running.workFiles.isEmpty)
    }

    @Test func aResultWhoseConnectionClosesIsSentAgainOnTheNextConnection() async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        // As a coordinator going down answers: ERR shutting_down, then it closes the connection.
        coordinator.refuseResults = [ReelProtocolError(.shuttingDown, "the coordinator is shutting down")]
        try coordinator.enqueue(fixture.specification(task: 52, kind: .videoChunk, frames: FrameRange(start: 25, end: 50)))
        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 1 })
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()

        let attempts = coordinator.resultAttempts
        #expect(attempts.count == 2, "refused with the connection, then sent again and accepted")
        #expect(attempts.count == 2 && attempts[0].bytes == attempts[1].bytes && attempts[1].epoch == 1)
        #expect(attempts.count == 2 && attempts[0].connection != attempts[1].connection, "re-sent on a new connection")
        #expect(coordinator.capabilities.count >= 2, "reconnected and re-advertised before re-sending")
        #expect(coordinator.fails.isEmpty && coordinator.queuedTasks == 0)
    }

    @Test func aRefusedResultWhoseLeaseIsLostIsDiscarded() async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        coordinator.refuseResults = [ReelProtocolError(.internal, "internal error")]
        coordinator.loseLeaseOnRefusal = true  // the heartbeat before the retry answers LOST
        try coordinator.enqueue(fixture.specification(task: 53, kind: .videoChunk, frames: FrameRange(start: 0, end: 25)))
        let running = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.lostSent >= 1 && coordinator.claims >= 2 }, "back to claiming after LOST")
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        #expect(coordinator.resultAttempts.count == 1, "no RESULT after LOST")
        #expect(coordinator.results.isEmpty && coordinator.fails.isEmpty)
    }

    @Test func gracefulShutdownLetsTheTaskInFlightFinish() async throws {
        let fixture = try await RenderFixture.make(seconds: 30, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        try coordinator.enqueue(fixture.specification(task: 21, kind: .videoChunk))
        let running = try RunningAgent.start(on: coordinator, grace: .seconds(60))
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { !coordinator.progressFrames.isEmpty })  // the task is underway
        #expect(coordinator.results.isEmpty, "shutdown must begin mid-render for this test to mean anything")
        #expect(try await running.group.shutDownGracefully(), "the agent returns after the task")
        #expect(coordinator.results.map(\.task) == [21] && coordinator.releases.isEmpty)
        #expect(await eventually(timeout: .seconds(120)) { coordinator.closedConnections >= 1 }, "said goodbye")
        #expect(coordinator.queuedTasks == 0)
        await coordinator.stop()
    }

    @Test func gracefulShutdownReleasesATaskThatOutlastsTheGracePeriod() async throws {
        // Long enough that the chunk cannot finish between the first progress report and the
        // shutdown, however fast the machine (with grace 0 it is cancelled, so this costs nothing).
        let fixture = try await RenderFixture.make(seconds: 60, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        try coordinator.enqueue(fixture.specification(task: 31, kind: .videoChunk))
        try coordinator.enqueue(fixture.specification(task: 32, kind: .videoChunk))
        let running = try RunningAgent.start(on: coordinator, grace: .zero)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { !coordinator.progressFrames.isEmpty })  // rendering
        let framesAtShutdown = coordinator.progressFrames.max() ?? 0
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        #expect(coordinator.releases.map(\.task) == [31] && coordinator.releases.map(\.epoch) == [1])
        #expect(coordinator.results.isEmpty, "a released task uploads nothing")
        #expect(coordinator.queuedTasks == 1, "nothing more is claimed while draining")
        // Counted in frames, not seconds, so a slow machine slows both sides alike: the render
        // stopped when the shutdown began, not at the end of the chunk.
        let framesAfter = (coordinator.progressFrames.max() ?? 0) - framesAtShutdown
        #expect(framesAfter < Int64(fixture.localPlan.frameCount / 2), "\(framesAfter) frames rendered after the shutdown began")
        #expect(running.workFiles.isEmpty)
    }

    @Test func slotsRenderConcurrentlyOnTheirOwnConnections() async throws {
        let fixture = try await RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        try coordinator.enqueue(fixture.specification(task: 41, kind: .videoChunk, frames: FrameRange(start: 0, end: 25)))
        try coordinator.enqueue(fixture.specification(task: 42, kind: .videoChunk, frames: FrameRange(start: 25, end: 50)))
        let running = try RunningAgent.start(on: coordinator, slots: 2)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 2 })
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        #expect(Set(coordinator.results.map(\.task)) == [41, 42])
        #expect(coordinator.peerNames == ["test-agent/1", "test-agent/2"], "one connection per slot, distinct names")
        #expect(coordinator.capabilities.allSatisfy { $0.threads == 2 })
        // Concurrent slots read the same asset through one cache; the registry scopes their URLs.
        let clip = try #require(fixture.manifest["clip"])
        #expect(coordinator.fetchedBytes >= Int(clip.size) && coordinator.fetchedBytes <= 2 * Int(clip.size))
    }

    @Test func aCacheDirectoryServesOneAgentAtATime() async throws {
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        let first = try RunningAgent.start(on: coordinator)
        defer { try? FileManager.default.removeItem(at: first.cacheDirectory) }
        #expect(throws: AgentError.self) { try RunningAgent.start(on: coordinator, cacheDirectory: first.cacheDirectory) }
        #expect(try await first.group.shutDownGracefully())
        // Released when the first agent stops.
        let second = try RunningAgent.start(on: coordinator, cacheDirectory: first.cacheDirectory)
        defer { try? FileManager.default.removeItem(at: second.cacheDirectory) }
        #expect(try await second.group.shutDownGracefully())
        await coordinator.stop()
    }

    @Test func aWrongSecretNeverGetsInAndShutdownStillReturnsPromptly() async throws {
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        let cache = try RenderFixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let configuration = AgentConfiguration(
            coordinatorHost: "127.0.0.1", coordinatorPort: coordinator.port, name: "intruder", cacheDirectory: cache,
            claimWaitSeconds: 1, reconnectInitial: .milliseconds(50), reconnectMaximum: .milliseconds(200))
        let log = LogCapture()
        let agent = try Agent(configuration: configuration, authenticator: try Authenticator(secret: Array("not-the-farm-secret!".utf8)),
                              logger: log.logger)
        let group = ServiceGroupHandle(service: agent, logger: testLogger())
        #expect(await eventually(timeout: .seconds(60)) { log.count("refused our credentials") >= 3 }, "several refused attempts")
        #expect(try await group.shutDownGracefully())
        await coordinator.stop()
        #expect(coordinator.capabilities.isEmpty && coordinator.connectionCount == 0)
    }

    @Test func aBackoffSleepEndsAtShutdown() async throws {
        // Refused, the agent waits an hour before trying again; a shutdown must not wait with it.
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        let cache = try RenderFixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let configuration = AgentConfiguration(
            coordinatorHost: "127.0.0.1", coordinatorPort: coordinator.port, name: "patient", cacheDirectory: cache,
            claimWaitSeconds: 1, reconnectInitial: .seconds(3600), reconnectMaximum: .seconds(3600))
        let log = LogCapture()
        let agent = try Agent(configuration: configuration, authenticator: try Authenticator(secret: Array("not-the-farm-secret!".utf8)),
                              logger: log.logger)
        let group = ServiceGroupHandle(service: agent, logger: testLogger())
        #expect(await eventually { log.count("refused our credentials") >= 1 })
        #expect(try await group.shutDownGracefully(), "the agent still waited out its backoff after a minute")
        #expect(log.count("refused our credentials") == 1)
        await coordinator.stop()
    }

    @Test func anUnreachableCoordinatorIsRetriedWithoutHarm() async throws {
        // A port nobody listens on: bind a server, note its port, close it.
        let probe = try FakeCoordinator()
        try await probe.start()
        let port = probe.port
        await probe.stop()
        let cache = try RenderFixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let configuration = AgentConfiguration(
            coordinatorHost: "127.0.0.1", coordinatorPort: port, name: "lonely", cacheDirectory: cache,
            reconnectInitial: .milliseconds(20), reconnectMaximum: .milliseconds(100))
        let log = LogCapture()
        let agent = try Agent(configuration: configuration, authenticator: probe.authenticator, logger: log.logger)
        let group = ServiceGroupHandle(service: agent, logger: testLogger())
        #expect(await eventually(timeout: .seconds(60)) { log.count("cannot reach the coordinator") >= 5 }, "many refused connects")
        #expect(try await group.shutDownGracefully(timeout: .seconds(10)))
    }
}
