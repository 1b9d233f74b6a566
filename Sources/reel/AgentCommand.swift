import ArgumentParser
import Foundation
import Logging
import ReelAgent
import ReelMedia
import ReelProtocol
import ServiceLifecycle

/// `reel agent`: runs a render agent until SIGTERM/SIGINT or `reel drain` (graceful: the task
/// in flight finishes within --drain-seconds or is released), logging to stderr.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Run a render agent: claim chunks from a coordinator, render them, upload the results.",
        discussion: """
            The agent connects out to the coordinator (no inbound port, no database, no shared filesystem: \
            sources are fetched by content hash in byte ranges and cached under --cache). SIGTERM, SIGINT or \
            'reel drain NAME' drains it: it claims nothing more ('reel agents' shows it draining), a task in \
            flight finishes if it can within --drain-seconds, else it is handed back at once for another agent; \
            then the agent says goodbye and exits 0. Give a supervisor's stop timeout (Kubernetes' \
            terminationGracePeriodSeconds) a little more than --drain-seconds.
            """)

    @Option(help: "The coordinator as HOST:PORT, or several as A:PORT,B:PORT (default: $REEL_COORDINATOR).") var coordinator: String?
    @Option(help: "File holding the farm's shared secret, at least 16 bytes (default: $REEL_SECRET_FILE).") var secretFile: String?
    @Option(help: "This agent's name on the farm (default: host name plus a suffix stable for this cache directory).") var name: String?
    @Option(help: "Cache directory for fetched sources (default: $XDG_CACHE_HOME/reel or ~/.cache/reel).") var cache: String?
    @Option(help: "Most gigabytes of sources kept in the cache.") var cacheGb: Double = 10
    @Option(help: "Tasks rendered at once (render slots). Must be ≥ 1.") var threads: Int = 1
    @Option(help: "PEM file of the CA that signed the coordinator's certificate: connect with TLS.") var tlsCa: String?
    @Option(help: "Host name to verify in the coordinator's certificate (default: the coordinator host).") var tlsServerName: String?
    @Option(name: [.customLong("drain-seconds"), .customLong("grace")],
            help: "Seconds a task in flight may take to finish when draining, before it is handed back (--grace is the old name).")
    var drainSeconds: Int = 120
    @Option(help: "Seconds the coordinator may hold a claim open (0…60).") var claimWait: Int = 20
    @Option(help: "Drain and exit 0 once a render slot has had no task for this many seconds (for agents started per burst of work, like a Kubernetes ScaledJob's). Default: never.")
    var exitWhenIdle: Int?
    @Flag(help: "Never run finalise tasks (joining a job's chunks into its output), which agents take only when the coordinator stores in S3.")
    var noFinalise = false
    @Option(help: "What this agent (all its --threads) costs an hour, in your currency (0.85): jobs add up their cost from it (reel status). Default: the coordinator's --cost-per-hour, if any.")
    var costPerHour: Double?
    @Flag(help: "Log debug details.") var verbose = false

    func validate() throws {
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard cacheGb >= 0 else { throw ValidationError("--cache-gb must not be negative") }
        guard (0...86_400).contains(drainSeconds) else { throw ValidationError("--drain-seconds must be 0…86400") }
        if let exitWhenIdle, exitWhenIdle < 1 { throw ValidationError("--exit-when-idle must be at least 1 second") }
        if let costPerHour, !(costPerHour >= 0 && costPerHour < 1e9) {
            throw ValidationError("--cost-per-hour must be a price an hour from 0 to 999999999 (such as 0.85), got \(costPerHour)")
        }
        guard (0...ProtocolLimits.maxClaimWait).contains(claimWait) else {
            throw ValidationError("--claim-wait must be 0…\(ProtocolLimits.maxClaimWait)")
        }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            let environment = ProcessInfo.processInfo.environment
            guard let endpointText = coordinator ?? environment["REEL_COORDINATOR"], !endpointText.isEmpty else {
                throw UserError("no coordinator: give --coordinator HOST:PORT or set REEL_COORDINATOR")
            }
            guard let endpoints = HostPort.list(parsing: endpointText), let endpoint = endpoints.first else {
                throw UserError("--coordinator must be HOST:PORT with a port in 1…65535 (e.g. render-hq:\(HostPort.defaultPort)), "
                                + "or several separated by commas (a:\(HostPort.defaultPort),b:\(HostPort.defaultPort)); got \"\(endpointText)\"")
            }
            guard let secretPath = secretFile ?? environment["REEL_SECRET_FILE"], !secretPath.isEmpty else {
                throw UserError("no shared secret: give --secret-file PATH or set REEL_SECRET_FILE")
            }
            try requireReadableFile(secretPath, what: "the secret file")
            let authenticator: Authenticator
            do { authenticator = try Authenticator(secretFile: secretPath) } catch let error as SecretFileError {
                throw UserError(error.description)
            } catch let error as ReelProtocolError {
                throw UserError("secret file \(secretPath): \(error.message); write at least \(Authenticator.minimumSecretLength) random bytes to it")
            }
            var tlsContext: AgentConfiguration.TLSContext?
            if let tlsCa {
                try requireReadableFile(tlsCa, what: "the TLS CA file")
                do { tlsContext = try AgentConfiguration.tlsContext(trustingCAFile: tlsCa) } catch {
                    throw UserError("--tls-ca \(tlsCa) is not a usable PEM certificate file (\(error))")
                }
            }
            let cacheDirectory = cache.map { URL(fileURLWithPath: $0) } ?? AgentConfiguration.defaultCacheDirectory()
            var configuration = AgentConfiguration(
                coordinatorHost: endpoint.host, coordinatorPort: endpoint.port, name: name,
                cacheDirectory: cacheDirectory, cacheByteLimit: Int64(cacheGb * 1_073_741_824), slots: threads,
                encoders: EncoderCatalog.available, claimWaitSeconds: claimWait, shutdownGracePeriod: .seconds(drainSeconds),
                tls: tlsContext, tlsServerHostname: tlsServerName)
            configuration.otherCoordinators = Array(endpoints.dropFirst())
            configuration.finalise = !noFinalise
            configuration.exitWhenIdle = exitWhenIdle.map { .seconds($0) }
            configuration.costPerHour = costPerHour

            let level: Logger.Level = verbose ? .debug : .info
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "reel.agent")
            let agent: Agent
            do { agent = try Agent(configuration: configuration, authenticator: authenticator, logger: logger) } catch let error as AgentError {
                throw UserError("\(error)")
            } catch {
                throw UserError("cannot prepare the cache directory \(cacheDirectory.path): \(error)")
            }
            // The agent also ends by itself, drained by `reel drain`: that is a normal exit (0).
            var group = ServiceGroupConfiguration(services: [.init(service: agent, successTerminationBehavior: .gracefullyShutdownGroup)],
                                                  logger: logger)
            group.gracefulShutdownSignals = [.sigterm, .sigint]
            try await ServiceGroup(configuration: group).run()
        }
    }
}
