import ReelScheduling

/// One task of a job with who ran it, for the console's chunk strip.
public struct ConsoleTaskRecord: Hashable, Sendable {
    public var id: Int64
    public var kind: TaskKind
    public var ordinal: Int
    public var frameStart: Int64
    public var frameEnd: Int64
    public var state: TaskState
    public var attempts: Int
    public var maxAttempts: Int
    /// Frames reported by `PROGRESS` (the whole range once done).
    public var progressFrames: Int64
    /// The lease holder while leased, else the agent of the latest claim.
    public var agentName: String?
    /// The latest claim (ms since the Unix epoch).
    public var claimedAtMillis: Int64?
    public var finishedAtMillis: Int64?
    /// The task's error column, else its latest recorded failure.
    public var error: String?
    /// Its agent time as its job's cost counts it (`Statements.taskAgentMilliseconds`): nil
    /// when it has none.
    public var agentMilliseconds: Int64? = nil
    /// The price an hour of the agent (slot) that claimed it, as it was then; nil: none.
    public var costPerHour: Double? = nil
}

/// One event of a job's history with names resolved.
public struct ConsoleEventRecord: Hashable, Sendable {
    public var id: Int64
    public var kind: String
    public var message: String
    public var atMillis: Int64
    public var taskID: Int64?
    public var taskKind: TaskKind?
    public var taskOrdinal: Int?
    public var frameStart: Int64?
    public var frameEnd: Int64?
    public var agentName: String?
}

/// Reads for the operator console and `reel events`: a job's tasks with the agent that holds
/// (or last held) each and its latest failure, and a job's history with agent names. Read-only;
/// every statement is bounded by the job's own rows (the events and task_failures indexes).
public struct ConsoleQueries: Sendable {
    let connection: PGConnection

    /// Every task of `job` in claim order (audio, chunks in order, finalise); `nil` if there is no such job.
    public func tasks(ofJob job: Int64) throws -> [ConsoleTaskRecord]? {
        try connection.transaction { db -> [ConsoleTaskRecord]? in
            guard try db.query(Statements.consoleJobExists, [job]).singleRow() != nil else { return nil }
            return try db.query(Statements.consoleTasksWithAgents, [job]).rows.map { row in
                ConsoleTaskRecord(
                    id: try row.int64("id"), kind: try row.value("kind"), ordinal: try row.int("ordinal"), frameStart: try row.int64("frame_start"),
                    frameEnd: try row.int64("frame_end"), state: try row.value("state"), attempts: try row.int("attempts"),
                    maxAttempts: try row.int("max_attempts"), progressFrames: try row.int64("progress_frames"),
                    agentName: row["agent_name"], claimedAtMillis: try row.optionalInt64("claimed_ms"),
                    finishedAtMillis: try row.optionalInt64("finished_ms"), error: row["error"] ?? row["last_failure"],
                    agentMilliseconds: try row.optionalInt64("agent_ms"),
                    costPerHour: try row.optionalDouble("cost_per_hour"))
            }
        }
    }

    /// `job`'s events after event id `after`, oldest first, at most `limit`; `nil` if there is no such job.
    public func events(job: Int64, after: Int64, limit: Int) throws -> [ConsoleEventRecord]? {
        try connection.transaction { db -> [ConsoleEventRecord]? in
            guard try db.query(Statements.consoleJobExists, [job]).singleRow() != nil else { return nil }
            return try db.query(Statements.consoleJobEvents, [job, after, limit]).rows.map { row in
                ConsoleEventRecord(
                    id: try row.int64("id"), kind: try row.string("kind"), message: try row.string("message"), atMillis: try row.int64("at_ms"),
                    taskID: try row.optionalInt64("task_id"), taskKind: row["task_kind"].flatMap(TaskKind.init(rawValue:)),
                    taskOrdinal: try row.optionalInt64("ordinal").map(Int.init), frameStart: try row.optionalInt64("frame_start"),
                    frameEnd: try row.optionalInt64("frame_end"), agentName: row["agent_name"])
            }
        }
    }
}


extension JobCost {
    /// A job's cost from its tasks as `ConsoleQueries.tasks(ofJob:)` lists them: the sum
    /// `Statements.jobCost` makes in the database, for a caller that has read the rows anyway.
    public init(tasks: [ConsoleTaskRecord]) {
        let timed = tasks.filter { $0.agentMilliseconds != nil }
        let priced = timed.filter { $0.costPerHour != nil }
        self.init(agentSeconds: Double(timed.reduce(Int64(0)) { $0 + ($1.agentMilliseconds ?? 0) }) / 1000,
                  runningSeconds: Double(timed.filter { $0.state == .leased }.reduce(Int64(0)) { $0 + ($1.agentMilliseconds ?? 0) }) / 1000,
                  cost: priced.isEmpty ? nil : priced.reduce(0.0) { $0 + Double($1.agentMilliseconds ?? 0) * ($1.costPerHour ?? 0) } / 3_600_000,
                  unpricedTasks: timed.count - priced.count)
    }
}
