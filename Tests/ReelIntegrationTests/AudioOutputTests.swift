import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// Several audio outputs (`export.audioOutputs`, docs/composition.md "Audio outputs"): an English
/// voice at 440 Hz and a French one at 660 Hz over a shared 220 Hz bed. Each output is its own
/// mix, so each stream's tones are measured on ffmpeg's decode of that stream alone (correlation
/// over whole periods, as in DuckingTests): its own voice, not the other, and the bed with its
/// `audioMix` volume, ducked under its own output's voice only.
@Suite(.database, .blocking) struct AudioOutputTests {
    static let rate = 48_000

    /// 6 s of 160×120 video at 25 fps; the bed (0.2 at 220 Hz, volume 0.5, ducking 12 dB under
    /// both voices) for 6 s; the English voice (0.2 at 440 Hz) for 6 s; the French one (0.2 at
    /// 660 Hz) from 3 s to 6 s.
    static func writeComposition(in dir: URL, export: String) throws -> String {
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=6", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                          path("clip.mp4")])
        for (name, hertz, seconds) in [("bed", 220, 6), ("en", 440, 6), ("fr", 660, 3)] {
            try Media.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.2*sin(2*PI*\(hertz)*t):s=48000:d=\(seconds)", "-c:a", "pcm_f32le", path("\(name).wav")])
        }
        let json = path("outputs.json")
        try """
            {"formatVersion": 1,
             "assets": {"clip": {"url": "clip.mp4"}, "bed": {"url": "bed.wav"}, "en": {"url": "en.wav"}, "fr": {"url": "fr.wav"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "bed", "at": 0}]},
                        {"id": 3, "mediaType": "audio", "segments": [{"asset": "en", "at": 0}]},
                        {"id": 4, "mediaType": "audio", "segments": [{"asset": "fr", "at": 3}]}],
             "audioMix": [{"track": 2, "volume": 0.5, "duck": {"under": [3, 4], "amount": 12, "attack": 0.05, "release": 0.3}}],
             "export": \(export)}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        return json
    }

    static let outputs = #"""
        "audioOutputs": [{"language": "en", "title": "English", "tracks": [2, 3]},
                         {"language": "fr", "title": "Français", "tracks": [2, 4]}]
        """#

    /// Audio stream `index` of `path`, decoded by ffmpeg to mono 48 kHz.
    static func samples(_ path: String, stream index: Int) throws -> [Float] {
        let r = try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:\(index)", "-f", "f32le", "-ac", "1", "-ar", "48000", "-"])
        return r.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The amplitude of the `hertz` tone over the second starting at `seconds` (whole periods
    /// of 220, 440 and 660 Hz, so each tone is orthogonal to the others).
    static func amplitude(_ x: [Float], _ hertz: Double, second seconds: Int) -> Double {
        var c = 0.0, s = 0.0
        for n in (seconds * rate)..<((seconds + 1) * rate) {
            let phase = 2 * Double.pi * hertz * Double(n) / Double(rate)
            c += Double(x[n]) * cos(phase); s += Double(x[n]) * sin(phase)
        }
        return 2 * (c * c + s * s).squareRoot() / Double(rate)
    }

    static func decibels(_ a: Double, _ b: Double) -> Double { 20 * log10(a / b) }

    /// Checks each stream's tones: its own voice at 0.2 (English from 0 s, French from 3 s), the
    /// other voice absent (≥ 40 dB below), the bed at 0.1 (volume 0.5) and 12 dB lower while
    /// the output's own voice speaks.
    static func expectTones(_ output: String) throws {
        let english = try samples(output, stream: 0), french = try samples(output, stream: 1)
        try #require(english.count >= 6 * rate && french.count >= 6 * rate, "\(english.count), \(french.count) samples")
        for second in 0..<6 {
            let en440 = amplitude(english, 440, second: second), en660 = amplitude(english, 660, second: second)
            #expect(abs(decibels(en440, 0.2)) < 0.5, "English stream, second \(second): voice \(en440)")
            #expect(decibels(en660, 0.2) < -40, "English stream, second \(second): the French voice at \(en660)")
            let enBed = amplitude(english, 220, second: second)
            #expect(abs(decibels(enBed, 0.1) + 12) < 1, "English stream, second \(second): bed \(enBed), ducked under the English voice")

            let fr660 = amplitude(french, 660, second: second), fr440 = amplitude(french, 440, second: second)
            let frBed = amplitude(french, 220, second: second)
            #expect(decibels(fr440, 0.2) < -40, "French stream, second \(second): the English voice at \(fr440)")
            if second < 3 {
                #expect(decibels(fr660, 0.2) < -40, "French stream, second \(second): voice \(fr660) before it speaks")
                #expect(abs(decibels(frBed, 0.1)) < 0.5, "French stream, second \(second): bed \(frBed), not ducked before the French voice")
            } else {
                #expect(abs(decibels(fr660, 0.2)) < 0.5, "French stream, second \(second): voice \(fr660)")
                // The first second of the voice holds the 50 ms attack.
                #expect(abs(decibels(frBed, 0.1) + 12) < (second == 3 ? 1.5 : 1), "French stream, second \(second): bed \(frBed), ducked")
            }
        }
    }

    static func audioStreams(_ path: String) throws -> [[String: Any]] {
        (try Media.probe(path)["streams"] as? [[String: Any]] ?? []).filter { $0["codec_type"] as? String == "audio" }
    }

    @Test func twoOutputsThroughTheFarmInTwoSecondChunks() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = try Self.writeComposition(in: dir, export: #"{"preset": "medium", "video": {"x264Preset": "ultrafast"}, \#(Self.outputs)}"#)
        let output = dir.appendingPathComponent("out.mp4").path
        let render = try Media.run(Media.reel, ["render", json, "-o", output, "--chunk-seconds", "2", "--agents", "2",
                                                "--encoder-threads", "1", "--database", try FreshDatabase.url(), "--quiet"], allowFailure: true)
        try #require(render.status == 0, "reel render failed: \(render.stderr)")

        let streams = try Self.audioStreams(output)
        #expect(streams.map { $0["codec_name"] as? String } == ["aac", "aac"])
        let tags = streams.map { $0["tags"] as? [String: String] ?? [:] }
        #expect(tags.map { $0["language"] } == ["eng", "fra"])
        #expect(tags.map { $0["handler_name"] } == ["English", "Français"])
        #expect(streams.map { ($0["disposition"] as? [String: Int])?["default"] } == [1, 0])
        try Self.expectTones(output)
        #expect(try Media.decodeErrors(output).isEmpty)
        #expect(try Media.lumaFrames(output, width: 160, height: 120).count == 150)

        // `reel loudness` measures each output's mix on its own, as ffmpeg measures its stream.
        let loudness = try Media.run(Media.reel, ["loudness", json, "--json"])
        let figures = try #require(try JSONSerialization.jsonObject(with: loudness.stdout) as? [String: Any])
        let perOutput = try #require(figures["audioOutputs"] as? [[String: Any]])
        #expect(perOutput.map { $0["audioOutput"] as? String } == [#"en "English""#, #"fr "Français""#])
        for (i, entry) in perOutput.enumerated() {
            let reel = try #require(entry["integratedLUFS"] as? Double)
            let ffmpeg = try LoudnessTests.ffmpegLoudness(["-i", output, "-map", "0:a:\(i)", "-af", "ebur128=peak=true"], of: "stream \(i)")
            #expect(abs(reel - ffmpeg.integrated) <= 0.3, "output \(i): reel loudness \(reel), ffmpeg \(ffmpeg.integrated)")
        }
        #expect(figures["integratedLUFS"] as? Double == perOutput[0]["integratedLUFS"] as? Double)
    }

    /// WebM: two Opus streams (the audio task's Ogg holds both), with Matroska's bibliographic
    /// language codes and track names.
    @Test func twoOpusOutputsInWebM() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = try Self.writeComposition(in: dir, export: #"{"fileType": "webm", "video": {"vp9Speed": 8}, \#(Self.outputs)}"#)
        let plan = try CompositionLoader.load(path: json)
        let output = dir.appendingPathComponent("out.webm").path
        try LocalRender.render(plan, to: output, options: .init(workers: 2, chunkSeconds: 2, encoderThreads: 1))
        let streams = try Self.audioStreams(output)
        #expect(streams.map { $0["codec_name"] as? String } == ["opus", "opus"])
        let tags = streams.map { $0["tags"] as? [String: String] ?? [:] }
        #expect(tags.map { $0["language"] } == ["eng", "fre"])
        #expect(tags.map { $0["title"] } == ["English", "Français"])
        #expect(streams.map { ($0["disposition"] as? [String: Int])?["default"] } == [1, 0])
        try Self.expectTones(output)
    }

    /// With `export.audio.loudness`, every output is normalised on its own and the job's
    /// loudness line (its events and `reel status`) gives each output's figures under its label,
    /// each the figure ffmpeg measures on that output's stream.
    @Test func eachOutputsLoudnessIsInTheJobsStatus() throws {
        let farm = try FarmTests.LocalFarm(agents: 1)
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = try Self.writeComposition(in: dir, export: #"{"preset": "medium", "video": {"x264Preset": "ultrafast"}, "audio": {"loudness": "ebuR128"}, \#(Self.outputs)}"#)
        let output = dir.appendingPathComponent("out.mp4").path
        let (job, loudness) = try LoudnessTests.submitReadingLoudness(farm, json, to: output)
        let parts = loudness.components(separatedBy: " | ")
        try #require(parts.count == 2, "\(loudness)")
        for (i, (part, label)) in zip(parts, [#"en "English": "#, #"fr "Français": "#]).enumerated() {
            #expect(part.hasPrefix(label + "normalised to ebuR128 (−23 LUFS, −1 dBTP): measured −"), "\(part)")
            // "… output −23.0 LUFS, range …": the delivered stream's figure, as ffmpeg measures it.
            let reported = try #require(part.components(separatedBy: "; output ").last?.components(separatedBy: " LUFS").first, "\(part)")
            let value = try #require(Double(reported.replacingOccurrences(of: "−", with: "-")), "\(part)")
            let ffmpeg = try LoudnessTests.ffmpegLoudness(["-i", output, "-map", "0:a:\(i)", "-af", "ebur128=peak=true"], of: "stream \(i)")
            #expect(abs(ffmpeg.integrated - -23) <= 0.5, "stream \(i): ffmpeg measures \(ffmpeg.integrated) LUFS")
            #expect(abs(value - ffmpeg.integrated) <= 0.3, "stream \(i): reported \(value), ffmpeg \(ffmpeg.integrated)")
        }
        let table = try farm.reel(["status", job])
        #expect(table.stdout.contains(#"job \#(job) loudness: en "English": normalised to ebuR128"#), "\(table.stdout)")
    }
}
