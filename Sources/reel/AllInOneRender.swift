import Foundation
import Logging
import NIOCore
import ReelAgent
import ReelCoordinator
import ReelCore
import ReelMedia
import ReelProtocol
import ReelStore
import ReelScheduling
import ServiceLifecycle
import Synchronization

/// `reel render`'s all-in-one mode: the real farm on this machine. A PostgreSQL (the one
/// given, or a private cluster under the user's data directory, started or reused), a
/// coordinator on a loopback port, `agents` agents talking to it over TCP with a fresh
/// secret, and the operator client submitting, following and fetching the job — the same code
/// paths a distributed farm runs, so the one-command render exercises them.
struct AllInOneRender {
    var input: CompositionInput
    var output: String
    /// The container, from the composition or the output name (`OutputContainer`).
    var fileType: FileType
    var agents: Int
    var chunkSeconds: Rational
    var encoderThreads: Int
    /// Render every chunk anew (`--no-cache`) instead of reusing identical ones rendered before.
    var noCache = false
    var database: String?
    var quiet: Bool

    /// Where the all-in-one farm keeps its files: the private cluster, storage (assets, results,
    /// outputs) and the agents' caches. Content-addressed, so repeated renders of the same media
    /// upload nothing. `REEL_DATA_HOME` chooses another place (as root too).
    static var dataHome: URL {
        let env = ProcessInfo.processInfo.environment
        if let chosen = env["REEL_DATA_HOME"], !chosen.isEmpty { return URL(fileURLWithPath: chosen) }
        if geteuid() == 0 { return URL(fileURLWithPath: "/var/lib/reel") }
        let base = env["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.local/share")
        return URL(fileURLWithPath: base).appendingPathComponent("reel")
    }

    /// Renders; on Ctrl-C or SIGTERM (`Interruption`) the job is cancelled and deleted, the farm
    /// stopped, a private cluster this run started stopped again, and every folder this run
    /// created under the data home removed, before `InterruptedError` is thrown.
    func run() async throws {
        // Every problem listed before anything starts.
        _ = try input.plan(outputFileType: fileType)
        let farm = LocalFarm(home: Self.dataHome)
        farm.noteOutput(output)
        let work = Task { try await self.render(on: farm) }
        Interruption.shared.whenInterrupted { work.cancel() }
        let outcome = await work.result
        // Torn down here, outside the cancelled task, so its requests and waits are not cut short.
        let interrupted = Interruption.shared.isInterrupted
        await farm.tearDown(interrupted: interrupted)
        if interrupted { throw InterruptedError() }
        try outcome.get()
    }

    private func render(on farm: LocalFarm) async throws {
        let (client, connection) = try await farm.start(agents: agents, chunkSeconds: chunkSeconds, database: database,
                                                        databaseHint: "or point reel render at a database with --database/DATABASE_URL, or use --in-process")

        let text = input.text
        let manifest = try AssetManifest(composition: input.composition, directory: input.directory)
        let settings = JobSettings(chunkSeconds: chunkSeconds, encoderThreads: encoderThreads, name: input.name,
                                   fileType: fileType, noCache: noCache ? true : nil)
        let job = try await SubmitCommand.submitAndUpload(SubmitRequest(composition: text, assets: manifest.entries, settings: settings),
                                                          manifest: manifest, client: client, quiet: quiet) { farm.job = $0 }
        let following = ReconnectingClient(client, options: connection)
        let final: JobStatus
        do {
            final = try await JobWaiter(client: following, job: job, quiet: quiet, reuploadAssets: {
                try await following.perform { try await SubmitCommand.upload(manifest, hashes: manifest.files.keys.sorted(), client: $0, quiet: true) }
            }).waitUntilFinished()
            guard final.state == "done" else {
                throw UserError("the render failed: \(final.error ?? final.state)")
            }
            try await OutputDownload.run(job: job, to: output, via: following, quiet: true)
        } catch {
            await following.close()
            throw error
        }
        await following.close()
        try Task.checkCancellation()
        if let warning = ClientFormatting.loudnessWarning(final) { Terminal.error(warning) }
        farm.finished = "\(output): job \(job), \(final.frameCount) frames, \(ClientFormatting.reuse(final.tasks)) on \(agents) agent(s)"
    }

