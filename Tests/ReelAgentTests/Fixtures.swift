import Crypto
import Foundation
import Logging
import ReelAgent
import ReelCore
import ReelMedia
import ReelThreadTesting
import ReelProtocol
import ReelScheduling
import Synchronization

/// Runs a program with posix_spawn, its output in files (Foundation.Process.waitUntilExit was
/// seen to hang in test processes), and waits for it.
enum Spawn {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Starts `executable` with `arguments` and `environment` additions; stdout/stderr go to files.
    static func start(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                      stdout: String, stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard status == 0 else { throw Failure(description: "posix_spawn \(executable): \(String(cString: strerror(status)))") }
        return pid
    }

    /// Waits for `pid`; its exit status, or -1 if it died of a signal.
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
    }

    /// Waits up to `timeout` for `pid`; on expiry kills it and returns nil.
    static func wait(_ pid: pid_t, timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1 }
            if r == -1 && errno != EINTR { return -1 }
            try? await Task.sleep(for: .milliseconds(50))
        }
        kill(pid, SIGKILL)
        _ = wait(pid)
        return nil
    }

    /// Runs to completion: (exit status, stdout, stderr).
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    allowFailure: Bool = false) throws -> (status: Int32, stdout: String, stderr: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-agent-spawn-\(UUID().uuidString)").path
        defer { unlink(base + ".out"); unlink(base + ".err") }
        let pid = try start(executable, arguments, environment: environment, stdout: base + ".out", stderr: base + ".err")
        let status = wait(pid)
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        if status != 0 && !allowFailure {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(status): \(err)")
        }
        return (status, out, err)
    }

    static func ffmpeg(_ arguments: [String]) throws {
        try run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// Number of video frames in `path`, counted by ffprobe (an independent decoder).
    static func videoFrameCount(_ path: String) throws -> Int {
        let r = try run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                             "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        guard let count = Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Failure(description: "ffprobe frame count of \(path): \(r.stdout) \(r.stderr)")
        }
        return count
    }

    /// The `reel` executable built beside the test bundle.
    static var reel: String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent(), dir.deletingLastPathComponent().deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("reel").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return dir.appendingPathComponent("reel").path
    }
}

/// A tiny composition on generated media, planned from local files, and the content-addressed
/// view of it a coordinator would send (asset URLs `reel-asset:<sha256>`).
struct RenderFixture {
    let directory: URL
    /// The plan with local file URLs (for rendering directly, the reference).
    let localPlan: RenderPlan
    /// Asset id → content.
    let manifest: [String: AssetManifestEntry]
    /// Content hash → the file's bytes (what the fake coordinator serves).
    let contents: [String: [UInt8]]

    static func tempDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-agent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A `seconds`-long 160x120 25 fps clip (GOP 1 s), optionally under a sine tone; made off the
    /// cooperative pool (ffmpeg is waited for), which the agent under test needs.
    static func make(seconds: Int, audio: Bool) async throws -> RenderFixture {
        try await offThePool { try makeBlocking(seconds: seconds, audio: audio) }
    }

