import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// docs/output-guarantees.md 4–5: chunks joined by stream copy are indistinguishable from a one-piece
/// render, and re-rendering a chunk changes nothing.
@Suite(.blocking) struct ChunkedRenderTests {
    /// 8 s of moving pictures (two clips, a cut at 3.5 s off the GOP grid) under a steady tone.
    static func composition(_ dir: URL) throws -> String {
        let a = dir.appendingPathComponent("a.mp4").path, b = dir.appendingPathComponent("b.mp4").path
        let tone = dir.appendingPathComponent("tone.wav").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=4", "-c:v", "libx264", "-pix_fmt", "yuv420p", a])
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc=s=160x120:r=25:d=5", "-c:v", "libx264", "-pix_fmt", "yuv420p", b])
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=9", "-af", "volume=0.5", tone])
        return """
            {"formatVersion": 1,
             "assets": {"a": {"url": "\(a)"}, "b": {"url": "\(b)"}, "tone": {"url": "\(tone)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [
                           {"asset": "a", "sourceRange": {"start": 0.5, "duration": 3.5}, "at": 0},
                           {"asset": "b", "sourceRange": {"start": 0, "duration": 4.5}, "at": 3.5}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "tone", "sourceRange": {"start": 0, "duration": 8}, "at": 0}]}],
             "export": {"preset": "medium", "video": {"gopDuration": 1}}}
            """
    }

