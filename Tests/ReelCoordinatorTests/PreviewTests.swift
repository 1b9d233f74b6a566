import ReelHTTPTesting
import Foundation
import ReelConsole
import ReelCoordinator
import ReelCore
import ReelMedia
import ReelProtocol
import ReelThreadTesting
import Testing

/// Watching a render as it renders, on a real coordinator: a job whose last chunk is held back
/// (nobody renders it until the test says so) has a preview playlist of its whole timeline, whose
/// finished pieces are one clean stream. Headless Chromium, driven in real time (Playwright,
/// `Tests/References/watch_video.py`), plays it from the first chunk while the job renders, both
/// as a bare `<video>` and on the console's job page, waits at the chunk not rendered yet, and
/// plays on to the end once it is. Once the job is done, ffmpeg reads the playlist over HTTP.
@Suite(.database, .serialized) struct PreviewTests {
    /// Lines of the playlist that are URIs (segments), in order.
    static func segmentURIs(_ playlist: String) -> [String] {
        playlist.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
    }

    /// Downloads `path` on the console with curl (binary-safe), failing on any HTTP error.
    static func download(_ port: Int, _ path: String, to file: String) async throws {
        try await offThePool { try runProgram(["curl", "-sS", "--fail", "-o", file, "http://127.0.0.1:\(port)\(path)"]) }
    }

    /// The browser test's helper: Playwright driving the system's Chromium in real time.
    static let watcher = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("References/watch_video.py").path

    /// Skipped on a machine without Chromium or without Playwright (PyPI), unless
    /// `REEL_TEST_REQUIRE_CHROMIUM` is set, as ops/test.sh (CI) sets it after installing both:
    /// there it always runs.
    static let canRun = ProcessInfo.processInfo.environment["REEL_TEST_REQUIRE_CHROMIUM"] != nil
        || (FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && (try? runProgram(["python3", "-c", "import playwright.sync_api"])) != nil)

    /// What `watch_video.py` saw of a `<video>`: one JSON object (its docstring says what each is).
    struct Watched: CustomStringConvertible {
        var met: Bool
        var currentTime: Double
        /// nil when not known yet; `.infinity` for a live stream.
        var duration: Double?
        var readyState: Int
        var error: String?
        var firstPlaying: Double?
        var caption: String?
        var json: String

        init(_ json: String) throws {
            self.json = json
            guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
                throw TestFailure(description: "watch_video.py printed no JSON object: \(json)")
            }
            met = object["met"] as? Bool ?? false
            currentTime = object["currentTime"] as? Double ?? 0
            duration = object["duration"] as? Double ?? ((object["duration"] as? String) == "Infinity" ? .infinity : nil)
            readyState = object["readyState"] as? Int ?? 0
            error = (object["error"] as? [String: Any]).map { "MediaError \($0["code"] ?? "?"): \($0["message"] ?? "")" }
            firstPlaying = object["firstPlaying"] as? Double
            caption = object["caption"] as? String
        }

