import ArgumentParser
import Foundation
import Logging
import ReelCoordinator
import ReelCore
import ReelProtocol
import ReelStore
import ServiceLifecycle

/// `reel coordinator`: runs the farm's coordinator until SIGTERM/SIGINT (graceful drain).
struct CoordinatorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator",
        abstract: "Run the render farm's coordinator (jobs, leases, storage, finalising).",
        discussion: """
            Agents and operator clients connect to --listen with protocol reel/1, authenticated by the \
            shared secret file. All state lives in PostgreSQL (--database, else $DATABASE_URL, else the \
            PG* variables) and the --storage directory, so a restarted coordinator continues where it \
            stopped. SIGTERM drains: no new connections, pending claims answered, in-flight requests finish.
            """)

    @Option(help: "Address to listen on, HOST:PORT.") var listen: String = CoordinatorConfiguration().listen.description
    @Option(help: "PostgreSQL connection string or URL (default: $DATABASE_URL, else PG* variables).") var database: String?
    @Option(help: "Directory for assets, results and outputs (created if missing).") var storage: String = "reel-storage"
    @Option(help: "The shared secret file, at least 16 bytes (default: $REEL_SECRET_FILE, else ./reel.secret).")
    var secretFile: String?
    @Option(help: "Lease length in seconds; agents heartbeat every third of it.") var leaseSeconds: Double = 30
    @Option(help: "Seconds an agent whose connection dropped has to come back before its chunks go to others (default 5, at most the lease).")
    var reconnectGrace: Double?
    @Option(help: "Attempts per task before its job fails.") var maxAttempts: Int = 3
    @Option(help: "Default video chunk length in seconds (N or N/D) for jobs that do not set one.") var chunkSeconds: String = "10"
    @Option(help: "Serve Prometheus /metrics on HOST:PORT (default: off). The console (--http) serves /metrics too.") var metrics: String?
    @Option(help: ArgumentHelp("Serve the operator console on HOST:PORT: dashboard at /, JSON API at /api/v1/ (tokens from `reel token`), /metrics. TLS with --tls-cert/--tls-key, like the protocol port. Default: off.",
                               valueName: "host:port"))
    var http: String?
    @Option(help: "TLS certificate chain (PEM); needs --tls-key.") var tlsCert: String?
    @Option(help: "TLS private key (PEM); needs --tls-cert.") var tlsKey: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String = "info"
    @Option(help: ArgumentHelp("Delete done jobs' outputs (and failed or cancelled jobs' chunks) this long after they end: 30m, 12h, 7d; 0 or forever keeps them.",
                               valueName: "duration"))
    var keepOutputs: String = "7d"
    @Option(help: ArgumentHelp("Keep done jobs' chunks this long after they end, for later jobs to reuse (docs/incremental-rendering.md): 12h, 1d, 7d; 0 or forever keeps them.",
                               valueName: "duration"))
    var keepChunks: String = "1d"
    @Option(help: ArgumentHelp("Quarantine an agent after this many FAILs within --quarantine-window (0: never).", valueName: "n"))
    var quarantineAfter: Int = 3
    @Option(help: ArgumentHelp("The window in which --quarantine-after failures count: 10m.", valueName: "duration"))
    var quarantineWindow: String = "10m"
    @Option(help: ArgumentHelp("How long a quarantined agent gets no work: 10m.", valueName: "duration"))
    var quarantineFor: String = "10m"
    @Option(help: ArgumentHelp("Forget agents offline this long (they leave reel agents): 24h; 0 or forever keeps them.", valueName: "duration"))
    var forgetOfflineAgents: String = "24h"

    func validate() throws {
        guard HostPort(parsing: listen, for: .listen) != nil else {
            throw ValidationError("--listen must be HOST:PORT, like 0.0.0.0:\(HostPort.defaultPort)")
        }
        if let metrics, HostPort(parsing: metrics, for: .listen) == nil { throw ValidationError("--metrics must be HOST:PORT, like 127.0.0.1:9400") }
        if let http, HostPort(parsing: http, for: .listen) == nil { throw ValidationError("--http must be HOST:PORT, like 0.0.0.0:7480") }
        guard leaseSeconds >= 1 else { throw ValidationError("--lease-seconds must be at least 1") }
        if let reconnectGrace, !(0...leaseSeconds).contains(reconnectGrace) {
            throw ValidationError("--reconnect-grace must be between 0 and --lease-seconds (\(leaseSeconds))")
        }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        guard let s = Rational(parsing: chunkSeconds), RenderLimits.problem(withChunkSeconds: s) == nil else {
            throw ValidationError("--chunk-seconds must be > 0 and ≤ 3600, like 10 or 5/2")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level must be one of trace … critical") }
        guard DurationText.retention(keepOutputs) != nil else { throw ValidationError("--keep-outputs must be a duration like 30m, 12h or 7d, or forever") }
        guard DurationText.retention(keepChunks) != nil else { throw ValidationError("--keep-chunks must be a duration like 12h, 1d or 7d, or forever") }
        guard quarantineAfter >= 0 else { throw ValidationError("--quarantine-after must be 0 (off) or more failures") }
        guard (DurationText.seconds(quarantineWindow) ?? 0) > 0 else { throw ValidationError("--quarantine-window must be a duration like 10m") }
        guard (DurationText.seconds(quarantineFor) ?? 0) > 0 else { throw ValidationError("--quarantine-for must be a duration like 10m") }
        guard DurationText.retention(forgetOfflineAgents) != nil else {
            throw ValidationError("--forget-offline-agents must be a duration like 24h, or forever")
        }
    }

    func run() throws {
        try reportingErrors {
            var configuration = CoordinatorConfiguration()
            configuration.listen = HostPort(parsing: listen, for: .listen)!
            if let database { configuration.database = database }
            configuration.storageDirectory = storage
            if let secretFile { configuration.secretFile = secretFile }
            configuration.leaseSeconds = leaseSeconds
            configuration.reconnectGraceSeconds = reconnectGrace ?? min(5, leaseSeconds)
            configuration.maxAttempts = maxAttempts
            configuration.defaultChunkSeconds = Rational(parsing: chunkSeconds)!
            configuration.metrics = metrics.flatMap { HostPort(parsing: $0, for: .listen) }
            configuration.http = http.flatMap { HostPort(parsing: $0, for: .listen) }
            configuration.tlsCertificateFile = tlsCert
            configuration.tlsKeyFile = tlsKey
            configuration.retention.keepOutputsSeconds = DurationText.retention(keepOutputs)!
            configuration.retention.keepChunksSeconds = DurationText.retention(keepChunks)!
            configuration.quarantine = QuarantinePolicy(failures: quarantineAfter, windowSeconds: DurationText.seconds(quarantineWindow)!,
                                                        durationSeconds: DurationText.seconds(quarantineFor)!)
            configuration.forgetOfflineAgentsAfterSeconds = DurationText.retention(forgetOfflineAgents)!

            // Fail fast, with what to fix, before anything listens.
            do {
                _ = try Authenticator(secretFile: configuration.secretFile)
            } catch let error as SecretFileError {
                throw UserError(error.description)
            } catch {
                throw UserError("secret file \(configuration.secretFile): \((error as? ReelProtocolError)?.message ?? "\(error)") (it must exist and hold at least \(Authenticator.minimumSecretLength) bytes)")
            }
            do {
                _ = try PGConnection(configuration.database)
            } catch {
                throw UserError("cannot reach PostgreSQL at \(Coordinator.redacted(configuration.database)): \(error)")
            }

            let level = Logger.Level(rawValue: logLevel) ?? .info
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "reel.coordinator")
            let coordinator = Coordinator(configuration: configuration, logger: logger)
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(
                services: [.init(service: coordinator)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            do {
                try runServiceGroup(group)
            } catch let startup as CoordinatorStartupError {
                throw UserError(startup.description)
            }
        }
    }
}
