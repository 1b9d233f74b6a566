import ReelScheduling
// The operator console's reads (`ConsoleQueries`).

extension Statements {
    static let consoleJobExists = "SELECT id FROM jobs WHERE id = $1::bigint"

    /// Each task with its latest claim's agent (the holder while leased) and latest failure, and
    /// its agent time and price as a job's cost counts them (`jobCost`).
    static let consoleTasksWithAgents = """
        WITH failures AS (
            SELECT DISTINCT ON (f.task_id) f.task_id, f.agent_name || ': ' || f.message AS message
            FROM task_failures f JOIN tasks ft ON ft.id = f.task_id WHERE ft.job_id = $1::bigint
            ORDER BY f.task_id, f.id DESC)
        SELECT t.id, t.kind, t.ordinal, t.frame_start, t.frame_end, t.state, t.attempts, t.max_attempts, t.progress_frames,
               t.error, f.message AS last_failure, a.name AS agent_name,
               \(ms("t.claimed_at")) AS claimed_ms, \(ms("t.finished_at")) AS finished_ms,
               \(taskAgentMilliseconds("t")) AS agent_ms, price.cost_per_hour
        FROM tasks t
        LEFT JOIN agents a ON a.id = coalesce(t.lease_owner, t.last_agent)
        LEFT JOIN failures f ON f.task_id = t.id
        \(taskPrice("t"))
        WHERE t.job_id = $1::bigint
        ORDER BY \(claimRank("t.kind")), t.ordinal
        """

    static let consoleJobEvents = """
        SELECT e.id, e.kind, e.message, \(ms("e.at")) AS at_ms, e.task_id, t.kind AS task_kind, t.ordinal, t.frame_start,
               t.frame_end, a.name AS agent_name
        FROM events e
        LEFT JOIN tasks t ON t.id = e.task_id
        LEFT JOIN agents a ON a.id = e.agent_id
        WHERE e.job_id = $1::bigint AND e.id > $2::bigint
        ORDER BY e.id LIMIT $3::integer
        """
}
