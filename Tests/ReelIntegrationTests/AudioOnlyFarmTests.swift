import Foundation
import Testing

/// Sound-only outputs through the farm: a sound-only job is one audio task and the finalise task (no
/// video chunk is planned), rendered by an agent and muxed by the coordinator's finaliser —
/// with `reel submit` against a farm, and with `reel render` all in one.
extension FarmTests {
    @Test func anAudioOnlyJobIsAnAudioTaskAndTheFinaliser() throws {
        let farm = try LocalFarm(agents: 1)
        let (a, b) = try AudioOnlyTests.sources(in: farm.dir)
        let reference = try AudioOnlyTests.reference(a, b)
        let composition = farm.dir.appendingPathComponent("merge.json").path
        try AudioOnlyTests.composition(a, b, export: #"{"audio": {"channels": 1}}"#).write(toFile: composition, atomically: true, encoding: .utf8)

        let wav = farm.dir.appendingPathComponent("merged.wav").path
        let submitted = try farm.reel(["submit", composition, "--chunk-seconds", "1", "--wait", "-o", wav, "--quiet"], allowFailure: true)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let job = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let kinds = try farm.query("SELECT kind FROM tasks WHERE job_id = \(job) ORDER BY kind").map { $0[0] }
        #expect(kinds == ["audio", "finalise"], "no video chunk for a sound-only job: \(kinds)")
        let decoded = try AudioOnlyTests.samples(wav)
        #expect(decoded == reference, "\(decoded.count) samples, \(reference.count) expected")
        #expect(try AudioOnlyTests.streams(wav).map { $0["codec_name"] as? String } == ["pcm_s16le"])
        // fetch knows the container by its name too.
        let wrong = try farm.reel(["fetch", job, "-o", farm.dir.appendingPathComponent("again.mp4").path], allowFailure: true)
        #expect(wrong.status == 1 && wrong.stderr.contains("job \(job)'s output is a WAV .wav file"), "\(wrong.stderr)")

        // `reel render` all in one, on a database of its own: the same path, as an M4A.
        let url = try FreshDatabase.url()
        let m4a = farm.dir.appendingPathComponent("merged.m4a").path
        let render = try Media.run(Media.reel, ["render", composition, "-o", m4a, "--database", url, "--agents", "1", "--quiet"], allowFailure: true)
        #expect(render.status == 0, "\(render.stderr)")
        let streams = try AudioOnlyTests.streams(m4a)
        #expect(streams.count == 1 && streams.first?["codec_name"] as? String == "aac" && streams.first?["duration_ts"] as? Int == AudioOnlyTests.total,
                "\(streams)")
        #expect(try Media.decodeErrors(m4a).isEmpty)
    }
}
