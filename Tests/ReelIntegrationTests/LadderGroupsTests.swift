import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// Issues 20/23: subtitle tracks as the ladder's WebVTT `SUBTITLES` group and
/// `export.audioOutputs` as its `AUDIO` group (docs/composition.md, "HLS and DASH ladders").
/// The composition joins SubtitleTrackTests' (an English SubRip and a French WebVTT file, cues
/// across the 2 s and 4 s segment joins) and AudioOutputTests' (an English voice at 440 Hz and
/// a French one at 660 Hz over a shared, ducked 220 Hz bed), as a two-rendition ladder in 2 s
/// segments and 2 s chunks. Checked as players read it: the master playlist's groups and
/// attributes parsed here; what ffmpeg's HLS demuxer opens from master.m3u8 (streams and
/// languages); the cues ffmpeg extracts from each subtitle rendition (SubtitleTrackTests'
/// expectations); each audio rendition's tones measured on ffmpeg's decode (AudioOutputTests'
/// expectations); and a clean `ffmpeg -v error` decode of everything.
@Suite(.blocking) struct LadderGroupsTests {
    static let renditions = [("hi", 160, 120, 300_000), ("lo", 96, 72, 120_000)]

    static func writeComposition(in dir: URL, audio: String = "") throws -> String {
        _ = try AudioOutputTests.writeComposition(in: dir, export: "{}")          // bed.wav, en.wav, fr.wav
        _ = try SubtitleTrackTests.writeComposition(in: dir)                       // clip.mp4 (8 s), en.srt, fr.vtt
        let rungs = renditions.map { name, w, h, rate in
            #"{"name": "\#(name)", "renderSize": {"width": \#(w), "height": \#(h)}, "video": {"bitRate": \#(rate)}}"#
        }
        let json = dir.appendingPathComponent("groups.json").path
        try """
            {"formatVersion": 1,
             "assets": {"clip": {"url": "clip.mp4"}, "bed": {"url": "bed.wav"}, "en": {"url": "en.wav"}, "fr": {"url": "fr.wav"},
                        "ensub": {"url": "en.srt"}, "frsub": {"url": "fr.vtt"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "bed", "at": 0}]},
                        {"id": 3, "mediaType": "audio", "segments": [{"asset": "en", "at": 0}]},
                        {"id": 4, "mediaType": "audio", "segments": [{"asset": "fr", "at": 3}]},
                        {"id": 5, "mediaType": "subtitle", "language": "en", "title": "English (SDH)",
                         "segments": [{"asset": "ensub", "at": 0}]},
                        {"id": 6, "mediaType": "subtitle", "language": "fr", "title": "Français", "default": true,
                         "segments": [{"asset": "frsub", "sourceRange": {"start": 1, "duration": 5}, "at": 1.5}]}],
             "audioMix": [{"track": 2, "volume": 0.5, "duck": {"under": [3, 4], "amount": 12, "attack": 0.05, "release": 0.3}}],
             "export": {"fileType": "hls", "segmentDuration": 2, "video": {"x264Preset": "ultrafast"}\(audio),
                        "renditions": [\(rungs.joined(separator: ", "))], \(AudioOutputTests.outputs)}}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        return json
    }

    /// The attributes of an `#EXT-X-…:` line (quoted values unquoted).
    static func attributes(_ line: Substring) -> [String: String] {
        var out: [String: String] = [:]
        let body = line.drop { $0 != ":" }.dropFirst()
        let regex = #/([A-Z0-9-]+)=("[^"]*"|[^,]*)/#
        for match in body.matches(of: regex) {
            out[String(match.output.1)] = String(match.output.2).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return out
    }

    /// Every check of the suite's description on the ladder at `master`.
    static func check(_ master: String) throws {
        let folder = URL(fileURLWithPath: master).deletingLastPathComponent()
        let text = try String(contentsOfFile: master, encoding: .utf8)
        let lines = text.split(separator: "\n")
        let media = lines.filter { $0.hasPrefix("#EXT-X-MEDIA:") }.map(attributes)
        let audio = media.filter { $0["TYPE"] == "AUDIO" }, subtitles = media.filter { $0["TYPE"] == "SUBTITLES" }
        #expect(audio.map { $0["LANGUAGE"] } == ["en", "fr"] && audio.map { $0["NAME"] } == ["English", "Français"], "\(text)")
        #expect(audio.map { $0["DEFAULT"] } == ["YES", "NO"] && audio.allSatisfy { $0["AUTOSELECT"] == "YES" && $0["GROUP-ID"] == "audio" })
        #expect(audio.map { $0["URI"] } == ["audio-1/index.m3u8", "audio-2/index.m3u8"])
        #expect(subtitles.map { $0["LANGUAGE"] } == ["en", "fr"] && subtitles.map { $0["NAME"] } == ["English (SDH)", "Français"])
        #expect(subtitles.map { $0["DEFAULT"] } == ["NO", "YES"] && subtitles.allSatisfy { $0["AUTOSELECT"] == "YES" && $0["GROUP-ID"] == "subtitles" })
        let variants = lines.filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }.map(attributes)
        #expect(variants.count == 2 && variants.allSatisfy {
            $0["AUDIO"] == "audio" && $0["SUBTITLES"] == "subtitles" && ($0["CODECS"] ?? "").hasSuffix(",mp4a.40.2")
        }, "\(variants)")

        // What ffmpeg's HLS demuxer opens from the master playlist: the video and both audio
        // renditions with their languages. (FFmpeg 5.1's HLS demuxer reads no SUBTITLES group,
        // and opens a WebVTT media playlist as one file, its segments' bytes joined, so the
        // subtitle segments are read one by one below, by its WebVTT demuxer.)
        let streams = try Media.probe(master)["streams"] as? [[String: Any]] ?? []
        func languages(_ streams: [[String: Any]], _ type: String) -> [String] {
            streams.filter { $0["codec_type"] as? String == type }.map { (($0["tags"] as? [String: Any])?["language"] as? String) ?? "?" }
        }
        #expect(languages(streams, "audio") == ["en", "fr"], "\(streams)")
        #expect(streams.filter { $0["codec_type"] as? String == "video" }.count == 2)

        // Each subtitle rendition: one WebVTT file per 2 s video segment, with the timestamp
        // map, holding exactly the cues that overlap its time; together the source's cues.
        for (track, expected) in [("subtitles-1", SubtitleTrackTests.expectedEnglish), ("subtitles-2", SubtitleTrackTests.expectedFrench)] {
            let playlist = try String(contentsOf: folder.appendingPathComponent("\(track)/index.m3u8"), encoding: .utf8)
            let segments = playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(segments.count == 4 && playlist.components(separatedBy: "#EXTINF:2.000000,").count == 5, "\(track): \(playlist)")
            var all: [SubtitleTrackTests.Extracted] = []
            for (index, segment) in segments.enumerated() {
                let path = folder.appendingPathComponent("\(track)/\(segment)").path
                let vtt = try String(contentsOfFile: path, encoding: .utf8)
                #expect(vtt.hasPrefix("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n"), "\(track)/\(segment)")
                let cues = try SubtitleTrackTests.extract(path, stream: 0)
                let (start, end) = (index * 2000, index * 2000 + 2000)
                #expect(cues.map(\.text) == expected.filter { $0.start < end && $0.end > start }.map(\.text), "\(track)/\(segment): \(cues)")
                #expect(cues.allSatisfy { $0.start < end && $0.end > start }, "\(track)/\(segment) holds a cue outside its time: \(cues)")
                all += cues
            }
            let joined = all.sorted { ($0.start, $0.end) < ($1.start, $1.end) }.reduce(into: [SubtitleTrackTests.Extracted]()) { out, cue in
                if out.last != cue { out.append(cue) }
            }
            SubtitleTrackTests.expectCues(joined, expected, "\(track), its segments joined")
        }

        // Each audio rendition's tones, decoded by ffmpeg from its own playlist.
        let decoded = folder.appendingPathComponent("decoded.mka").path
        defer { unlink(decoded) }
        try Media.ffmpeg(["-i", folder.appendingPathComponent("audio-1/index.m3u8").path, "-i", folder.appendingPathComponent("audio-2/index.m3u8").path,
                          "-map", "0:a", "-map", "1:a", "-c:a", "pcm_f32le", decoded])
        try AudioOutputTests.expectTones(decoded)

        // Everything decodes without a word from ffmpeg.
        let clean = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", master, "-map", "0", "-f", "null", "-"], allowFailure: true)
        #expect(clean.status == 0 && clean.stderr.isEmpty, "\(clean.stderr)")

        // DASH: one audio adaptation set per language and one text set per subtitle track, as
        // ffmpeg's DASH demuxer opens them (it reads .vtt files only when allowed to); the
        // subtitles' cues as ffmpeg extracts them (within one frame: it starts the programme at
        // the audio's first sample, 21 ms before 0).
        let manifest = folder.appendingPathComponent("manifest.mpd").path
        let dashProbe = try Media.run("ffprobe", ["-v", "error", "-allowed_extensions", "ALL", "-show_streams", "-of", "json", manifest])
        let dashStreams = (try JSONSerialization.jsonObject(with: dashProbe.stdout) as? [String: Any])?["streams"] as? [[String: Any]] ?? []
        #expect(languages(dashStreams, "audio") == ["en", "fr"] && languages(dashStreams, "subtitle") == ["en", "fr"], "\(dashStreams)")
        SubtitleTrackTests.expectCues(try extractDASH(manifest, stream: 0), SubtitleTrackTests.expectedEnglish, "DASH English")
        SubtitleTrackTests.expectCues(try extractDASH(manifest, stream: 1), SubtitleTrackTests.expectedFrench, "DASH French")
        let dash = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-allowed_extensions", "ALL", "-i", manifest,
                                            "-map", "0", "-c:s", "srt", "-f", "null", "-"], allowFailure: true)
        #expect(dash.status == 0 && dash.stderr.isEmpty, "\(dash.stderr)")
    }

    /// Subtitle stream `index` of a DASH manifest, as ffmpeg extracts it (SubRip).
    static func extractDASH(_ manifest: String, stream index: Int) throws -> [SubtitleTrackTests.Extracted] {
        let srt = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-allowed_extensions", "ALL", "-i", manifest,
                                           "-map", "0:s:\(index)", "-f", "srt", "-"]).stdout
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dash-\(getpid())-\(index).srt").path
        defer { unlink(path) }
        try srt.write(to: URL(fileURLWithPath: path))
        return try SubtitleTrackTests.extract(path, stream: 0)
    }

    @Test func subtitlesAndAudioOutputsInAnInProcessLadder() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = try Self.writeComposition(in: dir)
        let master = dir.appendingPathComponent("out/master.m3u8").path
        let render = try Media.run(Media.reel, ["render", json, "--in-process", "--agents", "2", "--chunk-seconds", "2",
                                                "--encoder-threads", "1", "-o", master, "--quiet"], allowFailure: true)
        try #require(render.status == 0, "\(render.stderr)")
        try Self.check(master)
    }

    /// `export.audio.loudness` on a ladder normalises each audio output on its own, as in an
    /// MP4: each rendition measured by ffmpeg's ebur128 meets the target.
    @Test func loudnessNormalisesEveryAudioRendition() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = try Self.writeComposition(in: dir, audio: #", "audio": {"loudness": {"integrated": -20, "truePeak": -2}}"#)
        let master = dir.appendingPathComponent("out/master.m3u8").path
        let render = try Media.run(Media.reel, ["render", json, "--in-process", "--agents", "2", "--chunk-seconds", "2",
                                                "--encoder-threads", "1", "-o", master, "--quiet"], allowFailure: true)
        try #require(render.status == 0, "\(render.stderr)")
        for output in ["audio-1", "audio-2"] {
            let playlist = dir.appendingPathComponent("out/\(output)/index.m3u8").path
            let figures = try LoudnessTests.ffmpegLoudness(playlist)
            #expect(abs(figures.integrated + 20) <= 0.5, "\(output): \(figures)")
            #expect(figures.truePeak <= -2 + 0.3, "\(output): \(figures)")
        }
    }
}

extension FarmTests {
    /// The same ladder through a coordinator and two agents: the same checks, and every file
    /// byte for byte the in-process render's.
    @Test func subtitlesAndAudioOutputsInALadderThroughTheFarm() throws {
        let farm = try LocalFarm(agents: 2)
        let json = try LadderGroupsTests.writeComposition(in: farm.dir)
        let reference = farm.dir.appendingPathComponent("in-process/master.m3u8").path
        let local = try Media.run(Media.reel, ["render", json, "--in-process", "--agents", "2", "--chunk-seconds", "2",
                                               "--encoder-threads", "1", "-o", reference, "--quiet"], allowFailure: true)
        try #require(local.status == 0, "\(local.stderr)")
        let master = farm.dir.appendingPathComponent("farm/master.m3u8").path
        let submitted = try farm.reel(["submit", json, "--chunk-seconds", "2", "--encoder-threads", "1", "--wait", "-o", master, "--quiet"],
                                      allowFailure: true)
        try #require(submitted.status == 0, "\(submitted.stderr)")
        try LadderGroupsTests.check(master)
        let farmFiles = try Self.folderFiles(master), localFiles = try Self.folderFiles(reference)
        #expect(farmFiles.keys.sorted() == localFiles.keys.sorted())
        for (name, bytes) in localFiles { #expect(farmFiles[name] == bytes, "\(name) differs from the in-process render") }
    }
}