    private static func makeBlocking(seconds: Int, audio: Bool) throws -> RenderFixture {
        LibAVLogging.errorsOnly()
        let dir = try tempDirectory()
        let clip = dir.appendingPathComponent("clip.mp4").path
        try Spawn.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=\(seconds)", "-c:v", "libx264",
                          "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip])
        var assetsJSON = #""clip": {"url": "\#(clip)"}"#
        var tracksJSON = #"{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": \#(seconds)}, "at": 0}]}"#
        var files = ["clip": clip]
        if audio {
            let tone = dir.appendingPathComponent("tone.wav").path
            try Spawn.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)", tone])
            assetsJSON += #", "tone": {"url": "\#(tone)"}"#
            tracksJSON += #", {"id": 2, "mediaType": "audio", "segments": [{"asset": "tone", "sourceRange": {"start": 0, "duration": \#(seconds)}, "at": 0}]}"#
            files["tone"] = tone
        }
        let json = #"{"formatVersion": 1, "assets": {\#(assetsJSON)}, "tracks": [\#(tracksJSON)], "export": {"video": {"gopDuration": 1}}}"#
        let compositionPath = dir.appendingPathComponent("composition.json").path
        try json.write(toFile: compositionPath, atomically: true, encoding: .utf8)
        let plan = try CompositionLoader.load(path: compositionPath)
        var manifest: [String: AssetManifestEntry] = [:]
        var contents: [String: [UInt8]] = [:]
        for (id, path) in files {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let digest = try FileDigest.sha256(path: path)
            manifest[id] = AssetManifestEntry(sha256: digest.hex, size: Int64(bytes.count))
            contents[digest.hex] = bytes
        }
        return RenderFixture(directory: dir, localPlan: plan, manifest: manifest, contents: contents)
    }

    /// The task specification a coordinator would send: the plan's URLs replaced by content URLs.
    func specification(task: Int64, kind: TaskKind, frames: FrameRange? = nil,
                       manifest override: [String: AssetManifestEntry]? = nil) -> TaskSpecification {
        let manifest = override ?? self.manifest
        var plan = localPlan
        for (id, asset) in plan.assets {
            plan.assets[id] = PlannedAsset(url: MediaSources.url(forContentHash: manifest[id]!.sha256), description: asset.description)
        }
        let document = TestPlanDocuments.register(RenderPlanDocument(plan: plan, assets: manifest, encoderThreads: 1))
        return TaskSpecification(job: 1, task: task, kind: kind, frames: frames ?? FrameRange(start: 0, end: localPlan.frameCount),
                                 planDocument: document)
    }

    /// Deletes the generated media.
    func remove() { try? FileManager.default.removeItem(at: directory) }

    func serve(on coordinator: FakeCoordinator) {
        for (hash, bytes) in contents { coordinator.addAsset(bytes, hash: hash) }
    }
}

/// An agent under test, run in a `ServiceGroup` as `reel agent` runs it.
struct RunningAgent {
    let agent: Agent
    let group: ServiceGroupHandle
    let cacheDirectory: URL

    static func start(on coordinator: FakeCoordinator, cacheDirectory: URL? = nil,
                      grace: Duration = .seconds(30), slots: Int = 1,
                      tls: AgentConfiguration.TLSContext? = nil, tlsServerHostname: String? = nil,
                      resultPartBytes: Int = 8 << 20, logger: Logger = testLogger()) throws -> RunningAgent {
        let cache = try cacheDirectory ?? RenderFixture.tempDirectory()
        let configuration = AgentConfiguration(
            coordinatorHost: "127.0.0.1", coordinatorPort: coordinator.port, name: "test-agent",
            cacheDirectory: cache, cacheByteLimit: 64 << 20, slots: slots, claimWaitSeconds: 1,
            reconnectInitial: .milliseconds(50), reconnectMaximum: .milliseconds(400),
            progressInterval: .milliseconds(100), shutdownGracePeriod: grace, requestTimeout: .seconds(20),
            tls: tls, tlsServerHostname: tlsServerHostname, resultPartBytes: resultPartBytes, clock: coordinator.clock.farmClock)
        let agent = try Agent(configuration: configuration, authenticator: coordinator.authenticator, logger: logger)
        return RunningAgent(agent: agent, group: ServiceGroupHandle(service: agent, logger: logger), cacheDirectory: cache)
    }

    /// Files left in the agent's work directory (renders in progress or abandoned).
    var workFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory.appendingPathComponent("work").path)) ?? []
    }
}

/// Logs go nowhere unless `REEL_TEST_LOG` is set (then to stderr).
func testLogger() -> Logger {
    if ProcessInfo.processInfo.environment["REEL_TEST_LOG"] != nil {
        var logger = Logger(label: "reel.agent.test", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .debug
        return logger
    }
    return Logger(label: "reel.agent.test", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// The plan documents fixtures made, by hash, for `FakeCoordinator` to serve on `FETCH` (as a
/// real coordinator serves the job's stored plan document).
enum TestPlanDocuments {
    private static let documents = Mutex<[String: [UInt8]]>([:])

    static func register(_ document: RenderPlanDocument) -> AssetManifestEntry {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let bytes = [UInt8](try! encoder.encode(document))
        let hash = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        documents.withLock { $0[hash] = bytes }
        return AssetManifestEntry(sha256: hash, size: Int64(bytes.count))
    }

    static func bytes(_ sha256: String) -> [UInt8]? { documents.withLock { $0[sha256] } }
}
