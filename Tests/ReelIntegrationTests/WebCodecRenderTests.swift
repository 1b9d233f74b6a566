import Crypto
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// VP9 (and AV1) through the chunked path `reel render` uses — chunks of whole GOPs
/// rendered separately and joined by stream copy — checked with ffmpeg's decoder and PSNR filter
/// against the H.264 `highest` render of the same composition and against the source.
///
/// Small pictures and fast encoder speeds keep the encodes short on two shared cores: VP9 at
/// `vp9Speed` 8 (libvpx's realtime mode), AV1 at `svtav1Preset` 12.
@Suite(.blocking) struct WebCodecRenderTests {
    static let width = 320, height = 180, frames = 100

    /// 4 s of testsrc2 at 25 fps stored losslessly, with a 500 Hz tone.
    static func source(in dir: URL) throws -> String {
        let path = dir.appendingPathComponent("src.mov").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=\(width)x\(height):r=25:d=4", "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000:duration=4",
                          "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", path])
        return path
    }

    /// The source on a video track and an audio track, with `export`; GOPs of 1 s.
    static func composition(source: String, export: String) -> String {
        """
        {"formatVersion": 1, "assets": {"src": {"url": "\(source)"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "src", "at": 0}]},
                    {"id": 2, "mediaType": "audio", "segments": [{"asset": "src", "at": 0}]}],
         "export": \(export)}
        """
    }

    /// Renders with `workers` workers in chunks of `chunkSeconds`; returns the output, the plan,
    /// the number of video chunks and the wall time.
    static func render(_ json: String, in dir: URL, name: String, chunkSeconds: Rational, workers: Int = 2) throws
        -> (path: String, plan: RenderPlan, chunks: Int, seconds: Double) {
        let start = Date()
        let (path, plan) = try Fixtures.render(json, in: dir, name: name, workers: workers, chunkSeconds: chunkSeconds)
        let chunks = LocalRender.chunks(for: plan, options: .init(workers: workers, chunkSeconds: chunkSeconds)).count
        return (path, plan, chunks, Date().timeIntervalSince(start))
    }

    static func sha256(_ path: String) throws -> String {
        SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))).map { String(format: "%02x", $0) }.joined()
    }

    static func formatName(_ path: String) throws -> String {
        ((try Media.probe(path)["format"] as? [String: Any])?["format_name"] as? String) ?? "?"
    }

    /// Keyframe times of the video stream, in seconds.
    static func keyframeTimes(_ path: String) throws -> [Double] {
        let r = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", path])
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { $0.contains(",K") }
            .compactMap { Double($0.split(separator: ",")[0]) }.sorted()
    }

    /// Checks one web codec end to end: exact frames, clean decode, keyframes at chunk starts,
    /// Opus audio of the composition's length, quality against the H.264 render and the
    /// source, chunked against one chunk, and a byte-identical re-render.
    static func check(codec: String, export: String, fileType: String, minimumPSNR: Double) throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try source(in: dir)
        let h264 = try render(composition(source: source, export: #"{"preset": "highest", "video": {"gopDuration": 1}}"#),
                              in: dir, name: "h264.mp4", chunkSeconds: 10, workers: 1)
        let json = composition(source: source, export: export)
        let chunked = try render(json, in: dir, name: "chunked.\(fileType)", chunkSeconds: 1)
        #expect(chunked.chunks == 4, "1 s chunks of 1 s GOPs")
        #expect(chunked.plan.export.video.codec == codec && chunked.plan.export.fileType.rawValue == fileType)

        #expect(try Media.decodeErrors(chunked.path).isEmpty)
        let stream = try CodecRenderTests.videoStream(chunked.path)
        #expect(stream["codec_name"] == codec && stream["nb_read_frames"] == "\(frames)" && stream["width"] == "\(width)", "\(stream)")
        #expect(try formatName(chunked.path).contains(fileType == "webm" ? "webm" : "mp4"))
        let keyframes = try keyframeTimes(chunked.path)
        #expect(keyframes == [0, 1, 2, 3], "a keyframe at every chunk start: \(keyframes)")
        if fileType == "webm" {
            let audio = try #require(Media.stream(try Media.probe(chunked.path), type: "audio"))
            #expect(audio["codec_name"] as? String == "opus", "\(audio)")
            // Exactly 4 s: the priming is signalled (CodecDelay), the last packet's padding
            // discarded (DiscardPadding), and the sound starts with the picture.
            // (ffprobe shows the first block at minus the priming: 312 samples, 6.5 ms.)
            let audioStart = Double(audio["start_time"] as? String ?? "") ?? 1
            #expect(audioStart <= 0 && audioStart >= -0.0075, "\(audio)")
            let samples = try Media.audioSamples(chunked.path)
            #expect(samples.count / 2 == 4 * 48_000, "Opus audio of \(samples.count / 2) samples for 4 s")
            #expect(Media.rms(samples[48_000..<(3 * 48_000)]) > 0.05, "the tone is heard")
        }

        let againstH264 = try CodecRenderTests.psnr(chunked.path, against: h264.path)
        let againstSource = try CodecRenderTests.psnr(chunked.path, against: source, sdSource: true)
        let single = try render(json, in: dir, name: "single.\(fileType)", chunkSeconds: 10, workers: 1)
        #expect(single.chunks == 1)
        let singleAgainstSource = try CodecRenderTests.psnr(single.path, against: source, sdSource: true)
        print("\(codec) \(fileType): vs H.264 highest \(againstH264.average) dB (worst frame \(againstH264.minimum)); "
              + "vs source: chunked \(againstSource.average) dB (worst \(againstSource.minimum)), one chunk \(singleAgainstSource.average) dB "
              + "(worst \(singleAgainstSource.minimum)); render: 4 chunks \(chunked.seconds) s, one chunk \(single.seconds) s, H.264 \(h264.seconds) s")
        #expect(againstH264.average >= minimumPSNR, "\(codec) against H.264 highest: \(againstH264.average) dB")
        // No frame missing, repeated or shifted at a join: every frame of the chunked render is
        // as close to its source frame as the one-chunk render's frames are (a shifted frame of
        // testsrc2 scores under 20 dB).
        #expect(againstSource.minimum > 30 && againstSource.minimum > singleAgainstSource.minimum - 3,
                "worst chunked frame \(againstSource.minimum) dB, one chunk \(singleAgainstSource.minimum) dB")
        #expect(abs(againstSource.average - singleAgainstSource.average) < 1)

        let again = try render(json, in: dir, name: "again.\(fileType)", chunkSeconds: 1)
        #expect(try sha256(chunked.path) == sha256(again.path), "a \(codec) re-render changed bytes")
    }

    @Test func av1InWebMJoinsCleanlyAndReRendersByteIdentically() throws {
        try Self.check(codec: "av1", export: #"{"preset": "highest", "fileType": "webm", "video": {"codec": "av1", "svtav1Preset": 12, "gopDuration": 1}}"#,
                       fileType: "webm", minimumPSNR: 35)
    }

    @Test func av1InMP4JoinsCleanlyAndReRendersByteIdentically() throws {
        try Self.check(codec: "av1", export: #"{"preset": "highest", "video": {"codec": "av1", "svtav1Preset": 12, "gopDuration": 1}}"#,
                       fileType: "mp4", minimumPSNR: 35)
    }

    @Test func vp9InWebMJoinsCleanlyAndReRendersByteIdentically() throws {
        try Self.check(codec: "vp9", export: #"{"preset": "highest", "fileType": "webm", "video": {"vp9Speed": 8, "gopDuration": 1}}"#,
                       fileType: "webm", minimumPSNR: 35)
    }
}
