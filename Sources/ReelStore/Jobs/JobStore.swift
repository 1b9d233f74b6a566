import ReelScheduling

/// Jobs and their tasks as records: creating a job, splitting it into tasks (with its render
/// plan), its documents, the summaries `STATUS` shows, and deletion. State transitions are the
/// lifecycle's (`LifecycleStore`); a new job's first state is set here, and released by it.
public struct JobStore: Sendable {
    let connection: PGConnection

    /// Creates a job and its tasks atomically. The job starts `queued`, or `waiting` when
    /// `job.waitingForAssets` (then it is queued once every asset is stored).
    /// - Returns: the job id.
    public func create(_ job: NewJob) throws -> Int64 {
        try connection.transaction { db in
            let state: JobState = job.waitingForAssets ? .waiting : .queued
            let id = try db.query(Statements.insertJob, [state, job.composition, job.renderPlan, job.settings, job.priority,
                                                         job.batch?.batch, job.batch?.row, job.budget?.amount,
                                                         job.budget?.unit.rawValue]).rows[0].int64("id")
            try Self.insertTasks(db, job: id, job.tasks)
            if !job.tasks.isEmpty { try db.query(Statements.assignClaimTurn, [id]) }
            if let url = job.notifyURL { try db.query(Statements.insertNotification, [id, url]) }
            for hash in job.assets {
                try db.query(Statements.insertJobAsset, [id, hash])
            }
            if job.waitingForAssets { try LifecycleStore.releaseIfAssetsStored(db, job: id) }
            try EventLog.append(db, job: id, kind: "submitted", message: "\(job.tasks.count) tasks")
            return id
        }
    }

    /// Queued jobs without tasks: released from `waiting` but not split into tasks yet.
    public func jobsWithoutTasks() throws -> [Int64] {
        try connection.query(Statements.jobsWithoutTasks).rows.map { try $0.int64("id") }
    }

    /// Stores a job's render plan and creates its tasks, once: returns `false` (and changes
    /// nothing) when the job already has tasks, so two coordinators racing on one job are
    /// harmless. `document` names the render plan document agents fetch (content-addressed,
    /// already stored); `renderPlan` is the plan inline, empty when `document` holds it (the
    /// coordinator's way: the row does not keep a second copy of a stored document). `videoEncoder` is the encoder its video chunks need: only agents that
    /// have it claim them.
    @discardableResult
    public func createTasks(job: Int64, renderPlan: String, document: RenderPlanReference? = nil, videoEncoder: String? = nil,
                            tasks: [NewTask]) throws -> Bool {
        try connection.transaction { db in
            guard try db.query(Statements.lockJob, [job]).singleRow() != nil else { throw StoreError.jobNotFound(job) }
            guard try db.query(Statements.jobHasTasks, [job]).singleRow() == nil else { return false }
            try db.query(Statements.setJobRenderPlan, [job, renderPlan, document?.sha256, document?.size, videoEncoder])
            if let document {
                try db.query(Statements.insertJobAsset, [job, document.sha256])
            }
            try Self.insertTasks(db, job: job, tasks)
            let reused = tasks.filter { $0.reusedResult != nil }.count
            if reused > 0 { try db.query(Statements.recordReusedAtSplit, [job]) }
            try EventLog.append(db, job: job, kind: "planned", message: "\(tasks.count) tasks" + (reused > 0 ? ", \(reused) reused" : ""))
            return true
        }
    }

    /// Refreshes the planner's statistics of the tasks table (`ANALYZE tasks`, ~0.3 s at
    /// 115,000 tasks). Right after a large job's tasks go in, the statistics still say few
    /// tasks are queued, and the claim's "which jobs have queued tasks" query is planned as a
    /// bitmap scan over every queued task of every job: 5–8 ms a claim batch instead of 0.2 ms
    /// until autovacuum's next analyze, a minute or more later.
    public func refreshTaskStatistics() throws {
        try connection.query("ANALYZE tasks")
    }

