import Foundation
import NIOSSL
import ReelCore
import ReelProtocol

/// Everything an `Agent` needs to know, with the defaults `reel agent` uses.
///
/// Invariants (checked by `validate()`): `port` in 1…65535, `slots ≥ 1`, `claimWaitSeconds` in
/// 0…60 (the protocol's `CLAIM wait` range), positive intervals and grace period.
public struct AgentConfiguration: Sendable {
    /// The coordinator's host name or address.
    public var coordinatorHost: String
    /// The coordinator's port (Reel's default is 7400, `HostPort.defaultPort`).
    public var coordinatorPort: Int
    /// Further coordinators of the same farm (`--coordinator a:7400,b:7400`): when the one a
    /// slot is connected to goes away, it reconnects to another and keeps its leases (they are
    /// in the shared database). Empty: only `coordinatorHost:coordinatorPort`.
    public var otherCoordinators: [HostPort] = [] {
        didSet { endpoints = CoordinatorEndpoints(Self.endpointList(coordinatorHost, coordinatorPort, otherCoordinators)) }
    }
    /// Every coordinator, the one to try first first; shared by the slots.
    public private(set) var endpoints: CoordinatorEndpoints
    /// The agent's name (`HELLO name=`), unique per agent on the farm. See `defaultName(cacheDirectory:)`.
    public var name: String
    /// This machine's host name, advertised in `CAPS host=`.
    public var host: String
    /// Root of the agent's cache: fetched source blocks under `assets/`, renders in progress under `work/`.
    public var cacheDirectory: URL
    /// Most bytes of source blocks kept in the cache (least recently used blocks are evicted).
    public var cacheByteLimit: Int64
    /// Render slots: tasks rendered at once, each on its own connection and thread. Advertised as
    /// `CAPS threads=`. Default 1.
    public var slots: Int
    /// Encoder names advertised in `CAPS encoders=`.
    public var encoders: [String]
    /// `CAPS finalise=1`: this agent runs finalise tasks when the coordinator stores in an
    /// object store (proto/PROTOCOL.md §4.5.1). Default true.
    public var finalise: Bool = true
    /// `CAPS cost=`: what the whole agent costs an hour (`reel agent --cost-per-hour`); nil: it
    /// names no price. Default nil.
    public var costPerHour: Double? = nil
    /// `CLAIM wait=`: how long the coordinator may hold a claim open (long poll). Default 20 s.
    public var claimWaitSeconds: Int
    /// The first reconnect window: the delay after a lost connection or a failed attempt is
    /// drawn uniformly from [0, window), and the window doubles after every failed attempt up
    /// to `reconnectMaximum` ("full jitter", `Backoff`).
    public var reconnectInitial: Duration
    /// Largest reconnect window.
    public var reconnectMaximum: Duration
    /// After `ERR too_many_connections` (the coordinator has its maximum of connections
    /// authenticating at once), the agent tries again after a delay drawn from [0, this), and
    /// the reconnect window does not grow: the coordinator is busy, not failing. Default 1 s.
    public var reconnectBusyWindow: Duration = .seconds(1)
    /// How often `PROGRESS` is sent while rendering.
    public var progressInterval: Duration
    /// On graceful shutdown, how long a task in flight may take to finish before it is released.
    public var shutdownGracePeriod: Duration
    /// When set, the agent drains and exits once a render slot has had no task for this long
    /// (`--exit-when-idle`: an agent started for a burst of work, as by a Kubernetes ScaledJob).
    public var exitWhenIdle: Duration? = nil
    /// Reply timeout of short requests (`CAPS`, `HEARTBEAT`, `PROGRESS`, `FAIL`, `RELEASE`, `FETCH`).
    public var requestTimeout: Duration
    /// Reply timeout of one `RESULTPART` (the upload of one part of a result).
    public var uploadTimeout: Duration
    /// Bytes of a result sent (and read from disk) per `RESULTPART`: a result of any size is
    /// uploaded in parts of this size, never held whole in memory. 1 byte…64 MiB; default 8 MiB.
    public var resultPartBytes: Int
    /// When set, the connection runs inside TLS trusting this context (`--tls-ca`).
    public var tls: NIOSSLContext?
    /// Host name checked against the coordinator's certificate (default: `coordinatorHost`).
    public var tlsServerHostname: String?
    /// The clock lease expiries (`TASK`, `LEASE`, `STORED`, all milliseconds since 1970 by the
    /// coordinator's clock) are compared with. The wall clock; tests move one of their own.
    public var clock: FarmClock

