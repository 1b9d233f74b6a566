import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// Burned-in captions (docs/composition.md, "Captions"): frames outside a cue are what they are
/// without captions, frames inside one change only in the caption's band, Tesseract reads the
/// words, and the highlight paints each word from its time on. Checked on what ffmpeg decodes.
@Suite(.blocking) struct CaptionBurnInTests {
    static let width = 640, height = 360

    /// 4 s of moving test pattern at 25 fps, in 1 s chunks; with `captions`, a WebVTT cue
    /// "HELLO WORLD" during [1, 2.5) whose second word starts at 1.8 s.
    static func render(in dir: URL, captions: Bool, name: String) throws -> String {
        if !FileManager.default.fileExists(atPath: dir.appendingPathComponent("clip.mp4").path) {
            try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=\(width)x\(height):r=25:d=4", "-c:v", "libx264", "-qp", "0",
                              "-pix_fmt", "yuv420p", dir.appendingPathComponent("clip.mp4").path])
            try "WEBVTT\n\n00:01.000 --> 00:02.500\nHELLO <00:01.800>WORLD\n"
                .write(to: dir.appendingPathComponent("words.vtt"), atomically: true, encoding: .utf8)
        }
        let caption = ##", "captions": [{"asset": "words", "highlight": "#FFFF00", "style": {"fontSize": 56, "backgroundColor": "#000000FF", "margin": 20}}]"##
        let json = """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}, "words": {"url": "words.vtt"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]}],
             "videoComposition": {"frameDuration": "1/25"\(captions ? caption : "")},
             "export": {"preset": "highest", "video": {"crf": 4, "x264Preset": "ultrafast", "gopDuration": 1}}}
            """
        return try Fixtures.render(json, in: dir, name: name, workers: 2, chunkSeconds: 1).path
    }

    /// The caption's opaque black box in an RGB frame: the bottom-half rows with at least 200
    /// near-black pixels, and the columns those pixels span.
    static func box(_ f: [UInt8]) -> (rows: ClosedRange<Int>, columns: ClosedRange<Int>)? {
        var rows: [Int] = [], columns: [Int] = []
        for y in (height / 2)..<height {
            let dark = (0..<width).filter { x in
                let i = (y * width + x) * 3
                return f[i] < 30 && f[i + 1] < 30 && f[i + 2] < 30
            }
            if dark.count >= 200 { rows.append(y); columns += [dark.first!, dark.last!] }
        }
        guard let r0 = rows.min(), let r1 = rows.max(), let c0 = columns.min(), let c1 = columns.max() else { return nil }
        return (r0...r1, c0...c1)
    }

    /// PSNR of rows `rows` of two luma planes.
    static func psnr(_ a: [UInt8], _ b: [UInt8], rows: Range<Int>) -> Double {
        Media.psnr(Array(a[(rows.lowerBound * width)..<(rows.upperBound * width)]), Array(b[(rows.lowerBound * width)..<(rows.upperBound * width)]))
    }

    @Test func captionsChangeOnlyTheirBandWhileACueShowsAndTesseractReadsThem() throws {
        let dir = try Media.tempDirectory()
        let with = try Self.render(in: dir, captions: true, name: "with.mp4")
        let without = try Self.render(in: dir, captions: false, name: "without.mp4")
        let a = try Media.lumaFrames(with, width: Self.width, height: Self.height)
        let b = try Media.lumaFrames(without, width: Self.width, height: Self.height)
        try #require(a.count == 100 && b.count == 100)

        // The band: rows that differ while the cue shows (frame 50, 2 s).
        let changedRows = (0..<Self.height).filter { y in
            (0..<Self.width).contains { abs(Int(a[50][y * Self.width + $0]) - Int(b[50][y * Self.width + $0])) > 40 }
        }
        let band = (try #require(changedRows.min()))..<(try #require(changedRows.max()) + 1)
        // At the bottom, 20 px above the edge, about one line of 56 px text with its box.
        #expect(band.lowerBound > Self.height / 2 && band.upperBound <= Self.height - 20 + 2, "band \(band)")
        #expect(band.count >= 56 && band.count <= 110, "band \(band)")

        for k in 0..<100 {
            let showing = k >= 25 && k < 63   // [1, 2.5) at 25 fps
            if showing {
                let above = Self.psnr(a[k], b[k], rows: 0..<max(0, band.lowerBound - 2))
                let below = band.upperBound + 2 < Self.height ? Self.psnr(a[k], b[k], rows: (band.upperBound + 2)..<Self.height) : .infinity
                #expect(above >= 45 && below >= 45, "frame \(k): outside the band \(above) / \(below) dB")
                #expect(Self.psnr(a[k], b[k], rows: band) < 30, "frame \(k): the caption must show")
            } else {
                let whole = Media.psnr(a[k], b[k])
                #expect(whole >= 45, "frame \(k) (no cue): \(whole) dB against the render without captions")
            }
        }

        // Tesseract reads the words from the caption's box in the frame at 2 s (both words on screen).
        let rgb = try Media.rgbFrames(with, width: Self.width, height: Self.height)
        let box = try #require(Self.box(rgb[50]))
        let png = dir.appendingPathComponent("frame.png").path
        try Media.ffmpeg(["-i", with, "-vf", "select=eq(n\\,50),crop=\(box.columns.count):\(box.rows.count):\(box.columns.lowerBound):\(box.rows.lowerBound)",
                          "-frames:v", "1", png])
        let ocr = try Media.run("tesseract", [png, "stdout", "--psm", "7"])
        let words = String(decoding: ocr.stdout, as: UTF8.self).uppercased()
        #expect(words.contains("HELLO") && words.contains("WORLD"), "tesseract read \(words.debugDescription)")
    }

    @Test func theHighlightPaintsEachWordFromItsTimeOn() throws {
        let dir = try Media.tempDirectory()
        let with = try Self.render(in: dir, captions: true, name: "with.mp4")
        let frames = try Media.rgbFrames(with, width: Self.width, height: Self.height)
        try #require(frames.count == 100)

        /// Yellow and white text pixels inside frame `k`'s caption box, in the left and right thirds of the text.
        func colours(_ k: Int) -> (leftYellow: Int, leftWhite: Int, rightYellow: Int, rightWhite: Int) {
            let f = frames[k]
            guard let box = Self.box(f) else { return (0, 0, 0, 0) }
            var text: [(x: Int, yellow: Bool)] = []
            for y in box.rows {
                for x in box.columns {
                    let i = (y * Self.width + x) * 3
                    let r = Int(f[i]), g = Int(f[i + 1]), b = Int(f[i + 2])
                    guard r > 200 && g > 200 else { continue }
                    if b < 90 { text.append((x, true)) } else if b > 200 { text.append((x, false)) }
                }
            }
            guard let lo = text.map(\.x).min(), let hi = text.map(\.x).max() else { return (0, 0, 0, 0) }
            let third = (hi - lo) / 3
            let left = text.filter { $0.x < lo + third }, right = text.filter { $0.x > hi - third }
            return (left.filter(\.yellow).count, left.filter { !$0.yellow }.count, right.filter(\.yellow).count, right.filter { !$0.yellow }.count)
        }
        // 1.4 s (frame 35): HELLO reached (from the cue's start), WORLD not yet (1.8 s).
        let before = colours(35)
        #expect(before.leftYellow > 100 && before.leftYellow > 10 * before.leftWhite, "\(before)")
        #expect(before.rightWhite > 100 && before.rightWhite > 10 * before.rightYellow, "\(before)")
        // 2.2 s (frame 55): both words yellow.
        let after = colours(55)
        #expect(after.rightYellow > 100 && after.rightYellow > 10 * after.rightWhite, "\(after)")
        #expect(after.leftYellow > 100)
        // The switch happens exactly at 1.8 s: frame 44 (1.76 s) still white on the right, frame 45 (1.8 s) yellow.
        #expect(colours(44).rightWhite > 10 * colours(44).rightYellow)
        #expect(colours(45).rightYellow > 10 * colours(45).rightWhite)
    }
}
