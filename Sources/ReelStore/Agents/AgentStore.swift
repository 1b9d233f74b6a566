import ReelScheduling

/// Agents: registration (by unique name), connection state, the `AGENTS` list, and forgetting
/// agents long offline. Their failure history and quarantine are written by the lifecycle
/// (`LifecycleStore.fail`), which decides them.
public struct AgentStore: Sendable {
    let connection: PGConnection

    /// Registers (or re-registers, by unique name) an agent as online.
    /// - Returns: the agent id.
    public func register(name: String, host: String, capabilities: String) throws -> Int64 {
        try registration(name: name, host: host, capabilities: capabilities).id
    }

    /// `register`, also saying whether the agent is to drain: it was asked while it was away
    /// (its state stays `draining` until it leaves).
    /// `costPerHour`: what the agent (this slot) costs an hour from now on; nil: it names no
    /// price. Recorded only when it differs from the agent's latest (`agent_prices`).
    public func registration(name: String, host: String, capabilities: String, costPerHour: Double? = nil) throws -> (id: Int64, draining: Bool) {
        let row = try connection.query(Statements.registerAgent, [name, host, capabilities, costPerHour]).rows[0]
        return (try row.int64("id"), try row.value("state", as: AgentState.self) == .draining)
    }

    /// Marks an agent online, draining or offline (offline also clears its current task pointer;
    /// a closed connection is `LifecycleStore.agentDisconnected`, which also shortens its leases).
    public func setState(_ agent: Int64, _ state: AgentState) throws {
        try connection.query(Statements.setAgentState, [agent, state])
    }

    /// Asks the live agents named `name`, or `name/…` (the slots of one agent process), to
    /// drain: those that understand it are marked draining and every coordinator is told
    /// (`LISTEN reel`: `<schema> drain <id>`). - Returns: every live agent matched, and
    /// whether it could be asked (an agent too old for `DRAIN` cannot).
    public func requestDrain(name: String) throws -> [(id: Int64, name: String, canDrain: Bool)] {
        try connection.query(Statements.requestDrain, [name]).rows.map {
            (try $0.int64("id"), try $0.string("name"), try $0.bool("can_drain"))
        }
    }

    public func list() throws -> [AgentRecord] {
        try connection.query(Statements.listAgents).rows.map { row in
            AgentRecord(id: try row.int64("id"), name: try row.string("name"), host: try row.string("host"),
                        capabilities: try row.string("capabilities"), state: try row.value("state"),
                        lastHeartbeatMillis: try row.int64("heartbeat_ms"), heartbeatAgeMillis: try row.int64("age_ms"),
                        currentTask: try row.optionalInt64("current_task"),
                        quarantinedUntilMillis: try row.optionalInt64("quarantined_ms"), lastError: row["last_error"],
                        failures: try row.int("failures"))
        }
    }

    /// Forgets agents offline since before `cutoffMillis` (and holding no lease), except the
    /// coordinator's own finaliser row. - Returns: their names.
    @discardableResult
    public func forgetOffline(before cutoffMillis: Int64, keeping finaliser: String) throws -> [String] {
        try connection.query(Statements.forgetOfflineAgents, [cutoffMillis, finaliser]).rows.map { try $0.string("name") }
    }
}

/// An agent as `reel agents` shows it.
public struct AgentRecord: Hashable, Sendable {
    public var id: Int64
    public var name: String
    public var host: String
    /// Capabilities JSON as the coordinator stored it.
    public var capabilities: String
    public var state: AgentState
    public var lastHeartbeatMillis: Int64
    /// Milliseconds since the last heartbeat, by the database clock.
    public var heartbeatAgeMillis: Int64
    public var currentTask: Int64?
    /// Set while the agent is quarantined (gets no work): when it is let back, ms since the Unix epoch.
    public var quarantinedUntilMillis: Int64? = nil
    /// The agent's latest `FAIL` reason.
    public var lastError: String? = nil
    /// `FAIL`s recorded against it (of tasks the farm still keeps).
    public var failures: Int = 0
}