        var description: String { json }
    }

    /// Starts watching `url` in headless Chromium (a bare `<video>` of `video` at that address
    /// when given): the state once there is a frame to show is written to `progress.loaded`, and
    /// once the playhead passed 1.5 s (or a media error, or ten minutes) to `progress`; the
    /// task's value is the state at the end of the video.
    static func watch(_ url: String, video: String? = nil, selector: String = "video", caption: String? = nil,
                      progress: String, screenshot: String? = nil) -> Task<Watched, Error> {
        var arguments = ["python3", watcher, url, "--selector", selector, "--past", "1.5", "--to-end", "--loaded", progress + ".loaded", "--progress", progress,
                         "--deadline", "600"]   // per phase, generous: the 30 s job renders on CI's shared cores meanwhile
        if let video { arguments += ["--video", video] }
        if let caption { arguments += ["--caption", caption] }
        if let screenshot { arguments += ["--screenshot", screenshot] }
        let command = arguments
        return Task { try Watched(try await offThePool { try runProgram(command).stdout }) }
    }

    /// The watched job: the 2 s test clip this many times, 30 s in all, as a user would watch one.
    static let watchedRepeats = 15
    static let watchedSeconds = Double(2 * watchedRepeats)

    @Test(.enabled(if: canRun, "skipped: this test plays the preview in headless Chromium driven by Playwright, not both installed here (ops/install-deps.sh installs them); ops/test.sh and CI always run it"))
    func chromiumPlaysTheGrowingPreviewInRealTimeFromTheFirstChunkToTheEnd() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let (harness, http) = try await ConsoleHTTPTests.consoleHarness()
        let client = try await harness.connect(role: .client, name: "ops@test")
        try await client.upload(media.video)
        // 30 s (the 2 s clip fifteen times) at x264's `slow` preset, picture only, in 2 s chunks: 15 chunks.
        let job = try await Self.submit(media, client: client, seconds: 2, repeats: Self.watchedRepeats, chunkSeconds: 2, name: "watched",
                                        export: #""preset": "medium", "video": {"gopDuration": 1, "x264Preset": "slow"}"#)
        let agentClient = try await harness.agent("render-preview")
        let work = try makeWorkDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let agent = RenderingAgent(client: agentClient, harness: harness, workDirectory: work)
        let token = try await ConsoleHTTPTests.token(.readOnly)

        // Two chunks are rendered: the playlist is the whole job's timeline, its end known.
        try await agent.work(limit: 2)
        let total = try await client.status(job: job).tasks.total
        #expect(total >= 6, "the job has several chunks: \(total)")
        let detail = try JSONDecoder().decode(JobDetail.self, from: Data(try await http.request("GET", "/api/v1/jobs/\(job)", token: token).body.utf8))
        let chunks = detail.chunks.filter { $0.kind == "video_chunk" }.sorted { $0.frameStart < $1.frameStart }
        let finished = chunks.prefix { $0.state == "done" }
        #expect(finished.count == 2 && chunks.count == total)
        let listed = try await http.request("GET", "/api/v1/jobs/\(job)/preview.m3u8?token=\(token)")
        #expect(listed.status == 200, "\(listed.body)")
        #expect(listed.body.contains("#EXT-X-MAP:URI=\"preview/init.mp4?token=\(token)\""))
        #expect(Self.segmentURIs(listed.body) == chunks.map { "preview/\($0.ordinal).m4s?token=\(token)" }, "\(listed.body)")
        let seconds = listed.body.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }.compactMap { Double($0.dropFirst(8).dropLast()) }
        #expect(abs(seconds.reduce(0, +) - Self.watchedSeconds) < 0.000_01, "the segments' durations add up to the job's length: \(listed.body)")
        #expect(listed.body.hasSuffix("#EXT-X-ENDLIST\n"), "no segment will be added: \(listed.body)")

        // The finished pieces, as a player fetches them, are one clean stream of every finished frame.
        var bytes = Data()
        for (index, path) in (["preview/init.mp4"] + finished.map { "preview/\($0.ordinal).m4s" }).enumerated() {
            let file = work + "/piece-\(index)"
            try await Self.download(http.port, "/api/v1/jobs/\(job)/\(path)?token=\(token)", to: file)
            bytes += try Data(contentsOf: URL(fileURLWithPath: file))
        }
        let joined = work + "/preview.mp4"
        try bytes.write(to: URL(fileURLWithPath: joined))
        #expect(try await countFrames(joined) == finished.reduce(0) { $0 + Int($1.frameEnd - $1.frameStart) })
        let errors = try await offThePool { try runProgram(["ffmpeg", "-nostdin", "-v", "error", "-i", joined, "-f", "null", "-"]).stderr }
        #expect(errors.isEmpty, "the preview decodes cleanly: \(errors)")
        #expect(FileManager.default.fileExists(atPath: harness.storage + "/previews"), "remuxed pieces are cached")

        // Chromium, in real time, on the bare playlist and on the job page. Once both have a
        // frame to show, the agent renders every chunk but the last while they play.
        let origin = "http://127.0.0.1:\(http.port)"
        let bareProgress = work + "/bare.json", pageProgress = work + "/page.json"
        let bare = Self.watch(origin + "/watch-preview.html", video: "/api/v1/jobs/\(job)/preview.m3u8?token=\(token)", progress: bareProgress)
        let page = Self.watch(origin + "/#token=\(token)&view=/jobs/\(job)", selector: "#preview-video", caption: "#preview-caption",
                              progress: pageProgress, screenshot: ProcessInfo.processInfo.environment["REEL_TEST_PREVIEW_SCREENSHOT"])
        try await waitUntil("both players have a frame to show, or failed", seconds: 300) {
            FileManager.default.fileExists(atPath: bareProgress + ".loaded") && FileManager.default.fileExists(atPath: pageProgress + ".loaded")
        }
        try await agent.work(limit: total - 3)
        try await waitUntil("both players passed 1.5 s or failed", seconds: 300) {
            FileManager.default.fileExists(atPath: bareProgress) && FileManager.default.fileExists(atPath: pageProgress)
        }
        let playing = [("the bare playlist", try Watched(String(contentsOfFile: bareProgress, encoding: .utf8))),
                       ("the job page", try Watched(String(contentsOfFile: pageProgress, encoding: .utf8)))]
        #expect(try await client.status(job: job).state == "running", "the playheads passed 1.5 s before the job ended")
        for (name, seen) in playing {
            #expect(seen.error == nil && seen.met && seen.currentTime > 1.5, "\(name) plays while the job renders: \(seen)")
            #expect(seen.firstPlaying.map { $0 < 0.2 } ?? false, "\(name) starts at the first chunk: \(seen)")
            #expect(seen.duration.map { abs($0 - Self.watchedSeconds) < 0.1 } ?? false, "\(name) knows the job's length: \(seen)")
        }
        #expect(playing[1].1.caption?.contains(" of \(total) (picture only)") == true, "the caption counts the finished chunks: \(playing[1].1)")

        // The held chunk is rendered: both players, waiting at it, play on to the end of the 30 s.
        try await agent.work()
        _ = try await client.waitForState(job: job, "done")
        for (name, seen) in [("the bare playlist", try await bare.value), ("the job page", try await page.value)] {
            #expect(seen.error == nil && seen.met, "\(name) plays to the end once the job is done: \(seen)")
            #expect(seen.currentTime > Self.watchedSeconds - 0.3, "\(name) played the whole job: \(seen)")
        }

        // The done job's playlist is its whole picture, which ffmpeg's HLS demuxer, an
        // independent player, reads cleanly over HTTP: every frame (25 fps).
        let whole = try await http.request("GET", "/api/v1/jobs/\(job)/preview.m3u8?token=\(token)")
        #expect(whole.body.hasSuffix("#EXT-X-ENDLIST\n") && Self.segmentURIs(whole.body).count == total, "\(whole.body)")
        let url = origin + "/api/v1/jobs/\(job)/preview.m3u8?token=\(token)"
        let played = try await offThePool { try runProgram(["ffmpeg", "-nostdin", "-v", "error", "-i", url, "-f", "null", "-"]).stderr }
        #expect(played.isEmpty, "ffmpeg plays the whole preview cleanly: \(played)")
        // Counted by decoding; the HLS demuxer lists the stream once per program, so each line must say all of them.
        let counted = try await offThePool {
            try runProgram(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                            "-of", "csv=p=0", url]).stdout
        }
        let counts = counted.split(whereSeparator: \.isNewline).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        #expect(!counts.isEmpty && counts.allSatisfy { $0 == Int(Self.watchedSeconds * 25) }, "frames of the whole preview: \(counted)")

        await agentClient.close(); await client.close()
        try await harness.stop()
    }

    /// A chunk not rendered yet: its segment is answered once it is (the request waits), and
    /// once the job has ended without it, at once with 404; the ended job's playlist then lists
    /// what finished before the first chunk that did not.
    @Test func anUnrenderedChunksSegmentWaitsForItAndAnEndedJobListsWhatFinished() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let (harness, http, client, job) = try await Self.submitClip(media, seconds: 2, chunkSeconds: Rational(2, 5), name: "waited",
                                                                      export: #""preset": "medium", "video": {"gopDuration": 0.4}"#)
        let agentClient = try await harness.agent("render-wait")
        let work = try makeWorkDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let agent = RenderingAgent(client: agentClient, harness: harness, workDirectory: work)
        let token = try await ConsoleHTTPTests.token(.readOnly)
        try await agent.work(limit: 1)
        let total = try await client.status(job: job).tasks.total
        #expect(total >= 3, "2 s in 0.4 s chunks: \(total)")

        // Chunk 1 is asked for before it is rendered: the answer is its segment, once it is.
        let waiting = Task { try await Self.download(http.port, "/api/v1/jobs/\(job)/preview/1.m4s?token=\(token)", to: work + "/waited.m4s") }
        try await eventually("the segment's request waits for its chunk") { harness.coordinator.followedJobs.contains(job) }
        try await agent.work(limit: 1)
        try await waiting.value
        let waited = try Data(contentsOf: URL(fileURLWithPath: work + "/waited.m4s"))
        try await Self.download(http.port, "/api/v1/jobs/\(job)/preview/1.m4s?token=\(token)", to: work + "/again.m4s")
        let again = try Data(contentsOf: URL(fileURLWithPath: work + "/again.m4s"))
        #expect(!waited.isEmpty && waited == again, "the waited answer is the segment")
        try await eventually("the answered request no longer waits") { harness.coordinator.followedJobs.isEmpty }

        // The job is cancelled with chunk 2 never rendered: its segment is 404 at once, and the
        // playlist is the two finished chunks.
        #expect(try await client.send(.cancel(job: job)) == .ok)
        let gone = try await http.request("GET", "/api/v1/jobs/\(job)/preview/2.m4s?token=\(token)")
        #expect(gone.status == 404 && gone.body.contains("was not rendered"), "\(gone.status) \(gone.body)")
        let ended = try await http.request("GET", "/api/v1/jobs/\(job)/preview.m3u8?token=\(token)")
        #expect(Self.segmentURIs(ended.body) == ["preview/0.m4s?token=\(token)", "preview/1.m4s?token=\(token)"], "\(ended.body)")
        #expect(ended.body.hasSuffix("#EXT-X-ENDLIST\n"))

        await agentClient.close(); await client.close()
        try await harness.stop()
    }

    /// A console harness, a client, and a job of the test clip's first `seconds` (picture only)
    /// with `export`'s keys submitted in `chunkSeconds` chunks, its assets uploaded.
    static func submitClip(_ media: TestMedia, seconds: Int, chunkSeconds: Rational, name: String, export: String) async throws
        -> (harness: CoordinatorHarness, http: TinyHTTP, client: ReelClient, job: Int64) {
        let (harness, http) = try await ConsoleHTTPTests.consoleHarness()
        let client = try await harness.connect(role: .client, name: "ops@test")
        try await client.upload(media.video)
        let job = try await submit(media, client: client, seconds: seconds, chunkSeconds: chunkSeconds, name: name, export: export)
        return (harness, http, client, job)
    }

    /// Submits a job of the test clip's first `seconds`, `repeats` times one after another
    /// (its assets already uploaded).
    static func submit(_ media: TestMedia, client: ReelClient, seconds: Int, repeats: Int = 1, chunkSeconds: Rational, name: String,
                       export: String) async throws -> Int64 {
        let segments = (0..<repeats).map { #"{"asset": "clip", "sourceRange": {"start": 0, "duration": \#(seconds)}, "at": \#($0 * seconds)}"# }
        let composition = """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [\(segments.joined(separator: ", "))]}],
             "export": {\(export)}}
            """
        var manifest = try media.manifest()
        manifest["tone"] = nil
        let request = SubmitRequest(composition: composition, assets: manifest,
                                    settings: JobSettings(chunkSeconds: chunkSeconds, encoderThreads: 1, name: name))
        guard case .job(let job, let missing) = try await client.send(.submit(document: Array(try JSONEncoder().encode(request)))) else {
            throw TestFailure(description: "SUBMIT did not answer JOB")
        }
        #expect(missing.isEmpty)
        return job
    }

    /// An HLS ladder's preview and posters: each chunk's result is an archive of its renditions
    /// (proto/PROTOCOL.md §4.6), so the preview plays the smallest rendition of each chunk, as
    /// one clean stream that ffmpeg decodes to every frame at that rendition's size. A second job
    /// whose `big` rendition changed encodes `big` alone and takes `small` from the first job's
    /// archives: its preview plays `small` from those, the same whole stream.
    @Test func aLadderJobsPreviewPlaysItsSmallestRendition() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        func ladder(bigBitRate: Int) -> String {
            """
            "fileType": "hls", "segmentDuration": 0.4, "video": {"gopDuration": 0.4, "x264Preset": "veryfast"},
            "renditions": [{"name": "big", "renderSize": {"width": 160, "height": 120}, "video": {"bitRate": \(bigBitRate)}},
                           {"name": "small", "renderSize": {"width": 96, "height": 72}, "video": {"bitRate": 60000}}]
            """
        }
        let (harness, http, client, job) = try await Self.submitClip(media, seconds: 2, chunkSeconds: Rational(4, 5), name: "ladder preview",
                                                                      export: ladder(bigBitRate: 300000))
        let agentClient = try await harness.agent("render-ladder")
        let work = try makeWorkDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        try await RenderingAgent(client: agentClient, harness: harness, workDirectory: work).work()
        _ = try await client.waitForState(job: job, "done")
        let token = try await ConsoleHTTPTests.token(.readOnly)
        let first = try await Self.expectWholeLadderPreview(job: job, http: http, token: token, in: work + "/first")

        let second = try await Self.submit(media, client: client, seconds: 2, chunkSeconds: Rational(4, 5), name: "big changed",
                                           export: ladder(bigBitRate: 200000))
        try await RenderingAgent(client: agentClient, harness: harness, workDirectory: work).work()
        _ = try await client.waitForState(job: second, "done")
        let reused = try await Self.expectWholeLadderPreview(job: second, http: http, token: token, in: work + "/second")
        #expect(reused == first, "the second job's preview is the first job's small rendition")

        await agentClient.close(); await client.close()
        try await harness.stop()
    }

    /// Downloads `job`'s whole preview (3 chunks of a 2 s ladder) and checks it is one clean
    /// stream of 50 frames at the small rendition's 96×72; returns its bytes.
    static func expectWholeLadderPreview(job: Int64, http: TinyHTTP, token: String, in folder: String) async throws -> Data {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let whole = try await http.request("GET", "/api/v1/jobs/\(job)/preview.m3u8?token=\(token)")
        #expect(whole.status == 200 && whole.body.hasSuffix("#EXT-X-ENDLIST\n"), "\(whole.body)")
        let uris = Self.segmentURIs(whole.body)
        #expect(uris.count == 3, "2 s in 0.8 s chunks: \(whole.body)")
        var bytes = Data()
        for (index, path) in (["preview/init.mp4?token=\(token)"] + uris).enumerated() {
            let file = folder + "/piece-\(index)"
            try await Self.download(http.port, "/api/v1/jobs/\(job)/" + path, to: file)
            bytes += try Data(contentsOf: URL(fileURLWithPath: file))
        }
        let joined = folder + "/preview.mp4"
        try bytes.write(to: URL(fileURLWithPath: joined))
        #expect(try await countFrames(joined) == 50)
        let size = try await offThePool {
            try runProgram(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", joined]).stdout
        }
        #expect(size.trimmingCharacters(in: .whitespacesAndNewlines) == "96,72", "the smallest rendition: \(size)")
        let errors = try await offThePool { try runProgram(["ffmpeg", "-nostdin", "-v", "error", "-i", joined, "-f", "null", "-"]).stderr }
        #expect(errors.isEmpty, "the preview decodes cleanly: \(errors)")
        return bytes
    }

    /// A job in a codec no browser decodes has no preview (nothing is re-encoded for one): the
    /// playlist and segment routes answer 415 with a message that says why and what to use.
    @Test(arguments: [(#""fileType": "png""#, "a PNG sequence"), (#""fileType": "mov", "video": {"codec": "prores"}"#, "ProRes (mov)")])
    func aJobBrowsersCannotPlayHasNoPreviewAndSaysWhy(export: String, named: String) async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let (harness, http, client, job) = try await Self.submitClip(media, seconds: 1, chunkSeconds: Rational(1, 2), name: "no preview", export: export)
        let token = try await ConsoleHTTPTests.token(.readOnly)
        for path in ["preview.m3u8", "preview/init.mp4", "preview/0.m4s"] {
            let answer = try await http.request("GET", "/api/v1/jobs/\(job)/\(path)?token=\(token)")
            #expect(answer.status == 415, "\(path): \(answer.status) \(answer.body)")
            #expect(answer.body.contains("job \(job) renders \(named), which browsers cannot play"), "\(path): \(answer.body)")
            #expect(answer.body.contains("reel fetch \(job)"), "\(path): \(answer.body)")
        }
        await client.close()
        try await harness.stop()
    }
}