    /// Records the render plan document of a job split before migration 3 (made from a task's
    /// inline specification at its first claim); a job that has one keeps it.
    public func adoptRenderPlanDocument(job: Int64, document: RenderPlanReference) throws {
        try connection.transaction { db in
            try db.query(Statements.adoptRenderPlanDocument, [job, document.sha256, document.size])
            try db.query(Statements.insertJobAsset, [job, document.sha256])
        }
    }

    /// All of `tasks` in one statement (a 100,000-task job is one round trip).
    static func insertTasks(_ db: PGConnection, job: Int64, _ tasks: [NewTask]) throws {
        guard !tasks.isEmpty else { return }
        let inserted = try db.query(Statements.insertTasks, [
            job, tasks.map(\.kind), tasks.map(\.ordinal), tasks.map(\.frameStart), tasks.map(\.frameEnd), tasks.map(\.spec),
            tasks.map(\.maxAttempts), tasks.map(\.contentKey), tasks.map { $0.reusedResult?.sha256 },
            tasks.map { $0.reusedResult?.size }, tasks.map { $0.reusedResult?.key },
        ])
        guard tasks.contains(where: { !$0.renditions.isEmpty }) else { return }
        var ids: [String: Int64] = [:]
        for row in inserted.rows { ids["\(try row.string("kind"))/\(try row.int("ordinal"))"] = try row.int64("id") }
        var taskIDs: [Int64] = [], positions: [Int] = [], names: [String] = [], keys: [String] = []
        var sources: [String?] = [], sizes: [Int64?] = [], storedKeys: [String?] = []
        for task in tasks where !task.renditions.isEmpty {
            guard let id = ids["\(task.kind.rawValue)/\(task.ordinal)"] else { continue }
            for (position, rendition) in task.renditions.enumerated() {
                taskIDs.append(id); positions.append(position); names.append(rendition.name); keys.append(rendition.key)
                sources.append(rendition.source?.sha256); sizes.append(rendition.source?.size); storedKeys.append(rendition.source?.key)
            }
        }
        try db.query(Statements.insertTaskRenditions, [taskIDs, positions, names, keys, sources, sizes, storedKeys])
    }

    /// The renditions of the job's ladder chunk tasks (task id → renditions in the ladder's
    /// order); empty for a job that is no ladder or was planned before migration 10.
    public func renditions(ofJob job: Int64) throws -> [Int64: [TaskRendition]] {
        var found: [Int64: [TaskRendition]] = [:]
        for row in try connection.query(Statements.renditionsOfJob, [job]).rows {
            var source: TaskResult?
            if let sha = row["source_sha256"], let key = row["source_key"] {
                source = TaskResult(sha256: sha, size: try row.int64("source_size"), key: key)
            }
            found[try row.int64("task_id"), default: []].append(
                TaskRendition(name: try row.string("name"), key: try row.string("rendition_key"), source: source))
        }
        return found
    }

    /// Per-state task counts, frames and times of one job; `nil` if there is no such job.
    public func summary(_ job: Int64) throws -> JobSummary? {
        try connection.query(Statements.jobSummary, [job]).singleRow().map(Self.summary)
    }

    /// Seconds agents spent on `job`'s tasks (`Statements.jobAgentMilliseconds`): 0 for a
    /// job none of whose tasks an agent rendered, or no such job.
    public func agentSeconds(_ job: Int64) throws -> Double {
        let milliseconds = try connection.query(Statements.jobAgentMilliseconds, [job]).singleRow()?.int64("agent_ms") ?? 0
        return Double(milliseconds) / 1000
    }

    /// What `job` cost so far (`Statements.jobCost`): all zero for a job no agent has worked
    /// on, or no such job.
    public func cost(_ job: Int64) throws -> JobCost {
        guard let row = try connection.query(Statements.jobCost, [job]).singleRow() else { return JobCost() }
        return JobCost(agentSeconds: Double(try row.int64("agent_ms")) / 1000, runningSeconds: Double(try row.int64("running_ms")) / 1000,
                       cost: try row.optionalDouble("cost"), unpricedTasks: try row.int("unpriced"))
    }

