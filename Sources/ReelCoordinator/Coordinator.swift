import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ReelConsole
import ReelCore
import ReelMedia
import ReelProtocol
import ReelStore
import ServiceLifecycle
import Synchronization

/// Errors that stop a coordinator from starting, worded for operators.
public struct CoordinatorStartupError: Error, CustomStringConvertible {
    public var description: String
}

private struct BoundAddresses {
    var server: SocketAddress?
    var metrics: SocketAddress?
    var http: SocketAddress?
}

/// The farm's coordinator (ops/README.md, proto/PROTOCOL.md) as a swift-service-lifecycle `Service`.
///
/// `run()` migrates the database, listens for agents and clients (`reel/1`), and runs the
/// lease reaper/planner loop and the finaliser loop until graceful shutdown (SIGTERM via a
/// `ServiceGroup`, or `triggerGracefulShutdown()` in tests) or task cancellation; then it stops
/// accepting, answers pending `CLAIM`s with `NONE`, lets in-flight requests finish (up to
/// `drainTimeout`) and returns. All state is in PostgreSQL and the storage directory, so a new
/// coordinator on the same database and storage simply continues (old leases expire).
public final class Coordinator: Service, Sendable {
    public let configuration: CoordinatorConfiguration
    public let metrics: CoordinatorMetrics
    private let logger: Logger
    private let group: any EventLoopGroup
    private let addresses = Mutex(BoundAddresses())
    private let started = Mutex<[CheckedContinuation<Void, Never>]?>([])
    private let dispatcher = Mutex<Dispatcher?>(nil)
    private let jobWatchers = Mutex<JobWatchers?>(nil)

    public init(configuration: CoordinatorConfiguration, logger: Logger = Logger(label: "reel.coordinator"),
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.metrics = CoordinatorMetrics()
        self.logger = logger
        self.group = group
    }

    /// The bound protocol address once listening (useful with port 0).
    public var localAddress: SocketAddress? { addresses.withLock { $0.server } }
    /// `CLAIM`s waiting for a task right now (tests, metrics).
    public var waitingClaims: Int { dispatcher.withLock { $0 }?.waitingCount ?? 0 }
    /// Jobs a `STATUS job= wait=` is waiting on right now (tests).
    public var followedJobs: Set<Int64> { jobWatchers.withLock { $0 }?.followedJobs ?? [] }
    /// The bound `/metrics` address, when metrics are served.
    public var metricsAddress: SocketAddress? { addresses.withLock { $0.metrics } }
    /// The bound console address (`--http`), when the console is served.
    public var httpAddress: SocketAddress? { addresses.withLock { $0.http } }

    /// Returns once the coordinator listens (or has failed to start / stopped).
    public func waitUntilListening() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = started.withLock { waiters -> Bool in
                guard waiters != nil else { return true }
                waiters!.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func markStarted() {
        for waiter in started.withLock({ waiters -> [CheckedContinuation<Void, Never>] in
            defer { waiters = nil }
            return waiters ?? []
        }) { waiter.resume() }
    }

    public func run() async throws {
        defer { markStarted() }
        let configuration = configuration
        let authenticator: Authenticator
        do {
            authenticator = try Authenticator(secretFile: configuration.secretFile)
        } catch let error as SecretFileError {
            throw CoordinatorStartupError(description: error.description)
        } catch {
            throw CoordinatorStartupError(description: "secret file \(configuration.secretFile): \((error as? ReelProtocolError)?.message ?? "\(error)")")
        }
        let storage = CoordinatorStorage(root: configuration.storageDirectory)
        try storage.prepare()
        let (pool, worker): (StorePool, StoreWorker)
        do {
            pool = try StorePool(conninfo: configuration.database, count: configuration.storeConnections, clock: configuration.clock)
            worker = try StoreWorker(conninfo: configuration.database, label: "loops", clock: configuration.clock)
        } catch {
            throw CoordinatorStartupError(description: "cannot connect to PostgreSQL at \(Self.redacted(configuration.database)): \(error)")
        }
        let applied = try await worker.run { try Migrator.migrate($0.connection) }
        if !applied.isEmpty { logger.info("database migrated", metadata: ["versions": "\(applied)"]) }
        let finaliserName = configuration.finaliserAgentName
        let finaliserAgent = try await worker.run {
            try $0.registerAgent(name: finaliserName, host: ProcessInfo.processInfo.hostName, capabilities: "{}")
        }

        let sessions = AgentSessions()
        let finaliserBell = Doorbell()
        let dispatcher = Dispatcher(worker: try StoreWorker(conninfo: configuration.database, label: "dispatch", clock: configuration.clock),
                                    leaseSeconds: configuration.leaseSeconds, logger: logger,
                                    agents: sessions)
        self.dispatcher.withLock { $0 = dispatcher }
        let jobWatchers = JobWatchers()
        self.jobWatchers.withLock { $0 = jobWatchers }
        let planner = JobPlanner(pool: pool, storage: storage, configuration: configuration, logger: logger, dispatcher: dispatcher,
                                 jobWatchers: jobWatchers)
        let handler = CoordinatorHandler(pool: pool, storage: storage, planner: planner, metrics: metrics,
                                         configuration: configuration, logger: logger, dispatcher: dispatcher,
                                         completer: Completer(worker: try StoreWorker(conninfo: configuration.database, label: "results", clock: configuration.clock),
                                                              logger: logger, onJobRendered: { finaliserBell.ring() }),
                                         sessions: sessions, jobWatchers: jobWatchers)
        let tls = try makeTLSConfiguration()
        let server = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: configuration.listen.host, port: configuration.listen.port,
                                                   tls: try tls.map { try NIOSSLContext(configuration: $0) }),
            authenticator: authenticator, handler: handler, group: group)
        var metricsServer: MetricsServer?
        if let address = configuration.metrics {
            metricsServer = try await MetricsServer.start(at: address, metrics: metrics, group: group)
        }
        var console: ConsoleServer?
        if let address = configuration.http {
            do {
                console = try await ConsoleServer.start(host: address.host, port: address.port, tls: tls,
                                                        backend: CoordinatorConsoleBackend(handler: handler, metrics: metrics),
                                                        authenticator: authenticator, logger: logger)
            } catch {
                try? await server.close()
                await metricsServer?.close()
                throw CoordinatorStartupError(description: "\(error)")
            }
            logger.info("console listening", metadata: ["address": "\(console?.localAddress.map { "\($0)" } ?? "?")"])
        }
        addresses.withLock {
            $0 = BoundAddresses(server: server.localAddress, metrics: metricsServer?.localAddress, http: console?.localAddress)
        }
        logger.info("coordinator listening", metadata: ["address": "\(server.localAddress.map { "\($0)" } ?? "?")",
                                                        "storage": "\(storage.root)", "lease": "\(configuration.leaseSeconds)s"])
        markStarted()

