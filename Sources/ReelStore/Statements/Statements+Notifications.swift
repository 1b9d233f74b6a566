extension Statements {
    // MARK: Job-end notifications (migration 8)

    static let insertNotification = """
        INSERT INTO job_notifications (job_id, url) VALUES ($1::bigint, $2)
        """
    /// Claims notifications whose job has ended and whose next attempt is due by the clock
    /// (`$1`), soonest first, at most `$2`: their next attempt moves to `$3` (ms), so no other
    /// coordinator sends them meanwhile; rows another coordinator is claiming right now are
    /// skipped (`SKIP LOCKED`). A coordinator killed mid-delivery leaves the row due again at `$3`.
    static let claimDueNotifications = """
        UPDATE job_notifications n SET next_attempt_at = \(at(3))
        WHERE n.job_id IN (
            SELECT d.job_id FROM job_notifications d JOIN jobs j ON j.id = d.job_id
            WHERE d.state = 'pending' AND j.state IN \(terminalJobStates) AND d.next_attempt_at <= \(at(1))
            ORDER BY d.next_attempt_at, d.job_id LIMIT $2::integer
            FOR UPDATE OF d SKIP LOCKED)
        RETURNING n.job_id, n.url, n.attempts
        """
    /// When the next pending notification of an ended job is due (ms), if any.
    static let nextNotificationDue = """
        SELECT \(ms("min(n.next_attempt_at)")) AS due_ms FROM job_notifications n JOIN jobs j ON j.id = n.job_id
        WHERE n.state = 'pending' AND j.state IN \(terminalJobStates)
        """
    /// One attempt's outcome, recorded only by the attempt that claimed it (`$2 - 1` attempts
    /// before it, still pending): `$2` attempts so far, `$3` the new state (`pending`, `delivered`
    /// or `abandoned`), `$4` the next attempt's time (ms; ignored unless pending).
    static let recordNotificationAttempt = """
        UPDATE job_notifications SET attempts = $2::integer, state = $3,
               next_attempt_at = CASE WHEN $3 = 'pending' THEN \(at(4)) ELSE next_attempt_at END
        WHERE job_id = $1::bigint AND state = 'pending' AND attempts = $2::integer - 1
        """
    static let notificationOfJob = """
        SELECT url, attempts, state FROM job_notifications WHERE job_id = $1::bigint
        """
}
