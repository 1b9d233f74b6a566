import Foundation
import Logging
import NIOCore
import ReelAgent
import ReelCoordinator
import ReelCore
import ReelMedia
import ReelProtocol
import ReelStore
import ServiceLifecycle

/// `reel render`'s all-in-one mode: the real farm on this machine. A PostgreSQL (the one
/// given, or a private cluster under the user's data directory, started or reused), a
/// coordinator on a loopback port, `agents` agents talking to it over TCP with a fresh
/// secret, and the operator client submitting, following and fetching the job — the same code
/// paths a distributed farm runs, so the one-command render exercises them.
struct AllInOneRender {
    var composition: String
    var output: String
    /// The container, from the composition or the output name (`OutputContainer`).
    var fileType: FileType
    var agents: Int
    var chunkSeconds: Rational
    var encoderThreads: Int
    var database: String?
    var quiet: Bool

    /// Where the all-in-one farm keeps its files: storage (assets, results, outputs) and the
    /// agents' caches. Content-addressed, so repeated renders of the same media upload nothing.
    static var dataHome: URL {
        if geteuid() == 0 { return URL(fileURLWithPath: "/var/lib/reel") }
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.local/share")
        return URL(fileURLWithPath: base).appendingPathComponent("reel")
    }

    func run() async throws {
        // Every problem listed before anything starts.
        _ = try CompositionLoader.load(path: composition)
        let conninfo: String
        if let database {
            conninfo = database
        } else {
            do { conninfo = try PrivateCluster(dataDirectory: Self.dataHome.appendingPathComponent("postgres").path).start() } catch {
                throw UserError("\(error) — or point reel render at a database with --database/DATABASE_URL, or use --in-process")
            }
        }

        let home = Self.dataHome
        let secret = try Self.writeSecret(in: home)
        defer { unlink(secret) }
        var logger = Logger(label: "reel.render")
        logger.logLevel = .error

        var configuration = CoordinatorConfiguration()
        configuration.listen = HostPort(host: "127.0.0.1", port: 0)
        configuration.database = conninfo
        configuration.storageDirectory = home.appendingPathComponent("storage").path
        configuration.secretFile = secret
        configuration.defaultChunkSeconds = chunkSeconds
        let coordinator = Coordinator(configuration: configuration, logger: logger)

        let group = ServiceGroup(configuration: .init(services: [.init(service: coordinator)], logger: logger))
        let ended = ServiceEnd()
        let running = Task {
            do { try await group.run(); ended.record(nil) } catch { ended.record(error); throw error }
        }
        var agentServices: [ServiceGroup] = []
        var agentTasks: [Task<Void, Error>] = []
        defer {
            Task { [agentServices, group] in
                for g in agentServices { await g.triggerGracefulShutdown() }
                await group.triggerGracefulShutdown()
            }
        }

        try await Self.waitForListening(coordinator, ended: ended)
        guard let port = coordinator.localAddress?.port else { throw UserError("the coordinator did not start listening") }
        let authenticator = try Authenticator(secretFile: secret)
        for i in 0..<agents {
            let cache = home.appendingPathComponent("cache/local-agent-\(i + 1)")
            let agentConfiguration = AgentConfiguration(coordinatorHost: "127.0.0.1", coordinatorPort: port,
                                                        name: "local-\(i + 1)", cacheDirectory: cache,
                                                        encoders: EncoderCatalog.available, claimWaitSeconds: 1)
            let agent: Agent
            do { agent = try Agent(configuration: agentConfiguration, authenticator: authenticator, logger: logger) } catch {
                throw UserError("cannot start local agent \(i + 1): \(error) (is another reel render running?)")
            }
            let agentGroup = ServiceGroup(configuration: .init(services: [.init(service: agent)], logger: logger))
            agentServices.append(agentGroup)
            agentTasks.append(Task { try await agentGroup.run() })
        }

        let connection = try ConnectionOptions.parse(["--coordinator", "127.0.0.1:\(port)", "--secret-file", secret])
        let client = try await OperatorClient.connect(connection)
        try await Self.waitForAgents(agents, client: client)
        try await Self.cancelAbandonedJobs(client: client)

        let data = try Data(contentsOf: URL(fileURLWithPath: composition))
        guard let text = String(data: data, encoding: .utf8) else { throw UserError("the composition \(composition) is not UTF-8 text") }
        let parsed = try Composition.parse(Array(data))
        let manifest = try AssetManifest(composition: parsed, directory: URL(fileURLWithPath: composition).deletingLastPathComponent().path)
        let settings = JobSettings(chunkSeconds: chunkSeconds, encoderThreads: encoderThreads, name: URL(fileURLWithPath: composition).lastPathComponent,
                                   fileType: fileType)
        let job = try await SubmitCommand.submitAndUpload(SubmitRequest(composition: text, assets: manifest.entries, settings: settings),
                                                          manifest: manifest, client: client, quiet: quiet)
        let following = ReconnectingClient(client, options: connection)
        let final = try await JobWaiter(client: following, job: job, quiet: quiet).waitUntilFinished()
        guard final.state == "done" else {
            await following.close()
            throw UserError("the render failed: \(final.error ?? final.state)")
        }
        try await OutputDownload.run(job: job, to: output, via: following, quiet: true)
        await following.close()

        for g in agentServices { await g.triggerGracefulShutdown() }
        for t in agentTasks { _ = try? await t.value }
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        agentServices.removeAll()
        print("\(output): job \(job), \(final.frameCount) frames, \(final.tasks.total) tasks on \(agents) agent(s)")
    }

    /// A fresh random secret for this run, readable by this user only.
    static func writeSecret(in home: URL) throws -> String {
        let dir = home.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("secret-\(getpid())").path
        var bytes = [UInt8](repeating: 0, count: 32)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        let hex = Array(bytes.map { String(format: "%02x", $0) }.joined().utf8)
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

    static func waitForListening(_ coordinator: Coordinator, ended: ServiceEnd) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while coordinator.localAddress == nil {
            // The coordinator's start-up errors (database unreachable, …) end its service group.
            if let outcome = ended.outcome { throw UserError("the coordinator could not start: \(outcome.map { "\($0)" } ?? "it stopped")") }
            if ContinuousClock.now > deadline { throw UserError("the coordinator did not start within 60 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Plans use the agents online at submit time, so wait until all local agents are in.
    static func waitForAgents(_ count: Int, client: OperatorClient) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let online = try await client.agents().report.agents.filter { $0.state != "offline" }.count
            if online >= count { return }
            try await Task.sleep(for: .milliseconds(100))
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

/// Records how a service group ended, so a caller can poll for start-up failures.
final class ServiceEnd: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Error?? = nil
    func record(_ error: Error?) { lock.withLock { result = .some(error) } }
    /// nil while running; `.some(nil)` after a clean stop; `.some(error)` after a failure.
    var outcome: Error?? { lock.withLock { result } }
}
