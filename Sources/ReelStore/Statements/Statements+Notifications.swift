extension Statements {
    // MARK: Job-end notifications (migration 8)

    static let insertNotification = """
        INSERT INTO job_notifications (job_id, url) VALUES ($1::bigint, $2)
        """
    /// Notifications whose job has ended and whose next attempt is due by the clock (`$1`),
    /// soonest first, at most `$2`.
    static let dueNotifications = """
        SELECT n.job_id, n.url, n.attempts FROM job_notifications n JOIN jobs j ON j.id = n.job_id
        WHERE n.state = 'pending' AND j.state IN \(terminalJobStates) AND n.next_attempt_at <= \(at(1))
        ORDER BY n.next_attempt_at, n.job_id LIMIT $2::integer
        """
    /// When the next pending notification of an ended job is due (ms), if any.
    static let nextNotificationDue = """
        SELECT \(ms("min(n.next_attempt_at)")) AS due_ms FROM job_notifications n JOIN jobs j ON j.id = n.job_id
        WHERE n.state = 'pending' AND j.state IN \(terminalJobStates)
        """
    /// One attempt's outcome: `$2` attempts so far, `$3` the new state (`pending`, `delivered`
    /// or `abandoned`), `$4` the next attempt's time (ms; ignored unless pending).
    static let recordNotificationAttempt = """
        UPDATE job_notifications SET attempts = $2::integer, state = $3,
               next_attempt_at = CASE WHEN $3 = 'pending' THEN \(at(4)) ELSE next_attempt_at END
        WHERE job_id = $1::bigint AND state = 'pending'
        """
    static let notificationOfJob = """
        SELECT url, attempts, state FROM job_notifications WHERE job_id = $1::bigint
        """
}
