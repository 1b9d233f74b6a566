import ReelHTTPTesting
import Foundation
import ReelConsole
import ReelCoordinator
import ReelCore
import ReelMedia
import ReelProtocol
import ReelThreadTesting
import Testing

/// Watching a render as it renders: on a real coordinator, a job whose last chunk is held back
/// (nobody renders it until the test says so) has a preview playlist of its finished chunks,
/// whose segments are one clean stream; headless Chromium plays it on the job page before the
/// job ends; once the job is done the playlist is whole, and ffmpeg reads it over HTTP.
@Suite(.database, .serialized) struct PreviewTests {
    /// Lines of the playlist that are URIs (segments), in order.
    static func segmentURIs(_ playlist: String) -> [String] {
        playlist.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
    }

    /// Downloads `path` on the console with curl (binary-safe), failing on any HTTP error.
    static func download(_ port: Int, _ path: String, to file: String) async throws {
        try await offThePool { try runProgram(["curl", "-sS", "--fail", "-o", file, "http://127.0.0.1:\(port)\(path)"]) }
    }

    /// The job page in headless Chromium, autoplay allowed, after `budget` ms of virtual time:
    /// the `data-` attributes the page mirrors the video's state into.
    static func previewState(_ url: String, budget: Int = 8000) async throws -> (dom: String, readyState: Int?, currentTime: Double?, firstTime: Double?) {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("reel-chromium-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let arguments = [try ConsoleBrowserTests.chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--no-first-run", "--user-data-dir=\(profile)", "--autoplay-policy=no-user-gesture-required",
                         "--virtual-time-budget=\(budget)", "--dump-dom", url]
        let dom = try await offThePool { try runProgram(arguments).stdout }
        guard let figure = dom.firstMatch(of: /<figure id="preview"[^>]*>/).map({ String($0.output) }) else { return (dom, nil, nil, nil) }
        func attribute(_ name: String) -> String? {
            figure.firstMatch(of: try! Regex("\(name)=\"([^\"]*)\"")).flatMap { $0.output[1].substring.map(String.init) }
        }
        return (dom, attribute("data-ready-state").flatMap { Int($0) }, attribute("data-current-time").flatMap { Double($0) },
                attribute("data-first-time").flatMap { Double($0) })
    }

