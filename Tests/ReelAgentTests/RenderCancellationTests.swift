import Foundation
import Testing
@testable import ReelAgent
import ReelCore
import ReelMedia
import ReelThreadTesting

/// The mechanism behind abandoning a render on `LOST` or shutdown: the progress callback throws
/// once the control is cancelled, the renderer stops at that frame and leaves no output.
@Suite(.blocking) struct RenderCancellationTests {
    @Test func cancellingStopsTheRenderAtTheNextFrameWithoutOutput() async throws {
        let fixture = try await RenderFixture.make(seconds: 4, audio: false)
        defer { fixture.remove() }
        let control = RenderControl()
        let output = fixture.directory.appendingPathComponent("cancelled.mp4").path
        let plan = fixture.localPlan
        let result = await ThreadBridge.runOnDedicatedThread(name: "test-render") { () throws -> ChunkArtifact in
            try ChunkRenderer.renderVideo(plan, frames: FrameRange(start: 0, end: plan.frameCount), to: output, encoderThreads: 1) { done in
                if done == 10 { control.cancel() }
                try control.report(framesDone: done)
            }
        }
        #expect(throws: AgentError.self) { try result.get() }
        #expect(control.framesDone == 10, "stopped at the frame where it was cancelled")
        #expect(!FileManager.default.fileExists(atPath: output))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).filter { $0.contains("cancelled") }
        #expect(leftovers.isEmpty, "no partial file: \(leftovers)")
    }

    @Test func aCancelledControlRefusesFetches() {
        let control = RenderControl()
        #expect(throws: Never.self) { try control.checkCancelled() }
        control.cancel()
        #expect(throws: AgentError.self) { try control.checkCancelled() }
    }
}
