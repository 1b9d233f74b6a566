import Foundation
import ReelCore
import ReelMedia
import ReelProtocol
import ReelThreadTesting
import Testing

/// The agent uploads results in parts read from the rendered file (`RESULTPART`), resumes from
/// what the coordinator holds after a dropped connection, and stops at a stale epoch.
@Suite struct ResultUploadTests {
    static let partBytes = 4_096

    /// What one agent run left behind.
    struct Run {
        let fixture: RenderFixture
        let coordinator: FakeCoordinator
        /// Files left in the agent's work directory after it shut down.
        let workFiles: [String]
    }

    /// Renders chunk `frames` as task `task` with an agent sending parts of `partBytes` to a fake
    /// coordinator set up by `configure`, until `done` holds (or a generous deadline passes);
    /// then shuts both down. The caller removes `fixture`.
    static func run(task: Int64, frames: FrameRange, partBytes: Int = partBytes, leaseMillis: Int64 = 30_000,
                    configure: (FakeCoordinator) -> Void = { _ in }, until done: @escaping (FakeCoordinator) -> Bool) async throws -> Run {
        let fixture = try await RenderFixture.make(seconds: 2, audio: false)
        let coordinator = try FakeCoordinator(leaseMillis: leaseMillis)
        try await coordinator.start()
        fixture.serve(on: coordinator)
        configure(coordinator)
        try coordinator.enqueue(fixture.specification(task: task, kind: .videoChunk, frames: frames))
        let running = try RunningAgent.start(on: coordinator, resultPartBytes: partBytes)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { done(coordinator) }, "parts: \(coordinator.parts.map(\.offset))")
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        return Run(fixture: fixture, coordinator: coordinator, workFiles: running.workFiles)
    }

    /// The SHA-256 of the chunk rendered directly from the fixture's local files (compared by
    /// digest: a failure names two hashes, not two chunks' worth of bytes).
    static func directRender(_ fixture: RenderFixture, frames: FrameRange) async throws -> (size: Int, sha256: String) {
        let direct = fixture.directory.appendingPathComponent("direct-\(frames.start).mp4").path
        let plan = fixture.localPlan
        let artifact = try await offThePool { try ChunkRenderer.renderVideo(plan, frames: frames, to: direct, encoderThreads: 1) }
        return (artifact.byteCount, artifact.sha256)
    }

    static func accepted(_ coordinator: FakeCoordinator) -> [String] {
        coordinator.results.map { FileDigest.sha256(bytes: $0.bytes) }
    }

    @Test func aResultIsSentInPartsReadFromItsFile() async throws {
        let frames = FrameRange(start: 0, end: 25)
        let run = try await Self.run(task: 61, frames: frames) { $0.results.count == 1 }
        defer { run.fixture.remove() }
        let direct = try await Self.directRender(run.fixture, frames: frames)
        #expect(direct.size > 3 * Self.partBytes, "the chunk needs several parts (\(direct.size) bytes)")
        #expect(Self.accepted(run.coordinator) == [direct.sha256])
        let parts = run.coordinator.parts
        #expect(parts.map(\.offset) == Array(stride(from: Int64(0), to: Int64(direct.size), by: Self.partBytes)), "in order, each once")
        #expect(parts.dropLast().allSatisfy { $0.count == Self.partBytes } && parts.allSatisfy { $0.epoch == 1 })
        #expect(run.coordinator.fails.isEmpty && run.coordinator.partialUploads == 0)
        #expect(run.workFiles.isEmpty, "the rendered file is deleted once accepted")
    }

    @Test func anUploadCutOffByADroppedConnectionResumesFromTheBytesHeld() async throws {
        let frames = FrameRange(start: 25, end: 50)
        // The third part arrives and is stored, but its reply never reaches the agent.
        let run = try await Self.run(task: 62, frames: frames, configure: { $0.dropConnectionAfterPart = 3 }) { $0.results.count == 1 }
        defer { run.fixture.remove() }
        let direct = try await Self.directRender(run.fixture, frames: frames)
        #expect(Self.accepted(run.coordinator) == [direct.sha256], "the resumed upload is the chunk, byte for byte")
        let parts = run.coordinator.parts
        let p = Int64(Self.partBytes)
        // 0, p, 2p (stored, reply lost) | new connection: 2p again (bad_range have=3p), then 3p, 4p, …
        #expect(Array(parts.prefix(5).map(\.offset)) == [0, p, 2 * p, 2 * p, 3 * p], "\(parts.map(\.offset))")
        #expect(parts.count >= 5 && parts[2].connection != parts[3].connection, "resumed on a new connection")
        #expect(parts.count == Int((Int64(direct.size) + p - 1) / p) + 1, "one part sent twice, nothing else again")
        #expect(run.coordinator.fails.isEmpty && run.coordinator.queuedTasks == 0)
        #expect(run.workFiles.isEmpty)
    }

    @Test
    func anUploadLongerThanTheLeaseIsKeptAliveByItsPartsAcrossAReconnect() async throws {
        // A 10 s lease and a slow link: each 512-byte part takes 1 s, and the connection drops
        // after 45 of them. The upload outlasts the lease as last renewed by a heartbeat several
        // times over; only the expiry each STORED carries keeps the agent from taking its result
        // for expired when the connection drops. The seconds are those of the clock both sides
        // read leases by, which only the parts move: a loaded machine cannot expire the lease,
        // and the test takes no longer than the render.
        let p = 512, dropAfter = 45
        let run = try await Self.run(task: 64, frames: FrameRange(start: 0, end: 25), partBytes: p, leaseMillis: 10_000, configure: {
            $0.onPart = { [clock = $0.clock] in clock.advance(millis: 1_000) }
            $0.dropConnectionAfterPart = dropAfter
        }) { $0.results.count == 1 || $0.claims >= 2 }  // accepted, or (the failure) discarded and claiming again
        defer { run.fixture.remove() }
        let parts = run.coordinator.parts
        #expect(parts.count > dropAfter && parts[dropAfter - 1].connection != parts[dropAfter].connection, "resumed on a new connection")
        #expect(Self.accepted(run.coordinator).count == 1 && run.coordinator.fails.isEmpty)
        #expect(parts.first?.offset == 0 && parts.filter { $0.offset == 0 }.count == 1, "never started over")
    }

    @Test func aStaleEpochMidUploadStopsTheUploadAndDiscardsTheResult() async throws {
        let run = try await Self.run(task: 63, frames: FrameRange(start: 0, end: 25), configure: { $0.staleEpochAtPart = 2 }) {
            $0.parts.count >= 2 && $0.claims >= 2  // back to claiming after the refusal
        }
        defer { run.fixture.remove() }
        #expect(run.coordinator.parts.count == 2, "no part after stale_epoch")
        #expect(run.coordinator.results.isEmpty && run.coordinator.fails.isEmpty)
        #expect(run.workFiles.isEmpty, "the discarded result's file is deleted")
    }
}
