import ReelScheduling

/// Job transitions: the operator's actions (cancel, retry, pause, resume, priority), a job
/// waiting for its assets, failing before it has tasks, and the finaliser finding damaged results.
extension LifecycleStore {
    /// Cancels a job that has not ended and then its queued and leased tasks (holders get
    /// `LOST` on their next heartbeat): `markCancelled`, then `stopOpenTasks` until none is left.
    /// - Throws: `.jobNotFound`, or `.conflict` when the job already ended.
    public func cancel(job: Int64) throws {
        try markCancelled(job: job)
        while try stopOpenTasks(ofJob: job) > 0 {}
    }

    /// Cancels a job that has not ended, in a constant number of statements whatever its size:
    /// from now on none of its tasks is claimed. Its open tasks are cancelled afterwards, in
    /// batches (`stopOpenTasks`), so that an operator's cancel of a 15,000-chunk job answers at
    /// once and holds no request of anyone else behind thousands of row updates.
    /// - Throws: `.jobNotFound`, or `.conflict` when the job already ended.
    public func markCancelled(job: Int64) throws {
        try connection.transaction { db in
            let state = try Self.lockedState(db, job)
            guard try db.query(Statements.cancelJob, [job]).singleRow() != nil else { throw StoreError.conflict(job: job, state: state) }
            try EventLog.append(db, job: job, kind: "cancelled", message: "")
        }
    }

    /// Cancels up to `limit` open tasks of a job cancelled by `markCancelled` (none once it was
    /// retried). One short transaction. - Returns: how many it cancelled (0: none left, or the
    /// rest are locked right now; `jobsWithTasksToStop` still lists the job then).
    @discardableResult
    public func stopOpenTasks(ofJob job: Int64, limit: Int = 2_000) throws -> Int {
        try connection.query(Statements.stopOpenTasks, [job, limit]).singleRow()?.int("stopped") ?? 0
    }

    /// Cancelled jobs whose open tasks are still to be stopped.
    public func jobsWithTasksToStop() throws -> [Int64] {
        try connection.query(Statements.jobsWithTasksToStop).rows.map { try $0.int64("id") }
    }

    /// Retries a failed or cancelled job: its failed and cancelled tasks are queued again
    /// with a fresh set of attempts; done tasks are kept.
    /// - Throws: `.jobNotFound`, or `.conflict` unless the job is failed or cancelled.
    public func retry(job: Int64) throws {
        try connection.transaction { db in
            let state = try Self.lockedState(db, job)
            guard try db.query(Statements.retryJob, [job]).singleRow() != nil else { throw StoreError.conflict(job: job, state: state) }
            try db.query(Statements.requeueTasksForRetry, [job])
            try EventLog.append(db, job: job, kind: "retried", message: "")
        }
    }

    /// The operator pauses (`paused: true`) or resumes a job that has not ended. A paused job's
    /// tasks are not claimed; leases already held run to their end. The caller wakes the
    /// dispatcher after a resume. - Returns: whether anything changed.
    /// - Throws: `.jobNotFound`, `.conflict` when the job already ended, or `.pausedByBudget`
    ///   for a resume of a job its budget paused (`setBudget` resumes it).
    @discardableResult
    public func setPaused(job: Int64, _ paused: Bool) throws -> Bool {
        try connection.transaction { db in
            let state = try Self.lockedState(db, job)
            guard let row = try db.query(Statements.setJobPaused, [job, paused]).singleRow() else {
                if state.isTerminal { throw StoreError.conflict(job: job, state: state) }
                throw StoreError.pausedByBudget(job: job)
            }
            let changed = try row.bool("changed")
            if changed { try EventLog.append(db, job: job, kind: paused ? "paused" : "resumed", message: "") }
            return changed
        }
    }

    /// Sets a job's priority (higher is claimed first, among jobs of any age).
    /// - Throws: `.jobNotFound`, or `.conflict` when the job already ended.
    public func setPriority(job: Int64, _ priority: Int) throws {
        try connection.transaction { db in
            let state = try Self.lockedState(db, job)
            guard try db.query(Statements.setJobPriority, [job, priority]).singleRow() != nil else {
                throw StoreError.conflict(job: job, state: state)
            }
            try EventLog.append(db, job: job, kind: "priority", message: "\(priority)")
        }
    }

    /// Fails a job that has not ended (e.g. its composition could not be split into tasks); its
    /// open tasks are cancelled.
    public func failJob(_ job: Int64, message: String) throws {
        try connection.transaction { db in
            try Self.failJob(db, job: job, message: message)
        }
    }

    /// Sends a queued job without tasks back to waiting for its assets (one turned out missing
    /// before it was split); `reason` is shown as its error until the assets arrive.
    /// - Returns: whether it moved.
    @discardableResult
    public func returnToWaiting(job: Int64, reason: String) throws -> Bool {
        try connection.transaction { db in
            let moved = try db.query(Statements.returnJobToWaiting, [job, reason]).affectedRows == 1
            if moved { try EventLog.append(db, job: job, kind: "waiting_for_assets", message: reason) }
            return moved
        }
    }

    /// The finaliser, holding `finalise`, found the stored results of `tasks` (render tasks of
    /// the same job) missing or damaged: those tasks are queued again with fresh attempts, the
    /// job goes back to running, and the finalise task is handed back un-attempted, to be
    /// claimed once they are done.
    /// - Throws: `.staleEpoch` when the finalise lease is no longer held (nothing changes).
    /// `lostSources`: stored ladder archives found missing or damaged that the job's chunks took
    /// renditions from; those renditions are the chunks' own again (they encode them).
    public func requeueDamagedResults(finalise: Lease, tasks: [Int64], reason: String, lostSources: [String] = []) throws {
        try connection.transaction { db in
            try Self.lockJob(db, of: finalise)
            let job = try Self.release(db, finalise)
            if !lostSources.isEmpty { try db.query(Statements.releaseRenditionSources, [job, lostSources]) }
            try db.query(Statements.requeueDamagedTasks, [job, tasks, reason])
            try db.query(Statements.countReusedTasks, [job])
            try db.query(Statements.reopenFinalisingJob, [job])
        }
    }

    /// Waiting jobs that read `sha256` and now have every asset stored are queued, inside the
    /// transaction that recorded the asset. - Returns: the jobs released.
    static func assetArrived(_ db: PGConnection, sha256: String) throws -> [Int64] {
        var released: [Int64] = []
        for row in try db.query(Statements.waitingJobsForAsset, [sha256]).rows {
            let job = try row.int64("job_id")
            if try db.query(Statements.releaseWaitingJob, [job]).affectedRows == 1 { released.append(job) }
        }
        return released
    }

    /// A new job waiting for its assets that already has them all is queued at once.
    static func releaseIfAssetsStored(_ db: PGConnection, job: Int64) throws {
        try db.query(Statements.releaseWaitingJob, [job])
    }

    static func lockedState(_ db: PGConnection, _ job: Int64) throws -> JobState {
        guard let row = try db.query(Statements.lockedJobState, [job]).singleRow() else { throw StoreError.jobNotFound(job) }
        return try row.value("state")
    }

    static func failJob(_ db: PGConnection, job: Int64, message: String) throws {
        try db.query(Statements.failJob, [job, message])
        try db.query(Statements.cancelOpenTasks, [job])
        try EventLog.append(db, job: job, kind: "job_failed", message: message)
    }
}
