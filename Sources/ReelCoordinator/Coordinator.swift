import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ReelConsole
import ReelCore
import ReelProtocol
import ReelStore
import ReelScheduling
import ServiceLifecycle
import Synchronization

/// Errors that stop a coordinator from starting, worded for operators.
public struct CoordinatorStartupError: Error, CustomStringConvertible {
    public var description: String
}

/// The farm's coordinator (docs/farm.md, proto/PROTOCOL.md): prepared and bound by `init`,
/// then run as `services` in one `ServiceGroup` (`reel coordinator` adds SIGTERM/SIGINT).
///
/// `init` checks the secret file, prepares the storage directory, connects to PostgreSQL and
/// migrates it, registers the coordinator's own finaliser row, binds the protocol listener
/// (and `/metrics`) and records itself in the coordinators registry, so every start-up problem
/// is thrown before anything runs, in words for operators. The services, in order: `/metrics`,
/// the operator console (its HTTP application, then its live feed), the database listener
/// (wakes from other coordinators), the registry heartbeat, the lease reaper, the finaliser, the storage sweeper, the job-end
/// notifier, and the protocol server (with the dispatcher's claim deadlines). Graceful shutdown runs in reverse: the
/// protocol server drains first (pending `CLAIM`s answered `NONE`, in-flight requests finish,
/// up to `drainTimeout`), then the loops stop, then the console and metrics. All state is in
/// PostgreSQL and the storage directory, so a new coordinator on the same database and storage
/// simply continues (old leases expire), and several may run at once on one database and one
/// shared storage (docs/task-lifecycle.md, "Several coordinators").
public final class Coordinator: Sendable {
    public let configuration: CoordinatorConfiguration
    public let metrics: CoordinatorMetrics
    /// Every long-running part of the coordinator, in the order they go into the `ServiceGroup`.
    public let services: [any Service]
    private let logger: Logger
    private let server: ReelServer
    private let metricsListener: MetricsListener?
    private let console: ConsoleServer?
    private let dispatcher: Dispatcher
    private let jobWatchers: JobWatchers
    private let listener: DatabaseListener
    /// This coordinator's row in the coordinators registry (migration 9).
    public let coordinatorID: Int64

