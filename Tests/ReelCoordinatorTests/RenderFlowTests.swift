import Foundation
import ReelCore
import ReelKernels
import ReelMedia
import ReelProtocol
import ReelThreadTesting
import Testing

/// The whole farm path through the coordinator: submit with missing assets, ranged upload,
/// planning, claims by an agent that renders for real, finalising, output download.
@Suite(.database) struct RenderFlowTests {
    @Test func submitUploadRenderFinaliseAndDownload() async throws {
        try await withCoordinator(clientName: "alice@test") { media, harness, client in
            let manifest = try media.manifest()

            // SUBMIT: both assets missing, the job waits for them.
            guard case .job(let job, let missing) = try await client.send(.submit(document: try media.submission())) else {
                Issue.record("SUBMIT did not answer JOB"); return
            }
            #expect(Set(missing) == Set(manifest.values.map(\.sha256)))
            var status = try await client.status(job: job)
            #expect(status.state == "waiting_for_assets")
            #expect(status.tasks.total == 0)

            // PUT the clip in 2 ranges: the first leaves it partial.
            let clip = Array(try Data(contentsOf: URL(fileURLWithPath: media.video)))
            let hash = manifest["clip"]!.sha256
            let half = clip.count / 2
            let first = try await client.send(.put(sha256: hash, offset: 0, total: Int64(clip.count), bytes: Array(clip[..<half])))
            #expect(first == .stored(sha256: hash, have: Int64(half), total: Int64(clip.count)))
            // Out of order is refused.
            await #expect(throws: ReelProtocolError.self) {
                _ = try await client.send(.put(sha256: hash, offset: 0, total: Int64(clip.count), bytes: [1, 2, 3]))
            }
            let second = try await client.send(.put(sha256: hash, offset: Int64(half), total: Int64(clip.count), bytes: Array(clip[half...])))
            #expect(second == .stored(sha256: hash, have: Int64(clip.count), total: Int64(clip.count)))
            #expect(try await client.status(job: job).state == "waiting_for_assets")
            try await client.upload(media.audio, ranges: 2)

            // Planned: 50 frames in GOPs of 10, 0.5 s chunks → 5 video chunks + audio.
            status = try await client.status(job: job)
            #expect(status.state == "queued")
            #expect(status.tasks.total == 6)
            #expect(status.frameCount == 50)
            #expect(status.name == "test job")
            #expect(status.agentSeconds == 0 && status.cost == nil && status.unpricedTasks == 0, "no agent has worked on it yet")

            // An agent claims: the TASK payload is a TaskSpecification with reel-asset: URLs.
            let agentClient = try await harness.connect(role: .agent, name: "render-01")
            await #expect(throws: ReelProtocolError.self) { _ = try await agentClient.send(.claim(waitSeconds: 0)) }  // no CAPS yet
            #expect(try await agentClient.send(.capabilities(agentCaps)) == .ok)
            guard case .task(let assignment, let payload) = try await agentClient.send(.claim(waitSeconds: 60)) else {
                Issue.record("CLAIM did not answer TASK"); return
            }
            let spec = try JSONDecoder().decode(TaskSpecification.self, from: Data(payload))
            #expect(spec.task == assignment.task && spec.job == job)
            #expect(spec.kind == .audio && assignment.kind == .audio, "audio is claimed first")
            #expect(spec.frames == FrameRange(start: 0, end: 50), "audio covers the whole composition")
            // The plan is not in the TASK: the agent FETCHes the job's plan document by hash.
            guard case .data(0, let total, let documentBytes) = try await agentClient.send(.fetch(sha256: spec.planDocument.sha256, offset: 0,
                                                                                                  length: 1 << 20)) else {
                Issue.record("FETCH of the plan document failed"); return
            }
            #expect(total == spec.planDocument.size && documentBytes.count == Int(total))
            let document = try JSONDecoder().decode(RenderPlanDocument.self, from: Data(documentBytes))
            #expect(document.plan.assets.values.allSatisfy { $0.url.hasPrefix("reel-asset:") })
            #expect(Set(document.plan.assets.values.map { String($0.url.dropFirst(11)) }).isSubset(of: Set(manifest.values.map(\.sha256))))
            #expect(document.plan.frameCount == 50 && document.plan.export.video.gopFrames == 10)
            #expect(ChunkPlanner.plan(for: document.plan, targetChunkSeconds: Rational(1, 2)).count == 5)

            // AGENTS while it holds the lease: busy, with its task.
            guard case .report(let busyJSON) = try await client.send(.agents) else { Issue.record("AGENTS did not REPORT"); return }
            let busy = try JSONDecoder().decode(AgentsReport.self, from: Data(busyJSON)).agents
            #expect(busy.map(\.state) == ["busy"])
            #expect(busy.first?.currentTask?.hasPrefix("job \(job) task \(assignment.task)") == true, "\(String(describing: busy.first?.currentTask))")
            #expect((busy.first?.heartbeatAgeSeconds ?? 99) < 10)

            // FETCH source ranges by hash.
            guard case .data(let offset, let total, let bytes) = try await agentClient.send(.fetch(sha256: hash, offset: 100, length: 1000)) else {
                Issue.record("FETCH did not answer DATA"); return
            }
            #expect(offset == 100 && total == Int64(clip.count) && bytes == Array(clip[100..<1100]))
            guard case .data(_, _, let tail) = try await agentClient.send(.fetch(sha256: hash, offset: Int64(clip.count - 10), length: 1000)) else {
                Issue.record("FETCH at the end did not answer DATA"); return
            }
            #expect(tail == Array(clip[(clip.count - 10)...]))
            await #expect(throws: ReelProtocolError.self) {
                _ = try await agentClient.send(.fetch(sha256: hash, offset: Int64(clip.count + 1), length: 1))
            }
            await #expect(throws: ReelProtocolError.self) {
                _ = try await agentClient.send(.fetch(sha256: String(repeating: "0", count: 64), offset: 0, length: 1))
            }

            // Heartbeat and progress under the lease; then render for real and upload.
            guard case .lease(let t, let e, let expires, _) = try await agentClient.send(.heartbeat(task: assignment.task, epoch: assignment.epoch)) else {
                Issue.record("HEARTBEAT did not answer LEASE"); return
            }
            #expect(t == assignment.task && e == assignment.epoch && expires >= assignment.expiresAtMillis)
            #expect(try await agentClient.send(.progress(task: assignment.task, epoch: assignment.epoch, frames: 10)) == .ok)
            let agent = RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory())
            try await agent.render(assignment, payload)

            // AGENTS while idle.
            guard case .report(let agentsJSON) = try await client.send(.agents) else { Issue.record("AGENTS did not REPORT"); return }
            let agents = try JSONDecoder().decode(AgentsReport.self, from: Data(agentsJSON))
            #expect(agents.agents.map(\.name) == ["render-01"])
            #expect(agents.agents.first?.threads == 1)
            #expect(agents.agents.first?.state == "idle")

            let rest = try await agent.work()
            #expect(rest.count == 5)
            #expect(rest.allSatisfy { $0.kind == .videoChunk }, "finalise tasks never go to agents")

            let done = try await client.waitForState(job: job, "done")
            #expect(done.framesDone == 50 && done.progress == 1)
            #expect(done.tasks.done == 6)
            #expect((done.outputBytes ?? 0) > 0)
            // The agent's six tasks, each from its claim to its result (the finaliser is the coordinator's).
            #expect((done.agentSeconds ?? 0) > 0, "\(String(describing: done.agentSeconds))")
            #expect((done.agentSeconds ?? .infinity) < Double(done.updatedAtMillis - done.submittedAtMillis) / 1000 + 1)

            let output = media.directory.appendingPathComponent("output.mp4").path
            try await client.download(job: job, to: output)
            #expect(try await countFrames(output) == 50)
            // This agent sent no POSTER, so the finaliser made the job's poster from the output's last
            // frame: its picture is that frame's, not the one before (4.6 of 255: testsrc2 moves
            // every frame). The poster's loss is about 2 (2.1 measured): JPEG's quantisation, and
            // its BT.601 full-range Y'CbCr re-coded into the frame's BT.709, where each pixel's luma
            // takes on its block's quantised chroma (about 1 when the output was BT.601 too).
            let poster = try StillImage.load(path: harness.storage + "/posters/\(job).jpg")
            let source = try VideoFrameSource(path: output)
            let last = try source.frame(at: Rational(49, 25)), previous = try source.frame(at: Rational(48, 25))
            #expect(poster.width == last.width && poster.height == last.height, "160x120 is under the 320-pixel poster width")
            func meanLumaDifference(_ frame: YUVImage) -> Double {
                var total = 0
                for row in 0..<frame.height {
                    for column in 0..<frame.width { total += abs(Int(frame.y.row(row)[column]) - Int(poster.y.row(row)[column])) }
                }
                return Double(total) / Double(frame.width * frame.height)
            }
            let toLast = meanLumaDifference(last), toPrevious = meanLumaDifference(previous)
            #expect(toLast < 3 && toLast < toPrevious - 1, "to the last frame \(toLast), to the one before \(toPrevious)")
            let audioStreams = try await offThePool {
                try runProgram(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name", "-of", "csv=p=0", output]).stdout
            }
            #expect(audioStreams.contains("aac"))

            let metrics = harness.coordinator.metrics.exposition()
            #expect(metrics.contains("reel_claims_total 6"))
            #expect(metrics.contains("reel_frames_rendered_total 50"))

            // A closed agent connection marks the agent offline.
            await agentClient.close()
            try await eventually("the agent shows as offline") {
                guard case .report(let json) = try await client.send(.agents) else { return false }
                return try JSONDecoder().decode(AgentsReport.self, from: Data(json)).agents.first?.state == "offline"
            }
        }
    }

    @Test func invalidCompositionIsRefusedWithTheFirstProblem() async throws {
        let harness = try await CoordinatorHarness()
        let client = try await harness.connect(role: .client, name: "bob@test")
        let request = SubmitRequest(composition: #"{"formatVersion": 99, "assets": {}, "tracks": [], "bogus": true}"#, assets: [:], settings: JobSettings())
        do {
            _ = try await client.send(.submit(document: Array(try JSONEncoder().encode(request))))
            Issue.record("an empty composition was accepted")
        } catch let error as ReelProtocolError {
            #expect(error.code == .invalidComposition)
            #expect(!error.message.isEmpty)
        }
        // The connection stays usable after an ERR.
        #expect(try await client.send(.ping) == .pong)

        // A composition that parses but whose asset is not media: accepted, then the job fails at planning.
        let bogus = FileManager.default.temporaryDirectory.appendingPathComponent("reel-coord-bogus-\(UUID().uuidString).mp4").path
        defer { unlink(bogus) }
        try Data("this is text, not a movie".utf8).write(to: URL(fileURLWithPath: bogus))
        let (size, hash) = try FileDigest.sha256(path: bogus)
        let text = """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": 1}, "at": 0}]}]}
            """
        let submission = SubmitRequest(composition: text, assets: ["clip": AssetManifestEntry(sha256: hash, size: Int64(size))],
                                       settings: JobSettings())
        guard case .job(let job, let missing) = try await client.send(.submit(document: Array(try JSONEncoder().encode(submission)))) else {
            Issue.record("SUBMIT did not answer JOB"); return
        }
        #expect(missing == [hash])
        try await client.upload(bogus)
        let failed = try await client.waitForState(job: job, "failed", seconds: 10)
        #expect(failed.error?.contains("invalid composition") == true, "\(String(describing: failed.error))")
        await client.close()
        try await harness.stop()
    }
}