    public init(coordinatorHost: String, coordinatorPort: Int, name: String? = nil, host: String? = nil,
                cacheDirectory: URL = AgentConfiguration.defaultCacheDirectory(),
                cacheByteLimit: Int64 = 10 << 30, slots: Int = 1, encoders: [String] = ["libx264", "aac"],
                claimWaitSeconds: Int = 20, reconnectInitial: Duration = .milliseconds(500),
                reconnectMaximum: Duration = .seconds(30), progressInterval: Duration = .seconds(2),
                shutdownGracePeriod: Duration = .seconds(30), requestTimeout: Duration = .seconds(60),
                uploadTimeout: Duration = .seconds(300), tls: NIOSSLContext? = nil, tlsServerHostname: String? = nil,
                resultPartBytes: Int = 8 << 20, clock: FarmClock = .wall) {
        self.coordinatorHost = coordinatorHost
        self.coordinatorPort = coordinatorPort
        self.endpoints = CoordinatorEndpoints(Self.endpointList(coordinatorHost, coordinatorPort, []))
        self.host = host ?? AgentConfiguration.hostName()
        self.name = name ?? AgentConfiguration.defaultName(cacheDirectory: cacheDirectory)
        self.cacheDirectory = cacheDirectory
        self.cacheByteLimit = cacheByteLimit
        self.slots = slots
        self.encoders = encoders
        self.claimWaitSeconds = claimWaitSeconds
        self.reconnectInitial = reconnectInitial
        self.reconnectMaximum = reconnectMaximum
        self.progressInterval = progressInterval
        self.shutdownGracePeriod = shutdownGracePeriod
        self.requestTimeout = requestTimeout
        self.uploadTimeout = uploadTimeout
        self.resultPartBytes = resultPartBytes
        self.tls = tls
        self.tlsServerHostname = tlsServerHostname
        self.clock = clock
    }

    /// Throws `AgentError.configuration` naming the first bad setting.
    public func validate() throws {
        guard HostPort.Purpose.connect.ports.contains(coordinatorPort) else { throw AgentError.configuration("coordinator port \(coordinatorPort) is not in 1…65535") }
        guard !coordinatorHost.isEmpty else { throw AgentError.configuration("the coordinator host is empty") }
        guard slots >= 1 else { throw AgentError.configuration("threads must be at least 1") }
        guard (0...ProtocolLimits.maxClaimWait).contains(claimWaitSeconds) else {
            throw AgentError.configuration("claim wait must be 0…\(ProtocolLimits.maxClaimWait) s")
        }
        guard (1...ProtocolLimits.maxPayloadLength).contains(resultPartBytes) else {
            throw AgentError.configuration("the result part size must be 1 byte…\(ProtocolLimits.maxPayloadLength >> 20) MiB")
        }
        guard cacheByteLimit >= 0 else { throw AgentError.configuration("the cache size must not be negative") }
        guard !name.isEmpty, !host.isEmpty else { throw AgentError.configuration("the agent name and host must not be empty") }
    }

    /// `$XDG_CACHE_HOME/reel`, else `~/.cache/reel`.
    public static func defaultCacheDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("reel")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".cache/reel")
    }

    /// `<hostname>-<6 hex digits>`: the suffix is a hash of the cache directory, so the name is
    /// stable across restarts (the coordinator recognises the agent) yet distinct for two agents
    /// on one host with different caches. No pid: a restarted agent is the same agent.
    public static func defaultName(cacheDirectory: URL, host: String = hostName()) -> String {
        var hash: UInt32 = 2_166_136_261  // FNV-1a: tiny, stable across runs and platforms.
        for byte in cacheDirectory.standardizedFileURL.path.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let safeHost = String(host.unicodeScalars.map { scalar -> Character in
            let c = Character(scalar)
            return (c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == ".")) ? c : "-"
        })
        return "\(safeHost)-\(String(format: "%06x", hash & 0xFF_FFFF))"
    }

    /// This machine's host name (`gethostname`), or `localhost`.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }
}

/// Errors of the agent itself (not of the coordinator or the renderer).
public enum AgentError: Error, CustomStringConvertible, Sendable {
    /// A setting is invalid; the message says which.
    case configuration(String)
    /// The coordinator broke the protocol's contract (an unexpected reply, a bad range).
    case protocolViolation(String)
    /// The render was abandoned (lease lost, shutdown, connection lost).
    case cancelled
    /// A file of the agent's own (a rendered result) cannot be read.
    case io(String)

    public var description: String {
        switch self {
        case .configuration(let message): "configuration: \(message)"
        case .protocolViolation(let message): "coordinator protocol violation: \(message)"
        case .cancelled: "render abandoned"
        case .io(let message): message
        }
    }
}

extension AgentConfiguration {
    /// A TLS client context that trusts only the CA certificate(s) in the PEM file `caFile`
    /// (`--tls-ca`) and verifies the coordinator's host name.
    public static func tlsContext(trustingCAFile caFile: String) throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        tls.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: tls)
    }
}

extension AgentConfiguration {
    /// The TLS context type, named here so callers need not import NIOSSL.
    public typealias TLSContext = NIOSSLContext

    static func endpointList(_ host: String, _ port: Int, _ others: [HostPort]) -> [HostPort] {
        let first = HostPort(host: host, port: port)
        return [first] + others.filter { $0 != first }
    }
}