    /// Skipped on a machine without Chromium, unless `REEL_TEST_REQUIRE_CHROMIUM` is set, as
    /// ops/test.sh (CI) sets it after installing Chromium: there it always runs.
    static let canRun = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].contains { FileManager.default.isExecutableFile(atPath: $0) }
        || ProcessInfo.processInfo.environment["REEL_TEST_REQUIRE_CHROMIUM"] != nil

    @Test(.enabled(if: canRun, "skipped: this test plays the preview in headless Chromium, which is not installed here (apt-get install chromium, or ops/install-deps.sh); ops/test.sh and CI always run it"))
    func theJobPagePlaysFinishedChunksBeforeTheJobEndsAndTheWholeVideoOnceDone() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let (harness, http) = try await ConsoleHTTPTests.consoleHarness()
        let client = try await harness.connect(role: .client, name: "ops@test")
        try await client.upload(media.video)
        try await client.upload(media.audio)   // in the submission's manifest, though this job leaves it out
        let job = try await ConsoleControlTests.submit(client, media)   // 2 s at 25 fps, picture only, 0.5 s chunks
        let agentClient = try await harness.agent("render-preview")
        let work = try makeWorkDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let agent = RenderingAgent(client: agentClient, harness: harness, workDirectory: work)
        let token = try await ConsoleHTTPTests.token(.readOnly)

        // Every chunk but one is rendered; the held one keeps the job running for as long as the test needs.
        try await agent.work(limit: 1)
        let total = try await client.status(job: job).tasks.total
        #expect(total >= 4, "the job has several chunks: \(total)")
        try await agent.work(limit: total - 2)
        let detail = try JSONDecoder().decode(JobDetail.self, from: Data(try await http.request("GET", "/api/v1/jobs/\(job)", token: token).body.utf8))
        let chunks = detail.chunks.filter { $0.kind == "video_chunk" }.sorted { $0.frameStart < $1.frameStart }
        #expect(chunks.filter { $0.state == "done" }.count == total - 1)
        let leading = chunks.prefix { $0.state == "done" }
        #expect(!leading.isEmpty)

        // The playlist: the leading finished chunks, the token passed on, no end yet.
        let listed = try await http.request("GET", "/api/v1/jobs/\(job)/preview.m3u8?token=\(token)")
        #expect(listed.status == 200, "\(listed.body)")
        #expect(!listed.body.contains("#EXT-X-ENDLIST") && listed.body.contains("#EXT-X-PLAYLIST-TYPE:EVENT"))
        #expect(listed.body.contains("#EXT-X-MAP:URI=\"preview/init.mp4?token=\(token)\""))
        let uris = Self.segmentURIs(listed.body)
        #expect(uris == leading.map { "preview/\($0.ordinal).m4s?token=\(token)" }, "\(listed.body)")
        #expect(listed.body.components(separatedBy: "#EXTINF:0.400000,").count - 1 == leading.count, "10 frames at 25 fps each: \(listed.body)")

        // Its pieces, as a player fetches them, are one clean stream with every finished frame.
        let joined = work + "/preview.mp4"
        var bytes = Data()
        for (index, path) in (["preview/init.mp4?token=\(token)"] + uris).enumerated() {
            let file = work + "/piece-\(index)"
            try await Self.download(http.port, "/api/v1/jobs/\(job)/" + path, to: file)
            bytes += try Data(contentsOf: URL(fileURLWithPath: file))
        }
        try bytes.write(to: URL(fileURLWithPath: joined))
        let frames = leading.reduce(0) { $0 + Int($1.frameEnd - $1.frameStart) }
        #expect(try await countFrames(joined) == frames)
        let errors = try await offThePool { try runProgram(["ffmpeg", "-nostdin", "-v", "error", "-i", joined, "-f", "null", "-"]).stderr }
        #expect(errors.isEmpty, "the preview decodes cleanly: \(errors)")
        #expect(FileManager.default.fileExists(atPath: harness.storage + "/previews"), "remuxed pieces are cached")

        // Headless Chromium on the job page: the <video> plays the finished chunks, the job still running.
        let page = "http://127.0.0.1:\(http.port)/#token=\(token)&view=/jobs/\(job)"
        let deadline = Date().addingTimeInterval(120)
        var seen = try await Self.previewState(page)
        while !((seen.readyState ?? 0) >= 2 && (seen.currentTime ?? 0) > (seen.firstTime ?? .infinity) + 0.2), Date() < deadline {
            seen = try await Self.previewState(page)
        }
        #expect((seen.readyState ?? 0) >= 2, "the video has frames to show: \(seen.readyState.map(String.init) ?? "no preview") \(seen.dom.prefix(4000))")
        #expect((seen.currentTime ?? 0) > (seen.firstTime ?? .infinity) + 0.2,
                "the video plays (currentTime advances): from \(seen.firstTime ?? -1) to \(seen.currentTime ?? -1)")
        #expect(seen.dom.contains("Finished chunks: \(leading.count) of \(total)"), "the caption counts the finished chunks")
        #expect(try await client.status(job: job).state == "running", "all this happened before the job ended")

        // The held chunk is rendered: the job ends, and the playlist is the whole picture.
        try await agent.work()
        _ = try await client.waitForState(job: job, "done")
        let whole = try await http.request("GET", "/api/v1/jobs/\(job)/preview.m3u8?token=\(token)")
        #expect(whole.body.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(Self.segmentURIs(whole.body).count == total)
        // ffmpeg's HLS demuxer as an independent player, over HTTP.
        let url = "http://127.0.0.1:\(http.port)/api/v1/jobs/\(job)/preview.m3u8?token=\(token)"
        let played = try await offThePool { try runProgram(["ffmpeg", "-nostdin", "-v", "error", "-i", url, "-f", "null", "-"]).stderr }
        #expect(played.isEmpty, "ffmpeg plays the whole preview cleanly: \(played)")
        // Counted by decoding; the HLS demuxer lists the stream once per program, so each line must say 50.
        let counted = try await offThePool {
            try runProgram(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                            "-of", "csv=p=0", url]).stdout
        }
        let counts = counted.split(whereSeparator: \.isNewline).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        #expect(!counts.isEmpty && counts.allSatisfy { $0 == 50 }, "frames of the whole preview: \(counted)")
        // The page again, until it shows the whole result with frames to show (a loaded machine
        // may need more than one look: Chromium's virtual time does not wait for the network).
        let doneDeadline = Date().addingTimeInterval(120)
        var done = try await Self.previewState(page)
        while !(done.dom.contains("The whole result") && (done.readyState ?? 0) >= 2), Date() < doneDeadline {
            done = try await Self.previewState(page)
        }
        #expect(done.dom.contains("The whole result"), "\(done.dom.prefix(4000))")
        #expect((done.readyState ?? 0) >= 2, "the whole preview has frames to show: \(done.readyState.map(String.init) ?? "no preview")")

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

    /// Submits a job of the test clip's first `seconds` (its assets already uploaded).
    static func submit(_ media: TestMedia, client: ReelClient, seconds: Int, chunkSeconds: Rational, name: String, export: String) async throws -> Int64 {
        let composition = """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": \(seconds)}, "at": 0}]}],
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
