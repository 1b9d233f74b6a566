import ReelScheduling
// Events (`EventLog`): a job's history, and the farm's.

extension Statements {
    static let appendEvent = """
        INSERT INTO events (job_id, task_id, agent_id, kind, message) VALUES ($1::bigint, $2::bigint, $3::bigint, $4, $5)
        """
    static let listEvents = """
        SELECT id, job_id, task_id, agent_id, kind, message, \(ms("at")) AS at_ms FROM events
        WHERE ($1::bigint IS NULL OR job_id = $1::bigint) AND id > $2::bigint ORDER BY id LIMIT $3::integer
        """
    /// The newest event of one kind for one job (a done job's loudness figures, for `STATUS`).
    static let latestEventOfKind = """
        SELECT message FROM events WHERE job_id = $1::bigint AND kind = $2 ORDER BY id DESC LIMIT 1
        """
}
