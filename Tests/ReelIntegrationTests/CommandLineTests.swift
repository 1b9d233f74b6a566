import Foundation
import Testing
import ReelCore
import Glibc
import ReelThreadTesting

/// The `reel` binary as a user runs it: exit statuses, messages, and what each command writes.
@Suite(.blocking) struct CommandLineTests {
    @Test func validateNamesEveryProblemByJSONPathAndExitsOne() throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        let bad = dir.appendingPathComponent("bad.json").path
        try """
            {"formatVersion": 1,
             "assets": {"n": {"url": "\(clip)"}, "logo": {"url": "missing-logo.png"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [
                {"asset": "n", "sourceRange": {"start": 0, "duration": 0}, "at": 0},
                {"asset": "nope", "at": 3}]}],
             "videoComposition": {"renderSize": {"width": 641, "height": 360}}}
            """.write(toFile: bad, atomically: true, encoding: .utf8)
        let r = try Media.run(Media.reel, ["validate", bad], allowFailure: true)
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("tracks[0].segments[0].sourceRange.duration:") && $0.contains("> 0") }, "\(r.stderr)")
        #expect(lines.contains { $0.hasPrefix("tracks[0].segments[1].asset:") }, "\(r.stderr)")
        #expect(lines.contains { $0.hasPrefix("assets.logo.url:") && $0.contains("no such file") }, "\(r.stderr)")
        #expect(lines.contains { $0.hasPrefix("videoComposition.renderSize") }, "\(r.stderr)")

        // Structural problems (typos, wrong types) are all reported before any file is probed.
        let typo = dir.appendingPathComponent("typo.json").path
        try """
            {"formatVersion": 1, "assets": {}, "tracks": [{"id": "one", "mediaType": "video", "segments": []}], "exprot": {}}
            """.write(toFile: typo, atomically: true, encoding: .utf8)
        let t = try Media.run(Media.reel, ["validate", typo], allowFailure: true)
        #expect(t.status == 1)
        let typoLines = t.stderr.split(separator: "\n").map(String.init)
        #expect(typoLines.contains { $0.hasPrefix("exprot:") && $0.contains("unknown key") }, "\(t.stderr)")
        #expect(typoLines.contains { $0.hasPrefix("tracks[0].id:") }, "\(t.stderr)")

        let good = dir.appendingPathComponent("good.json").path
        try """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}]}
            """.write(toFile: good, atomically: true, encoding: .utf8)
        let ok = try Media.run(Media.reel, ["validate", good])
        #expect(ok.status == 0)
        #expect(String(decoding: ok.stdout, as: UTF8.self).contains("50 frames"))
    }

    @Test func userErrorsExitOneAndSayWhatToFix() throws {
        let dir = try Media.tempDirectory()
        let missing = try Media.run(Media.reel, ["render", dir.appendingPathComponent("nope.json").path, "-o", dir.appendingPathComponent("o.mp4").path], allowFailure: true)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("does not exist"))
        let usage = try Media.run(Media.reel, ["render"], allowFailure: true)
        #expect(usage.status == 1)
        let thumb = try Media.run(Media.reel, ["thumbnail", "/etc/hostname", "--at", "1", "-o", dir.appendingPathComponent("t.png").path], allowFailure: true)
        #expect(thumb.status == 1)
        for command in ["render", "validate", "probe", "thumbnail", "concat", "slideshow"] {
            let help = try Media.run(Media.reel, [command, "--help"])
            #expect(help.status == 0)
            #expect(String(decoding: help.stdout, as: UTF8.self).contains("USAGE"))
        }
    }

    /// `reel thumbnail` picks the exact frame (zero tolerance), not the nearest keyframe.
    @Test(arguments: [("0.52", 13), ("0.519", 12), ("1001/1000", 25), ("1.96", 49)])
    func thumbnailIsTheExactFrame(at: String, frame: Int) throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        let png = dir.appendingPathComponent("t.png").path
        try Media.run(Media.reel, ["thumbnail", clip, "--at", at, "-o", png])
        let luma = try Media.lumaFrames(png, width: 64, height: 48)
        #expect(luma.count == 1)
        let got = Media.mean(luma[0], width: 64, x: 8, y: 8, w: 48, h: 32)
        #expect(abs(got - Fixtures.numberedLuma(Int64(frame))) <= 2.5, "--at \(at): luma \(got), expected frame \(frame)")
    }

    @Test func probeReportsRotationRateAndKeyframeInterval() throws {
        let dir = try Media.tempDirectory()
        let coded = dir.appendingPathComponent("c.mp4").path, rotated = dir.appendingPathComponent("r.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x180:r=30000/1001:d=2", "-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p", coded])
        try Media.ffmpeg(["-i", coded, "-c", "copy", "-metadata:s:v:0", "rotate=270", rotated])
        let r = try Media.run(Media.reel, ["probe", "--json", rotated])
        let text = String(decoding: r.stdout, as: UTF8.self)
        #expect(r.status == 0)
        let json = try JSONSerialization.jsonObject(with: r.stdout)
        #expect(json is [String: Any], "probe --json prints a JSON object")
        #expect(text.contains("320") && text.contains("180"), "natural size")
        #expect(text.contains("30000") && text.contains("1001"), "exact 29.97 frame rate")
        #expect(text.contains("12"), "keyframe interval")
        let human = try Media.run(Media.reel, ["probe", rotated])
        #expect(String(decoding: human.stdout, as: UTF8.self).lowercased().contains("rotat"))
    }

    @Test func concatJoinsClipsWithReplacementMusic() throws {
        let dir = try Media.tempDirectory()
        let a = dir.appendingPathComponent("a.mp4").path, b = dir.appendingPathComponent("b.mp4").path
        let music = dir.appendingPathComponent("m.m4a").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=1.2", "-c:v", "libx264", "-pix_fmt", "yuv420p", a])
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=120x160:r=30:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p", b])
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=600:duration=10", "-c:a", "aac", music])
        let out = dir.appendingPathComponent("joined.mp4").path
        let r = try Media.run(Media.reel, ["concat", a, b, "--audio", music, "-o", out, "--quiet"])
        #expect(r.status == 0)
        let probe = try Media.probe(out)
        let video = try #require(Media.stream(probe, type: "video"))
        #expect(video["width"] as? Int == 160 && video["height"] as? Int == 160)
        let frames = try Media.framePTS(out)
        #expect(frames.count == Int((Rational(22, 10) / Rational(1, 30)).ceil))   // mixed rates ⇒ 1/30
        let audio = try #require(Media.stream(probe, type: "audio"))
        #expect(abs((Double(audio["duration"] as? String ?? "") ?? 0) - 2.2) <= 1024.0 / 48000 + 1e-6)
        #expect(try Media.decodeErrors(out).isEmpty)
    }

    @Test func slideshowHoldsEachStill() throws {
        let dir = try Media.tempDirectory()
        var images: [String] = []
        for (i, colour) in ["white", "black", "gray"].enumerated() {
            let path = dir.appendingPathComponent("s\(i).png").path
            try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=\(colour):s=96x64", "-frames:v", "1", path])
            images.append(path)
        }
        let out = dir.appendingPathComponent("show.mp4").path
        try Media.run(Media.reel, ["slideshow"] + images + ["--seconds", "0.5", "-o", out, "--quiet"])
        let frames = try Media.lumaFrames(out, width: 96, height: 64)
        #expect(frames.count == 45)   // 1.5 s at the default 1/30
        let expected: [Double] = [235, 16, 126]
        for (k, frame) in frames.enumerated() {
            let got = Media.mean(frame, width: 96, x: 10, y: 10, w: 76, h: 44)
            #expect(abs(got - expected[k / 15]) < 4, "frame \(k): luma \(got), expected image \(k / 15)")
        }
    }

    /// The reproduction that killed `reel validate` with SIGILL, and a FIFO asset that
    /// made it hang, are validation problems with exit status 1.
    @Test func hostileCompositionsAreProblemsNotCrashesOrHangs() throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        let overflow = dir.appendingPathComponent("overflow.json").path
        try """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [
               {"asset": "n", "at": "1/9223372036854775783", "sourceRange": {"start": 0, "duration": "1/9223372036854775643"}}]}]}
            """.write(toFile: overflow, atomically: true, encoding: .utf8)
        let r = try Media.run(Media.reel, ["validate", overflow], allowFailure: true)
        #expect(r.status == 1, "exit \(r.status): \(r.stderr)")
        #expect(r.stderr.hasPrefix("tracks[0].segments[0].at: the fraction 1/9223372036854775783"), "\(r.stderr)")

        let fifo = dir.appendingPathComponent("pipe.mp4").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let piped = dir.appendingPathComponent("fifo.json").path
        try """
            {"formatVersion": 1, "assets": {"n": {"url": "\(fifo)"}}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}]}
            """.write(toFile: piped, atomically: true, encoding: .utf8)
        let f = try Media.run(Media.reel, ["validate", piped], allowFailure: true)
        #expect(f.status == 1)
        #expect(f.stderr.contains("assets.n.url: is not a regular file (a FIFO, device or socket)"), "\(f.stderr)")
    }

    /// The probe and thumbnail snags: ffprobe's rotation number, no libav log lines, JSON
    /// without escaped slashes, and `--at -1` explained.
    @Test func probeAndThumbnailSpeakPlainly() throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        let rotated = dir.appendingPathComponent("rotated.mp4").path
        try Media.ffmpeg(["-i", clip, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated])
        let ffprobe = String(decoding: try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                 "stream_side_data=rotation", "-of", "csv=p=0", rotated]).stdout, as: UTF8.self)
        let expected = ffprobe.trimmingCharacters(in: .whitespacesAndNewlines)
        let text = String(decoding: try Media.run(Media.reel, ["probe", rotated]).stdout, as: UTF8.self)
        #expect(text.contains("rotation \(expected)° (as ffprobe"), "ffprobe says \(expected): \(text)")

        let json = String(decoding: try Media.run(Media.reel, ["probe", "--json", rotated]).stdout, as: UTF8.self)
        #expect(json.contains("\"path\" : \"\(rotated)\""), "slashes unescaped: \(json.prefix(300))")

        let notMedia = dir.appendingPathComponent("notes.png").path
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: notMedia))
        let p = try Media.run(Media.reel, ["probe", notMedia], allowFailure: true)
        #expect(!p.stderr.contains("@ 0x"), "a libav log line leaked: \(p.stderr)")

        let t = try Media.run(Media.reel, ["thumbnail", clip, "--at", "-1", "-o", dir.appendingPathComponent("t.png").path], allowFailure: true)
        #expect(t.status == 1)
        #expect(t.stderr.contains("--at takes seconds"), "\(t.stderr)")
    }

    /// `-o out.mov` writes QuickTime, `-o out.mkv` is refused (it used to be MP4 under
    /// another name), and a contradiction with `export.fileType` names both.
    @Test func theContainerFollowsTheOutputName() throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        let json = dir.appendingPathComponent("c.json").path
        try """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}],
             "export": {"preset": "low"}}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        func brand(_ path: String) throws -> String {
            let probe = try Media.probe(path)
            let tags = (probe["format"] as? [String: Any])?["tags"] as? [String: Any]
            return tags?["major_brand"] as? String ?? "?"
        }
        let mov = dir.appendingPathComponent("out.mov").path
        try Media.run(Media.reel, ["render", json, "-o", mov, "--in-process", "--quiet"])
        #expect(try brand(mov) == "qt  ")
        let concat = dir.appendingPathComponent("joined.mov").path
        try Media.run(Media.reel, ["concat", clip, clip, "-o", concat, "--quiet"])
        #expect(try brand(concat) == "qt  ")

        let mkv = try Media.run(Media.reel, ["render", json, "-o", dir.appendingPathComponent("out.mkv").path, "--in-process"], allowFailure: true)
        #expect(mkv.status == 1 && mkv.stderr.contains("the output name out.mkv ends in .mkv; Reel writes .mp4, .m4v, .mov"), "\(mkv.stderr)")
        let odd = try Media.run(Media.reel, ["concat", clip, "--size", "641x360", "-o", dir.appendingPathComponent("odd.mp4").path], allowFailure: true)
        #expect(odd.status == 1 && odd.stderr.contains("--size 641x360: width and height must be even") && !odd.stderr.contains("videoComposition"),
                "\(odd.stderr)")
        let slideshow = try Media.run(Media.reel, ["concat", clip, "-o", dir.appendingPathComponent("x.avi").path], allowFailure: true)
        #expect(slideshow.status == 1 && slideshow.stderr.contains("ends in .avi"), "\(slideshow.stderr)")

        let typed = dir.appendingPathComponent("typed.json").path
        try """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}],
             "export": {"fileType": "mp4"}}
            """.write(toFile: typed, atomically: true, encoding: .utf8)
        let conflict = try Media.run(Media.reel, ["render", typed, "-o", dir.appendingPathComponent("typed.mov").path, "--in-process"], allowFailure: true)
        #expect(conflict.status == 1 && conflict.stderr.contains("export.fileType is \"mp4\" but the output name typed.mov ends in .mov"), "\(conflict.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("typed.mov").path))
    }

    /// `-o ..` and `-o .` used to trap (the output name's extension was read with `.last!` of
    /// an empty split). A path that names a directory — by its form, or because a folder exists
    /// there — is a mistake the user fixes: every command that writes an output says so with
    /// exit status 1, before it renders, connects or downloads anything.
    @Test func outputPathsThatNameDirectoriesExitOneAndSaySo() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clip = try Fixtures.numberedClip(in: dir)
        let json = dir.appendingPathComponent("c.json").path
        try """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}]}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        let still = dir.appendingPathComponent("still.png").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:s=64x48", "-frames:v", "1", still])
        let existing = dir.appendingPathComponent("renders").path
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: false)
        let outputs: [(given: String, suggested: String)] = [
            ("..", "../out.mp4"), (".", "out.mp4"), (dir.path + "/new/", dir.path + "/new/out.mp4"),
            (existing + "/..", existing + "/../out.mp4"), (existing, existing + "/out.mp4"),
        ]
        // An unreachable coordinator: submit and fetch must refuse the name before connecting.
        let offline = ["--coordinator", "127.0.0.1:1"]
        for (given, suggested) in outputs {
            for command in [["render", json, "--in-process", "--quiet"], ["render", json, "--quiet"], ["concat", clip, "--quiet"],
                            ["slideshow", still, "--quiet"], ["submit", json, "--wait", "--quiet"] + offline, ["fetch", "1", "--quiet"] + offline] {
                let r = try Media.run(Media.reel, command + ["-o", given], allowFailure: true)
                #expect(r.status == 1, "\(command[0]) -o \(given): status \(r.status), \(r.stderr)")
                #expect(r.stderr.contains("the output name \(given) is a directory, not a file name: give a file name such as \(suggested)"),
                        "\(command[0]) -o \(given): \(r.stderr)")
            }
        }
        // A name with nothing after its last dot has no extension; it is not read as `.out`.
        let dotted = try Media.run(Media.reel, ["render", json, "--in-process", "-o", dir.appendingPathComponent("out.").path], allowFailure: true)
        #expect(dotted.status == 1 && dotted.stderr.contains("the output name out. ends in a dot with no extension after it; Reel writes .mp4"),
                "\(dotted.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: existing).isEmpty, "nothing is written into the folder")
    }

    /// Times in messages are seconds, not `N/D` fractions.
    @Test func timesInMessagesAreSeconds() throws {
        let dir = try Media.tempDirectory()
        let clip = try Fixtures.numberedClip(in: dir)
        let thumbnail = try Media.run(Media.reel, ["thumbnail", clip, "--at", "1001/1000", "-o", dir.appendingPathComponent("t.png").path])
        #expect(String(decoding: thumbnail.stdout, as: UTF8.self).hasSuffix("at 1.001 s\n"), "\(String(decoding: thumbnail.stdout, as: UTF8.self))")

        let good = dir.appendingPathComponent("good.json").path
        try """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}]}
            """.write(toFile: good, atomically: true, encoding: .utf8)
        let ok = String(decoding: try Media.run(Media.reel, ["validate", good]).stdout, as: UTF8.self)
        #expect(ok.contains("50 frames of 0.04 s = 2 s,"), "\(ok)")

        let fast = dir.appendingPathComponent("fast.json").path
        try """
            {"formatVersion": 1, "assets": {"n": {"url": "\(clip)"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "n", "at": 0}]}],
             "videoComposition": {"renderSize": {"width": 64, "height": 48}, "frameDuration": "1/1000"}}
            """.write(toFile: fast, atomically: true, encoding: .utf8)
        let r = try Media.run(Media.reel, ["validate", fast], allowFailure: true)
        #expect(r.status == 1)
        #expect(r.stderr.contains("videoComposition.frameDuration: 0.001 s is more than 240 frames per second; "
                                  + "the shortest frame duration is 0.004167 s (1/240)"), "\(r.stderr)")
    }
}
