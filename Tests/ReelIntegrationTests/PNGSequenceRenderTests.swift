import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// PNG sequences (`fileType` `png`, `-o DIR/frame-%05d.png`) through the chunked
/// path `reel render` uses. The logo and veil of `AlphaRenderTests` over a transparent
/// background; the files are read back by ffmpeg's PNG decoder and checked against
/// Porter-Duff over computed here.
@Suite(.blocking) struct PNGSequenceRenderTests {
    static let width = AlphaRenderTests.width, height = AlphaRenderTests.height, frames = AlphaRenderTests.frames

    /// Renders `json` in-process to `dir/<folder>/frame-%05d.png`; returns the folder.
    static func render(_ json: String, in dir: URL, folder: String, workers: Int, chunkSeconds: Rational) throws -> (URL, RenderPlan) {
        let compositionPath = dir.appendingPathComponent("\(folder).json").path
        try json.write(toFile: compositionPath, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: compositionPath)
        let out = dir.appendingPathComponent(folder)
        try LocalRender.render(plan, to: out.appendingPathComponent("frame-%05d.png").path,
                               options: LocalRender.Options(workers: workers, chunkSeconds: chunkSeconds, encoderThreads: 2))
        return (out, plan)
    }

    static func files(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    /// One PNG file as ffmpeg decodes it to straight RGBA.
    static func rgba(_ path: String) throws -> [UInt8] {
        [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgba", "-"]).stdout)
    }

    @Test func aLogoOverATransparentBackgroundIsOneRGBAFilePerFrameNumberedFromOneAcrossChunks() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try AlphaRenderTests.images(in: dir)
        let json = AlphaRenderTests.composition(export: #"{"fileType": "png"}"#)
        let (chunked, plan) = try Self.render(json, in: dir, folder: "chunked", workers: 2, chunkSeconds: 2)
        #expect(plan.export.fileType == .png && plan.export.video.codec == "png" && plan.export.video.writesAlpha)
        #expect(LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: 2)).count == 2)
        let (whole, _) = try Self.render(json, in: dir, folder: "whole", workers: 1, chunkSeconds: 10)

        // Exactly N files, 1…N, and nothing else (no chunk or partial left behind).
        let names = try Self.files(chunked)
        #expect(names == (1...Self.frames).map { String(format: "frame-%05d.png", $0) }, "\(names.prefix(3)) … \(names.suffix(3))")
        #expect(try Self.files(whole) == names)

        // Each file is an 8-bit RGBA PNG of the output size (ffprobe on the first, the two at
        // the join and the last).
        for number in [1, 50, 51, Self.frames] {
            let stream = try #require(Media.stream(try Media.probe(chunked.appendingPathComponent(names[number - 1]).path), type: "video"))
            #expect(stream["codec_name"] as? String == "png" && stream["pix_fmt"] as? String == "rgba"
                    && stream["width"] as? Int == Self.width && stream["height"] as? Int == Self.height, "frame \(number): \(stream)")
        }
        // PNG is lossless and each file is the chunk's packet as encoded: every frame,
        // including both sides of the join at 2 s (files 50 and 51), is the very file a
        // one-chunk render writes.
        for name in names {
            let a = try Data(contentsOf: chunked.appendingPathComponent(name)), b = try Data(contentsOf: whole.appendingPathComponent(name))
            #expect(a == b, "\(name) differs from the one-chunk render")
        }

        // Frame 1 (plan frame 0): the disc's centre is at (71.5, 71.5), the veil covers [80, 144)².
        let f = try Self.rgba(chunked.appendingPathComponent(names[0]).path)
        try #require(f.count == Self.width * Self.height * 4)
        var opaqueAway = 0, notOpaque = 0
        for y in 0..<Self.height {
            for x in 0..<Self.width where !(x >= 36 && x < 148 && y >= 36 && y < 148) && AlphaRenderTests.pixel(f, x, y)[3] != 0 { opaqueAway += 1 }
        }
        for y in 52...90 {
            for x in 52...90 where hypot(Double(x) + 0.5 - 71.5, Double(y) + 0.5 - 71.5) < 22 && !(x >= 78 && y >= 78) {
                if AlphaRenderTests.pixel(f, x, y)[3] != 255 { notOpaque += 1 }
            }
        }
        #expect(opaqueAway == 0, "\(opaqueAway) pixels away from the logo are not transparent")
        #expect(notOpaque == 0, "\(notOpaque) pixels of the disc are not opaque")
        AlphaRenderTests.expectPixel(f, 10, 10, [0, 0, 0, 0], tolerance: 0, "transparent background")
        // The alpha is 8-bit and exact: the veil's 128 over nothing, within 1/255. Colour went
        // through the compositor's BT.601 4:2:0 (limited range), so it is within 3 codes.
        let sa = 128.0 / 255
        let veil = AlphaRenderTests.pixel(f, 120, 120)
        #expect(abs(veil[3] - 128) <= 1, "veil alpha \(veil)")
        AlphaRenderTests.expectPixel(f, 120, 120, [32, 128, 255, 128], tolerance: 3, "the veil over the transparent background")
        // Veil over the disc: Porter-Duff over, sa = 128/255 over an opaque red; alpha 255.
        let over = AlphaRenderTests.pixel(f, 84, 84)
        #expect(over[3] == 255, "veil over the disc \(over)")
        AlphaRenderTests.expectPixel(f, 84, 84, [32 * sa + 255 * (1 - sa), 128 * sa, 255 * sa, 255], tolerance: 3, "the veil over the disc")
        // The logo moves: at 2 s (file 51) it is 80 px further right.
        let g = try Self.rgba(chunked.appendingPathComponent(names[50]).path)
        #expect(AlphaRenderTests.pixel(g, 151, 60)[3] == 255 && AlphaRenderTests.pixel(f, 151, 60)[3] == 0)
    }

    @Test func alphaFalseWritesRGBOverBlack() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try AlphaRenderTests.images(in: dir)
        let json = AlphaRenderTests.composition(export: #"{"fileType": "png", "video": {"alpha": false}}"#)
        let (folder, plan) = try Self.render(json, in: dir, folder: "rgb", workers: 1, chunkSeconds: 10)
        #expect(!plan.export.video.writesAlpha)
        let first = folder.appendingPathComponent("frame-00001.png").path
        let stream = try #require(Media.stream(try Media.probe(first), type: "video"))
        #expect(stream["pix_fmt"] as? String == "rgb24", "\(stream)")
        let f = try Self.rgba(first)
        AlphaRenderTests.expectPixel(f, 10, 10, [0, 0, 0, 255], tolerance: 1, "the background over black")
        #expect(try Self.files(folder).count == Self.frames)
    }
}
