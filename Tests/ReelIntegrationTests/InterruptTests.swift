import Foundation
import Testing
import ReelThreadTesting

/// Ctrl-C on the rendering commands. `reel render` (the farm all in one, with its
/// own private PostgreSQL) and `reel concat` (in-process) are interrupted with SIGINT while
/// they render (`reel slideshow` with SIGTERM: exit 143): they say `interrupted`, exit 130 and
/// leave every place they write to exactly
/// as it was — no hidden chunk folder or partial output beside the output, no temporary file,
/// no data home, no PostgreSQL left running.
@Suite(.blocking, .serialized) struct InterruptTests {
    /// Every path under `dir`, relative and sorted (with sizes for files); `nil` if `dir` is absent.
    static func tree(_ dir: URL) -> [String]? {
        guard FileManager.default.fileExists(atPath: dir.path) else { return nil }
        let paths = (try? FileManager.default.subpathsOfDirectory(atPath: dir.path)) ?? []
        return paths.sorted().map { path in
            let size = (try? FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(path).path)[.size] as? Int) ?? -1
            return "\(path) \(size)"
        }
    }

    /// Polls `condition` until it holds; fails early if `process` exits, late after `timeout`.
    static func waitUntil(_ what: String, process: BackgroundProcess, timeout: TimeInterval = 300, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if process.hasExited { throw Media.Failure(description: "the process exited (\(process.exitStatus ?? -99)) before \(what):\n\(process.output)") }
            if Date() > deadline { throw Media.Failure(description: "no \(what) within \(Int(timeout)) s:\n\(process.output)") }
            usleep(100_000)
        }
    }

    /// Processes whose command line mentions `text` (e.g. a PostgreSQL data directory).
    static func processes(mentioning text: String) -> [String] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
        return pids.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
            return line.contains(text) ? "\(pid): \(line)" : nil
        }
    }

    @Test func ctrlCOnRenderCancelsTheJobStopsTheFarmAndLeavesNothingBehind() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 200 s of composition (a 10 s clip 20 times, drawn at 640x360): minutes of work, so it
        // is still rendering when interrupted.
        let media = dir.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=10", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25",
                          "-pix_fmt", "yuv420p", media.appendingPathComponent("clip.mp4").path])
        let segments = (0..<20).map { #"{"asset": "clip", "at": \#($0 * 10)}"# }.joined(separator: ", ")
        let composition = media.appendingPathComponent("long.json").path
        try """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [\(segments)]}],
             "videoComposition": {"renderSize": {"width": 640, "height": 360}, "frameDuration": "1/25"},
             "export": {"preset": "medium"}}
            """.write(toFile: composition, atomically: true, encoding: .utf8)

        let out = dir.appendingPathComponent("out"), tmp = dir.appendingPathComponent("tmp"), data = dir.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        try Data("an earlier file\n".utf8).write(to: out.appendingPathComponent("keep.txt"))
        let before = (out: Self.tree(out), tmp: Self.tree(tmp), data: Self.tree(data))
        #expect(before.data == nil)

        // The private cluster, storage and caches under a data home of the test's own;
        // temporary files in a folder of its own; no DATABASE_URL, so the private cluster it is.
        let render = try BackgroundProcess([Media.reel, "render", composition, "-o", out.appendingPathComponent("long.mp4").path,
                                            "--agents", "2", "--chunk-seconds", "4", "--encoder-threads", "1"],
                                           log: dir.appendingPathComponent("render.log").path,
                                           environment: ["REEL_DATA_HOME": data.path, "TMPDIR": tmp.path, "DATABASE_URL": ""])
        // Rendering: the job's progress line says so (the first lines say queued or planning).
        try Self.waitUntil("a running job", process: render) {
            render.output.range(of: #"job \d+ running"#, options: .regularExpression) != nil
        }
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("postgres/postmaster.pid").path),
                "the private cluster runs while rendering")
        kill(render.pid, SIGINT)
        #expect(render.waitForExit(timeout: 180), "reel render did not stop after SIGINT:\n\(render.output)")
        #expect(render.exitStatus == 130, "exit status after SIGINT: \(String(describing: render.exitStatus))\n\(render.output)")
        let lines = render.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("interrupted"), "\(render.output)")
        #expect(!render.output.contains("error"), "an interruption is not an error: \(render.output)")

        #expect(Self.tree(out) == before.out, "the output folder must hold what it held before")
        #expect(Self.tree(tmp) == before.tmp, "no temporary file may be left")
        #expect(Self.tree(data) == nil, "the data home this render created must be gone: \(Self.tree(data) ?? [])")
        #expect(Self.processes(mentioning: data.path).isEmpty, "the private PostgreSQL must be stopped: \(Self.processes(mentioning: data.path))")
    }

    @Test func ctrlCOnConcatStopsAndRemovesItsChunkFolder() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clip = dir.appendingPathComponent("clip.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=20", "-c:v", "libx264", "-preset", "ultrafast",
                          "-pix_fmt", "yuv420p", clip])
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try Data("an earlier file\n".utf8).write(to: out.appendingPathComponent("keep.txt"))
        let before = Self.tree(out)
        // 80 s at 1280x720 on one worker: far longer than it takes to interrupt.
        let concat = try BackgroundProcess([Media.reel, "concat", clip, clip, clip, clip, "--size", "1280x720", "--preset", "highest",
                                            "-o", out.appendingPathComponent("joined.mp4").path],
                                           log: dir.appendingPathComponent("concat.log").path)
        // The progress bar's first line (not a terminal: a line per 10 %) means frames are rendering.
        try Self.waitUntil("a progress line", process: concat) { concat.output.contains(" frames ") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).contains { $0.hasSuffix(".chunks") },
                "the hidden chunk folder exists while rendering")
        kill(concat.pid, SIGINT)
        #expect(concat.waitForExit(timeout: 120), "reel concat did not stop after SIGINT:\n\(concat.output)")
        #expect(concat.exitStatus == 130, "\(String(describing: concat.exitStatus)): \(concat.output)")
        #expect(concat.output.split(separator: "\n").contains("interrupted"), "\(concat.output)")
        #expect(Self.tree(out) == before, "no chunk folder or partial output may be left: \(Self.tree(out) ?? [])")
    }

    @Test func sigtermOnSlideshowStopsItWithStatus143() throws {
        let dir = try Media.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let still = dir.appendingPathComponent("red.png").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=1920x1080", "-frames:v", "1", still])
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let show = try BackgroundProcess([Media.reel, "slideshow", still, still, "--seconds", "60", "--preset", "highest",
                                          "-o", out.appendingPathComponent("show.mp4").path],
                                         log: dir.appendingPathComponent("slideshow.log").path)
        try Self.waitUntil("a progress line", process: show) { show.output.contains(" frames ") }
        kill(show.pid, SIGTERM)
        #expect(show.waitForExit(timeout: 120), "reel slideshow did not stop after SIGTERM:\n\(show.output)")
        #expect(show.exitStatus == 143, "128 + SIGTERM: \(String(describing: show.exitStatus)): \(show.output)")
        #expect(show.output.split(separator: "\n").contains("interrupted"), "\(show.output)")
        #expect(Self.tree(out) == [], "\(Self.tree(out) ?? [])")
    }
}