    /// Prepares everything and binds the protocol listener (and `/metrics`); the console binds
    /// when its services run (`waitUntilListening`).
    /// - Throws: `CoordinatorStartupError` saying what to fix.
    public init(configuration: CoordinatorConfiguration, logger: Logger = Logger(label: "reel.coordinator"),
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws {
        self.configuration = configuration
        self.logger = logger
        let metrics = CoordinatorMetrics()
        self.metrics = metrics
        let authenticator: Authenticator
        do {
            authenticator = try Authenticator(secretFile: configuration.secretFile)
        } catch let error as SecretFileError {
            throw CoordinatorStartupError(description: error.description)
        } catch {
            throw CoordinatorStartupError(description: "secret file \(configuration.secretFile): \((error as? ReelProtocolError)?.message ?? "\(error)")")
        }
        let bytesRead = metrics.objectStoreBytesRead
        let objectStore = try await configuration.objectStore?.connect(logger: logger, bodyBytesRead: { bytesRead.increment(by: $0) })
        let storage = CoordinatorStorage(root: configuration.storageDirectory, blobs: objectStore)
        let moved = try storage.prepare()
        if moved > 0 {
            logger.notice("storage moved to the layout of blob keys", metadata: ["storage": "\(storage.root)", "blobs": "\(moved)"])
        }
        let (pool, worker): (StorePool, StoreWorker)
        let (dispatchWorker, resultsWorker, sweepWorker): (StoreWorker, StoreWorker, StoreWorker)
        do {
            // Connecting blocks (libpq): off the cooperative pool, whose few threads the
            // process's async work needs — several coordinators starting at once (tests) held
            // both of a two-core machine's for seconds.
            (pool, worker, dispatchWorker, resultsWorker, sweepWorker) = try await offload {
                let connect = { (label: String) in try StoreWorker(conninfo: configuration.database, label: label, clock: configuration.clock) }
                return (try StorePool(conninfo: configuration.database, count: configuration.storeConnections, clock: configuration.clock),
                        try connect("loops"),
                        try StoreWorker(conninfo: configuration.database, label: "dispatch", clock: configuration.clock, genericPlans: true),
                        try StoreWorker(conninfo: configuration.database, label: "results", clock: configuration.clock, genericPlans: true),
                        // Its own connection: a sweep over a large storage directory must not delay lease expiry.
                        try connect("sweep"))
            }
        } catch {
            throw CoordinatorStartupError(description: "cannot connect to PostgreSQL at \(Self.redacted(configuration.database)): \(error)")
        }
        let applied = try await worker.run { try Migrator.migrate($0.connection) }
        if !applied.isEmpty { logger.info("database migrated", metadata: ["versions": "\(applied)"]) }
        let finaliserName = configuration.finaliserAgentName
        // The coordinator's own finalising (a farm storing in a local directory) is priced at
        // nothing: it is no rented agent, and a job's cost should not count it as unpriced.
        let finaliserAgent = try await worker.run {
            try $0.agents.registration(name: finaliserName, host: ProcessInfo.processInfo.hostName, capabilities: "{}", costPerHour: 0).id
        }

        let sessions = AgentSessions()
        let finaliserBell = Doorbell()
        let dispatcher = Dispatcher(worker: dispatchWorker, leaseSeconds: configuration.leaseSeconds, logger: logger, agents: sessions,
                                    agentsFinalise: storage.isRemote, metrics: metrics)
        let jobWatchers = JobWatchers()
        let splitter = JobSplitter(pool: pool, storage: storage, configuration: configuration, logger: logger, dispatcher: dispatcher,
                                   jobWatchers: jobWatchers)
        let handler = CoordinatorHandler(pool: pool, storage: storage, splitter: splitter, metrics: metrics,
                                         configuration: configuration, logger: logger, dispatcher: dispatcher,
                                         completer: Completer(worker: resultsWorker, logger: logger, onJobRendered: { finaliserBell.ring(); dispatcher.wake() }),
                                         sessions: sessions, jobWatchers: jobWatchers)
        let tls = try Self.makeTLSConfiguration(configuration)
        let server = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: configuration.listen.host, port: configuration.listen.port,
                                                   tls: try tls.map { try NIOSSLContext(configuration: $0) }),
            authenticator: authenticator, handler: handler, group: group)
        let boundPort = server.localAddress?.port ?? configuration.listen.port
        let listenHost = configuration.listen.host
        let advertise = configuration.advertise
        let coordinatorID: Int64
        let listener: DatabaseListener
        do {
            // On the worker's queue: the host name can take a resolver round trip.
            coordinatorID = try await worker.run { store in
                let host = ProcessInfo.processInfo.hostName
                let address = advertise ?? "\(["0.0.0.0", "::", ""].contains(listenHost) ? host : listenHost):\(boundPort)"
                return try store.coordinators.register(address: address, host: host)
            }
            handler.coordinatorID = coordinatorID
            listener = try DatabaseListener(conninfo: configuration.database, logger: logger,
                                            onClaimable: { dispatcher.wake() },
                                            onJobEnded: { job in
                                                jobWatchers.jobMayHaveEnded(job)
                                                // A batch's first row ended: its other rows can be planned.
                                                Task { await splitter.releaseBatch(ledBy: job) }
                                            },
                                            onReconnected: { dispatcher.wake(); jobWatchers.anyJobMayHaveEnded.ring() },
                                            onDrain: { dispatcher.drainAgent($0) })
        } catch {
            try? await server.close()
            throw CoordinatorStartupError(description: "cannot register the coordinator: \(error)")
        }
        let metricsListener = configuration.metrics.map { MetricsListener(serving: metrics, at: $0, logger: logger) }
        var console: ConsoleServer?
        do {
            if let address = configuration.http {
                console = try await ConsoleServer(host: address.host, port: address.port, tls: tls,
                                                  backend: CoordinatorConsoleBackend(handler: handler, metrics: metrics),
                                                  authenticator: authenticator, logger: logger)
            }
        } catch {
            try? await server.close()
            throw CoordinatorStartupError(description: "\(error)")
        }
        self.server = server
        self.metricsListener = metricsListener
        self.console = console
        self.dispatcher = dispatcher
        self.jobWatchers = jobWatchers
        self.coordinatorID = coordinatorID
        self.listener = listener

