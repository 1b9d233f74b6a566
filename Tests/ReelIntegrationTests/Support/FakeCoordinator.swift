import Crypto
import Foundation
import NIOCore
import NIOSSL
import ReelProtocol
import Synchronization

/// An in-process stand-in for `reel coordinator`: a real `ReelServer` (real handshake, real
/// framing) whose handler keeps jobs in memory and records every request, so client commands
/// can be checked byte for byte without PostgreSQL. Its state is behind a mutex because the
/// server calls the handler from several connections.
final class FakeCoordinator: ReelRequestHandler, Sendable {
    struct Put: Hashable { var sha256: String; var offset: Int64; var total: Int64; var count: Int }

    private struct State {
        /// Content hashes the coordinator holds (some before any upload).
        var held: Set<String>
        var partial: [String: [UInt8]] = [:]
        var puts: [Put] = []
        var submits: [SubmitRequest] = []
        var requests: [String] = []
        /// Jobs it knows; `submit` adds `nextJob`.
        var jobs: [Int64: JobStatus]
        var outputs: [Int64: [UInt8]]
        var nextJob: Int64
        var submittedAssets: [Int64: Set<String>] = [:]
        /// Errors to answer instead of the real reply: verb → (1-based occurrence → error).
        var injected: [String: [Int: ReelProtocolError]] = [:]
        var verbCounts: [String: Int] = [:]
        var outputOffsets: [Int64] = []
        var connections: [UInt64] = []
        /// How many more times a job whose assets are all held loses them before it "renders".
        var assetLosses: Int
    }

    private let state: Mutex<State>
    private let agentsReport: AgentsReport
    /// What a submitted job becomes once all its assets are held: its final state, error and output.
    private let outcome: (state: String, error: String?, output: [UInt8]?)?

    /// - Parameter assetLosses: how many times a job's stored sources go missing before it is
    ///   split into tasks, as on a coordinator whose storage lost them: the job is reported
    ///   `waiting_for_assets` with the coordinator's error and its sources are forgotten, until
    ///   they are `PUT` again.
    init(held: Set<String> = [], jobs: [JobStatus] = [], outputs: [Int64: [UInt8]] = [:],
         agents: AgentsReport = AgentsReport(agents: []), nextJob: Int64 = 42,
         outcome: (state: String, error: String?, output: [UInt8]?)? = nil, assetLosses: Int = 0) {
        self.outcome = outcome
        self.state = Mutex(State(held: held, jobs: Dictionary(uniqueKeysWithValues: jobs.map { ($0.id, $0) }), outputs: outputs,
                                 nextJob: nextJob, assetLosses: assetLosses))
        self.agentsReport = agents
    }

    /// Answers the `occurrence`-th `verb` (1-based, counted over all connections) with `error`
    /// instead — `internal` as a coordinator whose database is down, `shutting_down` (which
    /// also closes the connection) as one going away.
    func inject(_ error: ReelProtocolError, at verb: String, occurrence: Int) {
        state.withLock { $0.injected[verb, default: [:]][occurrence] = error }
    }

    /// The `offset` of every `OUTPUT` request, in order (injected failures included).
    var outputOffsets: [Int64] { state.withLock { $0.outputOffsets } }
    /// The connection of every request, in order.
    var requestConnections: [UInt64] { state.withLock { $0.connections } }
    var puts: [Put] { state.withLock { $0.puts } }
    var submits: [SubmitRequest] { state.withLock { $0.submits } }
    /// Verbs received, in order.
    var requests: [String] { state.withLock { $0.requests } }
    /// The complete, checksum-verified uploads: hash → bytes.
    func stored(_ hash: String) -> [UInt8]? { state.withLock { $0.held.contains(hash) ? $0.partial[hash] : nil } }

