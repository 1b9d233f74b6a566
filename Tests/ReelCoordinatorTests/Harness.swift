import ReelStoreTesting
import Foundation
import Logging
import NIOCore
import ReelCoordinator
import ReelCore
import ReelMedia
import ReelProtocol
import ServiceLifecycle
import ReelThreadTesting
import Testing

struct TestFailure: Error, CustomStringConvertible { var description: String }

/// Runs a program with posix_spawn (Foundation.Process was seen to hang in test processes),
/// output in files, and returns (status, stdout, stderr).
@discardableResult
func runProgram(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-coord-run-\(UUID().uuidString)").path
    let outPath = base + ".out", errPath = base + ".err"
    defer { unlink(outPath); unlink(errPath) }
    let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    let command = "exec \(quoted) >'\(outPath)' 2>'\(errPath)' </dev/null"
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
    defer { for pointer in argv { free(pointer) } }
    guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { throw TestFailure(description: "posix_spawn failed") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
    let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    guard exit == 0 else { throw TestFailure(description: "\(arguments.joined(separator: " ")) exited \(exit): \(err)") }
    return (exit, out, err)
}

/// Tiny generated media: a 2 s 160x120 25 fps clip and a 2 s tone, plus the composition using them.
/// The files are generated once per test process, off the cooperative pool (ffmpeg is waited
/// for; see `offThePool`), and copied into each test's own directory.
struct TestMedia {
    let directory: URL
    let video: String
    let audio: String

    init() async throws {
        LibAVLogging.errorsOnly()
        let template = try await TestMediaTemplate.shared.directory()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-coord-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        video = directory.appendingPathComponent("clip.mp4").path
        audio = directory.appendingPathComponent("tone.wav").path
        try FileManager.default.copyItem(atPath: template.appendingPathComponent("clip.mp4").path, toPath: video)
        try FileManager.default.copyItem(atPath: template.appendingPathComponent("tone.wav").path, toPath: audio)
    }

    /// 2 s of video (50 frames, GOP 0.4 s = 10 frames, so 0.5 s chunks give 5 chunks) under the tone; `withAudio: false` drops the audio track.
    func composition(withAudio: Bool = true, codec: String? = nil) -> String {
        let audioTrack = withAudio
            ? #", {"id": 2, "mediaType": "audio", "segments": [{"asset": "tone", "sourceRange": {"start": 0, "duration": 2}, "at": 0}]}"#
            : ""
        return """
            {"formatVersion": 1,
             "assets": {"clip": {"url": "clip.mp4"}, "tone": {"url": "tone.wav"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "sourceRange": {"start": 0, "duration": 2}, "at": 0}]}\(audioTrack)],
             "export": {"preset": "medium", "video": {"gopDuration": 0.4\(codec.map { #", "codec": "\#($0)""# } ?? "")}}}
            """
    }

    func manifest() throws -> [String: AssetManifestEntry] {
        var out: [String: AssetManifestEntry] = [:]
        for (id, path) in [("clip", video), ("tone", audio)] {
            let (count, hex) = try FileDigest.sha256(path: path)
            out[id] = AssetManifestEntry(sha256: hex, size: Int64(count))
        }
        return out
    }

    func submission(chunkSeconds: Rational = Rational(1, 2), withAudio: Bool = true, codec: String? = nil) throws -> [UInt8] {
        let request = SubmitRequest(composition: composition(withAudio: withAudio, codec: codec), assets: try manifest(),
                                    settings: JobSettings(chunkSeconds: chunkSeconds, encoderThreads: 1, name: "test job"))
        return Array(try JSONEncoder().encode(request))
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }
}

/// A coordinator on a private schema and storage directory, listening on loopback port 0, its
/// services run in one `ServiceGroup` exactly as `reel coordinator` runs them; `stop()` triggers
/// graceful shutdown.
final class CoordinatorHarness: Sendable {
    let schema: TestDatabase.Schema
    let storage: String
    let secretFile: String
    let coordinator: Coordinator
    let group: ServiceGroup
    let task: Task<Void, Error>
    let port: Int
    let configuration: CoordinatorConfiguration
    /// The coordinator's lease clock: `clock.advance(seconds:)` ages every lease.
    let clock: AdjustableClock

    static let secret = "coordinator tests shared secret"

    /// Starts a coordinator; pass `reusing` to start a new one on the same database and storage,
    /// `logger` to see what it logs (at `logLevel` and above: warnings unless a test asks for more).
    init(leaseSeconds: Double = 30, reusing previous: CoordinatorHarness? = nil,
         configure: (inout CoordinatorConfiguration) -> Void = { _ in }, logger: Logger? = nil,
         logLevel: Logger.Level = .warning) async throws {
        // Off the cooperative pool: creating a schema is a blocking libpq round trip.
        if let previous { schema = previous.schema } else { schema = try await offThePool { try TestDatabase.Schema() } }
        if let previous {
            storage = previous.storage; secretFile = previous.secretFile
        } else {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("reel-coord-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            storage = root + "/storage"
            secretFile = root + "/secret"
            try (Self.secret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
            chmod(secretFile, 0o600) // secret files must be private
        }
        var configuration = CoordinatorConfiguration()
        configuration.listen = HostPort(host: "127.0.0.1", port: 0)
        configuration.database = schema.conninfo
        configuration.storageDirectory = storage
        configuration.secretFile = secretFile
        configuration.leaseSeconds = leaseSeconds
        clock = AdjustableClock()
        configuration.clock = clock.farmClock
        configuration.reaperInterval = .milliseconds(300)
        configuration.drainTimeout = .seconds(5)
        configuration.metrics = HostPort(host: "127.0.0.1", port: 0)
        // The reconnect grace runs in real time from a disconnect. Tests about it set their own;
        // the others get one no loaded machine outlasts, so a test's agent that closes a
        // connection and comes back keeps its leases however slow the machine.
        configuration.reconnectGraceSeconds = 60
        configure(&configuration)
        self.configuration = configuration
        var logger = logger ?? Logger(label: "reel.coordinator.test")
        if logger.logLevel < logLevel { logger.logLevel = logLevel }
        coordinator = try await Coordinator(configuration: configuration, logger: logger)
        group = coordinator.serviceGroup()
        let group = group
        task = Task { try await group.run() }
        guard await coordinator.waitUntilListening(), let port = coordinator.localAddress?.port else {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw TestFailure(description: "coordinator did not start")
        }
        self.port = port
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }

    func connect(role: PeerRole, name: String, secret: String = CoordinatorHarness.secret) async throws -> ReelClient {
        try await ReelClient.connect(configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: role, name: name),
                                     authenticator: try Authenticator(secret: Array(secret.utf8)))
    }

    /// An agent connection that has sent `CAPS` (libx264 and AAC unless `caps` says otherwise).
    func agent(_ name: String, caps: AgentCapabilities = agentCaps, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ReelClient {
        let client = try await connect(role: .agent, name: name)
        #expect(try await client.send(.capabilities(caps)) == .ok, sourceLocation: sourceLocation)
        return client
    }

    /// Where the storage keeps an asset and a result (docs/object-storage.md "Layout").
    func assetPath(_ hash: String) -> String { storage + "/assets/sha256/\(hash.prefix(2))/" + hash }
    func resultPath(_ hash: String) -> String { storage + "/results/sha256/\(hash.prefix(2))/" + hash }

    /// The hashes of the stored results.
    func storedResults() throws -> [String] {
        let folder = storage + "/results/sha256"
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().flatMap {
            try FileManager.default.contentsOfDirectory(atPath: folder + "/" + $0).sorted()
        }
    }

    /// Claims the coordinator's dispatcher holds right now.
    var dispatcherWaiting: Int { coordinator.waitingClaims }

    /// The job plan document a TASK names, read from the coordinator's storage.
    func planDocument(_ spec: TaskSpecification) throws -> RenderPlanDocument {
        try JSONDecoder().decode(RenderPlanDocument.self, from: Data(contentsOf: URL(fileURLWithPath: assetPath(spec.planDocument.sha256))))
    }
}

/// The usual coordinator test: its own media, a coordinator, and an operator's connection
/// (`clientName`). However `body` ends, a thrown error or a failed `#require` included, the
/// connection is closed, the coordinator stopped and the media removed, so a failing test leaves
/// no coordinator running in the test process. The body closes the other connections it opens.
func withCoordinator(leaseSeconds: Double = 30, configure: (inout CoordinatorConfiguration) -> Void = { _ in },
                     clientName: String = "ops@test",
                     _ body: (TestMedia, CoordinatorHarness, ReelClient) async throws -> Void) async throws {
    let media = try await TestMedia()
    defer { media.cleanUp() }
    let harness = try await CoordinatorHarness(leaseSeconds: leaseSeconds, configure: configure)
    let client: ReelClient
    do {
        client = try await harness.connect(role: .client, name: clientName)
    } catch {
        try? await harness.stop()
        throw error
    }
    do {
        try await body(media, harness, client)
    } catch {
        await client.close()
        try? await harness.stop()
        throw error
    }
    await client.close()
    try await harness.stop()
}

extension ReelClient {
    /// A request with a generous timeout (60 s beyond a claim's own wait), so a broken server
    /// fails the test instead of hanging it. Claims that expect a task wait up to 60 s: they are
    /// answered the moment one is claimable, so the wait costs nothing unless the test fails.
    func send(_ message: Message) async throws -> Message {
        var seconds: Int64 = 60
        if case .claim(let wait) = message { seconds += Int64(wait) }
        if case .status(_, let wait) = message { seconds += Int64(wait) }
        return try await request(message, timeout: .seconds(seconds))
    }

    func status(job: Int64) async throws -> JobStatus {
        guard case .report(let json) = try await send(.status(job: job)) else { throw TestFailure(description: "STATUS did not REPORT") }
        let report = try JSONDecoder().decode(StatusReport.self, from: Data(json))
        guard let status = report.jobs.first, report.jobs.count == 1 else { throw TestFailure(description: "STATUS job=\(job): \(report)") }
        return status
    }

    /// Polls STATUS until the job reaches `state` (or fails the test after `seconds`).
    func waitForState(job: Int64, _ state: String, seconds: Double = 60) async throws -> JobStatus {
        let deadline = Date().addingTimeInterval(seconds)
        var last: JobStatus?
        while Date() < deadline {
            let status = try await status(job: job)
            if status.state == state { return status }
            last = status
            try await Task.sleep(for: .milliseconds(200))
        }
        throw TestFailure(description: "job \(job) did not reach \(state): \(String(describing: last))")
    }

    /// Uploads a file in `ranges` PUTs; returns the last STORED reply.
    @discardableResult
    func upload(_ path: String, ranges: Int = 1) async throws -> Message {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let (_, hash) = try FileDigest.sha256(path: path)
        let step = max(1, (bytes.count + ranges - 1) / ranges)
        var offset = 0
        var reply = Message.ok
        repeat {
            let end = min(bytes.count, offset + step)
            reply = try await send(.put(sha256: hash, offset: Int64(offset), total: Int64(bytes.count), bytes: Array(bytes[offset..<end])))
            offset = end
        } while offset < bytes.count
        return reply
    }

    /// Reads a finished job's output in ranges into `path`.
    func download(job: Int64, to path: String, rangeBytes: Int64 = 20_000) async throws {
        var bytes: [UInt8] = []
        var total: Int64 = .max
        while Int64(bytes.count) < total {
            guard case .data(let offset, let t, let chunk) = try await send(.output(job: job, offset: Int64(bytes.count), length: rangeBytes)),
                  offset == Int64(bytes.count), !chunk.isEmpty || t == Int64(bytes.count) else {
                throw TestFailure(description: "bad OUTPUT reply")
            }
            total = t
            bytes += chunk
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}

/// A fake agent that renders claimed tasks for real with `ChunkRenderer`, reading sources from
/// the coordinator's stored files (what a co-located agent would do).
struct RenderingAgent {
    let client: ReelClient
    let harness: CoordinatorHarness
    let workDirectory: String

    /// Claims and completes tasks until a CLAIM returns NONE; returns the tasks done. The first
    /// claim waits up to `firstClaimWait` (a job just submitted is planned first, which a loaded
    /// machine may take seconds to do); the next ones `claimWait`. The rest of a planned job is
    /// claimable at once, but a claim whose wait runs out before a loaded coordinator's first
    /// look answers NONE (a CI run saw a 1 s wait end a job's rendering after one chunk), so
    /// the default leaves room; the last claim of a test costs that wait.
    @discardableResult
    func work(limit: Int = .max, firstClaimWait: Int = 60, claimWait: Int = 5) async throws -> [TaskAssignment] {
        var done: [TaskAssignment] = []
        while done.count < limit {
            let reply = try await client.send(.claim(waitSeconds: done.isEmpty ? firstClaimWait : claimWait))
            guard case .task(let assignment, let payload) = reply else { break }
            try await render(assignment, payload)
            done.append(assignment)
        }
        return done
    }

    func render(_ assignment: TaskAssignment, _ payload: [UInt8]) async throws {
        let spec = try JSONDecoder().decode(TaskSpecification.self, from: Data(payload))
        // The plan document over reel/1, as an agent reads it (the storage may be a bucket).
        guard case .data(0, _, let documentBytes) = try await client.send(.fetch(sha256: spec.planDocument.sha256, offset: 0,
                                                                                length: spec.planDocument.size)) else {
            throw TestFailure(description: "FETCH of the plan document failed")
        }
        let (path, sha256) = try await renderChunk(spec, planDocument: documentBytes, assignment)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let reply = try await client.send(.result(task: assignment.task, epoch: assignment.epoch, sha256: sha256, data: bytes))
        guard reply == .accepted(task: assignment.task) else { throw TestFailure(description: "RESULT got \(reply)") }
    }

    /// Renders `spec` from its plan document's bytes (however they were read: over reel/1 or
    /// through a presigned GET) into the work directory, with the assets at their local paths.
    /// - Returns: the rendered file and its SHA-256.
    func renderChunk(_ spec: TaskSpecification, planDocument documentBytes: [UInt8],
                     _ assignment: TaskAssignment) async throws -> (path: String, sha256: String) {
        let document = try JSONDecoder().decode(RenderPlanDocument.self, from: Data(documentBytes))
        var plan = document.plan
        for (id, asset) in plan.assets {
            plan.assets[id]?.url = harness.assetPath(String(asset.url.dropFirst("reel-asset:".count)))
        }
        let path = "\(workDirectory)/task-\(assignment.task)-\(assignment.epoch).mp4"
        let plan_ = plan, threads = document.encoderThreads
        if let ladder = plan_.export.ladder, spec.kind == .videoChunk {
            // A ladder chunk's result: its renditions in one archive, as agents send it (proto/PROTOCOL.md §4.6);
            // only those the TASK names when it names some (the others are reused).
            var only = plan_
            if let names = spec.renditions { only.export.ladder?.renditions.removeAll { !names.contains($0.name) } }
            let encoded = only
            let renditions = ladder.renditions.filter { spec.renditions?.contains($0.name) ?? true }
                .map { (name: "\($0.name).mp4", path: "\(path).\($0.name).mp4") }
            try await offThePool {
                _ = try ChunkRenderer.renderLadder(encoded, frames: spec.frames, to: renditions.map(\.path), encoderThreads: threads)
                try LadderArchive.write(renditions, to: path)
            }
            return (path, try FileDigest.sha256(path: path).hex)
        }
        let artifact = try await offThePool {
            spec.kind == .audio
                ? (plan_.export.ladder != nil ? try ChunkRenderer.renderLadderAudio(plan_, to: path) : try ChunkRenderer.renderAudio(plan_, to: path))
                : try ChunkRenderer.renderVideo(plan_, frames: spec.frames, to: path, encoderThreads: threads)
        }
        return (path, artifact.sha256)
    }
}

/// `TestMedia`'s files, generated on first use and kept for the test process.
private actor TestMediaTemplate {
    static let shared = TestMediaTemplate()
    private var generation: Task<URL, any Error>?

    func directory() async throws -> URL {
        if let generation { return try await generation.value }
        let generation = Task {
            try await offThePool { () throws -> URL in
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-coord-media-template-\(getpid())")
                try? FileManager.default.removeItem(at: directory)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try runProgram(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2",
                                "-c:v", "libx264", "-pix_fmt", "yuv420p", directory.appendingPathComponent("clip.mp4").path])
                try runProgram(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                                directory.appendingPathComponent("tone.wav").path])
                return directory
            }
        }
        self.generation = generation
        return try await generation.value
    }
}

/// Frames in the first video stream, counted by decoding (ffprobe).
func countFrames(_ path: String) async throws -> Int {
    let r = try await offThePool { try runProgram(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                            "-of", "csv=p=0", path]) }
    guard let n = Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw TestFailure(description: "ffprobe said \(r.stdout)") }
    return n
}

func makeWorkDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-coord-agent-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

let agentCaps = AgentCapabilities(threads: 1, encoders: ["libx264", "aac"], cacheBytes: 1 << 20, host: "localhost")

/// Expects `body` to fail with `ERR code`.
func expectRefusal(_ code: ReelProtocolError.Code, sourceLocation: SourceLocation = #_sourceLocation,
                   _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected ERR \(code)", sourceLocation: sourceLocation)
    } catch let error as ReelProtocolError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected ERR \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
