import Foundation
import Logging
import NIOCore
import NIOPosix
import ReelAssetCache
import ReelProtocol
import ServiceLifecycle

/// A Reel render agent (docs/farm.md): connects out to the coordinator, authenticates, advertises
/// its capabilities, claims tasks, renders them and uploads the results. Needs no inbound port,
/// no database and no shared filesystem: sources come from the coordinator by content hash, in
/// byte ranges, through an on-disk `RangeCache` under `configuration.cacheDirectory/assets`.
///
/// Runs `configuration.slots` independent slots (`AgentSlot`). On graceful shutdown (a
/// `ServiceGroup` signal) it stops claiming, lets a task in flight finish within
/// `shutdownGracePeriod` or releases it, says `QUIT`, and `run()` returns normally.
public final class Agent: Service, Sendable {
    public let configuration: AgentConfiguration
    /// The source cache (exposed for metrics and tests: `fetchedBytes`, `cachedBytes`).
    public let cache: RangeCache
    private let authenticator: Authenticator
    private let group: any EventLoopGroup
    private let logger: Logger
    private let drain = DrainState()
    private let plans = PlanDocumentMemory()
    private let workDirectory: URL
    /// Held from `init` until `run()` returns: one agent per cache directory.
    private let directoryLock: CacheDirectoryLock

    /// Prepares the cache directories and locks the cache against a second agent; throws
    /// `AgentError.configuration` (bad settings, directory in use) or a file-system error.
    public init(configuration: AgentConfiguration, authenticator: Authenticator,
                logger: Logger = Logger(label: "reel.agent"),
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        try configuration.validate()
        self.configuration = configuration
        self.authenticator = authenticator
        self.group = group
        var logger = logger
        logger[metadataKey: "agent"] = "\(configuration.name)"
        self.logger = logger
        let root = configuration.cacheDirectory
        let files = FileManager.default
        // Owner-only, like the coordinator's storage: the cache holds the farm's source media.
        // The root is 0700 when created here (an existing one, e.g. a volume, keeps its mode);
        // `assets/` and `work/` are always 0700, so their files are private whatever their modes.
        try Self.makePrivateDirectory(root, enforce: false)
        self.directoryLock = try CacheDirectoryLock(directory: root)
        try Self.makePrivateDirectory(root.appendingPathComponent("assets"), enforce: true)
        self.cache = try RangeCache(directory: root.appendingPathComponent("assets"), byteLimit: configuration.cacheByteLimit)
        self.workDirectory = root.appendingPathComponent("work")
        // Renders left by a crashed run are worthless: their leases are long gone.
        try? files.removeItem(at: workDirectory)
        try Self.makePrivateDirectory(workDirectory, enforce: true)
    }

    public func run() async throws {
        logger.info("agent starting", metadata: ["slots": "\(configuration.slots)", "cache": "\(configuration.cacheDirectory.path)"])
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { tasks in
                for index in 0..<configuration.slots {
                    let name = configuration.slots == 1 ? configuration.name : "\(configuration.name)/\(index + 1)"
                    var slotLogger = logger
                    if configuration.slots > 1 { slotLogger[metadataKey: "slot"] = "\(index + 1)" }
                    let slot = AgentSlot(name: name, configuration: configuration, authenticator: authenticator, cache: cache, plans: plans,
                                         drain: drain, workDirectory: workDirectory, group: group, logger: slotLogger)
                    tasks.addTask { await slot.run() }
                }
            }
        } onGracefulShutdown: { [drain, logger, configuration] in
            logger.notice("shutting down: no more claims; the task in flight may finish",
                          metadata: ["grace": "\(configuration.shutdownGracePeriod)"])
            drain.begin(gracePeriod: configuration.shutdownGracePeriod)
        }
        directoryLock.release()
        logger.info("agent stopped")
    }

    /// Starts a graceful shutdown without a `ServiceGroup` (same effect as its signal).
    public func shutdownGracefully() {
        drain.begin(gracePeriod: configuration.shutdownGracePeriod)
    }

    /// Creates `directory` (and missing parents) if needed; it is then mode 0700, and so is an
    /// existing one if `enforce`.
    static func makePrivateDirectory(_ directory: URL, enforce: Bool) throws {
        let existed = FileManager.default.fileExists(atPath: directory.path)
        if !existed { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        if !existed || enforce, chmod(directory.path, 0o700) != 0 {
            throw AgentError.configuration("cannot make the cache folder \(directory.path) private (chmod 700): "
                                           + "\(String(cString: strerror(errno))); is it owned by the agent's user?")
        }
    }
}