    func handle(_ request: Message, from peer: Peer) async throws -> Message {
        try state.withLock { s in
            s.requests.append(request.verb)
            s.connections.append(peer.connectionID)
            if case let .output(_, offset, _) = request { s.outputOffsets.append(offset) }
            s.verbCounts[request.verb, default: 0] += 1
            if let error = s.injected[request.verb]?[s.verbCounts[request.verb]!] { throw error }
            switch request {
            case let .submit(document):
                let submission = try JSONDecoder().decode(SubmitRequest.self, from: Data(document))
                s.submits.append(submission)
                let id = s.nextJob
                s.nextJob += 1
                s.jobs[id] = JobStatus(id: id, name: submission.settings.name ?? "", state: "waiting_for_assets", tasks: TaskCounts(),
                                     frameCount: 0, framesDone: 0, progress: 0, framesPerSecond: nil, etaSeconds: nil,
                                     submittedAtMillis: 0, updatedAtMillis: 0, outputBytes: nil, error: nil)
                s.submittedAssets[id] = Set(submission.assets.values.map(\.sha256))
                let missing = Set(submission.assets.values.map(\.sha256)).subtracting(s.held).sorted()
                return .job(id: id, missing: missing)
            case let .put(sha256, offset, total, bytes):
                s.puts.append(Put(sha256: sha256, offset: offset, total: total, count: bytes.count))
                // Held already: answered complete at once, as the coordinator does.
                if s.held.contains(sha256) { return .stored(sha256: sha256, have: total, total: total) }
                var have = s.partial[sha256] ?? []
                guard Int64(have.count) == offset, offset + Int64(bytes.count) <= total else {
                    throw ReelProtocolError(.badRange, "offset \(offset) but \(have.count) bytes held")
                }
                have += bytes
                s.partial[sha256] = have
                if Int64(have.count) == total {
                    let digest = SHA256.hash(data: have).map { String(format: "%02x", $0) }.joined()
                    guard digest == sha256 else {
                        s.partial[sha256] = nil
                        throw ReelProtocolError(.checksumMismatch, "asset \(sha256) has SHA-256 \(digest)")
                    }
                    s.held.insert(sha256)
                }
                return .stored(sha256: sha256, have: Int64(have.count), total: total)
            case let .status(job, _):
                if let job {
                    if s.assetLosses > 0, let assets = s.submittedAssets[job], assets.isSubset(of: s.held), s.jobs[job]?.state == "waiting_for_assets" {
                        // Splitting the job finds its stored sources gone: it waits for them again.
                        s.assetLosses -= 1
                        s.held.subtract(assets)
                        for hash in assets { s.partial[hash] = nil }
                        s.jobs[job]?.error = "stored asset clip (sha256 \(assets.sorted()[0].prefix(12))…: missing) is missing or damaged "
                            + "in the coordinator's storage; submit the job again to re-upload it"
                        return .report(json: try Self.json(StatusReport(jobs: [s.jobs[job]!])))
                    }
                    if let outcome, let assets = s.submittedAssets[job], assets.isSubset(of: s.held), s.jobs[job]?.state == "waiting_for_assets" {
                        // A job "renders" in one step once its assets are in: enough to drive `submit --wait`.
                        s.jobs[job]?.state = outcome.state
                        s.jobs[job]?.error = outcome.error
                        s.jobs[job]?.frameCount = 25
                        s.jobs[job]?.framesDone = outcome.state == "done" ? 25 : 0
                        s.jobs[job]?.progress = outcome.state == "done" ? 1 : 0
                        if let output = outcome.output { s.outputs[job] = output; s.jobs[job]?.outputBytes = Int64(output.count) }
                    }
                    guard let status = s.jobs[job] else { throw ReelProtocolError(.notFound, "job \(job) not found") }
                    return .report(json: try Self.json(StatusReport(jobs: [status])))
                }
                return .report(json: try Self.json(StatusReport(jobs: s.jobs.values.sorted { $0.id > $1.id })))
            case .agents:
                return .report(json: try Self.json(agentsReport))
            case let .cancel(job), let .retry(job):
                guard let status = s.jobs[job] else { throw ReelProtocolError(.notFound, "job \(job) not found") }
                if case .cancel = request, ["done", "failed", "cancelled"].contains(status.state) {
                    throw ReelProtocolError(.conflict, "job \(job) is already \(status.state)")
                }
                return .ok
            case let .pause(job), let .resume(job):
                guard let status = s.jobs[job] else { throw ReelProtocolError(.notFound, "job \(job) not found") }
                if ["done", "failed", "cancelled"].contains(status.state) { throw ReelProtocolError(.conflict, "job \(job) is already \(status.state)") }
                if case .pause = request { s.jobs[job]?.paused = true } else { s.jobs[job]?.paused = false }
                return .ok
            case let .priority(job, priority):
                guard s.jobs[job] != nil else { throw ReelProtocolError(.notFound, "job \(job) not found") }
                s.jobs[job]?.priority = priority
                return .ok
            case let .events(job, after):
                guard s.jobs[job] != nil else { throw ReelProtocolError(.notFound, "job \(job) not found") }
                // 501 events, so the client must ask for a second page.
                let events = (1...Int64(EventsReport.pageSize + 1)).map { id in
                    JobEvent(id: id, atMillis: 1_763_780_000_000 + id, kind: id == 1 ? "submitted" : "claimed", message: id == 1 ? "" : "epoch 1, attempt 1",
                             task: id == 1 ? nil : 100 + id, taskLabel: id == 1 ? nil : "chunk \(id - 2) frames [0, 10)",
                             agent: id == 1 ? nil : "render-01")
                }.filter { $0.id > after }
                return .report(json: try Self.json(EventsReport(job: job, events: Array(events.prefix(EventsReport.pageSize)))))
            case let .output(job, offset, length):
                guard s.jobs[job] != nil else { throw ReelProtocolError(.notFound, "job \(job) not found") }
                guard let bytes = s.outputs[job] else { throw ReelProtocolError(.notReady, "job \(job) has no output yet") }
                guard offset <= bytes.count else { throw ReelProtocolError(.badRange, "offset \(offset) beyond \(bytes.count)") }
                let end = min(bytes.count, Int(offset + length))
                return .data(offset: offset, total: Int64(bytes.count), bytes: Array(bytes[Int(offset)..<end]))
            case .assetURL, .assetDone, .assetParts, .outputURL:
                // A coordinator on a local directory: no presigned URLs (proto/PROTOCOL.md §4.5).
                throw ReelProtocolError(.noDirect, "the fake coordinator stores in a local directory")
            default:
                throw ReelProtocolError(.forbidden, "the fake coordinator does not handle \(request.verb)")
            }
        }
    }

