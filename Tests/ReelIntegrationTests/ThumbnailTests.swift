import Foundation
import Testing
import ReelThreadTesting

/// `reel thumbnail` of a composition equals the frame the full render shows (checked
/// against ffmpeg's decode of the render), several times give numbered files, and `--sprite`
/// writes a contact sheet whose tiles and WebVTT cues match the frames.
@Suite(.blocking) struct ThumbnailTests {
    /// ffmpeg's accurate YUV→RGB conversion: it interpolates chroma, as Reel's thumbnails and
    /// players do. The CLI's default fast path repeats each chroma sample over 2×2 pixels instead,
    /// which on testsrc2's sharp colour edges alone costs 10 dB or more.
    static let accurate = ["-sws_flags", "bicubic+accurate_rnd"]

    /// RGB24 of `path` (a picture, or frame `frame` of a video) as ffmpeg decodes and converts it.
    static func rgb(_ path: String, frame: Int? = nil, filter: String? = nil) throws -> [UInt8] {
        let chain = (frame.map { ["select=eq(n\\,\($0))"] } ?? []) + (filter.map { [$0] } ?? [])
        let select = (chain.isEmpty ? [] : ["-vf", chain.joined(separator: ",")]) + (frame == nil ? [] : ["-frames:v", "1"])
        return [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path] + select + accurate
                                     + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).stdout)
    }

    /// Every frame of the video at `path`, as `rgb` converts them.
    static func rgbFrames(_ path: String, width: Int, height: Int, filter: String? = nil) throws -> [[UInt8]] {
        let bytes = try rgb(path, filter: filter), size = width * height * 3
        return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<($0 + size)]) }
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
        // ffmpeg's own shrink of the rendered frame (area averaging in RGB), against a JPEG.
        let expected = try Self.rgb(rendered, frame: 50, filter: "format=rgb24,scale=160:90:flags=area")
        let smallPSNR = Media.psnr(smallPicture, expected)
        #expect(smallPSNR >= 35, "the scaled JPEG against the frame, scaled: \(smallPSNR) dB")

        // A JPEG contact sheet of the composition: 4 tiles of 80x45 in 2 rows, tile i the frame
        // at i s (frame 25·i), shrunk, as ffmpeg shrinks the rendered frame.
        let sheet = dir.appendingPathComponent("sheet.jpg").path
        try Media.run(Media.reel, ["thumbnail", json, "--every", "1", "--max-size", "80x0", "--sprite", "--columns", "2", "-o", sheet])
        #expect(try Self.dimensions(sheet) == (160, 90))
        let tiles = try Self.rgb(sheet)
        try #require(tiles.count == 160 * 90 * 3)
        for index in 0..<4 {
            let (x, y) = (index % 2 * 80, index / 2 * 45)
            var tile: [UInt8] = []
            for row in 0..<45 {
                let start: Int = ((y + row) * 160 + x) * 3
                tile += tiles[start..<(start + 80 * 3)]
            }
            let frame = try Self.rgb(rendered, frame: 25 * index, filter: "format=rgb24,scale=80:45:flags=area")
            let psnr = Media.psnr(tile, frame)
            let other = Media.psnr(tile, try Self.rgb(rendered, frame: 25 * index + 12, filter: "format=rgb24,scale=80:45:flags=area"))
            #expect(psnr >= 33 && psnr > other + 3, "tile \(index) against frame \(25 * index): \(psnr) dB (frame \(25 * index + 12): \(other) dB)")
        }
        let vtt = try String(contentsOfFile: dir.appendingPathComponent("sheet.vtt").path, encoding: .utf8)
        #expect(vtt.contains("00:00:03.000 --> 00:00:04.000\nsheet.jpg#xywh=80,45,80,45\n"), "\(vtt)")
    }

    /// An editor's timeline (docs/interchange.md) is a composition too: thumbnails of the EDL that
    /// OTIO's adapter writes are the frames its render shows (the EDL imported, rendered near
    /// losslessly), and, where the cut shows one source frame, that frame of the lossless source
    /// as ffmpeg decodes it (not a neighbour).
    @Test func aTimelinesThumbnailsAreTheFramesItsRenderShows() throws {
        let dir = try TimelineRenderTests.workspace()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (width, height) = (TimelineRenderTests.width, TimelineRenderTests.height)
        let edl = dir.appendingPathComponent("single.edl").path, json = dir.appendingPathComponent("single.json")
        try Media.run(Media.reel, ["import", edl, "--fps", "24", "-o", json.path])
        var imported = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        imported["export"] = ["preset": "highest", "video": ["crf": 4]]
        try JSONSerialization.data(withJSONObject: imported).write(to: json)
        let rendered = try Self.rgbFrames(try TimelineRenderTests.render("single.json", in: dir, "single.mp4"), width: width, height: height)
        try #require(rendered.count == 84)
        // At 24 fps: A's frame 22, the middle of the A→B dissolve, B's frame 39, the gap (black), C's frame 4.
        let frames = [10, 30, 45, 60, 70]
        let pattern = dir.appendingPathComponent("edl-%d.png").path
        try Media.run(Media.reel, ["thumbnail", edl, "--fps", "24"]
                                  + frames.reversed().flatMap { ["--at", "\($0)/24"] } + ["-o", pattern])
        var sources: [String: [[UInt8]]] = [:]
        // The SD sources are read as BT.601 and re-coded in the output's BT.709 before the
        // thumbnail converts them back to R'G'B': ffmpeg does the same to its decode of them.
        for name in ["a", "b", "c"] {
            sources[name] = try Self.rgbFrames(dir.appendingPathComponent("\(name).mp4").path, width: width, height: height, filter: Media.sdSourceAsBT709RGB)
        }
        for (index, k) in frames.enumerated() {
            let ours = try Self.rgb(dir.appendingPathComponent("edl-\(index + 1).png").path)
            #expect(ours.count == width * height * 3)
            guard ours.count == width * height * 3 else { continue }
            let psnr = Media.psnr(ours, rendered[k])
            #expect(psnr >= 45, "thumbnail \(index + 1) against rendered frame \(k): \(psnr) dB")
            if case .frame(let name, let n) = TimelineRenderTests.v1(k) {
                let source = sources[name]!, own = Media.psnr(ours, source[n])
                #expect(own >= 45, "thumbnail \(index + 1) against \(name) frame \(n): \(own) dB")
                for m in [n - 1, n + 1] {
                    #expect(own > Media.psnr(ours, source[m]) + 1, "thumbnail \(index + 1) matches \(name) frame \(m) as well as frame \(n)")
                }
            }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("edl-6.png").path))
        // Timeline options belong to timelines.
        let clip = dir.appendingPathComponent("a.mp4").path
        let wrong = try Media.run(Media.reel, ["thumbnail", clip, "--at", "1", "--fps", "24", "-o", dir.appendingPathComponent("x.png").path],
                                  allowFailure: true)
        #expect(wrong.status == 1 && wrong.stderr.contains("--media-root, --size and --fps are for timelines"), "\(wrong.stderr)")
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
