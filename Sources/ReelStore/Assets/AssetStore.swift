import ReelScheduling
/// Stored files, by content: source assets, task results (found again by content key for
/// reuse) and job outputs, with what retention and garbage collection may delete. The files
/// themselves are the coordinator's; these methods say which may go and keep the rows in step.
public struct AssetStore: Sendable {
    let connection: PGConnection

    // MARK: Assets

    /// Records a stored, verified asset and releases every waiting job that now has all its
    /// assets (`LifecycleStore`'s rule, in the same transaction). - Returns: the jobs released to `queued`.
    @discardableResult
    public func stored(sha256: String, size: Int64, storedKey: String) throws -> [Int64] {
        try connection.transaction { db in
            try db.query(Statements.recordAsset, [sha256, size, storedKey])
            return try LifecycleStore.assetArrived(db, sha256: sha256)
        }
    }

    public func asset(sha256: String) throws -> AssetRecord? {
        try connection.query(Statements.asset, [sha256]).singleRow().map(Self.asset)
    }

    /// Asset rows for those of `hashes` the database holds.
    public func records(_ hashes: [String]) throws -> [AssetRecord] {
        try connection.query(Statements.storedAssets, [hashes]).rows.map(Self.asset)
    }

    /// The hashes among `hashes` that are not stored, sorted.
    public func missing(_ hashes: [String]) throws -> [String] {
        try connection.query(Statements.missingAssets, [hashes]).rows.map { try $0.string("h") }
    }

    /// Forgets an asset whose file is missing or damaged, so the next `SUBMIT` (or `PUT`) stores it again.
    public func forget(sha256: String) throws {
        try connection.query(Statements.forgetAsset, [sha256])
    }

    /// Asset hashes some job still needs (same cutoff rule as results).
    public func neededAssetHashes(endedAfter cutoffMillis: Int64?) throws -> Set<String> {
        Set(try connection.query(Statements.neededAssetHashes, [cutoffMillis]).rows.map { try $0.string("h") })
    }

    /// Forgets the asset unless a job still needs it, re-checked in the database at this moment
    /// (a `SUBMIT` records its job's assets before answering, so a job created meanwhile keeps
    /// it). - Returns: `true` when no job needs it and its file may be deleted.
    public func forgetIfUnneeded(sha256: String, endedAfter cutoffMillis: Int64?) throws -> Bool {
        try connection.query(Statements.forgetUnneededAsset, [cutoffMillis, sha256]).rows[0].bool("unneeded")
    }

    // MARK: Results

    /// The newest stored result of a done task (any job) for each of `contentKeys` that has one.
    /// The caller checks that the file is still in storage (retention may have removed it).
    public func results(forContentKeys contentKeys: [String]) throws -> [String: TaskResult] {
        guard !contentKeys.isEmpty else { return [:] }
        var found: [String: TaskResult] = [:]
        for row in try connection.query(Statements.resultsByContentKey, [contentKeys]).rows {
            found[try row.string("content_key")] = TaskResult(sha256: try row.string("result_sha256"), size: try row.int64("result_size"),
                                                              key: try row.string("result_key"))
        }
        return found
    }

    /// For each of `renditionKeys` (HLS ladder renditions, `TaskRendition.key`) that a done
    /// task holds, the newest stored ladder archive with its chunk (member `<name>.mp4`). The
    /// caller checks that the file is still in storage.
    public func archives(forRenditionKeys renditionKeys: [String]) throws -> [String: TaskResult] {
        guard !renditionKeys.isEmpty else { return [:] }
        var found: [String: TaskResult] = [:]
        for row in try connection.query(Statements.archivesByRenditionKey, [renditionKeys]).rows {
            found[try row.string("rendition_key")] = TaskResult(sha256: try row.string("sha256"), size: try row.int64("size"),
                                                                key: try row.string("stored_key"))
        }
        return found
    }

    /// Result hashes some job still needs: those of unfinished jobs, of failed or cancelled jobs
    /// that ended after `cutoffMillis` (a retry reuses them), and of done jobs that finished after
    /// `doneCutoffMillis` (later jobs reuse them), with the ladder archives those jobs' chunks
    /// take renditions from. `nil`: no cutoff, keep all.
    public func neededResultHashes(endedAfter cutoffMillis: Int64?, doneEndedAfter doneCutoffMillis: Int64?) throws -> Set<String> {
        Set(try connection.query(Statements.neededResultHashes, [cutoffMillis, doneCutoffMillis]).rows.map { try $0.string("h") })
    }

    // MARK: Outputs

    /// Done jobs whose output finished before `cutoffMillis`.
    public func expiredOutputs(before cutoffMillis: Int64) throws -> [(job: Int64, key: String)] {
        try connection.query(Statements.expiredOutputs, [cutoffMillis]).rows.map { (try $0.int64("id"), try $0.string("output_key")) }
    }

    /// Records that a job's output was deleted by retention (`OUTPUT` then says so).
    public func clearOutput(job: Int64, key: String) throws {
        try connection.transaction { db in
            if try db.query(Statements.clearOutput, [job, key]).affectedRows == 1 {
                try EventLog.append(db, job: job, kind: "output_expired", message: key)
            }
        }
    }

    private static func asset(_ row: PGRow) throws -> AssetRecord {
        AssetRecord(sha256: try row.string("sha256"), size: try row.int64("size"), storedKey: try row.string("stored_key"))
    }
}

/// A stored source asset, by content hash.
public struct AssetRecord: Hashable, Sendable {
    public var sha256: String
    public var size: Int64
    public var storedKey: String
}