    /// A fresh random secret for this run, readable by this user only.
    static func writeSecret(in home: URL) throws -> String {
        let dir = home.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("secret-\(getpid())").path
        var bytes = [UInt8](repeating: 0, count: 32)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        let hex = Array(FileDigest.hex(bytes).utf8)
        // Created 0600 by open(2) itself — never briefly readable by others, and private
        // enough for the secret-file check (`SecretFileError`). A leftover of an earlier run
        // with this pid is replaced.
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw UserError("cannot write a secret file under \(dir.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0, hex.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == hex.count else {
            throw UserError("cannot write a secret file under \(dir.path): \(String(cString: strerror(errno)))")
        }
        return path
    }

    /// Plans use the agents online at submit time, so wait until all local agents are in
    /// (they connect within milliseconds: asked often, on loopback).
    static func waitForAgents(_ count: Int, client: OperatorClient) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let online = try await client.agents().report.agents.filter { $0.state != "offline" }.count
            if online >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw UserError("the local agents did not connect within 30 s")
    }

    /// The private cluster belongs to `reel render`: a render interrupted earlier left its job
    /// behind, and the coordinator would carry on with it first. Cancel such leftovers.
    static func cancelAbandonedJobs(client: OperatorClient) async throws {
        for job in try await client.status().report.jobs where !ClientFormatting.finishedStates.contains(job.state) {
            try? await client.cancel(job: job.id)
        }
    }
}

/// What one `reel render` started and created, so that it can be stopped — and, after Ctrl-C,
/// taken away — whatever point the render reached. Filled in by the render task, torn down by
/// `run()` after that task ended.
final class LocalFarm: Sendable {
    private struct State {
        var created: [URL] = []
        var cluster: (cluster: PrivateCluster, wasRunning: Bool)?
        var secret: String?
        var coordinator: (group: ServiceGroup, task: Task<Void, Error>)?
        var agents: [(group: ServiceGroup, task: Task<Void, Error>)] = []
        var connection: ConnectionOptions?
        /// Jobs submitted and not yet ended: cancelled and deleted after an interruption.
        var jobs: [Int64] = []
        var finished: String?
        var output: (path: String, existed: Bool)?
    }

    let home: URL
    private let state = Mutex(State())

    init(home: URL) { self.home = home }

    var secret: String? { get { state.withLock { $0.secret } } set { state.withLock { $0.secret = newValue } } }
    var coordinator: (group: ServiceGroup, task: Task<Void, Error>)? {
        get { state.withLock { $0.coordinator } } set { state.withLock { $0.coordinator = newValue } }
    }
    var agents: [(group: ServiceGroup, task: Task<Void, Error>)] {
        get { state.withLock { $0.agents } } set { state.withLock { $0.agents = newValue } }
    }
    var connection: ConnectionOptions? { get { state.withLock { $0.connection } } set { state.withLock { $0.connection = newValue } } }
    /// The job `reel render` submitted (the last noted).
    var job: Int64? {
        get { state.withLock { $0.jobs.last } }
        set { state.withLock { $0.jobs = newValue.map { [$0] } ?? [] } }
    }
    /// Notes a job submitted (`reel batch` has several in flight).
    func noteJob(_ id: Int64) { state.withLock { if !$0.jobs.contains(id) { $0.jobs.append(id) } } }
    /// A job that ended and whose output was taken: an interruption leaves it alone.
    func noteJobEnded(_ id: Int64) { state.withLock { $0.jobs.removeAll { $0 == id } } }
    /// The jobs noted and not ended.
    var jobs: [Int64] { state.withLock { $0.jobs } }
    /// The summary line of a render that completed.
    var finished: String? { get { state.withLock { $0.finished } } set { state.withLock { $0.finished = newValue } } }

