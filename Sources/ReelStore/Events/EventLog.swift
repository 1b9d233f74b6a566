import ReelScheduling
/// What happened, in order: one row per claim, result, failure, expiry, operator action, …
/// (`reel events`, the console's job history). Appended by the other parts inside their own
/// transactions.
public struct EventLog: Sendable {
    let connection: PGConnection

    public func append(job: Int64?, task: Int64? = nil, agent: Int64? = nil, kind: String, message: String) throws {
        try Self.append(connection, job: job, task: task, agent: agent, kind: kind, message: message)
    }

    /// Events in order, optionally of one job, after event id `after`.
    public func list(job: Int64? = nil, after: Int64 = 0, limit: Int = 1000) throws -> [EventRecord] {
        try connection.query(Statements.listEvents, [job, after, limit]).rows.map { row in
            EventRecord(id: try row.int64("id"), jobID: try row.optionalInt64("job_id"), taskID: try row.optionalInt64("task_id"),
                        agentID: try row.optionalInt64("agent_id"), kind: try row.string("kind"),
                        message: try row.string("message"), atMillis: try row.int64("at_ms"))
        }
    }

    /// The message of the job's newest event of `kind`, if it has one (a done job's loudness
    /// figures, for `STATUS job=`).
    public func latestMessage(job: Int64, kind: String) throws -> String? {
        try connection.query(Statements.latestEventOfKind, [job, kind]).rows.first.map { try $0.string("message") }
    }

    static func append(_ db: PGConnection, job: Int64?, task: Int64? = nil, agent: Int64? = nil, kind: String, message: String) throws {
        try db.query(Statements.appendEvent, [job, task, agent, kind, message])
    }
}

/// One line of a job's history.
public struct EventRecord: Hashable, Sendable {
    public var id: Int64
    public var jobID: Int64?
    public var taskID: Int64?
    public var agentID: Int64?
    public var kind: String
    public var message: String
    public var atMillis: Int64
}
