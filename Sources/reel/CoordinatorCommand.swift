import ArgumentParser
import Foundation
import Logging
import ReelConsole
import ReelCoordinator
import ReelCore
import ReelObjectStore
import ReelProtocol
import ReelStore
import ReelScheduling
import ServiceLifecycle

/// `reel coordinator`: runs the farm's coordinator until SIGTERM/SIGINT (graceful drain).
struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator",
        abstract: "Run the render farm's coordinator (jobs, leases, storage, finalising).",
        discussion: """
            Agents and operator clients connect to --listen with protocol reel/1, authenticated by the \
            shared secret file. All state lives in PostgreSQL (--database, else $DATABASE_URL, else the \
            PG* variables) and --storage (a directory, or s3://BUCKET/PREFIX on --s3-endpoint with the \
            credentials found the AWS ways: docs/object-storage.md), so a restarted coordinator continues \
            where it stopped. SIGTERM drains: no new connections, pending claims answered, in-flight requests finish. \
            Several coordinators may share one database and one storage (a shared filesystem, or object \
            storage): agents and clients then take them all, --coordinator a:7400,b:7400.
            """)

    @Option(help: ArgumentHelp("Address to listen on, HOST:PORT (like 0.0.0.0:\(HostPort.defaultPort)).", valueName: "host:port"))
    var listen = CoordinatorConfiguration().listen
    @Option(help: ArgumentHelp("The HOST:PORT agents and clients reach this coordinator at, as `reel status` lists the farm's coordinators (default: the --listen address, with this host's name for 0.0.0.0).",
                               valueName: "host:port"))
    var advertise: String?
    @Option(help: "PostgreSQL connection string or URL (default: $DATABASE_URL, else PG* variables).") var database: String?
    @Option(help: ArgumentHelp("Where sources, chunk results, posters and outputs live: a directory (created if missing), or s3://BUCKET/PREFIX in an S3-compatible object store (with --s3-endpoint).",
                               valueName: "dir|s3://bucket/prefix"))
    var storage: String = "reel-storage"
    @Option(help: ArgumentHelp("The object store's endpoint with --storage s3://…, like https://s3.example.com:9000; requests are path-style (default: $REEL_S3_ENDPOINT).",
                               valueName: "url"))
    var s3Endpoint: String?
    @Option(help: ArgumentHelp("The object store's region with --storage s3://… (default: $REEL_S3_REGION, else us-east-1, which servers without regions accept).",
                               valueName: "region"))
    var s3Region: String?
    @Option(help: ArgumentHelp("With --storage s3://…: the local folder for uploads in progress and copies of what the coordinator reads (default: $REEL_LOCAL_STORAGE, else reel-storage).",
                               valueName: "dir"))
    var localStorage: String?
    @Option(help: ArgumentHelp("With --storage s3://…: seconds the presigned URLs handed to agents and clients stay valid (60 to 604800).",
                               valueName: "seconds"))
    var presignExpiry: Int = 900
    @Option(help: ArgumentHelp("With --storage s3://…: direct uploads (assets, results) larger than this go to the store in parts "
                               + "of this size, resumable part by part (at least 5242880, S3's minimum part).", valueName: "bytes"))
    var directPartSize: Int64 = 16 << 20
    @Option(help: "The shared secret file, at least 16 bytes (default: $REEL_SECRET_FILE, else ./reel.secret).")
    var secretFile: String?
    @Option(help: "Lease length in seconds; agents heartbeat every third of it.") var leaseSeconds: Double = 30
    @Option(help: "Seconds an agent whose connection dropped has to come back before its chunks go to others (default 5, at most the lease).")
    var reconnectGrace: Double?
    @Option(help: "Attempts per task before its job fails.") var maxAttempts: Int = 3
    @Option(help: ArgumentHelp("Default video chunk length in seconds (N or N/D, > 0 and ≤ 3600) for jobs that do not set one.",
                               valueName: "seconds"))
    var chunkSeconds: Rational = 10
    @Option(help: ArgumentHelp("Serve Prometheus /metrics on HOST:PORT, like 127.0.0.1:9400 (default: off), and /scale, the work a scaler reads as JSON. The console (--http) serves /metrics too.",
                               valueName: "host:port"))
    var metrics: HostPort?
    @Option(help: "For reel_agents_wanted (docs/scaling.md): tasks each agent renders at once, its --threads.")
    var scaleTasksPerAgent: Int = 1
    @Option(help: "For reel_agents_wanted: the most agents it asks for.") var scaleMaxAgents: Int = 100
    @Option(help: ArgumentHelp("Serve the operator console on HOST:PORT, like 0.0.0.0:7480: dashboard at /, JSON API at /api/v1/ (tokens from `reel token`), /metrics. TLS with --tls-cert/--tls-key, like the protocol port. Default: off.",
                               valueName: "host:port"))
    var http: HostPort?
    @Option(help: "TLS certificate chain (PEM); needs --tls-key.") var tlsCert: String?
    @Option(help: "TLS private key (PEM); needs --tls-cert.") var tlsKey: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: Logger.Level = .info
    @Option(help: ArgumentHelp("Delete done jobs' outputs (and failed or cancelled jobs' chunks) this long after they end: 30m, 12h, 7d; 0 or forever keeps them.",
                               valueName: "duration"))
    var keepOutputs = RetentionArgument("7d", seconds: 7 * 86_400)
    @Option(help: ArgumentHelp("Keep done jobs' chunks this long after they end, for later jobs to reuse (docs/incremental-rendering.md): 12h, 1d, 7d; 0 or forever keeps them.",
                               valueName: "duration"))
    var keepChunks = RetentionArgument("1d", seconds: 86_400)
    @Option(help: ArgumentHelp("Quarantine an agent after this many FAILs within --quarantine-window (0: never).", valueName: "n"))
    var quarantineAfter: Int = 3
    @Option(help: ArgumentHelp("The window in which --quarantine-after failures count: 10m.", valueName: "duration"))
    var quarantineWindow = DurationArgument("10m", seconds: 600)
    @Option(help: ArgumentHelp("How long a quarantined agent gets no work: 10m.", valueName: "duration"))
    var quarantineFor = DurationArgument("10m", seconds: 600)
    @Option(help: ArgumentHelp("Forget agents offline this long (they leave reel agents): 24h; 0 or forever keeps them.", valueName: "duration"))
    var forgetOfflineAgents = RetentionArgument("24h", seconds: 86_400)
    @Option(help: ArgumentHelp("What an agent that states no --cost-per-hour of its own costs an hour: PRICE for every agent, or CLASS=PRICE for those whose names begin with CLASS (the longest match wins), like 0.40 or spot-=0.12; repeat for a table. Jobs add up their cost from it (reel status).",
                               valueName: "[class=]price"))
    var costPerHour: [String] = []

    func validate() throws {
        guard leaseSeconds >= 1 else { throw ValidationError("--lease-seconds must be at least 1") }
        if let reconnectGrace, !(0...leaseSeconds).contains(reconnectGrace) {
            throw ValidationError("--reconnect-grace must be between 0 and --lease-seconds (\(leaseSeconds))")
        }
        if let advertise, HostPort(parsing: advertise, for: .connect) == nil {
            throw ValidationError("--advertise takes HOST:PORT with a port in 1…65535, like render-hq-2:\(HostPort.defaultPort); got \"\(advertise)\"")
        }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        do { _ = try AgentPricing(parsing: costPerHour) } catch { throw ValidationError(error.description) }
        guard scaleTasksPerAgent >= 1 else { throw ValidationError("--scale-tasks-per-agent must be at least 1") }
        guard scaleMaxAgents >= 0 else { throw ValidationError("--scale-max-agents must not be negative") }
        guard RenderLimits.problem(withChunkSeconds: chunkSeconds) == nil else {
            throw ValidationError("--chunk-seconds must be > 0 and ≤ 3600, like 10 or 5/2")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        guard quarantineAfter >= 0 else { throw ValidationError("--quarantine-after must be 0 (off) or more failures") }
        guard quarantineWindow.seconds > 0 else { throw ValidationError("--quarantine-window must be a duration like 10m") }
        guard quarantineFor.seconds > 0 else { throw ValidationError("--quarantine-for must be a duration like 10m") }
        _ = try objectStoreSettings()
    }

    /// The object store `--storage s3://…` names, or `nil` for a directory.
    func objectStoreSettings() throws -> ObjectStoreSettings? {
        let environment = ProcessInfo.processInfo.environment
        guard storage.hasPrefix("s3://") else {
            guard s3Endpoint == nil else { throw ValidationError("--s3-endpoint goes with --storage s3://BUCKET/PREFIX, not a directory") }
            return nil
        }
        guard let endpoint = s3Endpoint ?? environment["REEL_S3_ENDPOINT"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw ValidationError("--storage \(storage) needs --s3-endpoint URL (or $REEL_S3_ENDPOINT): the S3-compatible server, like https://s3.example.com")
        }
        let region = s3Region ?? environment["REEL_S3_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        do {
            return ObjectStoreSettings(location: try ObjectStoreLocation(storage), endpoint: try S3Endpoint(endpoint), region: region)
        } catch let error as ObjectStoreError {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            var configuration = CoordinatorConfiguration()
            configuration.listen = listen
            configuration.advertise = advertise
            if let database { configuration.database = database }
            if let objectStore = try objectStoreSettings() {
                configuration.objectStore = objectStore
                guard (60...604_800).contains(presignExpiry) else {
                    throw ValidationError("--presign-expiry is 60 to 604800 seconds (7 days, S3's limit), not \(presignExpiry)")
                }
                configuration.presignExpirySeconds = presignExpiry
                guard (Int64(S3ClientConfiguration.minimumPartSize)...(Int64(5) << 30)).contains(directPartSize) else {
                    throw ValidationError("--direct-part-size is 5242880 (5 MiB, S3's minimum part) to 5368709120 (5 GiB), not \(directPartSize)")
                }
                configuration.directPartSize = directPartSize
                configuration.storageDirectory = localStorage
                    ?? ProcessInfo.processInfo.environment["REEL_LOCAL_STORAGE"].flatMap { $0.isEmpty ? nil : $0 } ?? "reel-storage"
            } else {
                configuration.storageDirectory = storage
            }
            if let secretFile { configuration.secretFile = secretFile }
            configuration.leaseSeconds = leaseSeconds
            configuration.reconnectGraceSeconds = reconnectGrace ?? min(5, leaseSeconds)
            configuration.maxAttempts = maxAttempts
            configuration.defaultChunkSeconds = chunkSeconds
            configuration.metrics = metrics
            configuration.scaleTasksPerAgent = scaleTasksPerAgent
            configuration.scaleMaxAgents = scaleMaxAgents
            configuration.http = http
            configuration.tlsCertificateFile = tlsCert
            configuration.tlsKeyFile = tlsKey
            configuration.retention.keepOutputsSeconds = keepOutputs.seconds
            configuration.retention.keepChunksSeconds = keepChunks.seconds
            configuration.quarantine = QuarantinePolicy(failures: quarantineAfter, windowSeconds: quarantineWindow.seconds,
                                                        durationSeconds: quarantineFor.seconds)
            configuration.forgetOfflineAgentsAfterSeconds = forgetOfflineAgents.seconds
            configuration.agentPricing = try AgentPricing(parsing: costPerHour)

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

            let level = logLevel
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            do {
                let coordinator = try await Coordinator(configuration: configuration, logger: Logger(label: "reel.coordinator"))
                try await coordinator.serviceGroup(handlingSignals: true).run()
            } catch let startup as CoordinatorStartupError {
                throw UserError(startup.description)
            } catch let console as ConsoleStartupError {
                throw UserError(console.description)
            }
        }
    }
}