    /// The farm's history for estimates (`Statements.renderHistory`): up to `limit` recent done
    /// jobs rendered whole by agents, newest first, each with its render plan (JSON, inline, or
    /// empty and in its stored document: `JobDocuments.renderPlan`) and cost.
    public func renderHistory(limit: Int) throws -> [(job: Int64, renderPlan: String, document: RenderPlanReference?, cost: JobCost)] {
        try connection.query(Statements.renderHistory, [limit]).rows.map { row in
            (try row.int64("id"), try row.string("plan"), try Self.renderPlanReference(row),
             JobCost(agentSeconds: Double(try row.int64("agent_ms")) / 1000, cost: try row.optionalDouble("cost")))
        }
    }

    /// The most recent jobs, newest first.
    public func recent(limit: Int = 50) throws -> [JobSummary] {
        try connection.query(Statements.recentJobSummaries, [limit]).rows.map(Self.summary)
    }

    /// The job's composition, render plan and settings documents as stored.
    public func documents(_ job: Int64) throws -> JobDocuments? {
        guard let row = try connection.query(Statements.jobDocuments, [job]).singleRow() else { return nil }
        return JobDocuments(composition: try row.string("composition"), renderPlan: try row.string("plan"), settings: try row.string("settings"),
                            renderPlanDocument: try Self.renderPlanReference(row))
    }

    static func renderPlanReference(_ row: PGRow) throws -> RenderPlanReference? {
        guard let sha256 = row["plan_sha256"] else { return nil }
        return RenderPlanReference(sha256: sha256, size: try row.int64("plan_size"))
    }

    /// Every task of a job in claim order (audio, then chunks in order, then finalise): the
    /// finaliser reads chunk results in order from these.
    public func tasks(ofJob job: Int64) throws -> [TaskRecord] {
        try connection.query(Statements.tasksOfJob, [job]).rows.map { row in
            var result: TaskResult?
            if let sha = row["result_sha256"], let key = row["result_key"] {
                result = TaskResult(sha256: sha, size: try row.int64("result_size"), key: key)
            }
            return TaskRecord(id: try row.int64("id"), kind: try row.value("kind"), ordinal: try row.int("ordinal"),
                              frameStart: try row.int64("frame_start"), frameEnd: try row.int64("frame_end"), state: try row.value("state"),
                              attempts: try row.int("attempts"), epoch: try row.int64("epoch"), result: result)
        }
    }

    /// "job J task T frames [a, b)" for each of `tasks` that exists (the agents report).
    public func taskLabels(_ tasks: [Int64]) throws -> [Int64: String] {
        guard !tasks.isEmpty else { return [:] }
        var labels: [Int64: String] = [:]
        for row in try connection.query(Statements.taskLabels, [tasks]).rows {
            let id = try row.int64("id")
            labels[id] = "job \(try row.int64("job_id")) task \(id) frames [\(try row.int64("frame_start")), \(try row.int64("frame_end")))"
        }
        return labels
    }

    /// Queued and leased tasks that agents can take now, by the encoder each needs
    /// (`TaskKind.encoder(videoEncoder:)`; `TaskKind.finaliseCapability` for finalise tasks,
    /// counted only with `finalise`, when agents run them): what a scaler sizes the farm by.
    public func workload(finalise: Bool) throws -> [String: (queued: Int, leased: Int)] {
        var out: [String: (queued: Int, leased: Int)] = [:]
        func add(_ kind: TaskKind, _ videoEncoder: String?, queued: Int, leased: Int) {
            guard queued > 0 || leased > 0 else { return }
            let encoder = kind.encoder(videoEncoder: videoEncoder) ?? "any"
            let entry = out[encoder] ?? (0, 0)
            out[encoder] = (entry.queued + queued, entry.leased + leased)
        }
        for row in try connection.query(Statements.workload).rows {
            let paused = try row.bool("paused"), videoEncoder = row["video_encoder"]
            let videoLeased = try row.int("video_leased"), audioLeased = try row.int("audio_leased")
            let audioQueued = try row.int("audio_queued")
            // Queued or leased render tasks, less those leased and the queued audio: queued video chunks.
            let videoQueued = max(0, try row.int("open_render") - videoLeased - audioLeased - audioQueued)
            add(.videoChunk, videoEncoder, queued: paused ? 0 : videoQueued, leased: videoLeased)
            add(.audio, videoEncoder, queued: paused ? 0 : audioQueued, leased: audioLeased)
            if finalise {
                let queued = try row.bool("rendered") && !paused ? try row.int("finalise_queued") : 0
                add(.finalise, videoEncoder, queued: queued, leased: try row.int("finalise_leased"))
            }
        }
        return out
    }

