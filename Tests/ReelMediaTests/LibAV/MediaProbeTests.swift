import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelMedia

@Suite("MediaProbe", .blocking)
struct MediaProbeTests {
    @Test("frame rate and duration match ffprobe", arguments: ["25", "30000/1001"])
    func frameRateAndDuration(rate: String) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.numberedClip(in: dir, rate: rate, frames: 30)
        let asset = try MediaProbe.describe(path: path)
        #expect(asset.kind == .movie)
        #expect(asset.video?.frameDuration == Rational.one / Rational(parsing: rate)!)
        #expect(asset.video?.naturalSize == PixelSize(width: 160, height: 120))
        #expect(asset.video?.codec == "h264")
        #expect(asset.audio == nil)
        let format = try TestMedia.ffprobeJSON(path)["format"] as? [String: Any]
        let expected = Double(format?["duration"] as? String ?? "") ?? -1
        #expect(abs((asset.duration?.seconds ?? 0) - expected) < 1e-5)
    }

    @Test("a rotated clip has a normalised preferred transform and portrait display size", arguments: [90, 270])
    func rotation(degrees: Int) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.rotatedClip(in: dir, degrees: degrees)
        // ffprobe's `rotation` is counter-clockwise (FFmpeg's convention); the sign the CLI
        // writes for a `rotate` tag differs between FFmpeg versions, so derive from it.
        let sideData = try TestMedia.ffprobeStreams(path).first?["side_data_list"] as? [[String: Any]] ?? []
        let ccw = try #require(sideData.first { ($0["side_data_type"] as? String) == "Display Matrix" }?["rotation"] as? Int)
        let clockwise = ((-ccw) % 360 + 360) % 360
        let expected: ReelCore.AffineTransform = clockwise == 90
            ? ReelCore.AffineTransform(a: 0, b: 1, c: -1, d: 0, tx: 120, ty: 0)     // top edge goes right
            : ReelCore.AffineTransform(a: 0, b: -1, c: 1, d: 0, tx: 0, ty: 160)     // top edge goes left
        #expect(clockwise == 90 || clockwise == 270)

        let video = try #require(try MediaProbe.describe(path: path).video)
        #expect(video.preferredTransform == expected)
        #expect(video.displaySize == PixelSize(width: 120, height: 160))
        let report = try MediaProbe.report(path: path)
        #expect(report.streams.first?.rotationDegrees == Double(clockwise))
        #expect(report.streams.first?.displaySize == PixelSize(width: 120, height: 160))
    }

    @Test("display matrix translation is normalised whether the file stores it or not")
    func matrixNormalisation() {
        let one: Int32 = 1 << 16, w: Int32 = 1 << 30
        // A phone portrait clip, coded 1920x1080, stored with tx = height and with tx = 0.
        for tx in [Int32(1080) * one, 0] {
            let t = DisplayMatrix.transform(matrix: [0, one, 0, -one, 0, 0, tx, 0, w], width: 1920, height: 1080)
            #expect(t == ReelCore.AffineTransform(a: 0, b: 1, c: -1, d: 0, tx: 1080, ty: 0))
            #expect(DisplayMatrix.rotationDegrees(t) == 90)
        }
        let upsideDown = DisplayMatrix.transform(matrix: [-one, 0, 0, 0, -one, 0, 0, 0, w], width: 1920, height: 1080)
        #expect(upsideDown == ReelCore.AffineTransform(a: -1, b: 0, c: 0, d: -1, tx: 1920, ty: 1080))
        #expect(DisplayMatrix.rotationDegrees(upsideDown) == 180)
        #expect(DisplayMatrix.transform(matrix: [one, 0, 0, 0, one, 0, 0, 0, w], width: 16, height: 9) == .identity)
    }

    @Test("the preferred transform shows the picture as ffmpeg's autorotate does", arguments: [90, 180, 270])
    func preferredTransformIsUpright(degrees: Int) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.rotatedClip(in: dir, degrees: degrees)
        let sideData = try TestMedia.ffprobeStreams(path).first?["side_data_list"] as? [[String: Any]] ?? []
        #expect(sideData.contains { ($0["side_data_type"] as? String) == "Display Matrix" })
        let reference = try TestMedia.decodeFrameRGB(path, index: 0)
        #expect(reference.width == (degrees == 180 ? 160 : 120))
        let t = try #require(try MediaProbe.describe(path: path).video).preferredTransform
        let image = try VideoFrameSource(path: path).frame(at: .zero)
        // Map every display pixel back into the coded picture (pixel centres) and compare.
        let inverse = try #require(t.inverted)
        let box = t.boundingBox(of: Rect(x: 0, y: 0, width: Double(image.width), height: Double(image.height)))
        #expect(Int(box.width) == reference.width && Int(box.height) == reference.height)
        var mismatches = 0
        for y in 0..<reference.height {
            for x in 0..<reference.width {
                let p = inverse.apply(Point(x: Double(x) + 0.5, y: Double(y) + 0.5))
                let luma = Int(image.y.row(Int(p.y))[Int(p.x)])
                let refLevel = Int(reference.pixel(x, y).g)
                // Luma is limited range, RGB full: compare coarse levels (white/gray/black).
                let ours = (luma - 16) * 255 / 219
                if abs(ours - refLevel) > 40 { mismatches += 1 }
            }
        }
        #expect(mismatches < reference.width * reference.height / 100)
    }

    @Test("5.1 audio: channels, layout, audio-only kind")
    func surroundAudio() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("surround.m4a").path
        try TestMedia.run(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1",
                           "-af", "pan=5.1|FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0", "-c:a", "aac", path])
        let asset = try MediaProbe.describe(path: path)
        #expect(asset.kind == .audio)
        #expect(asset.video == nil)
        #expect(asset.audio == AudioTrackDescription(sampleRate: 48000, channels: 6, codec: "aac"))
        let report = try MediaProbe.report(path: path)
        #expect(report.streams.first?.channelLayout == "5.1")
        #expect(report.streams.first?.profile == "LC")
        #expect(report.keyframeInterval == nil)
    }

    @Test("keyframe interval is measured from the packets")
    func keyframeInterval() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Fixtures.numberedClip(in: dir, frames: 50, gop: 12)
        let report = try MediaProbe.report(path: path)
        let interval = try #require(report.keyframeInterval)
        #expect(interval.minimum == 12 && interval.maximum == 12)
        #expect(interval.packets == 50)
        #expect(report.description.contains("keyframe interval: 12 frames"))
        // The JSON form round-trips.
        let decoded = try JSONDecoder().decode(ProbeReport.self, from: JSONEncoder().encode(report))
        #expect(decoded == report)
    }

    @Test("still images are .still with their size and alpha", arguments: ["png", "jpg", "webp", "bmp"])
    func stills(ext: String) throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("still.\(ext)").path
        let format = ext == "png" ? "rgba" : ext == "jpg" ? "yuvj420p" : ext == "webp" ? "yuv420p" : "bgr24"
        try TestMedia.run(["-f", "lavfi", "-i", "color=c=red@0.5:s=64x48,format=\(format)", "-frames:v", "1", path])
        let asset = try MediaProbe.describe(path: path)
        #expect(asset.kind == .still)
        #expect(asset.duration == nil)
        #expect(asset.video?.naturalSize == PixelSize(width: 64, height: 48))
        #expect(asset.video?.hasAlpha == (ext == "png"))
    }

    @Test("a missing file is a MediaError carrying libav's message")
    func missingFile() {
        #expect {
            try MediaProbe.describe(path: "/nonexistent/x.mp4")
        } throws: { error in
            guard let e = error as? MediaError else { return false }
            return e.code == .libav && e.description.contains("/nonexistent/x.mp4") && e.message.contains("No such file")
        }
    }
}