        var services: [any Service] = []
        if let metricsListener { services.append(metricsListener.service) }
        services += console?.services ?? []
        services.append(listener)
        services.append(CoordinatorPresence(worker: worker, id: coordinatorID, interval: configuration.heartbeatInterval, logger: logger))
        services.append(LeaseReaper(worker: worker, splitter: splitter, dispatcher: dispatcher, jobWatchers: jobWatchers,
                                    metrics: metrics, interval: configuration.reaperInterval, logger: logger,
                                    exportsWorkload: configuration.metrics != nil || configuration.http != nil,
                                    agentsFinalise: storage.isRemote, tasksPerAgent: configuration.scaleTasksPerAgent,
                                    maxAgents: configuration.scaleMaxAgents))
        services.append(FinaliserLoop(worker: worker, storage: storage, agent: finaliserAgent, configuration: configuration, logger: logger,
                                      bell: finaliserBell, jobWatchers: jobWatchers, sessions: sessions))
        services.append(StorageSweeper(worker: sweepWorker, storage: storage, configuration: configuration, logger: logger,
                                       now: { StorageSweeper.wallClockMillis() }))
        services.append(Notifier(pool: pool, authenticator: authenticator, policy: configuration.notificationRetry, clock: configuration.clock,
                                 bell: jobWatchers.anyJobMayHaveEnded, logger: logger))
        services.append(ProtocolService(server: server, dispatcher: dispatcher, jobWatchers: jobWatchers,
                                        drainTimeout: configuration.drainTimeout, logger: logger))
        self.services = services
        logger.info("coordinator listening", metadata: ["address": "\(server.localAddress.map { "\($0)" } ?? "?")",
                                                        "storage": "\(configuration.objectStore.map { "\($0.location) at \($0.endpoint)" } ?? storage.root)",
                                                        "lease": "\(configuration.leaseSeconds)s"])
    }

    /// The coordinator's services in one group; with `handlingSignals`, SIGTERM and SIGINT
    /// trigger its graceful shutdown (`reel coordinator`).
    public func serviceGroup(handlingSignals: Bool = false) -> ServiceGroup {
        var group = ServiceGroupConfiguration(services: services.map { .init(service: $0) }, logger: logger)
        if handlingSignals { group.gracefulShutdownSignals = [.sigterm, .sigint] }
        return ServiceGroup(configuration: group)
    }

    /// The bound protocol address (useful with port 0).
    public var localAddress: SocketAddress? { server.localAddress }
    /// `CLAIM`s waiting for a task right now (tests, metrics).
    public var waitingClaims: Int { dispatcher.waitingCount }
    /// Jobs a `STATUS job= wait=` is waiting on right now (tests).
    public var followedJobs: Set<Int64> { jobWatchers.followedJobs }
    /// The bound `--metrics` address (`/metrics`, `/scale`), once its service runs and it listens.
    public var metricsAddress: SocketAddress? { metricsListener?.localAddress }
    /// The bound console address (`--http`), once its services run and it listens.
    public var httpAddress: SocketAddress? { console?.localAddress }

    /// Returns once every listener listens (the metrics listener and the console bind when their
    /// services run); `false` when one could not.
    @discardableResult
    public func waitUntilListening() async -> Bool {
        await listener.waitUntilListening()
        if let metricsListener {
            guard let address = await metricsListener.waitUntilListening() else { return false }
            logger.info("metrics listening", metadata: ["address": "\(address)"])
        }
        guard let console else { return true }
        guard let address = await console.waitUntilListening() else { return false }
        logger.info("console listening", metadata: ["address": "\(address)"])
        return true
    }

    /// The server TLS configuration of both listeners (line protocol and console), if TLS is on.
    private static func makeTLSConfiguration(_ configuration: CoordinatorConfiguration) throws -> TLSConfiguration? {
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