    /// Number of jobs and of tasks in each state (for metrics gauges).
    public func stateCounts() throws -> (jobs: [String: Int], tasks: [String: Int]) {
        func counts(_ sql: String) throws -> [String: Int] {
            var out: [String: Int] = [:]
            for row in try connection.query(sql).rows { out[try row.string("state")] = try row.int("n") }
            return out
        }
        return (try counts(Statements.jobStateCounts), try counts(Statements.taskStateCounts))
    }

    /// Deletes an ended (done, failed or cancelled) job with its tasks, events and asset
    /// references. - Returns: its output and the result hashes no other task references.
    /// - Throws: `.jobNotFound`, or `.conflict` while the job has not ended (cancel it first).
    public func delete(_ job: Int64) throws -> DeletedJob {
        try connection.transaction { db in
            let state = try LifecycleStore.lockedState(db, job)
            guard state.isTerminal else { throw StoreError.conflict(job: job, state: state) }
            let output = try db.query(Statements.jobOutputKey, [job]).singleRow()?["output_key"]
            let hashes = try db.query(Statements.jobResultHashes, [job]).rows.map { try $0.string("h") }
            try db.query(Statements.deleteJob, [job])
            let still = Set(try db.query(Statements.referencedResultHashes, [hashes]).rows.map { try $0.string("h") })
            try EventLog.append(db, job: nil, kind: "job_deleted", message: "job \(job) (\(state.rawValue))")
            return DeletedJob(outputKey: output, unreferencedResults: hashes.filter { !still.contains($0) }.sorted())
        }
    }

    static func summary(_ row: PGRow) throws -> JobSummary {
        let total = try row.int("render_tasks"), done = try row.int("tasks_done"), failed = try row.int("tasks_failed")
        let cancelled = try row.int("tasks_cancelled"), leased = try row.int("leased")
        let counts: [TaskState: Int] = [.done: done, .failed: failed, .cancelled: cancelled, .leased: leased,
                                        .queued: max(0, total - done - failed - cancelled - leased)]
        return JobSummary(
            id: try row.int64("id"), state: try row.value("state"), error: row["error"],
            outputKey: row["output_key"], taskCounts: counts, settings: try row.string("settings"), priority: try row.int("priority"),
            paused: try row.bool("paused"), framesTotal: try row.int64("frames_total"),
            framesDone: try row.int64("frames_done") + row.int64("frames_in_progress"), createdAtMillis: try row.int64("created_ms"),
            startedAtMillis: try row.optionalInt64("started_ms"), updatedAtMillis: try row.int64("updated_ms"),
            finishedAtMillis: try row.optionalInt64("finished_ms"), runStartedAtMillis: try row.optionalInt64("run_started_ms"),
            runFramesBase: try row.int64("run_frames_base"), tasksReused: try row.int("tasks_reused"), videoEncoder: row["video_encoder"],
            pauseReason: row["pause_reason"].flatMap(PauseReason.init(rawValue:)),
            budget: try row.optionalDouble("budget").flatMap { amount in
                row["budget_unit"].flatMap(JobBudget.Unit.init(rawValue:)).map { JobBudget(amount: amount, unit: $0) } })
    }
}
