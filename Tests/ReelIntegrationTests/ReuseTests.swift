import Foundation
import Testing

/// Issue 11: after an edit the farm renders only the chunks whose frames changed, and the
/// result is exactly what a from-scratch (`--no-cache`) render gives. Needs `REEL_TEST_DATABASE_URL`.
@Suite(.serialized) struct ReuseTests {
    /// 8 s of 160x120 test pattern with a tone, in 2 s chunks (four chunks and the audio task),
    /// and a caption during [4.5, 5.5): only chunk 2, [4, 6), shows it.
    static func writeComposition(_ path: String, caption: String) throws {
        try """
            {"formatVersion": 1,
             "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
                        {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "at": 0}]}],
             "videoComposition": {"frameDuration": "1/25", "overlays": [
               {"text": "\(caption)", "fontSize": 24, "color": "#FFFFFF",
                "frame": {"x": 10, "y": 80, "width": 140, "height": 30}, "timeRange": {"start": 4.5, "duration": 1}}]},
             "export": {"preset": "medium", "video": {"x264Preset": "veryfast"}}}
            """.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// `pts flags size sha256` of every video packet.
    static func videoPackets(_ path: String) throws -> [String] {
        let out = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,flags,size,data_hash",
                                            "-show_data_hash", "SHA256", "-of", "csv=p=0", path])
        return String(decoding: out.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func aCaptionEditRendersOnlyItsChunkAndMatchesAFreshRender() throws {
        let farm = try FarmTests.LocalFarm(agents: 1)
        let media = farm.dir.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=8", "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000:duration=8",
                          "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
                          media.appendingPathComponent("clip.mp4").path])
        let composition = media.appendingPathComponent("comp.json").path

        /// Renders the composition; returns the job's status object and the output's video packets.
        func render(_ name: String, _ extra: [String] = []) throws -> (job: String, status: [String: Any], packets: [String]) {
            let output = farm.dir.appendingPathComponent("\(name).mp4").path
            let r = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--wait", "-o", output] + extra, allowFailure: true)
            #expect(r.status == 0, "\(r.stderr)")
            let job = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let status = try farm.waitForJob(job)
            #expect(status["state"] as? String == "done", "\(status)")
            return (job, status, try Self.videoPackets(output))
        }
        func tasks(_ status: [String: Any]) -> (total: Int, reused: Int) {
            let tasks = status["tasks"] as? [String: Any]
            return (tasks?["total"] as? Int ?? -1, tasks?["reused"] as? Int ?? -1)
        }

        try Self.writeComposition(composition, caption: "first")
        let first = try render("first")
        #expect(tasks(first.status) == (5, 0), "nothing to reuse yet: \(first.status)")
        #expect(first.packets.count == 200, "8 s at 25 fps")

        try Self.writeComposition(composition, caption: "second")
        let edited = try render("edited")
        #expect(tasks(edited.status) == (5, 4), "3 chunks and the audio reused, the caption's chunk rendered: \(edited.status)")
        let fresh = try render("fresh", ["--no-cache"])
        #expect(tasks(fresh.status) == (5, 0), "--no-cache renders everything: \(fresh.status)")

        #expect(edited.packets.count == 200)
        #expect(Self.firstDifference(edited.packets, fresh.packets) == nil, "a re-render from reused chunks is byte for byte a fresh render")
        // The edit shows, and only in chunk 2 (frames 100..<150).
        let differing = zip(first.packets, edited.packets).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(!differing.isEmpty && differing.allSatisfy { (100..<150).contains($0) }, "\(differing)")
        let renderedAgain = try farm.query("SELECT count(*) FROM tasks WHERE job_id = \(edited.job) AND kind <> 'finalise' AND NOT reused")
        #expect(renderedAgain == [["1"]], "one chunk rendered again for the edit")

        // Retention deleted one stored chunk (chunk 0 of the fresh render, the newest with its
        // key): the next render makes it again and reuses the rest.
        let lost = try farm.query("SELECT result_sha256 FROM tasks WHERE job_id = \(fresh.job) AND kind = 'video_chunk' AND ordinal = 0")
        let lostPath = farm.dir.appendingPathComponent("storage/results/\(lost.first?.first ?? "")").path
        try FileManager.default.removeItem(atPath: lostPath)
        let afterRetention = try render("after-retention")
        #expect(tasks(afterRetention.status) == (5, 4), "\(afterRetention.status)")
        #expect(try farm.query("SELECT ordinal FROM tasks WHERE job_id = \(afterRetention.job) AND kind = 'video_chunk' AND NOT reused") == [["0"]])
        #expect(Self.firstDifference(afterRetention.packets, fresh.packets) == nil)
        #expect(FileManager.default.fileExists(atPath: lostPath), "rendered again, stored again under the same hash")
    }

    /// The index of the first packet that differs, or of the end of the shorter list; nil when equal.
    static func firstDifference(_ a: [String], _ b: [String]) -> Int? {
        a == b ? nil : zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
    }
}
