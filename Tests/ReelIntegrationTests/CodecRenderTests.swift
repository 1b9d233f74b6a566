import Crypto
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// HEVC and ProRes through the chunked path `reel render` uses (2 s chunks rendered
/// separately, joined by stream copy), checked against the source frame for frame with
/// ffmpeg's own decoder and PSNR filter.
@Suite(.blocking) struct CodecRenderTests {
    /// Thresholds on ffmpeg's `psnr` average over every frame (Y, U and V weighted 4:1:1),
    /// against a lossless copy of the source. `hevcHighest` (x265 CRF 22, preset medium)
    /// measures about 46 dB on this clip; ProRes 422 about 45 dB, most of the loss being the
    /// chroma's 4:2:0 → 4:2:2 → 4:2:0 round trip (luma about 50 dB).
    static let hevcMinimumPSNR = 40.0
    static let proresMinimumPSNR = 40.0
    /// No single frame may fall far below the average (a misplaced frame scores under 20 dB).
    static let minimumFramePSNR = 35.0

    static let width = 640, height = 360, frames = 250

    /// 10 s of testsrc2 at 25 fps, stored losslessly, so the source as decoded is the reference.
    static func source(in dir: URL) throws -> String {
        let path = dir.appendingPathComponent("src.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=\(width)x\(height):r=25:d=10",
                          "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path])
        return path
    }

    static func composition(source: String, export: String) -> String {
        """
        {"formatVersion": 1, "assets": {"src": {"url": "\(source)"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "src", "at": 0}]}],
         "export": \(export)}
        """
    }

    /// Renders in 2 s chunks (5 chunks: the GOP is 2 s) with two workers, as `reel render` does.
    static func render(_ json: String, in dir: URL, name: String) throws -> (path: String, plan: RenderPlan, seconds: Double) {
        let start = Date()
        let (path, plan) = try Fixtures.render(json, in: dir, name: name, workers: 2, chunkSeconds: 2)
        #expect(LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: 2)).count == 5)
        return (path, plan, Date().timeIntervalSince(start))
    }

    /// ffprobe's view of the video stream, frames counted by decoding them.
    static func videoStream(_ path: String) throws -> [String: String] {
        let r = try Media.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                          "-show_entries", "stream=codec_name,codec_tag_string,profile,pix_fmt,nb_read_frames,width,height",
                                          "-of", "default=noprint_wrappers=1", path])
        var fields: [String: String] = [:]
        for line in String(decoding: r.stdout, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    /// ffmpeg's PSNR of `path` against `reference`, both taken to 8-bit 4:2:0: (average, worst frame).
    /// `path` against `reference` by ffmpeg's psnr filter on 4:2:0. `sdSource`: the reference is
    /// an untagged SD source (read as BT.601) and `path` a BT.709 render of it: the reference is
    /// re-coded in BT.709 first (`Media.bt601ToBT709`).
    static func psnr(_ path: String, against reference: String, sdSource: Bool = false) throws -> (average: Double, minimum: Double) {
        let r = try Media.run("ffmpeg", ["-nostdin", "-v", "info", "-i", path, "-i", reference, "-lavfi",
                                         "[0:v]format=yuv420p[a];[1:v]\(sdSource ? Media.bt601ToBT709 : "format=yuv420p")[b];[a][b]psnr", "-f", "null", "-"])
        guard let line = r.stderr.split(separator: "\n").last(where: { $0.contains("PSNR y:") }) else {
            throw Media.Failure(description: "no PSNR line in: \(r.stderr)")
        }
        func value(_ key: String) -> Double? {
            guard let range = line.range(of: key + ":") else { return nil }
            return Double(line[range.upperBound...].prefix { !$0.isWhitespace })
        }
        guard let average = value("average"), let minimum = value("min") else { throw Media.Failure(description: "cannot parse \(line)") }
        return (average, minimum)
    }

    static func sha256(_ path: String) throws -> String {
        SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))).map { String(format: "%02x", $0) }.joined()
    }

    @Test func hevcHighestRendersInChunksTaggedHvc1AndReRendersByteIdentically() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try Self.source(in: dir)
        let json = Self.composition(source: source, export: #"{"preset": "hevcHighest"}"#)
        let first = try Self.render(json, in: dir, name: "hevc.mp4")
        #expect(first.plan.export.video.codec == "hevc" && first.plan.export.video.crf == 22)

        #expect(try Media.decodeErrors(first.path).isEmpty)
        let stream = try Self.videoStream(first.path)
        #expect(stream["codec_name"] == "hevc" && stream["codec_tag_string"] == "hvc1" && stream["profile"] == "Main", "\(stream)")
        #expect(stream["nb_read_frames"] == "\(Self.frames)", "\(stream)")
        // A keyframe at every chunk start (every 50 frames): each chunk decodes on its own.
        let keys = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,flags",
                                             "-of", "csv=p=0", first.path])
        let keyTimes = String(decoding: keys.stdout, as: UTF8.self).split(separator: "\n").filter { $0.contains(",K") }
            .compactMap { Double($0.split(separator: ",")[0]) }.sorted()
        #expect(keyTimes == [0, 2, 4, 6, 8], "keyframes at \(keyTimes)")

        let quality = try Self.psnr(first.path, against: source, sdSource: true)
        print("hevcHighest: \(Self.frames) frames, PSNR average \(quality.average) dB, worst frame \(quality.minimum) dB, render \(first.seconds) s")
        #expect(quality.average > Self.hevcMinimumPSNR, "HEVC PSNR \(quality.average) dB")
        #expect(quality.minimum > Self.minimumFramePSNR, "worst HEVC frame \(quality.minimum) dB")

        let second = try Self.render(json, in: dir, name: "hevc-again.mp4")
        #expect(try Self.sha256(first.path) == Self.sha256(second.path), "an HEVC re-render changed bytes")
    }

    @Test func proRes422RendersInChunksIntoQuickTimeAndReRendersByteIdentically() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try Self.source(in: dir)
        let json = Self.composition(source: source, export: #"{"preset": "prores422"}"#)
        let first = try Self.render(json, in: dir, name: "prores.mov")
        #expect(first.plan.export.fileType == .mov)

        #expect(try Media.decodeErrors(first.path).isEmpty)
        let stream = try Self.videoStream(first.path)
        #expect(stream["codec_name"] == "prores" && stream["codec_tag_string"] == "apcn" && stream["pix_fmt"] == "yuv422p10le", "\(stream)")
        #expect(stream["nb_read_frames"] == "\(Self.frames)", "\(stream)")
        let format = try Media.run("ffprobe", ["-v", "error", "-show_entries", "format=format_name", "-of", "default=nw=1:nk=1", first.path])
        #expect(String(decoding: format.stdout, as: UTF8.self).hasPrefix("mov,"))
        #expect(try Fixtures.topLevelBoxes(first.path).first?.type == "ftyp")
        let brand = try Data(contentsOf: URL(fileURLWithPath: first.path))[8..<12]
        #expect(String(decoding: brand, as: UTF8.self) == "qt  ", "a QuickTime file, not MP4")

        let quality = try Self.psnr(first.path, against: source, sdSource: true)
        print("prores422: \(Self.frames) frames, PSNR average \(quality.average) dB, worst frame \(quality.minimum) dB, render \(first.seconds) s")
        #expect(quality.average > Self.proresMinimumPSNR, "ProRes PSNR \(quality.average) dB")
        #expect(quality.minimum > Self.minimumFramePSNR, "worst ProRes frame \(quality.minimum) dB")

        let second = try Self.render(json, in: dir, name: "prores-again.mov")
        #expect(try Self.sha256(first.path) == Self.sha256(second.path), "a ProRes re-render changed bytes")
    }

    @Test func proRes4444CarriesAnOpaqueAlphaPlane() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try Self.source(in: dir)
        let json = Self.composition(source: source, export: #"{"preset": "prores4444"}"#)
        let (path, plan, seconds) = try Self.render(json, in: dir, name: "alpha.mov")
        #expect(plan.export.video.profile == "4444")
        #expect(try Media.decodeErrors(path).isEmpty)
        // FFmpeg's decoder hands 4444 out as 12-bit; Reel encodes 10-bit yuva444p10le (see the encoder tests).
        let stream = try Self.videoStream(path)
        #expect(stream["codec_tag_string"] == "ap4h" && stream["pix_fmt"]?.hasPrefix("yuva444p") == true, "\(stream)")
        #expect(stream["nb_read_frames"] == "\(Self.frames)", "\(stream)")
        // Composited frames are opaque: every alpha sample of every 10th frame (all chunks) decodes as opaque.
        let alpha = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-vf", "framestep=10,alphaextract,format=gray",
                                             "-f", "rawvideo", "-"])
        #expect(alpha.stdout.count == Self.width * Self.height * 25 && alpha.stdout.allSatisfy { $0 == 255 })
        // Luma is near lossless (about 68 dB); the chroma loses most in the test's own
        // 4:2:0 → 4:4:4 → 4:2:0 round trip (about 37 dB), for an average of about 42 dB.
        let quality = try Self.psnr(path, against: source, sdSource: true)
        print("prores4444: \(Self.frames) frames, PSNR average \(quality.average) dB, worst frame \(quality.minimum) dB, render \(seconds) s")
        #expect(quality.average > Self.proresMinimumPSNR, "ProRes 4444 PSNR \(quality.average) dB")
        #expect(quality.minimum > Self.minimumFramePSNR, "worst ProRes 4444 frame \(quality.minimum) dB")
    }

    @Test func proResIsRefusedInMP4NamingThePathOrBothSources() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try Fixtures.numberedClip(in: dir)
        // export.fileType mp4: a validation problem at its JSON path.
        let written = dir.appendingPathComponent("written.json").path
        try Self.composition(source: source, export: #"{"fileType": "mp4", "video": {"codec": "prores", "proresProfile": "hq"}}"#)
            .write(toFile: written, atomically: true, encoding: .utf8)
        let v = try Media.run(Media.reel, ["validate", written], allowFailure: true)
        #expect(v.status == 1)
        #expect(v.stderr.contains(#"export.fileType: is "mp4", but export.video.codec "prores" encodes ProRes, which Reel writes only in "mov""#), "\(v.stderr)")

        // The container from -o: refused before rendering, naming the output and the codec.
        let named = dir.appendingPathComponent("named.json").path
        try Self.composition(source: source, export: #"{"preset": "prores422"}"#).write(toFile: named, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("x.mp4").path
        let r = try Media.run(Media.reel, ["render", named, "-o", out, "--in-process", "--quiet"], allowFailure: true)
        #expect(r.status == 1)
        #expect(r.stderr.contains(#"the output name x.mp4 gives MP4, but export.preset "prores422" encodes ProRes, which Reel writes only in .mov"#), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))

        // An unknown profile.
        let profile = dir.appendingPathComponent("profile.json").path
        try Self.composition(source: source, export: #"{"video": {"codec": "prores", "proresProfile": "xq"}}"#)
            .write(toFile: profile, atomically: true, encoding: .utf8)
        let p = try Media.run(Media.reel, ["validate", profile], allowFailure: true)
        #expect(p.status == 1)
        #expect(p.stderr.contains(#"export.video.proresProfile: must be one of "proxy", "lt", "422", "hq", "4444", "4444xq", not "xq""#), "\(p.stderr)")
    }
}
