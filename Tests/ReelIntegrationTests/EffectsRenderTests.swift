import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// Filters, a LUT, a chroma key and blend modes through the chunked render: chunk joins as
/// clean as without effects, chunks byte-identical when rendered again.
@Suite(.blocking) struct EffectsRenderTests {
    /// 6 s at 160×120 with a cut at 2.5 s: a keyed, graded, blurred layer in `overlay` mode over
    /// a clip; a multiplied clip; a LUT and a vignette on the whole picture.
    static func composition(_ dir: URL) throws -> String {
        let a = dir.appendingPathComponent("a.mp4").path, b = dir.appendingPathComponent("b.mp4").path
        let screen = dir.appendingPathComponent("screen.mp4").path
        let cube = dir.appendingPathComponent("grade.cube").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=6", "-c:v", "libx264", "-pix_fmt", "yuv420p", a])
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc=s=160x120:r=25:d=6", "-c:v", "libx264", "-pix_fmt", "yuv420p", b])
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=0x20B040:s=160x120:r=25:d=6,drawbox=x=40:y=20:w=80:h=80:color=0xE0A080:t=fill",
                          "-c:v", "libx264", "-pix_fmt", "yuv420p", screen])
        var lines = ["LUT_3D_SIZE 9"]
        for z in 0..<9 { for y in 0..<9 { for x in 0..<9 {
            let (r, g, bl) = (Double(x) / 8, Double(y) / 8, Double(z) / 8)
            lines.append("\(0.9 * r + 0.1 * g) \(g * g) \(0.2 + 0.8 * bl)")
        } } }
        try lines.joined(separator: "\n").write(toFile: cube, atomically: true, encoding: .utf8)
        return """
            {"formatVersion": 1,
             "assets": {"a": {"url": "\(a)"}, "b": {"url": "\(b)"}, "screen": {"url": "\(screen)"}, "grade": {"url": "\(cube)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "screen", "at": 0}]},
                        {"id": 2, "mediaType": "video", "segments": [
                           {"asset": "a", "sourceRange": {"start": 0, "duration": 2.5}, "at": 0},
                           {"asset": "b", "sourceRange": {"start": 0, "duration": 3.5}, "at": 2.5}]}],
             "videoComposition": {"renderSize": {"width": 160, "height": 120}, "frameDuration": "1/25",
               "filters": [{"type": "lut", "asset": "grade", "intensity": 0.8}, {"type": "vignette", "end": 0.9}],
               "instructions": [
                 {"timeRange": {"start": 0, "duration": 3},
                  "layerInstructions": [
                    {"track": 1, "blendMode": "overlay", "opacity": 0.9,
                     "filters": [{"type": "chromaKey", "color": "#20B040", "similarity": 0.15}, {"type": "sepia"}, {"type": "gaussianBlur", "sigma": 1}]},
                    {"track": 2, "filters": [{"type": "contrast", "contrast": 1.3}, {"type": "hue", "degrees": 40}]}]},
                 {"timeRange": {"start": 3, "duration": 3},
                  "layerInstructions": [
                    {"track": 1, "blendMode": "multiply", "transform": {"a": 0.5, "b": 0, "c": 0, "d": 0.5, "tx": 70, "ty": 50},
                     "filters": [{"type": "pixellate", "size": 6}]},
                    {"track": 2, "filters": [{"type": "sharpen"}]}]}]},
             "export": {"preset": "medium", "video": {"gopDuration": 1}}}
            """
    }

    @Test func effectsRenderInChunksLikeOnePieceAndReRenderByteIdentically() throws {
        let dir = try Media.tempDirectory()
        let json = try Self.composition(dir)
        let (single, plan) = try Fixtures.render(json, in: dir, name: "single.mp4", workers: 1, chunkSeconds: 100)
        let (chunked, _) = try Fixtures.render(json, in: dir, name: "chunked.mp4", workers: 2, chunkSeconds: 2)
        #expect(LocalRender.chunks(for: plan, options: .init(workers: 2, chunkSeconds: 2)).count >= 3)
        let one = try Media.lumaFrames(single, width: 160, height: 120)
        let many = try Media.lumaFrames(chunked, width: 160, height: 120)
        #expect(one.count == 150 && many.count == 150)
        for k in 0..<min(one.count, many.count) {
            let psnr = Media.psnr(one[k], many[k])
            #expect(psnr >= 38, "frame \(k): PSNR \(psnr) dB between chunked and single-chunk renders")
        }
        #expect(try Media.decodeErrors(chunked).isEmpty)

        // A chunk rendered twice, with another in between, is the same file.
        let path = dir.appendingPathComponent("c.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let loaded = try CompositionLoader.load(path: path)
        let ranges = ChunkPlanner.plan(for: loaded, targetChunkSeconds: 2, minimumChunks: 1)
        let first = try ChunkRenderer.renderVideo(loaded, frames: ranges[1], to: dir.appendingPathComponent("x1.mp4").path, encoderThreads: 2)
        _ = try ChunkRenderer.renderVideo(loaded, frames: ranges[0], to: dir.appendingPathComponent("y.mp4").path, encoderThreads: 2)
        let again = try ChunkRenderer.renderVideo(loaded, frames: ranges[1], to: dir.appendingPathComponent("x2.mp4").path, encoderThreads: 2)
        #expect(first.sha256 == again.sha256 && first.byteCount == again.byteCount)
    }
}
