/// The coordinators sharing this database (migration 9), and the locks that keep work meant
/// to happen once from happening on two of them at a time (docs/task-lifecycle.md, "Several
/// coordinators").
public struct CoordinatorStore: Sendable {
    let connection: PGConnection

    /// Records a coordinator starting, reachable by clients at `address`.
    /// - Returns: its id.
    public func register(address: String, host: String) throws -> Int64 {
        try connection.query(Statements.registerCoordinator, [address, host]).rows[0].int64("id")
    }

    /// The coordinator is alive (every reaper pass).
    public func heartbeat(_ id: Int64) throws {
        try connection.query(Statements.coordinatorHeartbeat, [id])
    }

    /// The coordinator shut down gracefully.
    public func stopped(_ id: Int64) throws {
        try connection.query(Statements.coordinatorStopped, [id])
    }

    /// Coordinators heard from within `withinSeconds` (stopped ones included, marked so).
    public func list(withinSeconds: Double = 3600) throws -> [CoordinatorRecord] {
        try connection.query(Statements.listCoordinators, [withinSeconds]).rows.map { row in
            CoordinatorRecord(id: try row.int64("id"), address: try row.string("address"), host: try row.string("host"),
                              startedMillis: try row.int64("started_ms"), lastHeartbeatMillis: try row.int64("heartbeat_ms"),
                              heartbeatAgeMillis: try row.int64("age_ms"), stoppedMillis: try row.optionalInt64("stopped_ms"))
        }
    }

    /// Takes `lock` for this connection's session if no other session holds it. Held until
    /// `unlock` or until the connection closes (a killed coordinator's locks go with it).
    public func tryLock(_ lock: FarmLock) throws -> Bool {
        try connection.query(Statements.tryAdvisoryLock, [lock.key]).rows[0].string("locked") == "t"
    }

    /// Takes `lock` for this connection's session, waiting while another session holds it.
    public func lock(_ lock: FarmLock) throws {
        try connection.query(Statements.advisoryLock, [lock.key])
    }

    public func unlock(_ lock: FarmLock) throws {
        try connection.query(Statements.advisoryUnlock, [lock.key])
    }
}

/// Advisory locks naming work that one coordinator at a time does.
public enum FarmLock: Sendable {
    /// A storage sweep (`StorageSweeper`): deleting files while another sweep decides on the same ones.
    case storageSweep

    /// A constant per lock ("SW" + 1), the first half of its two-part key; the second is the
    /// farm's schema (`Statements.tryAdvisoryLock`). The migrations' lock ("REELMIGR") is a
    /// one-part key, a space of its own.
    var key: Int64 {
        switch self {
        case .storageSweep: 0x5357_0001
        }
    }
}

/// One coordinator as the registry knows it.
public struct CoordinatorRecord: Hashable, Sendable, Codable {
    public var id: Int64
    public var address: String
    public var host: String
    public var startedMillis: Int64
    public var lastHeartbeatMillis: Int64
    public var heartbeatAgeMillis: Int64
    /// When it shut down gracefully; `nil` while running (or killed: then its heartbeat ages).
    public var stoppedMillis: Int64?

    public init(id: Int64, address: String, host: String, startedMillis: Int64, lastHeartbeatMillis: Int64,
                heartbeatAgeMillis: Int64, stoppedMillis: Int64?) {
        self.id = id; self.address = address; self.host = host; self.startedMillis = startedMillis
        self.lastHeartbeatMillis = lastHeartbeatMillis; self.heartbeatAgeMillis = heartbeatAgeMillis; self.stoppedMillis = stoppedMillis
    }

    /// Running: not stopped, and heard from within `staleAfterMillis`.
    public func isAlive(staleAfterMillis: Int64) -> Bool { stoppedMillis == nil && heartbeatAgeMillis <= staleAfterMillis }
}
