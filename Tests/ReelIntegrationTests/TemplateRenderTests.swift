import Foundation
import Testing
import ReelThreadTesting

/// Templates through the `reel` binary: `reel render TEMPLATE --set …` renders the variant the
/// values say (checked in the decoded pixels and frame counts), and `reel validate --set`
/// names each problem by variable and JSON path.
@Suite(.blocking) struct TemplateRenderTests {
    /// A 64x48 clip over a 128x96 background whose colour is the variable `bg`; the clip is the
    /// asset variable `clip`, given relative to the directory `reel` runs in.
    static let backgroundTemplate = #"""
    {"formatVersion": 1,
     "variables": {"bg": {"type": "color", "default": "#000000"}, "clip": {"type": "asset"}},
     "assets": {"n": {"url": "{{clip}}"}},
     "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}],
     "videoComposition": {"renderSize": {"width": 128, "height": 96}, "frameDuration": "1/25",
       "instructions": [{"timeRange": {"start": 0, "duration": 1}, "backgroundColor": "{{bg}}", "layerInstructions": [{"track": 1}]}]}}
    """#

    /// A directory with `templates/background.json` and `media/numbered.mp4` (1 s).
    static func backgroundFixture() throws -> URL {
        let dir = try Media.tempDirectory()
        let media = dir.appendingPathComponent("media"), templates = dir.appendingPathComponent("templates")
        try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: templates, withIntermediateDirectories: true)
        _ = try Fixtures.numberedClip(in: media, seconds: 1)
        try backgroundTemplate.write(to: templates.appendingPathComponent("background.json"), atomically: true, encoding: .utf8)
        return dir
    }

    /// Mean red, green and blue of a 16x16 square of an RGB24 frame.
    static func colour(_ frame: [UInt8], width: Int, x: Int, y: Int) -> [Double] {
        (0..<3).map { c in
            var sum = 0
            for row in y..<(y + 16) { for col in x..<(x + 16) { sum += Int(frame[(row * width + col) * 3 + c]) } }
            return Double(sum) / 256
        }
    }

    @Test func aColourVariableSetsTheBackgroundOfEachVariant() throws {
        let dir = try Self.backgroundFixture()
        var frames: [String: [[UInt8]]] = [:]
        for (name, colour) in [("red", "#FF0000"), ("blue", "#0000FF")] {
            let output = dir.appendingPathComponent("\(name).mp4").path
            try Media.run(Media.reel, ["render", "templates/background.json", "--set", "bg=\(colour)", "--set", "clip=media/numbered.mp4",
                                       "-o", output, "--in-process", "--quiet"], currentDirectory: dir)
            frames[name] = try Media.rgbFrames(output, width: 128, height: 96)
        }
        let red = try #require(frames["red"]), blue = try #require(frames["blue"])
        #expect(red.count == 25 && blue.count == 25, "\(red.count) and \(blue.count) frames")
        for (i, (r, b)) in zip(red, blue).enumerated() {
            // The background, well away from the clip in the top-left 64x48.
            let redBackground = Self.colour(r, width: 128, x: 96, y: 64), blueBackground = Self.colour(b, width: 128, x: 96, y: 64)
            #expect(redBackground[0] > 230 && redBackground[1] < 25 && redBackground[2] < 25, "frame \(i): \(redBackground)")
            #expect(blueBackground[0] < 25 && blueBackground[1] < 25 && blueBackground[2] > 230, "frame \(i): \(blueBackground)")
            // The clip itself is the same in both.
            #expect(Self.colour(r, width: 128, x: 24, y: 16) == Self.colour(b, width: 128, x: 24, y: 16), "frame \(i)")
        }
    }

    /// The template with a value renders exactly what the composition written out with that
    /// value renders: the same bytes.
    @Test func aVariantRendersTheSameBytesAsTheCompositionItStandsFor() throws {
        let dir = try Self.backgroundFixture()
        let clip = dir.appendingPathComponent("media/numbered.mp4").path
        let plain = Self.backgroundTemplate
            .replacingOccurrences(of: ##""variables": {"bg": {"type": "color", "default": "#000000"}, "clip": {"type": "asset"}},"##, with: "")
            .replacingOccurrences(of: "{{clip}}", with: clip)
            .replacingOccurrences(of: "{{bg}}", with: "#FF8000")
        let plainPath = dir.appendingPathComponent("plain.json")
        try plain.write(to: plainPath, atomically: true, encoding: .utf8)
        try Media.run(Media.reel, ["render", plainPath.path, "-o", dir.appendingPathComponent("plain.mp4").path, "--in-process", "--quiet"])
        try Media.run(Media.reel, ["render", "templates/background.json", "--set", "bg=#FF8000", "--set", "clip=\(clip)",
                                   "-o", "variant.mp4", "--in-process", "--quiet"], currentDirectory: dir)
        let a = try Data(contentsOf: dir.appendingPathComponent("plain.mp4"))
        let b = try Data(contentsOf: dir.appendingPathComponent("variant.mp4"))
        #expect(!a.isEmpty && a == b, "plain \(a.count) bytes, variant \(b.count) bytes")
    }

    /// A segment without `duration` whose asset is a variable lasts as long as the file given,
    /// and so does the output.
    @Test func aVoiceOverVariableSetsTheLengthOfEachVariant() throws {
        let dir = try Media.tempDirectory()
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=white:size=64x48", "-frames:v", "1", dir.appendingPathComponent("photo.png").path])
        for seconds in [2, 3] {
            try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)", "-c:a", "pcm_s16le",
                              dir.appendingPathComponent("voice\(seconds).wav").path])
        }
        try #"""
            {"formatVersion": 1,
             "variables": {"voice": {"type": "asset"}, "photo": {"type": "asset", "default": "photo.png"}},
             "assets": {"photo": {"url": "{{photo}}"}, "voice": {"url": "{{voice}}"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "photo", "at": 0, "duration": 1}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "voice", "at": "1/2"}]}],
             "videoComposition": {"renderSize": {"width": 64, "height": 48}, "frameDuration": "1/25"}}
            """#.write(to: dir.appendingPathComponent("voiced.json"), atomically: true, encoding: .utf8)
        for seconds in [2, 3] {
            let output = dir.appendingPathComponent("voiced\(seconds).mp4").path
            try Media.run(Media.reel, ["render", "voiced.json", "--set", "voice=voice\(seconds).wav", "-o", output, "--in-process", "--quiet"],
                          currentDirectory: dir)
            // 0.5 s of silence, then the voice-over: (0.5 + seconds) × 25 frames.
            let frames = try Media.framePTS(output)
            #expect(frames.count == 25 * seconds + 13, "voice \(seconds) s: \(frames.count) frames")
            let samples = try Media.audioSamples(output)
            let audioSeconds = Double(samples.count / 2) / 48000
            #expect(abs(audioSeconds - (Double(seconds) + 0.5)) < 0.05, "voice \(seconds) s: \(audioSeconds) s of sound")
            // The photo for the first second, then the background.
            let luma = try Media.lumaFrames(output, width: 64, height: 48)
            #expect(Media.mean(luma[0], width: 64, x: 16, y: 16, w: 32, h: 16) > 200)
            #expect(Media.mean(luma[luma.count - 1], width: 64, x: 16, y: 16, w: 32, h: 16) < 20)
        }
    }

    /// Segments without `at` follow the one before them: an outro after a clip of any length
    /// starts where the clip ends, and the output ends with it.
    @Test func anOutroFollowsAClipOfAnyLength() throws {
        let dir = try Media.tempDirectory()
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=white:size=64x48", "-frames:v", "1", dir.appendingPathComponent("outro.png").path])
        for seconds in [1, 2] { _ = try Fixtures.numberedClip(in: dir, seconds: seconds, name: "main\(seconds).mp4") }
        try #"""
            {"formatVersion": 1,
             "variables": {"main": {"type": "asset"}},
             "assets": {"main": {"url": "{{main}}"}, "outro": {"url": "outro.png"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "main"}, {"asset": "outro", "duration": "2/5"}]}],
             "videoComposition": {"renderSize": {"width": 64, "height": 48}, "frameDuration": "1/25"}}
            """#.write(to: dir.appendingPathComponent("outro.json"), atomically: true, encoding: .utf8)
        for seconds in [1, 2] {
            let output = dir.appendingPathComponent("outro\(seconds).mp4").path
            try Media.run(Media.reel, ["render", "outro.json", "--set", "main=main\(seconds).mp4", "-o", output, "--in-process", "--quiet"],
                          currentDirectory: dir)
            let luma = try Media.lumaFrames(output, width: 64, height: 48)
            let clipFrames = 25 * seconds
            #expect(luma.count == clipFrames + 10, "main \(seconds) s: \(luma.count) frames")
            guard luma.count == clipFrames + 10 else { continue }
            for (i, frame) in luma.enumerated() {
                let got = Media.mean(frame, width: 64, x: 8, y: 8, w: 48, h: 32)
                let expected = i < clipFrames ? Fixtures.numberedLuma(Int64(i)) : 235
                #expect(abs(got - expected) <= 2.5, "main \(seconds) s, frame \(i): luma \(got), expected \(expected)")
            }
        }
    }

    /// `reel thumbnail` takes `--set` too: the frame a variant shows, without rendering it.
    @Test func aThumbnailOfAVariantShowsItsValues() throws {
        let dir = try Self.backgroundFixture()
        try Media.run(Media.reel, ["thumbnail", "templates/background.json", "--set", "bg=#00FF00", "--set", "clip=media/numbered.mp4",
                                   "--at", "0.5", "-o", "green.png"], currentDirectory: dir)
        let frames = try Media.rgbFrames(dir.appendingPathComponent("green.png").path, width: 128, height: 96)
        #expect(frames.count == 1)
        let background = Self.colour(try #require(frames.first), width: 128, x: 96, y: 64)
        #expect(background[0] < 10 && background[1] > 245 && background[2] < 10, "\(background)")
    }

    @Test func validateNamesEachProblemByVariableAndPath() throws {
        let dir = try Self.backgroundFixture()
        func validate(_ sets: [String]) throws -> (status: Int32, stdout: String, lines: [String]) {
            let r = try Media.run(Media.reel, ["validate", "templates/background.json"] + sets.flatMap { ["--set", $0] },
                                  allowFailure: true, currentDirectory: dir)
            return (r.status, String(decoding: r.stdout, as: UTF8.self), r.stderr.split(separator: "\n").map(String.init))
        }
        let ok = try validate(["clip=media/numbered.mp4", "bg=#102030"])
        #expect(ok.status == 0, "\(ok.lines)")
        #expect(ok.stdout.hasPrefix("ok: 128x96, 25 frames"), "\(ok.stdout)")

        let wrong = try validate(["bg=red", "colour=#000000"])
        #expect(wrong.status == 1)
        #expect(wrong.lines == [
            ##"variables.bg: --set bg=red: must be a colour "#RRGGBB" or "#RRGGBBAA", like "#FF8800", not "red""##,
            #"variables: --set colour=#000000: the template has no variable "colour" (it declares bg, clip): check the name, or declare it"#,
            "variables.clip: has no default, so it needs a value: give one with --set clip=…, or declare a default",
        ])

        // A file problem is found where every asset's is, and names the variable it came from.
        let missing = try validate(["clip=media/nope.mp4"])
        #expect(missing.status == 1)
        #expect(missing.lines.count == 1 && missing.lines[0].hasPrefix("assets.n.url: no such file")
                && missing.lines[0].hasSuffix(" (from {{clip}})"), "\(missing.lines)")
        #expect(missing.lines.first?.contains(dir.appendingPathComponent("media/nope.mp4").path) == true, "\(missing.lines)")
    }

    @Test func setIsRefusedWhereThereIsNoTemplate() throws {
        let dir = try Self.backgroundFixture()
        let plain = dir.appendingPathComponent("plain.json")
        try #"{"formatVersion": 1, "assets": {"n": {"url": "media/numbered.mp4"}}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}]}"#
            .write(to: plain, atomically: true, encoding: .utf8)
        let r = try Media.run(Media.reel, ["validate", plain.path, "--set", "bg=#000000"], allowFailure: true)
        #expect(r.status == 1)
        #expect(r.stderr.contains("--set bg=#000000 gives a value to a template's variable, but \(plain.path) declares no variables"), "\(r.stderr)")

        let malformed = try Media.run(Media.reel, ["validate", "templates/background.json", "--set", "bg"], allowFailure: true, currentDirectory: dir)
        #expect(malformed.status != 0)
        #expect(malformed.stderr.contains("--set"), "\(malformed.stderr)")
    }
}
