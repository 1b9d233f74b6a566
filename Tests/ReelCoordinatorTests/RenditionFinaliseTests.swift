import Foundation
import Testing
@testable import ReelCoordinator
import ReelCore
import ReelProtocol
import ReelScheduling
import ReelStore
import ReelStoreTesting
import ReelThreadTesting

/// The finaliser and renditions reused from other jobs' ladder archives: an archive that went
/// missing between planning and the finalise is not the job's fault — the chunks that took
/// renditions from it are rendered again, encoding those renditions themselves, and the job
/// finishes with every rendition's frames.
@Suite(.blocking) struct RenditionFinaliseTests {
    static func composition(smallBitRate: Int) -> String {
        """
        {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": 2}, "at": 0}]}],
         "export": {"fileType": "hls", "segmentDuration": 0.4, "video": {"gopDuration": 0.4, "x264Preset": "veryfast"},
                    "renditions": [{"name": "big", "renderSize": {"width": 160, "height": 120}, "video": {"bitRate": 300000}},
                                   {"name": "small", "renderSize": {"width": 96, "height": 72}, "video": {"bitRate": \(smallBitRate)}}]}}
        """
    }

    static func submit(_ client: ReelClient, _ media: TestMedia, smallBitRate: Int) async throws -> Int64 {
        var manifest = try media.manifest()
        manifest["tone"] = nil
        let request = SubmitRequest(composition: composition(smallBitRate: smallBitRate), assets: manifest,
                                    settings: JobSettings(chunkSeconds: Rational(4, 5), encoderThreads: 1))
        guard case .job(let job, _) = try await client.send(.submit(document: Array(try JSONEncoder().encode(request)))) else {
            throw TestFailure(description: "SUBMIT did not answer JOB")
        }
        return job
    }

    @Test func aReusedArchiveLostBeforeTheFinaliseIsEncodedAgainByTheChunksThatTookFromIt() async throws {
        try await withCoordinator { media, harness, client in
            try await client.upload(media.video)
            let agentClient = try await harness.agent("render-01")
            let work = try makeWorkDirectory()
            defer { try? FileManager.default.removeItem(atPath: work) }
            let agent = RenderingAgent(client: agentClient, harness: harness, workDirectory: work)
            let first = try await Self.submit(client, media, smallBitRate: 60_000)
            try await agent.work()
            _ = try await client.waitForState(job: first, "done", seconds: 60)
            let firstArchives = Set(try harness.storedResults())

            // "small" changed: every chunk encodes only it, taking "big" from the first job's archives.
            let second = try await Self.submit(client, media, smallBitRate: 50_000)
            guard case .task(let one, let payload) = try await agentClient.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
            let spec = try JSONDecoder().decode(TaskSpecification.self, from: Data(payload))
            #expect(spec.job == second && spec.renditions == ["small"], "\(spec)")
            try await agent.render(one, payload)
            // The first job's archives vanish before the other chunks are done (and the finalise runs).
            for hash in firstArchives { unlink(harness.resultPath(hash)) }
            var rendered = try await agent.work()
            let deadline = Date().addingTimeInterval(60)
            while try await client.status(job: second).state != "done", Date() < deadline { rendered += try await agent.work(claimWait: 1) }
            let chunks = 3
            #expect(rendered.filter { $0.kind == .videoChunk }.count == 2 * chunks - 1,
                    "the other chunks once, then every chunk again with both renditions: \(rendered.map(\.task))")
            _ = try await client.waitForState(job: second, "done", seconds: 60)
            let schema = harness.schema
            let rows = try await offThePool { try schema.store().jobs.renditions(ofJob: second) }
            #expect(rows.count == chunks && rows.values.allSatisfy { $0.allSatisfy { $0.source == nil } }, "\(rows)")

            // The output archive (proto/PROTOCOL.md §4.6) installed as a folder, as clients do.
            let archive = media.directory.appendingPathComponent("out.tar").path
            try await client.download(job: second, to: archive)
            try FileManager.default.createDirectory(at: media.directory.appendingPathComponent("out"), withIntermediateDirectories: true)
            try LadderArchive.installFolder(archive: archive, masterPath: media.directory.appendingPathComponent("out/master.m3u8").path)
            for (name, size) in [("big", "160,120"), ("small", "96,72")] {
                let playlist = media.directory.appendingPathComponent("out/\(name)/index.m3u8").path
                let probe = try await offThePool {
                    try runProgram(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                                    "-show_entries", "stream=width,height,nb_read_frames", "-of", "csv=p=0", playlist]).stdout
                }
                #expect(probe.split(separator: "\n").first.map(String.init) == "\(size),50", "\(name): \(probe)")
            }
            await agentClient.close()
        }
    }
}
