import Foundation
import Testing
import ReelThreadTesting
@testable import ReelCore
@testable import ReelMedia

/// Loudness normalisation (docs/composition.md, "Loudness") and `reel loudness`, measured
/// against FFmpeg's own EBU R128 meter (`-af ebur128=peak=true`).
@Suite(.blocking) struct LoudnessTests {
    struct Figures { var integrated: Double; var range: Double; var truePeak: Double }

    /// FFmpeg's `ebur128` summary of the first audio stream of `path`.
    static func ffmpegLoudness(_ path: String) throws -> Figures {
        try ffmpegLoudness(["-i", path, "-map", "0:a:0", "-af", "ebur128=peak=true"], of: path)
    }

    /// FFmpeg's `ebur128` summary of what `input` (inputs and a filter ending in ebur128) gives.
    static func ffmpegLoudness(_ input: [String], of what: String) throws -> Figures {
        let r = try Media.run("ffmpeg", ["-nostdin", "-nostats", "-v", "info"] + input + ["-f", "null", "-"])
        let summary = r.stderr.components(separatedBy: "Summary:").last ?? ""
        func value(after label: String) -> Double? {
            guard let range = summary.range(of: label) else { return nil }
            return Double(summary[range.upperBound...].trimmingCharacters(in: .whitespaces).prefix { $0 == "-" || $0 == "." || $0.isNumber })
        }
        guard let i = value(after: "I:"), let lra = value(after: "LRA:"), let peak = value(after: "Peak:") else {
            throw Media.Failure(description: "no ebur128 summary for \(what): \(r.stderr.suffix(800))")
        }
        return Figures(integrated: i, range: lra, truePeak: peak)
    }

