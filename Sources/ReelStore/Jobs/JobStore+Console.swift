// Reads for the operator console and `reel events`: a job's tasks with the agent that holds
// (or last held) each and its latest failure, and a job's history with agent names. Read-only;
// every statement is bounded by the job's own rows (the events and task_failures indexes).

/// One task of a job with who ran it, for the console's chunk strip.
public struct ConsoleTaskRecord: Hashable, Sendable {
    public var id: Int64
    public var kind: JobTaskKind
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
}

/// One event of a job's history with names resolved.
public struct ConsoleEventRecord: Hashable, Sendable {
    public var id: Int64
    public var kind: String
    public var message: String
    public var atMillis: Int64
    public var taskID: Int64?
    public var taskKind: JobTaskKind?
    public var taskOrdinal: Int?
    public var frameStart: Int64?
    public var frameEnd: Int64?
    public var agentName: String?
}

extension JobStore {
    /// Every task of `job` (audio, chunks in order, finalise); `nil` if there is no such job.
    public func consoleTasks(ofJob job: Int64) throws -> [ConsoleTaskRecord]? {
        try connection.transaction { db -> [ConsoleTaskRecord]? in
            guard try db.query(ConsoleStatements.jobExists, [String(job)]).singleRow() != nil else { return nil }
            return try db.query(ConsoleStatements.tasksWithAgents, [String(job)]).rows.map { row in
                guard let kind = JobTaskKind(rawValue: try row.string("kind")), let state = TaskState(rawValue: try row.string("state")) else {
                    throw PGError(sqlState: nil, message: "unknown task kind or state in task \(row["id"] ?? "")")
                }
                return ConsoleTaskRecord(
                    id: try row.int64("id"), kind: kind, ordinal: try row.int("ordinal"), frameStart: try row.int64("frame_start"),
                    frameEnd: try row.int64("frame_end"), state: state, attempts: try row.int("attempts"),
                    maxAttempts: try row.int("max_attempts"), progressFrames: try row.int64("progress_frames"),
                    agentName: row["agent_name"], claimedAtMillis: try row.optionalInt64("claimed_ms"),
                    finishedAtMillis: try row.optionalInt64("finished_ms"), error: row["error"] ?? row["last_failure"])
            }
        }
    }

    /// `job`'s events after event id `after`, oldest first, at most `limit`; `nil` if there is no such job.
    public func consoleEvents(job: Int64, after: Int64, limit: Int) throws -> [ConsoleEventRecord]? {
        try connection.transaction { db -> [ConsoleEventRecord]? in
            guard try db.query(ConsoleStatements.jobExists, [String(job)]).singleRow() != nil else { return nil }
            return try db.query(ConsoleStatements.jobEvents, [String(job), String(after), String(limit)]).rows.map { row in
                ConsoleEventRecord(
                    id: try row.int64("id"), kind: try row.string("kind"), message: try row.string("message"), atMillis: try row.int64("at_ms"),
                    taskID: try row.optionalInt64("task_id"), taskKind: row["task_kind"].flatMap(JobTaskKind.init(rawValue:)),
                    taskOrdinal: try row.optionalInt64("ordinal").map(Int.init), frameStart: try row.optionalInt64("frame_start"),
                    frameEnd: try row.optionalInt64("frame_end"), agentName: row["agent_name"])
            }
        }
    }
}

/// The console's statements (kept apart from `Statements` so the two evolve independently).
enum ConsoleStatements {
    private static func ms(_ column: String) -> String { "(extract(epoch FROM \(column)) * 1000)::bigint" }

    static let jobExists = "SELECT id FROM jobs WHERE id = $1::bigint"

    /// Each task with its latest claim's agent (the holder while leased) and latest failure.
    static let tasksWithAgents = """
        WITH failures AS (
            SELECT DISTINCT ON (f.task_id) f.task_id, f.agent_name || ': ' || f.message AS message
            FROM task_failures f JOIN tasks ft ON ft.id = f.task_id WHERE ft.job_id = $1::bigint
            ORDER BY f.task_id, f.id DESC)
        SELECT t.id, t.kind, t.ordinal, t.frame_start, t.frame_end, t.state, t.attempts, t.max_attempts, t.progress_frames,
               t.error, f.message AS last_failure, a.name AS agent_name,
               \(ms("t.claimed_at")) AS claimed_ms, \(ms("t.finished_at")) AS finished_ms
        FROM tasks t
        LEFT JOIN agents a ON a.id = coalesce(t.lease_owner, t.last_agent)
        LEFT JOIN failures f ON f.task_id = t.id
        WHERE t.job_id = $1::bigint
        ORDER BY CASE t.kind WHEN 'audio' THEN 0 WHEN 'video_chunk' THEN 1 ELSE 2 END, t.ordinal
        """

    static let jobEvents = """
        SELECT e.id, e.kind, e.message, \(ms("e.at")) AS at_ms, e.task_id, t.kind AS task_kind, t.ordinal, t.frame_start,
               t.frame_end, a.name AS agent_name
        FROM events e
        LEFT JOIN tasks t ON t.id = e.task_id
        LEFT JOIN agents a ON a.id = e.agent_id
        WHERE e.job_id = $1::bigint AND e.id > $2::bigint
        ORDER BY e.id LIMIT $3::integer
        """
}
