import Foundation
import ReelCore
import ReelMedia
import ReelProtocol
import Testing

/// The agent uploads results in parts read from the rendered file (`RESULTPART`), resumes from
/// what the coordinator holds after a dropped connection, and stops at a stale epoch.
@Suite struct ResultUploadTests {
    static let partBytes = 4_096

    /// The bytes of the chunk rendered directly from the fixture's local files.
    static func directRender(_ fixture: RenderFixture, frames: FrameRange) throws -> [UInt8] {
        let direct = fixture.directory.appendingPathComponent("direct-\(frames.start).mp4").path
        _ = try ChunkRenderer.renderVideo(fixture.localPlan, frames: frames, to: direct, encoderThreads: 1)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: direct)))
    }

    @Test func aResultIsSentInPartsReadFromItsFile() async throws {
        let fixture = try RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        let frames = FrameRange(start: 0, end: 25)
        try coordinator.enqueue(fixture.specification(task: 61, kind: .videoChunk, frames: frames))
        let running = try RunningAgent.start(on: coordinator, resultPartBytes: Self.partBytes)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 1 })
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()

        let direct = try Self.directRender(fixture, frames: frames)
        #expect(direct.count > 3 * Self.partBytes, "the chunk needs several parts (\(direct.count) bytes)")
        // Compared by digest: a failure names two hashes, not two chunks' worth of bytes.
        #expect(coordinator.results.first.map { FileDigest.sha256(bytes: $0.bytes) } == FileDigest.sha256(bytes: direct))
        let parts = coordinator.parts
        #expect(parts.map(\.offset) == Array(stride(from: Int64(0), to: Int64(direct.count), by: Self.partBytes)), "in order, each once")
        #expect(parts.dropLast().allSatisfy { $0.count == Self.partBytes } && parts.allSatisfy { $0.epoch == 1 })
        #expect(coordinator.fails.isEmpty && coordinator.partialUploads == 0)
        #expect(running.workFiles.isEmpty, "the rendered file is deleted once accepted")
    }

    @Test func anUploadCutOffByADroppedConnectionResumesFromTheBytesHeld() async throws {
        let fixture = try RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        // The third part arrives and is stored, but its reply never reaches the agent.
        coordinator.dropConnectionAfterPart = 3
        let frames = FrameRange(start: 25, end: 50)
        try coordinator.enqueue(fixture.specification(task: 62, kind: .videoChunk, frames: frames))
        let running = try RunningAgent.start(on: coordinator, resultPartBytes: Self.partBytes)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.results.count == 1 })
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()

        let direct = try Self.directRender(fixture, frames: frames)
        #expect(coordinator.results.first.map { FileDigest.sha256(bytes: $0.bytes) } == FileDigest.sha256(bytes: direct),
                "the resumed upload is the chunk, byte for byte")
        let parts = coordinator.parts
        let p = Int64(Self.partBytes)
        // 0, p, 2p (stored, reply lost) | new connection: 2p again (bad_range have=3p), then 3p, 4p, …
        #expect(Array(parts.prefix(5).map(\.offset)) == [0, p, 2 * p, 2 * p, 3 * p], "\(parts.map(\.offset))")
        #expect(parts.count >= 5 && parts[2].connection != parts[3].connection, "resumed on a new connection")
        #expect(parts.count == Int((Int64(direct.count) + p - 1) / p) + 1, "one part sent twice, nothing else again")
        #expect(coordinator.fails.isEmpty && coordinator.queuedTasks == 0)
        #expect(running.workFiles.isEmpty)
    }

    @Test func aStaleEpochMidUploadStopsTheUploadAndDiscardsTheResult() async throws {
        let fixture = try RenderFixture.make(seconds: 2, audio: false)
        defer { fixture.remove() }
        let coordinator = try FakeCoordinator()
        try await coordinator.start()
        fixture.serve(on: coordinator)
        coordinator.staleEpochAtPart = 2
        try coordinator.enqueue(fixture.specification(task: 63, kind: .videoChunk, frames: FrameRange(start: 0, end: 25)))
        let running = try RunningAgent.start(on: coordinator, resultPartBytes: Self.partBytes)
        defer { try? FileManager.default.removeItem(at: running.cacheDirectory) }
        #expect(await eventually { coordinator.parts.count >= 2 && coordinator.claims >= 2 }, "back to claiming after the refusal")
        #expect(try await running.group.shutDownGracefully())
        await coordinator.stop()
        #expect(coordinator.parts.count == 2, "no part after stale_epoch")
        #expect(coordinator.results.isEmpty && coordinator.fails.isEmpty)
        #expect(running.workFiles.isEmpty, "the discarded result's file is deleted")
    }
}