    /// Two 6 s clips with pink noise, one at about −35 LUFS and one at about −12 LUFS (pink
    /// noise at amplitude 1 measures −14.6 LUFS with a −3.9 dBTP peak), and a
    /// composition that plays them in sequence under a small picture, with `loudness`.
    static func composition(in dir: URL, loudness: String?) throws -> String {
        let quiet = dir.appendingPathComponent("quiet.mp4").path, loud = dir.appendingPathComponent("loud.mp4").path
        if !FileManager.default.fileExists(atPath: loud) {
            for (path, volume) in [(quiet, "-20.4dB"), (loud, "2.6dB")] {
                try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=6",
                                  "-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:amplitude=1:seed=7:duration=6",
                                  "-af", "volume=\(volume),aformat=channel_layouts=stereo", "-c:v", "libx264", "-preset", "ultrafast",
                                  "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", "-shortest", path.replacingOccurrences(of: ".mp4", with: ".mov")])
                try FileManager.default.moveItem(atPath: path.replacingOccurrences(of: ".mp4", with: ".mov"), toPath: path)
            }
        }
        let json = dir.appendingPathComponent("programme-\(loudness?.filter(\.isLetter) ?? "plain").json").path
        try """
            {"formatVersion": 1, "assets": {"quiet": {"url": "quiet.mp4"}, "loud": {"url": "loud.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "quiet", "at": 0}, {"asset": "loud", "at": 6}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "quiet", "at": 0}, {"asset": "loud", "at": 6}]}],
             "export": {"preset": "medium", "fileType": "mov", "video": {"x264Preset": "ultrafast"}\(loudness.map { #", "audio": {"loudness": \#($0)}"# } ?? "")}}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        return json
    }

    static func render(_ json: String, to output: String) throws -> Finaliser.Report {
        let plan = try CompositionLoader.load(path: json)
        return try LocalRender.render(plan, to: output, options: .init(workers: 2, chunkSeconds: 2, encoderThreads: 1))
    }

    @Test func theTwoClipsAreAboutMinus35AndMinus12LUFS() throws {
        let dir = try Media.tempDirectory()
        _ = try Self.composition(in: dir, loudness: nil)
        let quiet = try Self.ffmpegLoudness(dir.appendingPathComponent("quiet.mp4").path)
        let loud = try Self.ffmpegLoudness(dir.appendingPathComponent("loud.mp4").path)
        #expect(abs(quiet.integrated - -35) < 1.5, "quiet clip: \(quiet.integrated) LUFS")
        #expect(abs(loud.integrated - -12) < 1.5, "loud clip: \(loud.integrated) LUFS")
    }

    @Test(arguments: [(#""ebuR128""#, -23.0, -1.0), (#""streaming""#, -14.0, -1.0), (#""atscA85""#, -24.0, -2.0)])
    func normalisedProgrammesMeetTheirTarget(loudness: String, integrated: Double, truePeak: Double) throws {
        let dir = try Media.tempDirectory()
        let json = try Self.composition(in: dir, loudness: loudness)
        let output = dir.appendingPathComponent("out.mov").path
        let report = try Self.render(json, to: output)
        let measured = try Self.ffmpegLoudness(output)
        #expect(abs(measured.integrated - integrated) <= 0.5, "\(loudness): ffmpeg measures \(measured.integrated) LUFS")
        #expect(measured.truePeak <= truePeak, "\(loudness): ffmpeg measures a true peak of \(measured.truePeak) dBTP")
        // The figures the audio result carries are the delivered file's, as ffmpeg measures it.
        let figures = try #require(report.loudness.first)
        #expect(figures.target.integrated == integrated)
        #expect(abs((figures.after.integrated ?? 0) - measured.integrated) <= 0.3, "\(figures.after) against ffmpeg's \(measured)")
        // One gain: what the mix measured plus the gain is the target, give or take what AAC takes away.
        #expect(abs((figures.before.integrated ?? 0) + figures.gain - integrated) <= 1, "\(figures)")
        #expect(try Media.decodeErrors(output).isEmpty)
    }

    /// Opus (WebM) and PCM (WAV) outputs are normalised in their own codec: ffmpeg measures the
    /// delivered file at the target, and the figures the result carries agree with it.
    @Test(arguments: [("webm", #""video": {"vp9Speed": 8}"#, "opus"), ("wav", #""video": {}"#, "pcm_s16le")])
    func opusAndPCMOutputsMeetTheTarget(fileType: String, video: String, codec: String) throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = try Self.composition(in: dir, loudness: #""ebuR128""#)
        let text = try String(contentsOfFile: json, encoding: .utf8)
            .replacingOccurrences(of: #""fileType": "mov", "video": {"x264Preset": "ultrafast"}"#, with: #""fileType": "\#(fileType)", \#(video)"#)
        try text.write(toFile: json, atomically: true, encoding: .utf8)
        let output = dir.appendingPathComponent("out.\(fileType)").path
        let report = try Self.render(json, to: output)
        let streams = (try Media.probe(output)["streams"] as? [[String: Any]] ?? []).filter { $0["codec_type"] as? String == "audio" }
        #expect(streams.map { $0["codec_name"] as? String } == [codec])
        let measured = try Self.ffmpegLoudness(output)
        #expect(abs(measured.integrated - -23) <= 0.5, "\(fileType): ffmpeg measures \(measured.integrated) LUFS")
        #expect(measured.truePeak <= -1, "\(fileType): ffmpeg measures a true peak of \(measured.truePeak) dBTP")
        let figures = try #require(report.loudness.first, "\(fileType): the result carries no loudness figures")
        #expect(abs((figures.after.integrated ?? 0) - measured.integrated) <= 0.3, "\(figures.after) against ffmpeg's \(measured)")
    }

    /// A quiet programme (−34 LUFS) with short loud clicks: normalising it to −14 LUFS lifts the
    /// clicks far above full scale, and the limiter must hold them under −1 dBTP as ffmpeg measures it.
    @Test func theLimiterHoldsTheCeilingOfAHeavilyLiftedProgramme() throws {
        let dir = try Media.tempDirectory()
        let source = dir.appendingPathComponent("clicks.mov").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=10",
                          "-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:amplitude=0.05:seed=5:duration=10",
                          "-f", "lavfi", "-i", "aevalsrc=if(lt(mod(t\\,2)\\,0.001)\\,0.9*sin(2*PI*2500*t)\\,0):s=48000:d=10",
                          "-filter_complex", "[1:a][2:a]amix=inputs=2:normalize=0,aformat=channel_layouts=stereo[a]",
                          "-map", "0:v", "-map", "[a]", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", source])
        let json = dir.appendingPathComponent("clicks.json").path
        try """
            {"formatVersion": 1, "assets": {"clicks": {"url": "clicks.mov"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clicks", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "clicks", "at": 0}]}],
             "export": {"preset": "medium", "fileType": "mov", "video": {"x264Preset": "ultrafast"}, "audio": {"loudness": "streaming"}}}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        let output = dir.appendingPathComponent("out.mov").path
        let report = try Self.render(json, to: output)
        let measured = try Self.ffmpegLoudness(output)
        #expect(measured.truePeak <= -1, "ffmpeg measures a true peak of \(measured.truePeak) dBTP")
        #expect(abs(measured.integrated - -14) <= 0.5, "ffmpeg measures \(measured.integrated) LUFS")
        // Without the limiter, the gain would have put the clicks this far above full scale.
        let figures = try #require(report.loudness.first)
        #expect((figures.before.truePeak ?? -100) + figures.gain > 10, "\(figures)")
    }

    @Test func reelLoudnessAgreesWithFFmpeg() throws {
        let dir = try Media.tempDirectory()
        let plainJSON = try Self.composition(in: dir, loudness: nil)
        let plain = dir.appendingPathComponent("plain.mov").path
        _ = try Self.render(plainJSON, to: plain)
        let ffmpeg = try Self.ffmpegLoudness(plain)

        // A file: the same file ffmpeg measured.
        let file = try Media.run(Media.reel, ["loudness", plain, "--json"])
        let fileJSON = try #require(try JSONSerialization.jsonObject(with: file.stdout) as? [String: Any])
        #expect(fileJSON["kind"] as? String == "file")
        let fileIntegrated = try #require(fileJSON["integratedLUFS"] as? Double)
        #expect(abs(fileIntegrated - ffmpeg.integrated) <= 0.3, "reel loudness \(fileIntegrated), ffmpeg \(ffmpeg.integrated)")
        let filePeak = try #require(fileJSON["truePeakDBTP"] as? Double)
        #expect(abs(filePeak - ffmpeg.truePeak) <= 0.5, "true peak: reel \(filePeak), ffmpeg \(ffmpeg.truePeak)")
        // (This programme's loudness range is ill-conditioned — its quiet half sits at the range's
        // relative gate — so the range is compared on a steady crescendo below.)

        // A composition: its mix, unrendered, against ffmpeg measuring the same two sources played
        // one after the other (no AAC in between: 128 kb/s AAC drops pink noise's top octave, which
        // K-weighting counts, by about half a LU).
        let mix = try Media.run(Media.reel, ["loudness", plainJSON, "--json"])
        let mixJSON = try #require(try JSONSerialization.jsonObject(with: mix.stdout) as? [String: Any])
        #expect(mixJSON["kind"] as? String == "composition" && mixJSON["normalised"] == nil)
        let mixIntegrated = try #require(mixJSON["integratedLUFS"] as? Double)
        let sources = try Self.ffmpegLoudness(["-i", dir.appendingPathComponent("quiet.mp4").path, "-i", dir.appendingPathComponent("loud.mp4").path,
                                               "-filter_complex", "[0:a][1:a]concat=n=2:v=0:a=1,ebur128=peak=true"], of: "the two sources")
        #expect(abs(mixIntegrated - sources.integrated) <= 0.3, "reel loudness of the mix \(mixIntegrated), ffmpeg of the sources \(sources.integrated)")

        // A crescendo: 30 s of pink noise rising 24 dB, so the loudness range is well defined.
        let crescendo = dir.appendingPathComponent("crescendo.wav").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:amplitude=1:seed=3:duration=30",
                          "-af", "volume='pow(10,(-30+24*t/30)/20)':eval=frame,aformat=channel_layouts=stereo", "-c:a", "pcm_s16le", crescendo])
        let rising = try Self.ffmpegLoudness(crescendo)
        let risingJSON = try #require(try JSONSerialization.jsonObject(with: try Media.run(Media.reel, ["loudness", crescendo, "--json"]).stdout) as? [String: Any])
        let risingRange = try #require(risingJSON["loudnessRangeLU"] as? Double)
        let risingIntegrated = try #require(risingJSON["integratedLUFS"] as? Double)
        #expect(rising.range > 10, "the crescendo's loudness range: \(rising.range) LU")
        #expect(abs(risingRange - rising.range) <= 1, "loudness range: reel \(risingRange), ffmpeg \(rising.range)")
        #expect(abs(risingIntegrated - rising.integrated) <= 0.3, "integrated: reel \(risingIntegrated), ffmpeg \(rising.integrated)")

        // With a target, the line after says what normalisation makes of it.
        let text = try Media.run(Media.reel, ["loudness", try Self.composition(in: dir, loudness: #""ebuR128""#)])
        let lines = String(decoding: text.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2 && lines[1].hasPrefix("normalised to ebuR128 (−23 LUFS, −1 dBTP): gain "), "\(lines)")
        #expect(lines[1].contains("integrated -23.0 LUFS") || lines[1].contains("integrated -22.9 LUFS") || lines[1].contains("integrated -23.1 LUFS"), "\(lines)")
    }

    /// The figures reach the job's history and `reel status JOB`, through the farm.
    @Test func theFiguresGoIntoTheJobsEventsAndStatus() throws {
        try Self.checkFiguresThroughTheFarm(try FarmTests.LocalFarm(agents: 1))
    }

    /// The same with S3 storage, where an agent finalises and reports the figures with
    /// `FINALDONE` (proto/PROTOCOL.md §4.5.1).
    @Test(.enabled(if: FarmS3.isConfigured, FarmS3.skipReason))
    func theFiguresGoIntoTheJobsEventsWhenAnAgentFinalisesOnS3() throws {
        let farm = try FarmTests.LocalFarm(agents: 1, storage: try S3FarmTests.bucketStorage("loudness"))
        try Self.checkFiguresThroughTheFarm(farm)
        let finaliser = try farm.query("SELECT a.name FROM tasks t JOIN agents a ON a.id = t.last_agent WHERE t.kind = 'finalise'")
        #expect(finaliser.map { $0.joined() } == ["agent-1"], "\(finaliser)")
    }

    /// A target no programme reaches: −5 LUFS under a −20 dBTP ceiling, which the limiter holds
    /// the peaks to, so the loudness stays far below the target however many encodings try.
    static let unreachable = #"{"integrated": -5, "truePeak": -20}"#

    /// Checks that `text` carries the `LoudnessMiss` warning for `unreachable`, whose delivered
    /// integrated loudness is the output file's as ffmpeg measures it.
    static func checkUnreachableWarning(_ text: String, output: String) throws {
        let start = try #require(text.range(of: LoudnessMiss.warningPrefix + ": integrated "), "no loudness warning in: \(text)")
        let figure = text[start.upperBound...].prefix { $0 == "−" || $0 == "." || $0.isNumber }.replacingOccurrences(of: "−", with: "-")
        let delivered = try #require(Double(figure), "no delivered loudness in: \(text)")
        let measured = try Self.ffmpegLoudness(output)
        #expect(abs(delivered - measured.integrated) <= 0.3, "the warning says \(delivered) LUFS, ffmpeg measures \(measured.integrated)")
        #expect(measured.integrated < -5 - 3, "ffmpeg measures \(measured.integrated) LUFS: the target was reachable after all")
        #expect(text.contains("LU below the target's −5 LUFS (more than the 0.2 LU allowed)"), "\(text)")
        #expect(text.contains("the target's −20 dBTP"), "\(text)")
    }

    /// An output that still misses its target after the last encoding is delivered, with a
    /// warning giving the measured and target figures: `reel render` prints it (even --quiet).
    @Test func anUnreachableTargetIsDeliveredWithAWarning() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = try Self.composition(in: dir, loudness: Self.unreachable)
        let output = dir.appendingPathComponent("out.mov").path
        let render = try Media.run(Media.reel, ["render", json, "-o", output, "--in-process", "--chunk-seconds", "2", "--quiet"], allowFailure: true)
        #expect(render.status == 0, "\(render.stderr)")
        try Self.checkUnreachableWarning(render.stderr, output: output)
    }

    /// Through the farm the warning is the end of the job's loudness line: in its `loudness`
    /// event, in `reel status JOB`, and printed by `reel submit --wait` (even --quiet).
    @Test func anUnreachableTargetIsAWarningInTheJobsEventsAndStatus() throws {
        let farm = try FarmTests.LocalFarm(agents: 1)
        let json = try Self.composition(in: farm.dir, loudness: Self.unreachable)
        let output = farm.dir.appendingPathComponent("farm.mov").path
        let submit = try farm.reel(["submit", json, "--chunk-seconds", "2", "--wait", "-o", output, "--quiet"], allowFailure: true)
        try #require(submit.status == 0, "submit failed: \(submit.stderr)")
        let job = submit.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.checkUnreachableWarning(submit.stderr, output: output)
        #expect(submit.stderr.contains("job \(job) loudness: normalised to −5 LUFS, −20 dBTP: "), "\(submit.stderr)")
        let status = try farm.reel(["status", job])
        #expect(status.stdout.contains("job \(job) loudness: normalised to −5 LUFS, −20 dBTP: "), "\(status.stdout)")
        try Self.checkUnreachableWarning(status.stdout, output: output)
        let events = try farm.reel(["events", job])
        try Self.checkUnreachableWarning(events.stdout, output: output)
    }

    /// Renders `json` through `farm` into `output` (`submit --wait`, 2 s chunks) and returns the
    /// job's id and its loudness line as `reel status JOB --json` gives it.
    static func submitReadingLoudness(_ farm: FarmTests.LocalFarm, _ json: String, to output: String) throws -> (job: String, loudness: String) {
        let submit = try farm.reel(["submit", json, "--chunk-seconds", "2", "--wait", "-o", output, "--quiet"], allowFailure: true)
        try #require(submit.status == 0, "submit failed: \(submit.stderr)")
        let job = try #require(try farm.query("SELECT max(id) FROM jobs").first?.first)
        let status = try farm.reel(["status", job, "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let jobs = try #require((document["status"] as? [String: Any])?["jobs"] as? [[String: Any]])
        return (job, try #require(jobs.first?["loudness"] as? String, "\(status.stdout)"))
    }

    static func checkFiguresThroughTheFarm(_ farm: FarmTests.LocalFarm) throws {
        let dir = try Media.tempDirectory()
        let json = try Self.composition(in: dir, loudness: #""ebuR128""#)
        let (job, loudness) = try Self.submitReadingLoudness(farm, json, to: dir.appendingPathComponent("farm.mov").path)
        #expect(loudness.hasPrefix("normalised to ebuR128 (−23 LUFS, −1 dBTP): measured −"), "\(loudness)")
        #expect(loudness.contains("output −23.") || loudness.contains("output −22.9"), "\(loudness)")
        let table = try farm.reel(["status", job])
        #expect(table.stdout.contains("job \(job) loudness: normalised to ebuR128"), "\(table.stdout)")
        let events = try farm.reel(["events", job])
        #expect(events.stdout.contains("loudness") && events.stdout.contains("normalised to ebuR128"), "\(events.stdout)")
    }
}