    /// The output file, noted before the render starts.
    func noteOutput(_ path: String) {
        let existed = FileManager.default.fileExists(atPath: path)
        state.withLock { $0.output = (path, existed) }
    }

    /// Called before a folder may be created: if it does not exist yet (nor its missing
    /// parents), the topmost missing one is what an interrupted render removes.
    func noteCreation(of folder: URL) {
        var topmostMissing: URL?
        var candidate = folder.standardizedFileURL
        while !FileManager.default.fileExists(atPath: candidate.path) {
            topmostMissing = candidate
            let parent = candidate.deletingLastPathComponent()
            if parent.path == candidate.path { break }
            candidate = parent
        }
        guard let topmostMissing else { return }
        state.withLock { state in
            if !state.created.contains(where: { topmostMissing.path == $0.path || topmostMissing.path.hasPrefix($0.path + "/") }) {
                state.created.append(topmostMissing)
            }
        }
    }

    /// The private cluster about to be started, and whether it ran before (then it is left running).
    func noteCluster(_ cluster: PrivateCluster) {
        noteCreation(of: URL(fileURLWithPath: cluster.dataDirectory))
        let running = Self.postmasterRunning(in: cluster.dataDirectory)
        state.withLock { $0.cluster = (cluster, running) }
    }

    /// A live postmaster's pid file in the data directory.
    static func postmasterRunning(in dataDirectory: String) -> Bool {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
              let first = text.split(separator: "\n").first, let pid = pid_t(first.trimmingCharacters(in: .whitespaces)), pid > 0 else {
            return false
        }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Stops what runs. After an interruption first cancels and deletes the jobs noted (their
    /// chunks and outputs go with them), then stops the private cluster if this run started it and
    /// removes what this run created.
    func tearDown(interrupted: Bool) async {
        let jobs = self.jobs
        if interrupted, !jobs.isEmpty, let connection {
            do {
                let client = try await OperatorClient.connect(connection)
                for job in jobs { try? await client.cancel(job: job) }
                // Agents stop before the delete, so no late upload recreates a result.
                await stopAgents()
                for job in jobs { try? await client.delete(job: job) }
                await client.close()
            } catch {
                Terminal.error("could not cancel job \(jobs.map(String.init).joined(separator: ", ")): \(error)")
            }
        }
        // After a finished render nothing is in flight: the coordinator's drain answers the
        // agents' waiting claims at once, so both stop together instead of the agents first
        // waiting out their claim's long poll.
        if !interrupted, let coordinator { await coordinator.group.triggerGracefulShutdown() }
        await stopAgents()
        if let coordinator {
            await coordinator.group.triggerGracefulShutdown()
            await Self.wait(for: coordinator.task, upTo: .seconds(30))
            self.coordinator = nil
        }
        if let secret { unlink(secret) }
        if let finished, !interrupted { print(finished) }
        guard interrupted else { return }
        if let started = state.withLock({ $0.cluster }), !started.wasRunning {
            do { try started.cluster.stop() } catch { Terminal.error("\(error)") }
        }
        // Interrupted once the output was written (the download renames it into place as its
        // last step, so this may be before the render noted that it finished): it goes too,
        // unless it replaced a file.
        if let output = state.withLock({ $0.output }), !output.existed { unlink(output.path) }
        for folder in state.withLock({ $0.created }).reversed() {
            do { try FileManager.default.removeItem(at: folder) } catch {
                if FileManager.default.fileExists(atPath: folder.path) { Terminal.error("could not remove \(folder.path): \(error)") }
            }
        }
    }

    private func stopAgents() async {
        let agents = self.agents
        self.agents = []
        for agent in agents { await agent.group.triggerGracefulShutdown() }
        for agent in agents { await Self.wait(for: agent.task, upTo: .seconds(30)) }
    }

    /// Awaits `task`, cancelling it if it has not ended within `limit`.
    static func wait(for task: Task<Void, Error>, upTo limit: Duration) async {
        let watchdog = Task {
            try await Task.sleep(for: limit)
            task.cancel()
        }
        _ = await task.result
        watchdog.cancel()
    }
}

extension LocalFarm {
    /// Starts the farm on this machine, as `reel render` and `reel batch` run it: the
    /// database (`database`, else the private cluster under the data home, started or reused),
    /// a coordinator on a loopback port with a fresh secret, and `agents` agents; waits for the
    /// agents and cancels jobs an interrupted earlier run left. Everything started is noted
    /// here, for `tearDown`. `databaseHint`: what to say when the private cluster cannot start.
    /// - Returns: a connected client, and the options to connect more.
    func start(agents: Int, chunkSeconds: Rational, database: String?,
               databaseHint: String) async throws -> (client: OperatorClient, connection: ConnectionOptions) {
        let farm = self
        let home = farm.home
        farm.noteCreation(of: home)
        let conninfo: String
        if let database {
            conninfo = database
        } else {
            let cluster = PrivateCluster(dataDirectory: home.appendingPathComponent("postgres").path)
            farm.noteCluster(cluster)
            do { conninfo = try cluster.start() } catch {
                throw UserError("\(error) — \(databaseHint)")
            }
        }
        try Task.checkCancellation()

        farm.noteCreation(of: home.appendingPathComponent("run"))
        let secret = try AllInOneRender.writeSecret(in: home)
        farm.secret = secret
        var logger = Logger(label: "reel.render")
        logger.logLevel = .error

        var configuration = CoordinatorConfiguration()
        configuration.listen = HostPort(host: "127.0.0.1", port: 0)
        configuration.database = conninfo
        configuration.storageDirectory = home.appendingPathComponent("storage").path
        farm.noteCreation(of: home.appendingPathComponent("storage"))
        configuration.secretFile = secret
        configuration.defaultChunkSeconds = chunkSeconds
        let coordinator: Coordinator
        do {
            coordinator = try await Coordinator(configuration: configuration, logger: logger)
        } catch {
            throw UserError("the coordinator could not start: \(error)")
        }
        let group = coordinator.serviceGroup()
        farm.coordinator = (group, Task { try await group.run() })
        guard let port = coordinator.localAddress?.port else { throw UserError("the coordinator did not start listening") }
        let connection = try ConnectionOptions.parse(["--coordinator", "127.0.0.1:\(port)", "--secret-file", secret])
        farm.connection = connection
        let authenticator = try Authenticator(secretFile: secret)
        farm.noteCreation(of: home.appendingPathComponent("cache"))
        for i in 0..<agents {
            let cache = home.appendingPathComponent("cache/local-agent-\(i + 1)")
            farm.noteCreation(of: cache)
            // A short grace period: at the end no task is in flight; after Ctrl-C the job is
            // cancelled and the chunk being rendered is worth nothing.
            let agentConfiguration = AgentConfiguration(coordinatorHost: "127.0.0.1", coordinatorPort: port,
                                                        name: "local-\(i + 1)", cacheDirectory: cache,
                                                        encoders: EncoderCatalog.available, claimWaitSeconds: 1,
                                                        shutdownGracePeriod: .seconds(2))
            let agent: Agent
            do { agent = try Agent(configuration: agentConfiguration, authenticator: authenticator, logger: logger) } catch {
                throw UserError("cannot start local agent \(i + 1): \(error) (is another reel render running?)")
            }
            let agentGroup = ServiceGroup(configuration: .init(services: [.init(service: agent)], logger: logger))
            farm.agents.append((agentGroup, Task { try await agentGroup.run() }))
        }

        let client = try await OperatorClient.connect(connection)
        try await AllInOneRender.waitForAgents(agents, client: client)
        try await AllInOneRender.cancelAbandonedJobs(client: client)
        return (client, connection)
    }
}
