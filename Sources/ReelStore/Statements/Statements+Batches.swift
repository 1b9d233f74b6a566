// Batches (`BatchStore`): opening one, and reading its jobs in row order. A job joins its
// batch when it is created (`insertJob`'s `$6`, `$7`).

extension Statements {
    static let insertBatch = "INSERT INTO batches (name, rows) VALUES ($1, $2::integer) RETURNING id"
    static let batchRecord = """
        SELECT id, name, rows, \(ms("created_at")) AS created_ms FROM batches WHERE id = $1::bigint
        """
    /// Job `j` is a batch's and waits, without tasks, for the batch's first row (its lowest
    /// submitted) to end: planned after it, it finds the chunks the rows share stored, and
    /// reuses them instead of rendering them once per row.
    static let heldForBatchLead = """
        (j.batch_id IS NOT NULL AND (SELECT f.id <> j.id AND f.state NOT IN \(terminalJobStates)
                                     FROM jobs f WHERE f.batch_id = j.batch_id ORDER BY f.batch_row LIMIT 1))
        """
    static let jobIsHeldForBatchLead = "SELECT 1 FROM jobs j WHERE j.id = $1::bigint AND \(heldForBatchLead)"
    /// The jobs without tasks of the batch whose first row is job `$1`, once `$1` has ended.
    static let jobsReleasedByBatchLead = """
        SELECT j.id FROM jobs l JOIN jobs j ON j.batch_id = l.batch_id AND j.id <> l.id
        WHERE l.id = $1::bigint AND l.state IN \(terminalJobStates) AND j.state = 'queued'
          AND l.batch_row = (SELECT min(f.batch_row) FROM jobs f WHERE f.batch_id = l.batch_id)
          AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = j.id)
        ORDER BY j.batch_row
        """
    /// How many rows of batch `$1` have a job (the `jobs_batch_row` index).
    static let batchJobCount = "SELECT count(*) AS n FROM jobs WHERE batch_id = $1::bigint"
    /// Whether row `$2` of batch `$1` has a job already.
    static let batchRowTaken = "SELECT 1 FROM jobs WHERE batch_id = $1::bigint AND batch_row = $2::integer"
    /// Every job of batch `$1` in row order, each as `jobSummary` reads a job, with the time
    /// agents spent on its tasks so far (as `jobAgentMilliseconds`, for tasks that ended).
    static let batchJobSummaries = """
        SELECT \(jobSummaryColumns), j.batch_row,
               (SELECT coalesce(sum(\(ms("t.finished_at")) - \(ms("t.claimed_at"))), 0) FROM tasks t
                WHERE t.job_id = j.id AND t.claimed_at IS NOT NULL AND t.finished_at IS NOT NULL AND NOT t.reused) AS agent_ms
        FROM jobs j \(leasedOfJob) WHERE j.batch_id = $1::bigint ORDER BY j.batch_row
        """
}