        let finaliser = FinaliserLoop(worker: worker, storage: storage, agent: finaliserAgent, configuration: configuration, logger: logger,
                                      bell: finaliserBell, jobWatchers: jobWatchers)
        // Its own connection: a sweep over a large storage directory must not delay lease expiry.
        let sweeper = StorageSweeper(worker: try StoreWorker(conninfo: configuration.database, label: "sweep", clock: configuration.clock), storage: storage,
                                     configuration: configuration, logger: logger, now: { StorageSweeper.wallClockMillis() })
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.reaperLoop(worker: worker, planner: planner, dispatcher: dispatcher, jobWatchers: jobWatchers) }
            group.addTask {
                // Claim deadlines are kept here, not in the database: a cheap local timer.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(100))
                    dispatcher.expireDeadlines()
                }
            }
            group.addTask { await finaliser.run() }
            group.addTask { await sweeper.run() }
            // Whichever comes first: graceful shutdown or cancellation of `run()`.
            try? await gracefulShutdown()
            dispatcher.drain()
            jobWatchers.drain()
            logger.info("coordinator draining")
            await self.drain(server)
            group.cancelAll()
        }
        await console?.close()
        await metricsServer?.close()
        logger.info("coordinator stopped")
    }

    /// Quiesces the server: pending CLAIMs answer `NONE` at once (`Dispatcher.drain`),
    /// idle connections get `ERR shutting_down`; after `drainTimeout` the listener is closed regardless.
    private func drain(_ server: ReelServer) async {
        let timeout = configuration.drainTimeout
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await server.shutdown() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        try? await server.close()
    }

    /// Every `reaperInterval`: expire leases (then wake the dispatcher), plan jobs whose assets arrived (or whose planning a
    /// restart interrupted), refresh the state gauges.
    private func reaperLoop(worker: StoreWorker, planner: JobPlanner, dispatcher: Dispatcher, jobWatchers: JobWatchers) async {
        // The state gauges count every task row (a scan that grows with the farm's history):
        // refreshed every 10 s, not every pass.
        var gaugesRefreshed = ContinuousClock.now - .seconds(3600)
        while !Task.isCancelled {
            do {
                let expired = try await worker.run { try $0.expireLeases() }
                // Also the safety net for a wake nobody sent (cheap when no claim waits).
                dispatcher.wake()
                if !expired.isEmpty {
                    metrics.leaseExpiries.increment(by: Int64(expired.count))
                    for lease in expired {
                        if lease.newState == .failed { jobWatchers.jobMayHaveEnded(lease.jobID) }
                        logger.warning("lease expired", metadata: ["task": "\(lease.task)", "job": "\(lease.jobID)", "epoch": "\(lease.epoch)",
                                                                   "now": "\(lease.newState.rawValue)"])
                    }
                }
                await planner.planPendingJobs()
                if ContinuousClock.now - gaugesRefreshed >= .seconds(10) {
                    let counts = try await worker.run { try $0.stateCounts() }
                    metrics.updateStates(jobs: counts.jobs, tasks: counts.tasks)
                    gaugesRefreshed = .now
                }
            } catch {
                logger.error("reaper pass failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: configuration.reaperInterval)
        }
    }

    /// The server TLS configuration of both listeners (line protocol and console), if TLS is on.
    private func makeTLSConfiguration() throws -> TLSConfiguration? {
        guard let certificate = configuration.tlsCertificateFile, let key = configuration.tlsKeyFile else { return nil }
        do {
            let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
            let tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            // Fail here, with the file names, rather than at the first connection.
            _ = try NIOSSLContext(configuration: tls)
            return tls
        } catch {
            throw CoordinatorStartupError(description: "cannot load the TLS certificate \(certificate) / key \(key): \(error)")
        }
    }

    /// A conninfo for messages: a URL's password or a `password=` entry removed.
    public static func redacted(_ conninfo: String) -> String {
        if conninfo.isEmpty { return "the PG* environment defaults (PGHOST=\(ProcessInfo.processInfo.environment["PGHOST"] ?? "unset"))" }
        if conninfo.contains("://"), var components = URLComponents(string: conninfo) {
            if components.password != nil { components.password = "***" }
            return components.string ?? "(unparseable URL)"
        }
        return conninfo.split(separator: " ").map { $0.hasPrefix("password=") ? "password=***" : String($0) }.joined(separator: " ")
    }
}
