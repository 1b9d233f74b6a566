import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// Alpha through the chunked path `reel render` uses. A logo (a red disc in a PNG
/// with alpha, made by ffmpeg's geq) moves over a transparent background, under a
/// half-transparent blue square; the ProRes 4444 output is decoded by ffmpeg to RGBA and its
/// alpha and colours are checked against Porter-Duff over, computed here.
@Suite(.blocking) struct AlphaRenderTests {
    static let width = 320, height = 180, frames = 100

    /// logo.png: 64×64, a red disc of radius 24 about the centre, transparent around it;
    /// veil.png: 64×64 of (32, 128, 255) at alpha 128.
    static func images(in dir: URL) throws {
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=64x64", "-vf",
                          "format=rgba,geq=r=255:g=0:b=0:a='if(lt(hypot(X-31.5\\,Y-31.5)\\,24)\\,255\\,0)'",
                          "-frames:v", "1", dir.appendingPathComponent("logo.png").path])
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=64x64", "-vf", "format=rgba,geq=r=32:g=128:b=255:a=128",
                          "-frames:v", "1", dir.appendingPathComponent("veil.png").path])
    }

    static func composition(export: String) -> String {
        """
        {"formatVersion": 1,
         "assets": {"logo": {"url": "logo.png"}, "veil": {"url": "veil.png"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"empty": {"start": 0, "duration": 4}}]}],
         "videoComposition": {
           "renderSize": {"width": \(width), "height": \(height)}, "frameDuration": "1/25",
           "instructions": [{"timeRange": {"start": 0, "duration": 4}, "backgroundColor": "#00000000", "layerInstructions": [{"track": 1}]}],
           "overlays": [
             {"image": "logo", "frame": {"x": 40, "y": 40, "width": 64, "height": 64},
              "animations": [{"property": "position", "from": {"x": 40, "y": 40}, "to": {"x": 200, "y": 40}, "duration": 4}]},
             {"image": "veil", "frame": {"x": 80, "y": 80, "width": 64, "height": 64}}
           ]},
         "export": \(export)}
        """
    }

    /// Every frame as straight RGBA, as ffmpeg decodes and converts it.
    static func rgbaFrames(_ path: String) throws -> [[UInt8]] {
        let r = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgba", "-"])
        let size = width * height * 4
        return stride(from: 0, to: r.stdout.count, by: size).map { Array(r.stdout[$0..<min($0 + size, r.stdout.count)]) }
    }

    static func pixel(_ frame: [UInt8], _ x: Int, _ y: Int) -> [Int] {
        let k = (y * width + x) * 4
        return (0..<4).map { Int(frame[k + $0]) }
    }

    static func expectPixel(_ frame: [UInt8], _ x: Int, _ y: Int, _ expected: [Double], tolerance: Double, _ what: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        let p = pixel(frame, x, y)
        let worst = zip(p, expected).map { abs(Double($0) - $1) }.max()!
        #expect(worst <= tolerance, "\(what) at (\(x), \(y)): \(p), expected \(expected.map { ($0 * 10).rounded() / 10 })", sourceLocation: sourceLocation)
    }

    @Test func proRes4444KeepsTheAlphaOfALogoOverATransparentBackgroundAcrossChunks() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.images(in: dir)
        let json = Self.composition(export: #"{"preset": "prores4444"}"#)
        let (chunked, plan) = try Fixtures.render(json, in: dir, name: "chunked.mov", workers: 2, chunkSeconds: 2)
        #expect(plan.export.video.writesAlpha)
        #expect(LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: 2)).count == 2)
        let (whole, _) = try Fixtures.render(json, in: dir, name: "whole.mov", workers: 1, chunkSeconds: 10)

        let stream = try CodecRenderTests.videoStream(chunked)
        #expect(stream["codec_tag_string"] == "ap4h" && stream["pix_fmt"]?.hasPrefix("yuva444p") == true, "\(stream)")
        #expect(stream["nb_read_frames"] == "\(Self.frames)", "\(stream)")

        let frames = try Self.rgbaFrames(chunked), reference = try Self.rgbaFrames(whole)
        try #require(frames.count == Self.frames && reference.count == Self.frames)
        // The chunk join is at 2 s (frame 50): the frames either side, and every other one,
        // equal the one-chunk render's.
        #expect(frames[49] == reference[49] && frames[50] == reference[50])
        #expect(frames == reference, "a chunked frame differs from the one-chunk render")

        // Frame 0: the disc's centre is at (71.5, 71.5), the veil covers [80, 144)².
        let f = frames[0]
        let transparent = [0.0, 0, 0, 0]
        for (x, y) in [(10, 10), (300, 170), (250, 20), (60, 130), (150, 60)] {
            #expect(Self.pixel(f, x, y)[3] == 0, "alpha away from the logo at (\(x), \(y)): \(Self.pixel(f, x, y))")
        }
        Self.expectPixel(f, 10, 10, transparent, tolerance: 0, "transparent background")
        // Every pixel more than 4 px from the logo's frame and the veil is fully transparent.
        var opaqueAway = 0
        for y in 0..<Self.height {
            for x in 0..<Self.width where !(x >= 36 && x < 148 && y >= 36 && y < 148) && Self.pixel(f, x, y)[3] != 0 { opaqueAway += 1 }
        }
        #expect(opaqueAway == 0, "\(opaqueAway) pixels away from the logo are not transparent")
        // On the disc (not under the veil): opaque red.
        var notOpaque = 0
        for y in 52...90 {
            for x in 52...90 where hypot(Double(x) + 0.5 - 71.5, Double(y) + 0.5 - 71.5) < 22 && !(x >= 78 && y >= 78) {
                if Self.pixel(f, x, y)[3] != 255 { notOpaque += 1 }
            }
        }
        #expect(notOpaque == 0, "\(notOpaque) pixels of the disc are not opaque")
        // 10-bit ProRes of 4:2:0 composited colour: flat areas within 4 codes of the formula.
        Self.expectPixel(f, 62, 62, [255, 0, 0, 255], tolerance: 4, "the disc")
        // Half-transparent veil over nothing: its own colour at alpha 128.
        Self.expectPixel(f, 120, 120, [32, 128, 255, 128], tolerance: 4, "the veil over the transparent background")
        // Veil over the disc: Porter-Duff over, sa = 128/255 over an opaque red.
        let sa = 128.0 / 255
        Self.expectPixel(f, 84, 84, [32 * sa + 255 * (1 - sa), 128 * sa, 255 * sa, 255], tolerance: 4, "the veil over the disc")

        // The logo moves: at 2 s it is 80 px further right, opaque where the background was.
        #expect(Self.pixel(frames[50], 151, 60)[3] == 255 && Self.pixel(f, 151, 60)[3] == 0)
    }

    @Test func proRes4444WithAlphaOffAndOpaqueOutputsDrawTheTransparentBackgroundOverBlack() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.images(in: dir)
        let json = Self.composition(export: #"{"preset": "prores4444", "video": {"alpha": false, "proresProfile": "4444xq"}}"#)
        let (path, plan) = try Fixtures.render(json, in: dir, name: "opaque.mov", workers: 1, chunkSeconds: 10)
        #expect(!plan.export.video.writesAlpha)
        let stream = try CodecRenderTests.videoStream(path)
        #expect(stream["codec_tag_string"] == "ap4x", "\(stream)")
        let f = try Self.rgbaFrames(path)[0]
        Self.expectPixel(f, 10, 10, [0, 0, 0, 255], tolerance: 1, "the background over black")
        let sa = 128.0 / 255
        Self.expectPixel(f, 120, 120, [32 * sa, 128 * sa, 255 * sa, 255], tolerance: 4, "the veil over black")
    }
}