    static func json<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(value))
    }
}

/// A running fake coordinator on 127.0.0.1 with a fresh secret file.
struct FakeFarm {
    let server: ReelServer
    let handler: FakeCoordinator
    let address: String
    let secretFile: String

    static func start(_ handler: FakeCoordinator, in dir: URL, tls: NIOSSLContext? = nil) async throws -> FakeFarm {
        let secret = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let secretFile = dir.appendingPathComponent("secret").path
        try (secret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
        chmod(secretFile, 0o600) // secret files must be private
        let server = try await ReelServer.start(configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0, tls: tls),
                                                authenticator: try Authenticator(secretFile: secretFile), handler: handler)
        return FakeFarm(server: server, handler: handler, address: "127.0.0.1:\(server.localAddress!.port!)", secretFile: secretFile)
    }

    /// `--coordinator … --secret-file …`.
    var connectionArguments: [String] { ["--coordinator", address, "--secret-file", secretFile] }

    func stop() async { try? await server.close() }
}

/// Runs the `reel` binary without blocking Swift's cooperative pool (the fake coordinator's
/// handlers run there): posix_spawn and waitpid on a dedicated thread, output in files (not
/// pipes), killed after `timeout` seconds.
enum ReelRun {
    struct Result: Sendable { var status: Int32; var stdout: String; var stderr: String }

    /// Runs `reel arguments` until it exits, or kills it (status -2) after `timeout` seconds or
    /// as soon as `stopWhen` holds of its output so far (stdout, stderr): a command that runs
    /// until interrupted is stopped when it has shown what the test waits for, however slow
    /// the machine.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 120,
                    stopWhen: (@Sendable (_ stdout: String, _ stderr: String) -> Bool)? = nil) async -> Result {
        await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: runBlocking(arguments, environment: environment, timeout: timeout, stopWhen: stopWhen))
            }.start()
        }
    }

    private static func runBlocking(_ arguments: [String], environment: [String: String], timeout: Double,
                                    stopWhen: ((String, String) -> Bool)?) -> Result {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-client-run-\(UUID().uuidString)").path
        let outPath = base + ".out", errPath = base + ".err"
        defer { unlink(outPath); unlink(errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // The farm's variables are cleared so the developer's own farm never leaks into a test.
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REEL_") }
        env.merge(environment) { $1 }
        let argv: [UnsafeMutablePointer<CChar>?] = ([Media.reel] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, Media.reel, &actions, nil, argv, envp) == 0 else {
            return Result(status: -1, stdout: "", stderr: "posix_spawn \(Media.reel) failed")
        }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        var killed: String?
        func output() -> (String, String) {
            ((try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "", (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
        }
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r == -1 && errno != EINTR { break }
            if killed == nil {
                if Date() > deadline {
                    kill(pid, SIGKILL); killed = "killed after \(timeout) s"
                } else if let stopWhen, case let (out, err) = output(), stopWhen(out, err) {
                    kill(pid, SIGKILL); killed = "stopped by the test"
                }
            }
            usleep(20_000)
        }
        let exit: Int32 = killed != nil ? -2 : ((status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1)
        let (out, err) = output()
        return Result(status: exit, stdout: out, stderr: killed.map { err + "\n(\($0))" } ?? err)
    }
}