    @Test func chunkedRenderMatchesSingleChunkFrameForFrame() throws {
        let dir = try Media.tempDirectory()
        let json = try Self.composition(dir)
        let (single, plan) = try Fixtures.render(json, in: dir, name: "single.mp4", workers: 1, chunkSeconds: 100)
        let (chunked, _) = try Fixtures.render(json, in: dir, name: "chunked.mp4", workers: 2, chunkSeconds: 2)
        #expect(plan.export.video.crf == 23)
        let chunks = LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: 2))
        #expect(chunks.count >= 4, "8 s in 2 s chunks: \(chunks)")

        let one = try Media.lumaFrames(single, width: 160, height: 120)
        let many = try Media.lumaFrames(chunked, width: 160, height: 120)
        #expect(one.count == 200 && many.count == 200)
        var worst = Double.infinity
        for k in 0..<min(one.count, many.count) {
            let psnr = Media.psnr(one[k], many[k])
            worst = min(worst, psnr)
            #expect(psnr >= 38, "frame \(k): PSNR \(psnr) dB between chunked and single-chunk renders")
        }

        // A keyframe at every chunk start; DTS strictly increasing; clean decode.
        let r = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,dts,flags", "-of", "csv=p=0", chunked])
        let packets = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",") }
        #expect(packets.count == 200)
        let dts = packets.compactMap { Int($0[1]) }
        #expect(zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 }, "DTS must increase strictly")
        let ptsStep = (packets.compactMap { Int($0[0]) }.sorted().dropFirst().first ?? 1)
        let keyframes = Set(packets.filter { $0[2].hasPrefix("K") }.compactMap { Int($0[0]) }.map { $0 / max(ptsStep, 1) })
        for chunk in chunks { #expect(keyframes.contains(chunk.start), "no keyframe at chunk start frame \(chunk.start)") }
        #expect(try Media.decodeErrors(chunked).isEmpty)
    }

    @Test func steadyToneHasNoGapOrClickAtChunkJoins() throws {
        let dir = try Media.tempDirectory()
        let (out, plan) = try Fixtures.render(try Self.composition(dir), in: dir, workers: 2, chunkSeconds: 2)
        let chunks = LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: 2))
        let stereo = try Media.audioSamples(out)
        let left = stride(from: 0, to: stereo.count, by: 2).map { stereo[$0] }
        #expect(abs(Double(left.count) - 8 * 48000) <= 1024, "audio lasts \(Double(left.count) / 48000) s")
        let level = Media.rms(left[48000..<96000])
        // No gap: every 1024-sample window after the first keeps ≥ 80 % of the level.
        for start in stride(from: 1024, to: left.count - 2048, by: 1024) {
            let w = Media.rms(left[start..<(start + 1024)])
            #expect(w >= 0.8 * level, "window at \(Double(start) / 48000) s has level \(w / level) of the tone")
        }
        // No click: the second difference near each join is no larger than in the middle of a chunk.
        func maxSecondDifference(_ range: Range<Int>) -> Float {
            var m: Float = 0
            for i in range.lowerBound + 1..<(range.upperBound - 1) { m = max(m, abs(left[i + 1] - 2 * left[i] + left[i - 1])) }
            return m
        }
        let middle = maxSecondDifference(Int(0.7 * 48000)..<Int(1.3 * 48000))
        for chunk in chunks.dropFirst() {
            let at = Int((plan.frameDuration * chunk.start).seconds * 48000)
            let near = maxSecondDifference((at - 2400)..<(at + 2400))
            #expect(near <= middle * 1.05, "second difference \(near) at the join \(Double(at) / 48000) s vs \(middle) mid-chunk")
        }
    }

    @Test func sameCompositionGivesIdenticalChunksAndVideoPackets() throws {
        let dir = try Media.tempDirectory()
        let json = try Self.composition(dir)
        let path = dir.appendingPathComponent("c.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: path)
        let ranges = ChunkPlanner.plan(for: plan, targetChunkSeconds: 2, minimumChunks: 1)
        // One chunk rendered twice in one process (a long-lived agent), then its neighbour in between.
        let first = try ChunkRenderer.renderVideo(plan, frames: ranges[1], to: dir.appendingPathComponent("x1.mp4").path, encoderThreads: 2)
        _ = try ChunkRenderer.renderVideo(plan, frames: ranges[2], to: dir.appendingPathComponent("y.mp4").path, encoderThreads: 2)
        let again = try ChunkRenderer.renderVideo(plan, frames: ranges[1], to: dir.appendingPathComponent("x2.mp4").path, encoderThreads: 2)
        #expect(first.sha256 == again.sha256 && first.byteCount == again.byteCount)

        let (out1, _) = try Fixtures.render(json, in: dir, name: "r1.mp4", workers: 1, chunkSeconds: 2)
        let (out2, _) = try Fixtures.render(json, in: dir, name: "r2.mp4", workers: 2, chunkSeconds: 2)
        func videoPacketsMD5(_ p: String) throws -> String {
            String(decoding: try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", p, "-map", "0:v", "-c", "copy", "-f", "md5", "-"]).stdout, as: UTF8.self)
        }
        #expect(try videoPacketsMD5(out1) == videoPacketsMD5(out2))
    }

    @Test func finaliserRefusesMissingDamagedOrMismatchedChunksAndWritesNothing() throws {
        let dir = try Media.tempDirectory()
        let path = dir.appendingPathComponent("c.json").path
        try Self.composition(dir).write(toFile: path, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: path)
        let ranges = ChunkPlanner.plan(for: plan, targetChunkSeconds: 4, minimumChunks: 1)
        var chunks = try ranges.enumerated().map {
            try ChunkRenderer.renderVideo(plan, frames: $0.element, to: dir.appendingPathComponent("k\($0.offset).mp4").path, encoderThreads: 2)
        }
        let audio = try ChunkRenderer.renderAudio(plan, to: dir.appendingPathComponent("a.m4a").path)
        let output = dir.appendingPathComponent("final.mp4").path

        func refuses(_ chunks: [ChunkArtifact], _ expected: String) {
            do {
                _ = try Finaliser.finalise(plan, chunks: chunks, audio: audio, to: output)
                Issue.record("finaliser accepted bad chunks (\(expected))")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: output), "no output after a refused finalise")
        }
        refuses(Array(chunks.dropLast()), "have no chunk")
        // A flipped byte: the checksum catches it.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: chunks[0].path))
        bytes[bytes.count / 2] ^= 0xFF
        let damaged = dir.appendingPathComponent("damaged.mp4").path
        try bytes.write(to: URL(fileURLWithPath: damaged))
        var withDamaged = chunks
        withDamaged[0].path = damaged
        refuses(withDamaged, "damaged")
        // A chunk encoded with other settings (CRF changes the SPS/PPS extradata? no — preset does).
        var otherPlan = plan
        otherPlan.export.video.x264Preset = "ultrafast"
        let odd = try ChunkRenderer.renderVideo(otherPlan, frames: ranges[1], to: dir.appendingPathComponent("odd.mp4").path, encoderThreads: 2)
        var mismatched = chunks
        mismatched[1] = odd
        refuses(mismatched, "different parameters")

        let report = try Finaliser.finalise(plan, chunks: chunks, audio: audio, to: output)
        #expect(report.frames == plan.frameCount)
        #expect(try Media.framePTS(output).count == plan.frameCount)
        chunks.removeAll()
    }
    /// Results are stored by content hash, so a still held longer than a chunk gives
    /// chunks that are one file. The finaliser must read that file once per chunk.
    @Test func identicalChunksSharingOneStoredFileAreJoined() throws {
        let dir = try Media.tempDirectory()
        let still = dir.appendingPathComponent("still.png").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=1:d=1", "-frames:v", "1", still])
        let json = """
            {"formatVersion": 1, "assets": {"s": {"url": "\(still)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "s", "at": 0, "duration": 6}]}],
             "videoComposition": {"renderSize": {"width": 160, "height": 120}, "frameDuration": "1/25",
               "instructions": [{"timeRange": {"start": 0, "duration": 6}, "layerInstructions": [{"track": 1}]}]},
             "export": {"preset": "medium", "video": {"gopDuration": 1}}}
            """
        let path = dir.appendingPathComponent("still.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: path)
        let ranges = ChunkPlanner.plan(for: plan, targetChunkSeconds: 2, minimumChunks: 1)
        #expect(ranges.count == 3)
        var chunks = try ranges.enumerated().map {
            try ChunkRenderer.renderVideo(plan, frames: $0.element, to: dir.appendingPathComponent("c\($0.offset).mp4").path, encoderThreads: 2)
        }
        #expect(Set(chunks.map(\.sha256)).count == 1, "a held still gives byte-identical chunks")
        // As in the coordinator's content-addressed store: every chunk names the same file.
        for i in chunks.indices { chunks[i].path = chunks[0].path }
        let output = dir.appendingPathComponent("still.mp4").path
        let report = try Finaliser.finalise(plan, chunks: chunks, audio: nil, to: output)
        #expect(report.frames == 150)
        let pts = try Media.framePTS(output)
        #expect(pts.count == 150)
        #expect(zip(pts, pts.dropFirst()).allSatisfy { $0 < $1 })
        #expect(try Media.decodeErrors(output).isEmpty)
    }
}
