/// The store's side of keeping stored files honest (issue 8): forgetting assets whose file is
/// gone, re-rendering tasks whose result is damaged, retention and job deletion. The files
/// themselves are the coordinator's; these methods say which may go and keep the rows in step.

/// What `deleteJob` freed: files the caller should remove.
public struct DeletedJob: Hashable, Sendable {
    /// The job's output file, if it had one.
    public var outputKey: String?
    /// Result hashes no remaining task references.
    public var unreferencedResults: [String]
}

extension JobStore {
    /// Asset rows for those of `hashes` the database holds.
    public func storedAssets(_ hashes: [String]) throws -> [AssetRecord] {
        try connection.query(Statements.storedAssets, [Self.textArray(hashes)]).rows.map { row in
            AssetRecord(sha256: try row.string("sha256"), size: try row.int64("size"), storedKey: try row.string("stored_key"))
        }
    }

    /// Forgets an asset whose file is missing or damaged, so the next `SUBMIT` asks for it again.
    public func forgetAsset(sha256: String) throws {
        try connection.query(Statements.forgetAsset, [sha256])
    }

    /// Sends a queued, unplanned job back to waiting for its assets (one turned out missing at
    /// planning); `reason` is shown as its error until the assets arrive. - Returns: whether it moved.
    @discardableResult
    public func returnJobToWaiting(_ job: Int64, reason: String) throws -> Bool {
        try connection.transaction { db in
            let moved = try db.query(Statements.returnJobToWaiting, [String(job), reason]).affectedRows == 1
            if moved { try appendEvent(db, job: job, kind: "waiting_for_assets", message: reason) }
            return moved
        }
    }

    /// The finaliser found the stored results of `tasks` missing or damaged: those tasks are
    /// queued again with fresh attempts, the job goes back to running, and the finalise task
    /// (held under `finalise`) is handed back un-attempted, to be claimed once they are done.
    /// - Throws: `.staleEpoch` when the finalise lease is no longer held (nothing changes).
    public func requeueDamagedResults(finalise: Lease, tasks: [Int64], reason: String) throws {
        try connection.transaction { db in
            try lockJob(db, of: finalise)
            guard let row = try db.query(Statements.releaseTask, fenced(finalise)).singleRow() else {
                throw JobStoreError.staleEpoch(task: finalise.task, epoch: finalise.epoch)
            }
            let job = try row.int64("job_id")
            try db.query(Statements.clearAgentTask, [String(finalise.agent), String(finalise.task)])
            for task in tasks {
                if try db.query(Statements.requeueDamagedTask, [String(task), reason]).affectedRows == 1 {
                    try appendEvent(db, job: job, task: task, kind: "requeued", message: reason)
                }
            }
            try db.query(Statements.countReusedTasks, [String(job)])
            try db.query(Statements.reopenFinalisingJob, [String(job)])
        }
    }

    // MARK: Retention

    /// Done jobs whose output finished before `cutoffMillis`.
    public func expiredOutputs(before cutoffMillis: Int64) throws -> [(job: Int64, key: String)] {
        try connection.query(Statements.expiredOutputs, [String(cutoffMillis)]).rows.map { (try $0.int64("id"), try $0.string("output_key")) }
    }

    /// Records that a job's output was deleted by retention (`OUTPUT` then says so).
    public func clearOutput(job: Int64, key: String) throws {
        try connection.transaction { db in
            if try db.query(Statements.clearOutput, [String(job), key]).affectedRows == 1 {
                try appendEvent(db, job: job, kind: "output_expired", message: key)
            }
        }
    }

    /// Result hashes some job still needs: those of unfinished jobs, of failed or cancelled jobs
    /// that ended after `cutoffMillis` (a retry reuses them), and of done jobs that finished after
    /// `doneCutoffMillis` (later jobs reuse them). `nil`: no cutoff, keep all.
    public func neededResultHashes(endedAfter cutoffMillis: Int64?, doneEndedAfter doneCutoffMillis: Int64?) throws -> Set<String> {
        Set(try connection.query(Statements.neededResultHashes, [cutoffMillis.map(String.init), doneCutoffMillis.map(String.init)])
            .rows.map { try $0.string("h") })
    }

    /// The epochs under which those of `tasks` are leased right now (a task not leased is absent):
    /// a partial result upload of any other task or epoch can never complete and may go.
    public func leasedEpochs(tasks: [Int64]) throws -> [Int64: Int64] {
        var out: [Int64: Int64] = [:]
        for row in try connection.query(Statements.leasedEpochs, [Self.integerArray(tasks)]).rows {
            out[try row.int64("id")] = try row.int64("epoch")
        }
        return out
    }

    /// Asset hashes some job still needs (same cutoff rule as results).
    public func neededAssetHashes(endedAfter cutoffMillis: Int64?) throws -> Set<String> {
        Set(try connection.query(Statements.neededAssetHashes, [cutoffMillis.map(String.init)]).rows.map { try $0.string("h") })
    }

    /// Forgets the asset unless a job still needs it, re-checked in the database at this moment
    /// (a `SUBMIT` records its job's assets before answering, so a job created meanwhile keeps
    /// it). - Returns: `true` when no job needs it and its file may be deleted.
    public func forgetAssetIfUnneeded(sha256: String, endedAfter cutoffMillis: Int64?) throws -> Bool {
        try connection.query(Statements.forgetUnneededAsset, [cutoffMillis.map(String.init), sha256]).rows[0].bool("unneeded")
    }

    // MARK: Deletion

    /// Deletes an ended (done, failed or cancelled) job with its tasks, events and asset
    /// references. - Returns: its output and the result hashes no other task references.
    /// - Throws: `.jobNotFound`, or `.conflict` while the job has not ended (cancel it first).
    public func deleteJob(_ job: Int64) throws -> DeletedJob {
        try connection.transaction { db in
            let state = try lockedJobState(db, job)
            guard state.isTerminal else { throw JobStoreError.conflict(job: job, state: state) }
            let output = try db.query(Statements.jobOutputKey, [String(job)]).singleRow()?["output_key"]
            let hashes = try db.query(Statements.jobResultHashes, [String(job)]).rows.map { try $0.string("h") }
            try db.query(Statements.deleteJob, [String(job)])
            let still = Set(try db.query(Statements.referencedResultHashes, [Self.textArray(hashes)]).rows.map { try $0.string("h") })
            try appendEvent(db, job: nil, kind: "job_deleted", message: "job \(job) (\(state.rawValue))")
            return DeletedJob(outputKey: output, unreferencedResults: hashes.filter { !still.contains($0) }.sorted())
        }
    }

    /// A `bigint[]` literal.
    static func integerArray(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    /// A `text[]` literal; values are quoted so any text is safe (nil is NULL).
    static func textArray(_ values: [String?]) -> String {
        "{" + values.map { value in
            value.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" } ?? "NULL"
        }.joined(separator: ",") + "}"
    }
}
