import Foundation
import Testing
import ReelCore
import ReelMedia
import ReelThreadTesting

/// Layers, transforms, opacity and the §3.2 defaults, against references computed here or by ffmpeg.
@Suite(.blocking) struct CompositingTests {
    /// Clips of different sizes and orientations concatenated with the defaults: the render size
    /// is the largest display width × height, each clip is fitted, centred and upright.
    @Test func mixedSizesAndPortraitClipAreFittedAndUpright() throws {
        let dir = try Media.tempDirectory()
        let landscape = dir.appendingPathComponent("landscape.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "smptebars=s=320x240:r=25:d=1", "-c:v", "libx264", "-crf", "10", "-pix_fmt", "yuv420p", landscape])
        // Coded 320x180 with its left quarter white; a clockwise display matrix makes that the top.
        let coded = dir.appendingPathComponent("coded.mp4").path
        let portrait = dir.appendingPathComponent("portrait.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=320x180:r=25:d=1,drawbox=x=0:y=0:w=80:h=180:color=white:t=fill",
                          "-c:v", "libx264", "-crf", "10", "-pix_fmt", "yuv420p", coded])
        try Media.ffmpeg(["-i", coded, "-c", "copy", "-metadata:s:v:0", "rotate=270", portrait])

        let (out, plan) = try Fixtures.render("""
            {"formatVersion": 1,
             "assets": {"l": {"url": "\(landscape)"}, "p": {"url": "\(portrait)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "l", "at": 0}, {"asset": "p", "at": 1}]}],
             "export": {"preset": "highest", "video": {"crf": 10}}}
            """, in: dir)
        #expect(plan.renderSize == PixelSize(width: 320, height: 320))
        #expect(plan.frameDuration == Rational(1, 25))
        let frames = try Media.lumaFrames(out, width: 320, height: 320)
        #expect(frames.count == 50)

        // Independent reference: ffmpeg autorotates, fits and pads each clip.
        for (clip, index) in [(landscape, 10), (portrait, 35)] {
            let ref = dir.appendingPathComponent("ref-\(index).mp4").path
            try Media.ffmpeg(["-i", clip, "-vf", "scale=320:320:force_original_aspect_ratio=decrease,pad=320:320:(ow-iw)/2:(oh-ih)/2",
                              "-c:v", "libx264", "-crf", "0", "-pix_fmt", "yuv420p", ref])
            // ffmpeg keeps the SD clip's BT.601; the output is BT.709.
            let reference = try Media.lumaFramesInBT709(ref, width: 320, height: 320)[index % 25]
            let psnr = Media.psnr(frames[index], reference)
            #expect(psnr >= 32, "frame \(index): PSNR \(psnr) dB against ffmpeg's fitted, autorotated reference")
        }
        // The portrait clip is upright: the white band is at the top, centred horizontally.
        let p = frames[35]
        #expect(Media.mean(p, width: 320, x: 80, y: 10, w: 160, h: 60) > 220)   // white top
        #expect(Media.mean(p, width: 320, x: 80, y: 100, w: 160, h: 200) < 30)  // black below
        #expect(Media.mean(p, width: 320, x: 0, y: 0, w: 60, h: 320) < 20)      // pillarbox
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    /// An opacity-ramp cross-fade and a scale+translate transform, per pixel against references
    /// computed from the decoded sources.
    @Test func crossFadeAndTransformMatchPerPixelReference() throws {
        let dir = try Media.tempDirectory()
        let a = dir.appendingPathComponent("a.mp4").path, b = dir.appendingPathComponent("b.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "smptebars=s=160x120:r=25:d=2", "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", a])
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2", "-vf", "select=eq(n\\,0),loop=loop=-1:size=1,trim=duration=2,setpts=N/25/TB",
                          "-r", "25", "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", b])
        // The 160×120 sources are read as BT.601 (untagged SD) and the output is BT.709: the
        // references start from their luma as BT.709 codes it.
        let srcA = try Media.lumaFramesInBT709(a, width: 160, height: 120)[0]
        let srcB = try Media.lumaFramesInBT709(b, width: 160, height: 120)[0]

        let (out, _) = try Fixtures.render("""
            {"formatVersion": 1,
             "assets": {"a": {"url": "\(a)"}, "b": {"url": "\(b)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]},
                        {"id": 2, "mediaType": "video", "segments": [{"asset": "b", "at": 0}]}],
             "videoComposition": {"renderSize": {"width": 160, "height": 120}, "frameDuration": "1/25",
               "instructions": [
                 {"timeRange": {"start": 0, "duration": 1},
                  "layerInstructions": [{"track": 1, "opacityRamps": [{"from": 1, "to": 0, "timeRange": {"start": 0, "duration": 1}}]},
                                        {"track": 2}]},
                 {"timeRange": {"start": 1, "duration": 1},
                  "layerInstructions": [{"track": 1, "transform": {"a": 0.5, "b": 0, "c": 0, "d": 0.5, "tx": 40, "ty": 30}}]}]},
             "export": {"preset": "highest", "video": {"crf": 6}}}
            """, in: dir)
        let frames = try Media.lumaFrames(out, width: 160, height: 120)
        #expect(frames.count == 50)

        for k in [0, 6, 12, 19, 24] {
            let alpha = 1 - Double(k) / 25
            let reference = (0..<srcA.count).map { UInt8((alpha * Double(srcA[$0]) + (1 - alpha) * Double(srcB[$0])).rounded()) }
            let psnr = Media.psnr(frames[k], reference)
            #expect(psnr >= 36, "cross-fade frame \(k) (opacity \(alpha)): PSNR \(psnr) dB")
        }
        // Half-size at (40, 30): each output pixel centre lands between four source pixels.
        var reference = [UInt8](repeating: 16, count: 160 * 120)
        for y in 30..<90 {
            for x in 40..<120 {
                let sx = 2 * (x - 40), sy = 2 * (y - 30)
                let sum = Int(srcA[sy * 160 + sx]) + Int(srcA[sy * 160 + sx + 1]) + Int(srcA[(sy + 1) * 160 + sx]) + Int(srcA[(sy + 1) * 160 + sx + 1])
                reference[y * 160 + x] = UInt8((Double(sum) / 4).rounded())
            }
        }
        for k in [25, 40, 49] {
            let psnr = Media.psnr(frames[k], reference)
            #expect(psnr >= 32, "transformed frame \(k): PSNR \(psnr) dB")
        }
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    /// A spinning logo and a caption are drawn where and when asked.
    @Test func spinningLogoAndCaptionAppearWhereAndWhenAsked() throws {
        let dir = try Media.tempDirectory()
        let logo = dir.appendingPathComponent("logo.png").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=40x40,format=rgba", "-frames:v", "1", logo])
        let bg = dir.appendingPathComponent("bg.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=160x120:r=25:d=2", "-c:v", "libx264", "-pix_fmt", "yuv420p", bg])

        let (out, _) = try Fixtures.render("""
            {"formatVersion": 1,
             "assets": {"bg": {"url": "\(bg)"}, "logo": {"url": "\(logo)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "bg", "at": 0}]}],
             "videoComposition": {"renderSize": {"width": 160, "height": 120}, "frameDuration": "1/25",
               "overlays": [
                 {"image": "logo", "frame": {"x": 60, "y": 20, "width": 40, "height": 40},
                  "animations": [{"property": "rotation", "from": 0, "to": 0.7853981634, "duration": 0.48}]},
                 {"text": "加点水印", "fontSize": 24, "color": "#FFFFFF",
                  "frame": {"x": 10, "y": 80, "width": 140, "height": 32}, "timeRange": {"start": 1, "duration": 1}}]},
             "export": {"preset": "highest"}}
            """, in: dir)
        let frames = try Media.rgbFrames(out, width: 160, height: 120)
        #expect(frames.count == 50)
        func red(_ f: [UInt8], _ x: Int, _ y: Int) -> Bool { let i = (y * 160 + x) * 3; return f[i] > 180 && f[i + 1] < 80 && f[i + 2] < 80 }
        func bright(_ f: [UInt8], _ x: Int, _ y: Int) -> Bool { let i = (y * 160 + x) * 3; return f[i] > 150 && f[i + 1] > 150 && f[i + 2] > 150 }

        // t = 0: axis-aligned square, its corners are red.
        #expect(red(frames[0], 62, 22) && red(frames[0], 97, 57) && red(frames[0], 80, 40))
        #expect(!red(frames[0], 56, 40) && !red(frames[0], 104, 40))
        // t ≥ 0.48 s: turned by π/4 (the animation holds its end value) — a diamond: corners empty, the tips reach beyond the old square.
        #expect(!red(frames[12], 62, 22) && !red(frames[12], 98, 58), "corners should be empty at 45°")
        #expect(red(frames[12], 80, 40) && red(frames[12], 80, 18) && red(frames[12], 57, 40), "diamond tips at 45°")
        // Caption: absent before 1 s, present in its frame after, never outside it.
        func brightCount(_ f: [UInt8], _ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) -> Int {
            var n = 0
            for y in y0..<y1 { for x in x0..<x1 where bright(f, x, y) { n += 1 } }
            return n
        }
        #expect(brightCount(frames[12], 0, 70, 160, 120) == 0)
        #expect(brightCount(frames[37], 10, 80, 150, 112) > 60, "the caption should be drawn at 1.5 s")
        #expect(brightCount(frames[37], 0, 114, 160, 120) == 0 && brightCount(frames[37], 152, 70, 160, 120) == 0)
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    /// `"transform": "fit"` and `"fill"` inside an explicit instruction: upright,
    /// aspect kept, centred — letterboxed or cropped — against ffmpeg's scale+pad / scale+crop.
    @Test(arguments: [("fit", "scale=320:180:force_original_aspect_ratio=decrease,pad=320:180:(ow-iw)/2:(oh-ih)/2"),
                      ("fill", "scale=320:180:force_original_aspect_ratio=increase,crop=320:180")])
    func fitAndFillPlaceTheLayerLikeFFmpeg(_ mode: String, _ filter: String) throws {
        let dir = try Media.tempDirectory()
        let clip = dir.appendingPathComponent("bars.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "smptebars=s=240x240:r=25:d=1", "-c:v", "libx264", "-crf", "10", "-pix_fmt", "yuv420p", clip])
        let (out, _) = try Fixtures.render("""
            {"formatVersion": 1, "assets": {"c": {"url": "\(clip)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "c", "at": 0}]}],
             "videoComposition": {"renderSize": {"width": 320, "height": 180}, "frameDuration": "1/25",
               "instructions": [{"timeRange": {"start": 0, "duration": 1}, "layerInstructions": [{"track": 1, "transform": "\(mode)"}]}]},
             "export": {"preset": "highest", "video": {"crf": 10}}}
            """, in: dir, name: "\(mode).mp4")
        let frames = try Media.lumaFrames(out, width: 320, height: 180)
        let ref = dir.appendingPathComponent("ref-\(mode).mp4").path
        try Media.ffmpeg(["-i", clip, "-vf", filter, "-c:v", "libx264", "-crf", "0", "-pix_fmt", "yuv420p", ref])
        let reference = try Media.lumaFramesInBT709(ref, width: 320, height: 180)  // BT.601 → the output's BT.709
        let psnr = Media.psnr(frames[12], reference[12])
        #expect(psnr >= 30, "\(mode): PSNR \(psnr) dB against ffmpeg's \(filter)")
        // The difference that matters: fit leaves black bars at the sides, fill covers the frame.
        let leftEdge = Media.mean(frames[12], width: 320, x: 0, y: 0, w: 30, h: 180)
        #expect(mode == "fit" ? leftEdge < 20 : leftEdge > 40, "\(mode): left edge luma \(leftEdge)")
    }
}
