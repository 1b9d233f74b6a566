import Foundation
import Testing
import ReelThreadTesting

/// Issue 20.4: `reel thumbnail` of a composition equals the frame the full render shows (checked
/// against ffmpeg's decode of the render), several times give numbered files, and `--sprite`
/// writes a contact sheet whose tiles and WebVTT cues match the frames.
@Suite(.blocking) struct ThumbnailTests {
    /// RGB24 of `path` (a picture, or frame `frame` of a video) as ffmpeg decodes it.
    static func rgb(_ path: String, frame: Int? = nil) throws -> [UInt8] {
        let select = frame.map { ["-vf", "select=eq(n\\,\($0))", "-frames:v", "1"] } ?? []
        return [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path] + select + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).stdout)
    }

    static func dimensions(_ path: String) throws -> (Int, Int) {
        let stream = try #require(Media.stream(try Media.probe(path), type: "video"))
        return (stream["width"] as? Int ?? 0, stream["height"] as? Int ?? 0)
    }

    @Test func aCompositionsThumbnailIsTheFrameItsRenderShows() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clip = dir.appendingPathComponent("clip.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=4", "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip])
        let logo = dir.appendingPathComponent("logo.png").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=orange:s=48x48,format=rgba", "-frames:v", "1", logo])
        // Layers that move, fade and turn, so a frame from the wrong time would not match.
        let json = dir.appendingPathComponent("edit.json").path
        try """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}, "logo": {"url": "logo.png"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]}],
             "videoComposition": {"renderSize": {"width": 320, "height": 180}, "frameDuration": "1/25",
               "instructions": [{"timeRange": {"start": 0, "duration": 4}, "backgroundColor": "#203040",
                 "layerInstructions": [{"track": 1, "transform": {"a": 0.8, "b": 0, "c": 0, "d": 0.8, "tx": 20, "ty": 10},
                   "opacityRamps": [{"from": 1, "to": 0.2, "timeRange": {"start": 1, "duration": 2}}]}]}],
               "overlays": [{"image": "logo", "frame": {"x": 250, "y": 100, "width": 48, "height": 48},
                 "animations": [{"property": "rotation", "from": 0, "to": 6.283185, "duration": 2, "repeat": true}]}]},
             "export": {"preset": "highest", "video": {"crf": 4, "x264Preset": "ultrafast", "gopDuration": 1}}}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        let rendered = dir.appendingPathComponent("edit.mp4").path
        let renderStart = Date()
        try Media.run(Media.reel, ["render", json, "-o", rendered, "--in-process", "--quiet"])
        let renderSeconds = Date().timeIntervalSince(renderStart)

        // 1.3 s is frame 32 (frame k shows k/25 s), 2 s frame 50, 3.99 s the last frame, 99.
        let pattern = dir.appendingPathComponent("t-%02d.png").path
        let thumbStart = Date()
        let r = try Media.run(Media.reel, ["thumbnail", json, "--at", "3.99", "--at", "1.3", "--at", "2", "-o", pattern])
        let thumbSeconds = Date().timeIntervalSince(thumbStart)
        print("thumbnails of 3 frames: \(thumbSeconds) s; the full render of 100 frames: \(renderSeconds) s (\(thumbSeconds / renderSeconds) of it)")
        #expect(String(decoding: r.stdout, as: UTF8.self).contains("3 pictures of 320x180"))
        for (number, frame) in [(1, 32), (2, 50), (3, 99)] {
            let thumbnail = dir.appendingPathComponent(String(format: "t-%02d.png", number)).path
            let ours = try Self.rgb(thumbnail), theirs = try Self.rgb(rendered, frame: frame)
            #expect(ours.count == 320 * 180 * 3 && theirs.count == ours.count)
            let psnr = Media.psnr(ours, theirs)
            // The neighbouring frame, for scale: a picture of the wrong time scores far lower.
            let neighbour = Media.psnr(ours, try Self.rgb(rendered, frame: frame == 99 ? 98 : frame + 1))
            print("thumbnail \(number): frame \(frame) at \(psnr) dB; against frame \(frame == 99 ? 98 : frame + 1): \(neighbour) dB")
            #expect(psnr >= 45, "thumbnail \(number) against rendered frame \(frame): \(psnr) dB")
            #expect(neighbour < psnr - 5)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("t-04.png").path))

        // --max-size keeps the aspect ratio; JPEG by the name.
        let small = dir.appendingPathComponent("small.jpg").path
        try Media.run(Media.reel, ["thumbnail", json, "--at", "2", "--max-size", "160x0", "-o", small])
        #expect(try Self.dimensions(small) == (160, 90))
        let smallPicture = try Self.rgb(small)
        let expected = [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", rendered, "-vf", "select=eq(n\\,50),scale=160:90:flags=area",
                                                        "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).stdout)
        #expect(Media.psnr(smallPicture, expected) >= 30, "the scaled JPEG is the frame, scaled")
    }

    @Test func aSpriteSheetAndItsWebVTTTrackMatchTheFrames() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 64x48, 25 fps, 2 s: frame n has luma 16 + 4n everywhere.
        let clip = try Fixtures.numberedClip(in: dir)
        let sheet = dir.appendingPathComponent("sheet.png").path
        try Media.run(Media.reel, ["thumbnail", clip, "--every", "0.4", "--sprite", "--columns", "3", "-o", sheet])
        #expect(try Self.dimensions(sheet) == (192, 96), "5 tiles of 64x48 in rows of 3")
        let vtt = try String(contentsOfFile: dir.appendingPathComponent("sheet.vtt").path, encoding: .utf8)
        let cues = vtt.components(separatedBy: "\n\n").dropFirst().map { $0.split(separator: "\n").map(String.init) }
        #expect(vtt.hasPrefix("WEBVTT\n\n") && cues.count == 5, "\(vtt)")
        let luma = try #require(try Media.lumaFrames(sheet, width: 192, height: 96).first)
        for (index, cue) in cues.enumerated() {
            guard cue.count == 2 else { Issue.record("cue \(index): \(cue)"); continue }
            let times = cue[0].components(separatedBy: " --> ")
            let start = String(format: "00:00:%02d.%03d", index * 400 / 1000, index * 400 % 1000)
            let end = index == 4 ? "00:00:02.000" : String(format: "00:00:%02d.%03d", (index + 1) * 400 / 1000, (index + 1) * 400 % 1000)
            #expect(times == [start, end], "cue \(index): \(cue[0])")
            let x = index % 3 * 64, y = index / 3 * 48
            #expect(cue[1] == "sheet.png#xywh=\(x),\(y),64,48")
            // The tile shows the frame at the cue's start: frame 10·index (0.4 s at 25 fps).
            let got = Media.mean(luma, width: 192, x: x + 8, y: y + 8, w: 48, h: 32)
            #expect(abs(got - Fixtures.numberedLuma(Int64(10 * index))) <= 2.5, "tile \(index): luma \(got)")
        }
        // The sixth place of the grid is empty (black).
        #expect(Media.mean(luma, width: 192, x: 136, y: 56, w: 48, h: 32) <= 17)
    }

    @Test func severalTimesMakeNumberedFilesInTimeOrder() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clip = try Fixtures.numberedClip(in: dir)
        let pattern = dir.appendingPathComponent("f-%03d.png").path
        try Media.run(Media.reel, ["thumbnail", clip, "--every", "0.5", "--at", "0.52", "-o", pattern])
        // 0, 0.5, 0.52, 1, 1.5 s: frames 0, 12, 13, 25, 37, numbered from 1.
        for (number, frame) in [(1, 0), (2, 12), (3, 13), (4, 25), (5, 37)] {
            let path = dir.appendingPathComponent(String(format: "f-%03d.png", number)).path
            let luma = try #require(try Media.lumaFrames(path, width: 64, height: 48).first)
            let got = Media.mean(luma, width: 64, x: 8, y: 8, w: 48, h: 32)
            #expect(abs(got - Fixtures.numberedLuma(Int64(frame))) <= 2.5, "picture \(number): luma \(got), expected frame \(frame)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("f-006.png").path))

        let plain = try Media.run(Media.reel, ["thumbnail", clip, "--at", "0", "--at", "1", "-o", dir.appendingPathComponent("x.png").path],
                                  allowFailure: true)
        #expect(plain.status == 1 && plain.stderr.contains("2 pictures need a numbered -o such as thumb-%03d.png"), "\(plain.stderr)")
        let late = try Media.run(Media.reel, ["thumbnail", clip, "--at", "2", "-o", dir.appendingPathComponent("y.png").path], allowFailure: true)
        #expect(late.status == 1 && late.stderr.contains("--at 2 s is not before the end"), "\(late.stderr)")
        let gif = try Media.run(Media.reel, ["thumbnail", clip, "--at", "1", "-o", dir.appendingPathComponent("y.gif").path], allowFailure: true)
        #expect(gif.status == 1 && gif.stderr.contains("thumbnails are written as .png, .jpg or .jpeg"), "\(gif.stderr)")
    }
}
