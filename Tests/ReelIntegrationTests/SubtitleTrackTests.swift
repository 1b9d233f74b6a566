import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// Subtitle tracks (docs/composition.md, "Subtitle tracks"): written by the finaliser as one
/// mov_text stream per track, whole, whatever the chunking. Checked with ffprobe and with what
/// ffmpeg's own demuxer and SubRip writer extract.
@Suite(.database, .blocking) struct SubtitleTrackTests {
    /// A cue as ffmpeg writes it in SubRip: milliseconds and text.
    struct Extracted: Equatable, CustomStringConvertible {
        var start: Int
        var end: Int
        var text: String
        var description: String { "\(start)–\(end) \(text.debugDescription)" }
    }

    /// The cues of subtitle stream `index` of `path`, extracted by ffmpeg as SubRip and read with a
    /// reader of the test's own.
    static func extract(_ path: String, stream index: Int) throws -> [Extracted] {
        let srt = String(decoding: try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:s:\(index)", "-f", "srt", "-"]).stdout,
                         as: UTF8.self)
        func ms(_ t: Substring) -> Int {
            let p = t.split(whereSeparator: { $0 == ":" || $0 == "," }).map { Int($0)! }
            return ((p[0] * 60 + p[1]) * 60 + p[2]) * 1000 + p[3]
        }
        return srt.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.count >= 3 else { return nil }
            let times = lines[1].components(separatedBy: " --> ")
            return Extracted(start: ms(times[0][...]), end: ms(times[1][...]), text: lines[2...].joined(separator: "\n"))
        }
    }

    /// 8 s of 160×120 video at 25 fps (GOP 2 s: chunks start at 2, 4 and 6 s), a tone, an
    /// English SubRip file placed whole and a French WebVTT file trimmed to its seconds [1, 6)
    /// and placed at 1.5 s (so 0.5 s later than in the file).
    static func writeComposition(in dir: URL, fileType: String = "mp4", english: String = "en", french: String = "fr") throws -> String {
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=8", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=8",
                          "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
                          dir.appendingPathComponent("clip.mp4").path])
        try """
            1
            00:00:00,500 --> 00:00:01,500
            Hello there

            2
            00:00:01,800 --> 00:00:02,600
            <i>across</i> the join

            3
            00:00:03,000 --> 00:00:03,900
            third line
            second row

            4
            00:00:07,500 --> 00:00:08,500
            late

            """.write(to: dir.appendingPathComponent("en.srt"), atomically: true, encoding: .utf8)
        try """
            WEBVTT

            NOTE file times; the composition shows them 0.5 s later, cut to [1, 6)

            00:00.200 --> 00:00.800
            Avant

            00:00.500 --> 00:01.200
            Début

            b
            00:01.300 --> 00:02.000 align:start
            <v Marie>Bonjour</v>

            00:03.200 --> 00:04.300
            À travers la jointure &amp; plus

            00:05.800 --> 00:07.000
            Coupé

            00:06.500 --> 00:07.000
            Dehors

            """.write(to: dir.appendingPathComponent("fr.vtt"), atomically: true, encoding: .utf8)
        let json = dir.appendingPathComponent("subtitles.json").path
        try """
            {"formatVersion": 1,
             "assets": {"clip": {"url": "clip.mp4"}, "en": {"url": "en.srt"}, "fr": {"url": "fr.vtt"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "at": 0}]},
                        {"id": 3, "mediaType": "subtitle", "language": "\(english)", "title": "English (SDH)",
                         "segments": [{"asset": "en", "at": 0}]},
                        {"id": 4, "mediaType": "subtitle", "language": "\(french)", "title": "Français", "default": true,
                         "segments": [{"asset": "fr", "sourceRange": {"start": 1, "duration": 5}, "at": 1.5}]}],
             "export": {"preset": "medium", "fileType": "\(fileType)", "video": {"x264Preset": "ultrafast"}}}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        return json
    }

    static let expectedEnglish = [
        Extracted(start: 500, end: 1500, text: "Hello there"),
        Extracted(start: 1800, end: 2600, text: "across the join"),      // spans the join at 2 s
        Extracted(start: 3000, end: 3900, text: "third line\nsecond row"),
        Extracted(start: 7500, end: 8000, text: "late"),                 // cut at the composition's end
    ]
    static let expectedFrench = [
        Extracted(start: 1500, end: 1700, text: "Début"),                // cut at the range's start (file 1.0 s)
        Extracted(start: 1800, end: 2500, text: "Bonjour"),              // spans the join at 2 s
        Extracted(start: 3700, end: 4800, text: "À travers la jointure & plus"),  // spans the join at 4 s
        Extracted(start: 6300, end: 6500, text: "Coupé"),                // cut at the range's end (file 6.0 s)
    ]

    /// Every extracted cue matches its expectation within one frame (40 ms), with the same text.
    static func expectCues(_ got: [Extracted], _ expected: [Extracted], _ label: String) {
        #expect(got.map(\.text) == expected.map(\.text), "\(label): \(got)")
        for (g, e) in zip(got, expected) {
            #expect(abs(g.start - e.start) < 40 && abs(g.end - e.end) < 40, "\(label): \(g) against \(e)")
        }
    }

    @Test func twoSubtitleTracksThroughTheFarmInTwoSecondChunks() throws {
        let dir = try Media.tempDirectory()
        let json = try Self.writeComposition(in: dir)
        let output = dir.appendingPathComponent("out.mp4").path
        let render = try Media.run(Media.reel, ["render", json, "-o", output, "--chunk-seconds", "2", "--agents", "2",
                                                "--encoder-threads", "1", "--database", try FreshDatabase.url(), "--quiet"], allowFailure: true)
        try #require(render.status == 0, "reel render failed: \(render.stderr)")

        let probe = try Media.probe(output)
        let subtitles = (probe["streams"] as? [[String: Any]] ?? []).filter { $0["codec_type"] as? String == "subtitle" }
        #expect(subtitles.map { $0["codec_name"] as? String } == ["mov_text", "mov_text"])
        let tags = subtitles.map { $0["tags"] as? [String: String] ?? [:] }
        #expect(tags.map { $0["language"] } == ["eng", "fra"])
        #expect(tags.map { $0["handler_name"] } == ["English (SDH)", "Français"])
        let defaults = subtitles.map { ($0["disposition"] as? [String: Int])?["default"] }
        #expect(defaults == [0, 1])

        Self.expectCues(try Self.extract(output, stream: 0), Self.expectedEnglish, "English")
        Self.expectCues(try Self.extract(output, stream: 1), Self.expectedFrench, "French")
        #expect(try Media.decodeErrors(output).isEmpty)
        #expect(try Media.lumaFrames(output, width: 160, height: 120).count == 200)
    }

    @Test func quickTimeKeepsTheLanguagesItsMuxerKnows() throws {
        let dir = try Media.tempDirectory()
        let json = try Self.writeComposition(in: dir, fileType: "mov", english: "de-AT", french: "pt-BR")
        let plan = try CompositionLoader.load(path: json)
        let output = dir.appendingPathComponent("out.mov").path
        try LocalRender.render(plan, to: output, options: .init(workers: 2, chunkSeconds: 2, encoderThreads: 1))
        let probe = try Media.probe(output)
        let subtitles = (probe["streams"] as? [[String: Any]] ?? []).filter { $0["codec_type"] as? String == "subtitle" }
        // German's QuickTime code is the bibliographic "ger"; Portuguese's is "por" either way.
        #expect(subtitles.map { ($0["tags"] as? [String: String])?["language"] } == ["ger", "por"])
        Self.expectCues(try Self.extract(output, stream: 0), Self.expectedEnglish, "German track")
    }

    /// WebM carries WebVTT streams: Matroska's language codes (bibliographic: `fre`), track
    /// names, the default flag, and the same cues as the MP4's, with `&` escaped and read back.
    @Test func webMCarriesWebVTTStreams() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = try Self.writeComposition(in: dir, fileType: "webm")
        let text = try String(contentsOfFile: json, encoding: .utf8)
            .replacingOccurrences(of: #""video": {"x264Preset": "ultrafast"}"#, with: #""video": {"vp9Speed": 8}"#)
        try text.write(toFile: json, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: json)
        let output = dir.appendingPathComponent("out.webm").path
        try LocalRender.render(plan, to: output, options: .init(workers: 2, chunkSeconds: 2, encoderThreads: 1))

        let probe = try Media.probe(output)
        let subtitles = (probe["streams"] as? [[String: Any]] ?? []).filter { $0["codec_type"] as? String == "subtitle" }
        #expect(subtitles.map { $0["codec_name"] as? String } == ["webvtt", "webvtt"])
        let tags = subtitles.map { $0["tags"] as? [String: String] ?? [:] }
        #expect(tags.map { $0["language"] } == ["eng", "fre"])
        #expect(tags.map { $0["title"] } == ["English (SDH)", "Français"])
        #expect(subtitles.map { ($0["disposition"] as? [String: Int])?["default"] } == [0, 1])
        Self.expectCues(try Self.extract(output, stream: 0), Self.expectedEnglish, "English")
        Self.expectCues(try Self.extract(output, stream: 1), Self.expectedFrench, "French")
        #expect(try Media.decodeErrors(output).isEmpty)
    }

    @Test func aMalformedSubtitleFileIsAValidationErrorNamingLineAndCue() throws {
        let dir = try Media.tempDirectory()
        let json = try Self.writeComposition(in: dir)
        try "1\n00:00:01,000 --> 00:00:02,000\nfine\n\n2\n00:00:03.000 -> 00:00:04,000\nbroken\n"
            .write(to: dir.appendingPathComponent("en.srt"), atomically: true, encoding: .utf8)
        let r = try Media.run(Media.reel, ["validate", json], allowFailure: true)
        #expect(r.status == 1)
        #expect(String(decoding: r.stdout, as: UTF8.self) + r.stderr ==
                "assets.en.url: en.srt line 6 (cue 2): timing line \"00:00:03.000 -> 00:00:04,000\" is not \"HH:MM:SS,mmm --> HH:MM:SS,mmm\" (minutes and seconds 00–59)\n")
    }
}
