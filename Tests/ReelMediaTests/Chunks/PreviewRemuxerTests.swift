import Foundation
import ReelCore
import ReelThreadTesting
import Testing
@testable import ReelMedia

/// The preview's CMAF pieces, checked by ffmpeg's own demuxer and decoder: one init segment
/// followed by the chunks' media segments is one clean stream with every frame, timestamps
/// continuous across the joins, decode times absolute, and the same pictures as the chunks.
@Suite(.blocking) struct PreviewRemuxerTests {
    /// Three chunks of a 3 s, 25 fps render (x264 `medium`: B-frames, so decoding leads presentation).
    static func renderChunks(in dir: URL) throws -> (plan: RenderPlan, chunks: [ChunkArtifact]) {
        let clip = dir.appendingPathComponent("clip.mp4").path
        try TestMedia.run(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=3", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip])
        let json = """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": 3}, "at": 0}]}],
             "export": {"preset": "medium", "video": {"gopDuration": 0.4}}}
            """
        let path = dir.appendingPathComponent("c.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: path)
        let ranges = ChunkPlanner.plan(for: plan, targetChunkSeconds: 1, minimumChunks: 3)
        #expect(ranges.count >= 3)
        let chunks = try ranges.enumerated().map {
            try ChunkRenderer.renderVideo(plan, frames: $0.element, to: dir.appendingPathComponent("k\($0.offset).mp4").path, encoderThreads: 1)
        }
        return (plan, chunks)
    }

    /// `ffprobe` packets of the first video stream: (pts, dts) in seconds.
    static func packetTimes(_ path: String) throws -> [(pts: Double, dts: Double)] {
        let out = try TestMedia.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,dts_time",
                                                 "-of", "csv=p=0", path]).stdout
        return String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",").map { Double($0) }
            guard fields.count == 2, let pts = fields[0], let dts = fields[1] else { return nil }
            return (pts, dts)
        }
    }

    /// Per-frame MD5s of the decoded pictures (ffmpeg's framemd5), in presentation order.
    static func pictureHashes(_ path: String) throws -> [String] {
        let out = try TestMedia.tool("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"]).stdout
        return String(decoding: out, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    @Test func initPlusSegmentsIsOneCleanStreamWithEveryFrameOnOneTimeline() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (plan, chunks) = try Self.renderChunks(in: dir)
        let fd = plan.frameDuration
        var pieces: [PreviewRemuxer.Pieces] = []
        for chunk in chunks {
            pieces.append(try PreviewRemuxer.remux(chunk: chunk.path, frames: chunk.frames, frameDuration: fd,
                                                   scratch: dir.appendingPathComponent("scratch.mp4").path))
        }
        #expect(Set(pieces.map(\.initSegment)).count == 1, "every chunk of one render has the same init segment")
        #expect(pieces.map(\.frames) == chunks.map(\.frames.count))
        let delay = pieces[0].reorderDelay
        #expect(delay > 0, "x264 medium reorders: decoding leads presentation")
        #expect(pieces.allSatisfy { $0.reorderDelay == delay })

        // Each segment alone after the init segment: its first sample decodes at its first frame's time.
        for (chunk, piece) in zip(chunks, pieces) {
            let single = dir.appendingPathComponent("single-\(chunk.frames.start).mp4")
            try Data(piece.initSegment + piece.mediaSegment).write(to: single)
            let times = try Self.packetTimes(single.path)
            #expect(times.count == chunk.frames.count)
            #expect(abs((times.first?.dts ?? -1) - Double(chunk.frames.start) * fd.seconds) < 1e-6, "tfdt is absolute: \(times.prefix(2))")
        }

        // The whole preview as a player reads it: init, then every segment in order.
        let whole = dir.appendingPathComponent("preview.mp4")
        try Data(pieces[0].initSegment + pieces.flatMap(\.mediaSegment)).write(to: whole)
        let decodeErrors = try TestMedia.tool("ffmpeg", ["-nostdin", "-v", "error", "-i", whole.path, "-f", "null", "-"]).stderr
        #expect(decodeErrors.isEmpty, "the preview decodes cleanly: \(decodeErrors)")
        let times = try Self.packetTimes(whole.path)
        #expect(times.count == plan.frameCount)
        // Decode times step one frame at a time across the joins; presentation times are every
        // frame once, shifted by the reorder delay.
        for (i, t) in times.enumerated() {
            #expect(abs(t.dts - Double(i) * fd.seconds) < 1e-6, "packet \(i) dts \(t.dts)")
        }
        let presented = times.map(\.pts).sorted()
        for (i, pts) in presented.enumerated() {
            #expect(abs(pts - Double(Int64(i) + delay) * fd.seconds) < 1e-6, "frame \(i) pts \(pts)")
        }
        // The same pictures as the chunks themselves, decoded by ffmpeg.
        let expected = try chunks.flatMap { try Self.pictureHashes($0.path) }
        #expect(expected.count == plan.frameCount)
        #expect(try Self.pictureHashes(whole.path) == expected)
    }

    @Test func aChunkThatIsNotWhatThePlanSaysIsRefused() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (plan, chunks) = try Self.renderChunks(in: dir)
        let scratch = dir.appendingPathComponent("scratch.mp4").path
        let chunk = chunks[1]
        #expect(throws: PreviewRemuxer.Failure.self) {
            try PreviewRemuxer.remux(chunk: chunk.path, frames: FrameRange(start: chunk.frames.start, end: chunk.frames.end + 1),
                                     frameDuration: plan.frameDuration, scratch: scratch)
        }
        // Another frame rate puts its timestamps off the grid.
        #expect(throws: PreviewRemuxer.Failure.self) {
            try PreviewRemuxer.remux(chunk: chunk.path, frames: chunk.frames, frameDuration: Rational(1, 7), scratch: scratch)
        }
        #expect(!FileManager.default.fileExists(atPath: scratch), "the scratch file is removed")
        // A chunk encoded with other settings has another init segment: the coordinator holds each
        // chunk's init segment against the first one's and ends the playlist before such a chunk.
        var otherPlan = plan
        otherPlan.export.video.x264Preset = "ultrafast"
        let odd = try ChunkRenderer.renderVideo(otherPlan, frames: chunk.frames, to: dir.appendingPathComponent("odd.mp4").path, encoderThreads: 1)
        let usual = try PreviewRemuxer.remux(chunk: chunk.path, frames: chunk.frames, frameDuration: plan.frameDuration, scratch: scratch)
        let other = try PreviewRemuxer.remux(chunk: odd.path, frames: chunk.frames, frameDuration: plan.frameDuration, scratch: scratch)
        #expect(usual.initSegment != other.initSegment)
        #expect(throws: (any Error).self) {
            try PreviewRemuxer.split(Array("not an mp4 at all".utf8), what: "junk")
        }
    }
}
