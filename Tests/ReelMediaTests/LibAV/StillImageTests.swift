import Foundation
import Testing
import ReelThreadTesting
@testable import ReelKernels
@testable import ReelMedia

@Suite("StillImage and PNGWriter", .blocking)
struct StillImageTests {
    @Test("a half-transparent red PNG loads with alpha, as YUV and as RGBA")
    func alpha() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("red.png").path
        try TestMedia.run(["-f", "lavfi", "-i", "color=c=red@0.5:s=64x48,format=rgba", "-frames:v", "1", path])
        let image = try StillImage.load(path: path)
        #expect(image.width == 64 && image.height == 48)
        let a = try #require(image.a)
        #expect(abs(Int(a.row(5)[5]) - 128) <= 1)
        // Loaded for the default BT.709 output: limited-range red is Y ≈ 63, Cr ≈ 240 (the
        // published HD code values, SMPTE RP 219).
        #expect(abs(Int(image.y.row(5)[5]) - 63) <= 2)
        #expect(abs(Int(image.v.row(2)[2]) - 240) <= 2)

        let rgba = try StillImage.loadRGBA(path: path)
        #expect(rgba.width == 64 && rgba.height == 48 && rgba.pixels.count == 64 * 48 * 4)
        #expect(Array(rgba.pixels[0..<3]) == [255, 0, 0])
        #expect(abs(Int(rgba.pixels[3]) - Int(a.row(0)[0])) <= 1)
    }

    @Test("an opaque JPEG loads without alpha and in limited range")
    func jpeg() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("white.jpg").path
        try TestMedia.run(["-f", "lavfi", "-i", "color=c=white:s=32x32", "-frames:v", "1", path])
        let image = try StillImage.load(path: path)
        #expect(image.a == nil)
        #expect(abs(Int(image.y.row(16)[16]) - 235) <= 1)
    }

    @Test("PNG round trip: YUV → PNG → ffmpeg decode keeps the picture")
    func pngRoundTrip() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("src.png").path
        try TestMedia.run(["-f", "lavfi", "-i", "testsrc2=s=96x64", "-frames:v", "1", "-pix_fmt", "rgb24", source])
        let image = try StillImage.load(path: source)
        let out = dir.appendingPathComponent("out.png").path
        try PNGWriter.write(image, matrix: .bt709, to: out)
        let before = try TestMedia.decodeFrameRGB(source, index: 0)
        let after = try TestMedia.decodeFrameRGB(out, index: 0)
        #expect(after.width == 96 && after.height == 64)
        // 4:2:0 subsampling blurs colour edges; the picture itself must survive.
        #expect(meanAbsoluteDifference(before.pixels, after.pixels) < 8)
    }

    @Test("RGBA PNG written and read back is identical")
    func rgbaRoundTrip() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var pixels = [UInt8](repeating: 0, count: 20 * 10 * 4)
        for i in 0..<(20 * 10) { pixels[i * 4] = UInt8(i % 256); pixels[i * 4 + 1] = UInt8(255 - i % 256); pixels[i * 4 + 2] = 7; pixels[i * 4 + 3] = UInt8((i * 3) % 256) }
        let image = RGBAImage(width: 20, height: 10, pixels: pixels)
        let path = dir.appendingPathComponent("rgba.png").path
        try PNGWriter.write(rgba: image, to: path)
        #expect(try StillImage.loadRGBA(path: path) == image)
        let streams = try TestMedia.ffprobeStreams(path)
        #expect(streams.first?["pix_fmt"] as? String == "rgba")
    }
}
