import Foundation
import ReelCore
import ReelProtocol
import ReelStore
import ReelScheduling

/// Everything a `Coordinator` needs to run. Every field has a production default; tests
/// shorten the lease and point the database and storage at temporary places.
public struct CoordinatorConfiguration: Sendable {
    /// Where agents and operator clients connect (protocol `reel/1`). Default `0.0.0.0:7400`.
    public var listen: HostPort = HostPort(host: "0.0.0.0", port: HostPort.defaultPort)
    /// libpq connection string (`postgresql://…` URL or `key=value` conninfo). Default: `$DATABASE_URL`,
    /// else empty, which makes libpq use the `PG*` environment variables.
    public var database: String = PGConnection.conninfoFromEnvironment()
    /// Root of the coordinator's files: `assets/`, `results/`, `outputs/`, `posters/`, `tmp/`.
    /// Created if missing. With `objectStore`, only uploads in progress and local copies.
    public var storageDirectory: String = "reel-storage"
    /// The blobs in an S3-compatible bucket instead of `storageDirectory`; `nil` (default): the directory.
    public var objectStore: ObjectStoreSettings? = nil
    /// The shared secret file (≥ 16 bytes, one trailing newline ignored). Default `$REEL_SECRET_FILE`,
    /// else `reel.secret` in the working directory.
    public var secretFile: String = ProcessInfo.processInfo.environment["REEL_SECRET_FILE"] ?? "reel.secret"
    /// PEM certificate chain for TLS; TLS is on when both it and `tlsKeyFile` are set.
    public var tlsCertificateFile: String? = nil
    /// PEM private key for TLS.
    public var tlsKeyFile: String? = nil
    /// Lease length handed to agents (and used for the coordinator's own finalise tasks), seconds.
    public var leaseSeconds: Double = 30
    /// Lifetime of the presigned URLs handed out with an object store (proto/PROTOCOL.md §4.5), seconds.
    public var presignExpirySeconds: Int = 900
    /// With an object store: direct uploads (`ASSETPARTS`, `RESULTPARTS`) larger than this go up
    /// in parts of this size (at least S3's 5 MiB; raised to keep within 10,000 parts), bytes.
    public var directPartSize: Int64 = 16 << 20
    /// What time it is for leases (grant, renewal, expiry, reconnect grace). The wall clock;
    /// tests move a clock of their own forward instead of sleeping through a lease.
    public var clock: FarmClock = .wall
    /// Claims a task gets before it (and its job) fails.
    public var maxAttempts: Int = 3
    /// Video chunk length when the job's settings do not say (whole GOPs near it).
    public var defaultChunkSeconds: Rational = 10
    /// Where `/metrics` (Prometheus text) is served; `nil` (default) serves no metrics.
    public var metrics: HostPort? = nil
    /// Where the operator console is served over HTTP (dashboard `/`, API `/api/v1/`, `/metrics`),
    /// with TLS when `tlsCertificateFile`/`tlsKeyFile` are set; `nil` (default) serves none.
    public var http: HostPort? = nil
    /// Upper bound on a `CLAIM wait=` long poll, seconds (the protocol allows up to 60).
    public var maxClaimWaitSeconds: Int = 60
    /// When an agent's last connection closes, the leases it holds end this many seconds
    /// later instead of at their expiry, unless it reconnects and heartbeats them first.
    public var reconnectGraceSeconds: Double = 5
    /// `reel_agents_wanted`: tasks one agent takes at once (its `--threads`) ...
    public var scaleTasksPerAgent: Int = 1
    /// ... and the most agents it ever asks for.
    public var scaleMaxAgents: Int = 100
    /// Period of the lease reaper / splitter loop and of the finaliser's idle poll.
    public var reaperInterval: Duration = .seconds(1)
    /// PostgreSQL connections for request handling (each on its own serial worker).
    public var storeConnections: Int = 3
    /// How long a graceful shutdown waits for in-flight requests before closing connections.
    public var drainTimeout: Duration = .seconds(30)
    /// The name under which the coordinator itself holds finalise leases (an `agents` row,
    /// hidden from `AGENTS` reports).
    public var finaliserAgentName: String = "@coordinator"
    /// When an agent that keeps failing stops getting work (default: 3 FAILs in 10 min → 10 min).
    public var quarantine: QuarantinePolicy = QuarantinePolicy()
    /// What agents that state no price of their own cost an hour, by class (`--cost-per-hour`).
    /// Default: no table (such agents cost nothing).
    public var agentPricing = AgentPricing()
    /// Offline agents leave `reel agents` after this long offline, seconds; `nil` keeps them. Default 24 h.
    public var forgetOfflineAgentsAfterSeconds: Double? = 86_400
    /// What the storage sweep deletes, and after how long (`RetentionPolicy`).
    public var retention: RetentionPolicy = RetentionPolicy()
    /// Period of the storage sweep (retention, garbage collection, abandoned uploads).
    public var storageSweepInterval: Duration = .seconds(60)
    /// When a failed job-end notification (`--notify URL`) is tried again, and how often at most.
    public var notificationRetry: NotificationRetryPolicy = NotificationRetryPolicy()
    /// The `HOST:PORT` clients and agents reach this coordinator at, as the coordinators
    /// registry lists it (`reel status`); `nil`: the listen address, with this host's name in
    /// place of a wildcard host.
    public var advertise: String? = nil
    /// How often the coordinator records in the registry that it is alive; one silent for
    /// three periods shows as not alive.
    public var heartbeatInterval: Duration = .seconds(5)

    public init() {}
}
