import Foundation
import Testing
import ReelThreadTesting

/// After an edit the farm renders only the chunks whose frames changed, and the
/// result is exactly what a from-scratch (`--no-cache`) render gives. Needs `REEL_TEST_DATABASE_URL`.
@Suite(.database, .blocking, .serialized) struct ReuseTests {
    /// 8 s of 160x120 test pattern at 25 fps in 2 s chunks: four chunks (one GOP each) and the
    /// audio task. Each edit lies inside one chunk: the opacity dip in [2.5, 3.5) (chunk 1), the
    /// caption in [4.5, 5.5) (chunk 2), the second segment's source from 6 s (chunk 3); the music
    /// is the audio task alone.
    struct Edit {
        var dip = "0.5"
        var caption = "first"
        var secondSegmentSource = "6"
        var musicStart = "0"

        func write(to path: String) throws {
            try """
                {"formatVersion": 1,
                 "assets": {"clip": {"url": "clip.mp4"}, "music": {"url": "music.m4a"}},
                 "tracks": [{"id": 1, "mediaType": "video", "segments": [
                               {"asset": "clip", "at": 0, "sourceRange": {"start": 0, "duration": 6}},
                               {"asset": "clip", "at": 6, "sourceRange": {"start": \(secondSegmentSource), "duration": 2}}]},
                            {"id": 2, "mediaType": "audio", "segments": [
                               {"asset": "music", "at": 0, "sourceRange": {"start": \(musicStart), "duration": 8}}]}],
                 "videoComposition": {"frameDuration": "1/25",
                   "instructions": [{"timeRange": {"start": 0, "duration": 8}, "layerInstructions": [{"track": 1, "opacityRamps": [
                     {"from": 1.0, "to": \(dip), "timeRange": {"start": 2.5, "duration": 0.5}},
                     {"from": \(dip), "to": 1.0, "timeRange": {"start": 3, "duration": 0.5}}]}]}],
                   "overlays": [{"text": "\(caption)", "fontSize": 24, "color": "#FFFFFF",
                                 "frame": {"x": 10, "y": 80, "width": 140, "height": 30}, "timeRange": {"start": 4.5, "duration": 1}}]},
                 "export": {"preset": "medium", "video": {"x264Preset": "veryfast"}}}
                """.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    /// `pts flags size sha256` of every video packet.
    static func videoPackets(_ path: String) throws -> [String] {
        let out = try Media.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,flags,size,data_hash",
                                            "-show_data_hash", "SHA256", "-of", "csv=p=0", path])
        return String(decoding: out.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The index of the first packet that differs, or of the end of the shorter list; nil when equal.
    static func firstDifference(_ a: [String], _ b: [String]) -> Int? {
        a == b ? nil : zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
    }

    /// One finished render: its job, its `tasks` counts and its video packets.
    struct Render {
        var job: String
        var total: Int
        var reused: Int
        var packets: [String]
    }

    final class Bench {
        let farm: FarmTests.LocalFarm
        let composition: String
        var count = 0

        init() throws {
            farm = try FarmTests.LocalFarm(agents: 1)
            let media = farm.dir.appendingPathComponent("media")
            try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
            try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=8", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                              media.appendingPathComponent("clip.mp4").path])
            try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000:duration=10", "-c:a", "aac",
                              media.appendingPathComponent("music.m4a").path])
            composition = media.appendingPathComponent("comp.json").path
        }

        /// Renders `edit` (with `--no-cache` when `fresh`).
        func render(_ edit: Edit, fresh: Bool = false) throws -> Render {
            try edit.write(to: composition)
            count += 1
            let output = farm.dir.appendingPathComponent("render-\(count).mp4").path
            let r = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--wait", "-o", output, "--quiet"] + (fresh ? ["--no-cache"] : []),
                                  allowFailure: true)
            #expect(r.status == 0, "\(r.stderr)")
            let job = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let status = try farm.waitForJob(job)
            #expect(status["state"] as? String == "done", "\(status)")
            let tasks = status["tasks"] as? [String: Any]
            return Render(job: job, total: tasks?["total"] as? Int ?? -1, reused: tasks?["reused"] as? Int ?? -1,
                          packets: try ReuseTests.videoPackets(output))
        }

        /// The render tasks of `job` rendered rather than reused: `video_chunk 2`, `audio 0`.
        func renderedTasks(_ job: String) throws -> [String] {
            try farm.query("SELECT kind || ' ' || ordinal FROM tasks WHERE job_id = \(job) AND kind <> 'finalise' AND NOT reused ORDER BY kind, ordinal")
                .map { $0.joined() }
        }

        /// Renders `edit` (one change from the previous render): only `touched` is rendered
        /// again, and the video equals a `--no-cache` render of the edit. Returns the edited render.
        func expectOnly(_ touched: [String], _ edit: Edit, _ comment: Comment) throws -> Render {
            let edited = try render(edit)
            #expect(edited.total == 5 && edited.reused == 5 - touched.count, "\(comment): \(edited.reused) of \(edited.total) reused")
            #expect(try renderedTasks(edited.job) == touched, comment)
            let fresh = try render(edit, fresh: true)
            #expect(fresh.total == 5 && fresh.reused == 0, "--no-cache renders everything")
            #expect(edited.packets.count == 200, comment)
            #expect(ReuseTests.firstDifference(edited.packets, fresh.packets) == nil, "\(comment): reused chunks are a fresh render's bytes")
            return edited
        }
    }

    @Test func eachEditRendersOnlyWhatItTouchesAndMatchesAFreshRender() throws {
        let bench = try Bench()
        var edit = Edit()
        let first = try bench.render(edit)
        #expect(first.total == 5 && first.reused == 0, "nothing to reuse yet")
        #expect(first.packets.count == 200, "8 s at 25 fps")

        edit.caption = "second"
        let captioned = try bench.expectOnly(["video_chunk 2"], edit, "caption text")
        // The edit shows, and only in chunk 2 (frames 100..<150).
        let differing = zip(first.packets, captioned.packets).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(!differing.isEmpty && differing.allSatisfy { (100..<150).contains($0) }, "\(differing)")

        edit.dip = "0.25"
        _ = try bench.expectOnly(["video_chunk 1"], edit, "one opacity ramp")
        edit.secondSegmentSource = "5"
        let resourced = try bench.expectOnly(["video_chunk 3"], edit, "a segment's source range")

        edit.musicStart = "1"
        let remixed = try bench.render(edit)
        #expect(remixed.reused == 4)
        #expect(try bench.renderedTasks(remixed.job) == ["audio 0"], "the music: the audio task alone")
        #expect(Self.firstDifference(remixed.packets, resourced.packets) == nil, "the video is untouched")

        // Retention deleted one stored chunk (chunk 0, the same bytes since the first render):
        // the next render makes it again and reuses the rest.
        let lost = try bench.farm.query("SELECT result_sha256 FROM tasks WHERE job_id = \(first.job) AND kind = 'video_chunk' AND ordinal = 0")
        let lostHash = lost.first?.first ?? ""
        let lostPath = bench.farm.dir.appendingPathComponent("storage/results/sha256/\(lostHash.prefix(2))/\(lostHash)").path
        try FileManager.default.removeItem(atPath: lostPath)
        let afterRetention = try bench.render(edit)
        #expect(afterRetention.reused == 4)
        #expect(try bench.renderedTasks(afterRetention.job) == ["video_chunk 0"])
        #expect(Self.firstDifference(afterRetention.packets, remixed.packets) == nil)
        #expect(FileManager.default.fileExists(atPath: lostPath), "rendered again, stored again under the same hash")
    }
}
