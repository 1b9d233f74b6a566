import ReelScheduling

/// Job-end notifications (`reel submit --notify URL`): one row per job that asked for one,
/// pending until a POST to its URL succeeds (delivered) or the retry policy gives up
/// (abandoned). The row is written with the job, so a notification survives a coordinator
/// restart; it becomes due when the job ends, however it ends.
public struct NotificationStore: Sendable {
    let connection: PGConnection

    /// Claims the notifications of ended jobs due by `nowMillis`, soonest first: each is this
    /// caller's to send until `claimUntilMillis` (then due again, should the caller die before
    /// recording its outcome). Concurrent callers (several coordinators) get disjoint sets.
    public func due(nowMillis: Int64, claimUntilMillis: Int64, limit: Int = 16) throws -> [DueNotification] {
        try connection.query(Statements.claimDueNotifications, [nowMillis, limit, claimUntilMillis]).rows.map {
            DueNotification(job: try $0.int64("job_id"), url: try $0.string("url"), attempts: try $0.int("attempts"))
        }.sorted { $0.job < $1.job }
    }

    /// When the next notification of an ended job is due (ms), or `nil` if none is pending.
    public func nextDueMillis() throws -> Int64? {
        try connection.query(Statements.nextNotificationDue).rows.first?.optionalInt64("due_ms")
    }

    /// Records one attempt and its event in one transaction: `outcome` says what happened and
    /// what comes next. Nothing is recorded when another attempt was recorded meanwhile.
    /// - Returns: whether it was recorded.
    @discardableResult
    public func record(job: Int64, attempts: Int, outcome: NotificationOutcome, message: String) throws -> Bool {
        try connection.transaction { db in
            let (state, next, kind): (String, Int64, String)
            switch outcome {
            case .delivered: (state, next, kind) = ("delivered", 0, "notified")
            case .retryAt(let millis): (state, next, kind) = ("pending", millis, "notify_failed")
            case .abandoned: (state, next, kind) = ("abandoned", 0, "notify_abandoned")
            }
            guard try db.query(Statements.recordNotificationAttempt, [job, attempts, state, next]).affectedRows == 1 else { return false }
            try EventLog.append(db, job: job, kind: kind, message: message)
            return true
        }
    }

    /// The job's notification as stored (tests, status).
    public func of(job: Int64) throws -> (url: String, attempts: Int, state: String)? {
        guard let row = try connection.query(Statements.notificationOfJob, [job]).rows.first else { return nil }
        return (try row.string("url"), try row.int("attempts"), try row.string("state"))
    }
}

/// A notification to send now.
public struct DueNotification: Hashable, Sendable {
    public var job: Int64
    public var url: String
    /// Attempts made before this one.
    public var attempts: Int
}

/// What one attempt to notify ended in.
public enum NotificationOutcome: Hashable, Sendable {
    case delivered
    /// It failed; the next attempt is due at this time (ms).
    case retryAt(Int64)
    /// It failed and no attempt follows.
    case abandoned
}
