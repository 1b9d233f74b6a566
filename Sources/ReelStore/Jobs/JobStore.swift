import ReelCore
/// Jobs, tasks, leases, agents, events and assets in PostgreSQL — the farm's only durable
/// state. Every operation that changes state is one transaction (or one statement) on the
/// store's connection, built from the named statements in `Statements`; a claim reads before
/// its one leasing statement without holding a transaction open (see `claimTasks`).
///
/// Leases: a claim sets owner, expiry and a new fencing epoch; every holder operation
/// (`renew`, `recordProgress`, `complete`, `fail`, `release`) presents its `Lease` and is
/// refused with `JobStoreError.staleEpoch` unless task, epoch and owner are still current.
///
/// Lock order, the same in every transaction, so that no two can deadlock: a job row
/// (`FOR NO KEY UPDATE`), then its task rows, then agent rows. A claim is the exception that
/// keeps the rule: its leasing statement locks only tasks, with `SKIP LOCKED` (it never waits
/// for one), then agents, and never a job row (the job is marked running in a statement of its
/// own afterwards). Every other task state change locks the task's job first
/// (`Statements.lockJobOfTask`), which also serialises the job's counters (migration 3).
///
/// `@unchecked Sendable` like its `PGConnection`: use one store from one thread at a time
/// (the coordinator gives each store its own connection and worker).
public final class JobStore: @unchecked Sendable {
    public let connection: PGConnection
    /// The time lease rules read (grant, renewal, expiry, grace); tests move it instead of sleeping.
    public let clock: FarmClock

    public init(connection: PGConnection, clock: FarmClock = .wall) {
        self.connection = connection
        self.clock = clock
    }

    /// `clock`'s now, as a statement parameter.
    var now: String { String(clock.nowMillis()) }

    // MARK: Jobs

    /// Creates a job and its tasks atomically. The job starts `queued`, or `waiting` when
    /// `job.waitingForAssets` (then `assetStored` releases it once every asset is stored).
    /// - Returns: the job id.
    public func createJob(_ job: NewJob) throws -> Int64 {
        try connection.transaction { db in
            let state: JobState = job.waitingForAssets ? .waiting : .queued
            let id = try db.query(Statements.insertJob, [state.rawValue, job.composition, job.plan, job.settings, String(job.priority)])
                .rows[0].int64("id")
            try insertTasks(db, job: id, job.tasks)
            for hash in job.assets {
                try db.query(Statements.insertJobAsset, [String(id), hash])
            }
            if job.waitingForAssets {
                try db.query(Statements.releaseWaitingJob, [String(id)])
            }
            try appendEvent(db, job: id, kind: "submitted", message: "\(job.tasks.count) tasks")
            return id
        }
    }

    // MARK: Planning (coordinator)

    /// Queued jobs without tasks: released from `waiting` but not planned yet.
    public func unplannedJobs() throws -> [Int64] {
        try connection.query(Statements.unplannedJobs).rows.map { try $0.int64("id") }
    }

    /// Stores a job's plan and creates its tasks, once: returns `false` (and changes nothing)
    /// when the job already has tasks, so two planners racing on one job are harmless.
    /// `document` names the plan document agents fetch (content-addressed, already stored).
    /// `videoEncoder` is the encoder its video chunks need: only agents that have it claim them.
    @discardableResult
    public func setPlan(job: Int64, plan: String, document: PlanDocumentReference? = nil, videoEncoder: String? = nil,
                        tasks: [NewTask]) throws -> Bool {
        try connection.transaction { db in
            guard try db.query(Statements.lockJob, [String(job)]).singleRow() != nil else { throw JobStoreError.jobNotFound(job) }
            guard try db.query(Statements.jobHasTasks, [String(job)]).singleRow() == nil else { return false }
            try db.query(Statements.setJobPlan, [String(job), plan, document?.sha256, document.map { String($0.size) }, videoEncoder])
            if let document {
                try db.query(Statements.insertJobAsset, [String(job), document.sha256])
            }
            try insertTasks(db, job: job, tasks)
            let reused = tasks.filter { $0.reusedResult != nil }.count
            if reused > 0 { try db.query(Statements.recordReusedAtPlanning, [String(job)]) }
            try appendEvent(db, job: job, kind: "planned", message: "\(tasks.count) tasks" + (reused > 0 ? ", \(reused) reused" : ""))
            return true
        }
    }

    /// Records the plan document of a job planned before migration 3 (made from a task's
    /// inline specification at its first claim); a job that has one keeps it.
    public func adoptPlanDocument(job: Int64, document: PlanDocumentReference) throws {
        try connection.transaction { db in
            try db.query(Statements.adoptPlanDocument, [String(job), document.sha256, String(document.size)])
            try db.query(Statements.insertJobAsset, [String(job), document.sha256])
        }
    }

    /// All of `tasks` in one statement (a 100,000-task job is one round trip).
    func insertTasks(_ db: PGConnection, job: Int64, _ tasks: [NewTask]) throws {
        guard !tasks.isEmpty else { return }
        try db.query(Statements.insertTasks, [
            String(job), Self.textArray(tasks.map(\.kind.rawValue)), Self.integerArray(tasks.map { Int64($0.ordinal) }),
            Self.integerArray(tasks.map(\.frameStart)), Self.integerArray(tasks.map(\.frameEnd)), Self.textArray(tasks.map(\.spec)),
            Self.integerArray(tasks.map { Int64($0.maxAttempts) }), Self.textArray(tasks.map(\.contentKey)),
            Self.textArray(tasks.map { $0.reusedResult?.sha256 }), Self.integerArray(tasks.map { $0.reusedResult?.size }),
            Self.textArray(tasks.map { $0.reusedResult?.key }),
        ])
    }

    /// The newest stored result of a done task (any job) for each of `contentKeys` that has one.
    /// The caller checks that the file is still in storage (retention may have removed it).
    public func results(forContentKeys contentKeys: [String]) throws -> [String: TaskResult] {
        guard !contentKeys.isEmpty else { return [:] }
        var found: [String: TaskResult] = [:]
        for row in try connection.query(Statements.resultsByContentKey, [Self.textArray(contentKeys)]).rows {
            found[try row.string("content_key")] = TaskResult(sha256: try row.string("result_sha256"), size: try row.int64("result_size"),
                                                              key: try row.string("result_key"))
        }
        return found
    }

    /// Fails a job that has not ended (e.g. its composition could not be planned); its open
    /// tasks are cancelled.
    public func failJob(_ job: Int64, message: String) throws {
        try connection.transaction { db in
            try failJob(db, job: job, message: message)
        }
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

    /// Extends a live lease to now + `leaseSeconds`; also the holder's sign of life (`last_heartbeat`).
    /// - Returns: the new expiry (ms since the Unix epoch).
    /// - Throws: `JobStoreError.staleEpoch` when the lease is no longer held or has expired.
    public func renewLease(_ lease: Lease, leaseSeconds: Double) throws -> Int64 {
        guard let row = try connection.query(Statements.renewLease, fenced(lease) + [String(leaseSeconds), now]).singleRow() else {
            throw JobStoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
        }
        return try row.int64("expires_ms")
    }

    /// Records frames done (for status) and the holder's sign of life; does not renew the lease.
    public func recordProgress(_ lease: Lease, frames: Int64) throws {
        let result = try connection.query(Statements.recordProgress, fenced(lease) + [String(frames)])
        guard result.rows.count == 1 else { throw JobStoreError.staleEpoch(task: lease.task, epoch: lease.epoch) }
    }

    /// The job of the task `lease` names, if the lease still holds (nil when it does not).
    public func jobOfLease(_ lease: Lease) throws -> Int64? {
        try connection.query(Statements.jobOfLease, fenced(lease)).singleRow().map { try $0.int64("job_id") }
    }

    /// Accepts a verified result under the current lease. Completing the finalise task
    /// completes the job (its output is the finalise task's result key).
    /// - Throws: `JobStoreError.staleEpoch` when another epoch or owner holds the task.
    @discardableResult
    public func complete(_ lease: Lease, result: TaskResult) throws -> Completion {
        try connection.transaction { db in
            try lockJob(db, of: lease)
            guard let row = try db.query(Statements.completeTask, fenced(lease) + [result.sha256, String(result.size), result.key])
                .singleRow() else {
                throw JobStoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
            }
            let job = try row.int64("job_id")
            try db.query(Statements.clearAgentTask, [String(lease.agent), String(lease.task)])
            var jobDone = false
            if try row.string("kind") == JobTaskKind.finalise.rawValue {
                jobDone = try db.query(Statements.finishJob, [String(job), result.key]).affectedRows == 1
            } else {
                try db.query(Statements.touchJob, [String(job)])
            }
            try appendEvent(db, job: job, task: lease.task, agent: lease.agent, kind: "completed",
                            message: "\(result.size) bytes sha256 \(result.sha256)")
            let frames = try row.string("kind") == JobTaskKind.videoChunk.rawValue ? try row.int64("frames") : 0
            return Completion(jobID: job, jobDone: jobDone, frames: frames)
        }
    }

    /// Reports a failed attempt: the task is re-queued while attempts remain; on the last
    /// attempt the task and its job fail (and the job's other open tasks are cancelled).
    public func fail(_ lease: Lease, message: String) throws -> FailureOutcome {
        try connection.transaction { db in
            try lockJob(db, of: lease)
            guard let row = try db.query(Statements.failTask, fenced(lease) + [message]).singleRow() else {
                throw JobStoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
            }
            let job = try row.int64("job_id")
            try db.query(Statements.clearAgentTask, [String(lease.agent), String(lease.task)])
            try appendEvent(db, job: job, task: lease.task, agent: lease.agent, kind: "failed", message: message)
            if try row.string("state") == TaskState.failed.rawValue {
                try failJob(db, job: job, message: "task \(lease.task) failed: \(message)")
                return .jobFailed(jobID: job)
            }
            return .requeued(attemptsLeft: try row.int("attempts_left"))
        }
    }

    /// Hands a task back un-attempted (agent draining): queued again, attempt not counted.
    public func release(_ lease: Lease) throws {
        try connection.transaction { db in
            try lockJob(db, of: lease)
            guard let row = try db.query(Statements.releaseTask, fenced(lease)).singleRow() else {
                throw JobStoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
            }
            try db.query(Statements.clearAgentTask, [String(lease.agent), String(lease.task)])
            try appendEvent(db, job: try row.int64("job_id"), task: lease.task, agent: lease.agent, kind: "released", message: "")
        }
    }

    /// Re-queues every task whose lease has expired (or fails it, and its job, if that was
    /// its last attempt). Run periodically by the coordinator; safe to run concurrently. One
    /// transaction per job, job row first (the store's lock order).
    /// - Returns: the leases that were expired.
    public func expireLeases() throws -> [ExpiredLease] {
        var all: [ExpiredLease] = []
        for row in try connection.query(Statements.jobsWithExpiredLeases, [now]).rows {
            let job = try row.int64("job_id")
            all += try connection.transaction { db -> [ExpiredLease] in
                guard try db.query(Statements.lockJob, [String(job)]).singleRow() != nil else { return [] }
                let expired = try db.query(Statements.expireLeasesOfJob, [String(job), now]).rows.map { row in
                    ExpiredLease(task: try row.int64("id"), jobID: try row.int64("job_id"), epoch: try row.int64("epoch"),
                                 agent: try row.optionalInt64("old_owner"), newState: TaskState(rawValue: try row.string("state")) ?? .failed)
                }
                for lease in expired {
                    if let agent = lease.agent {
                        try db.query(Statements.clearAgentTask, [String(agent), String(lease.task)])
                    }
                    try appendEvent(db, job: lease.jobID, task: lease.task, agent: lease.agent, kind: "lease_expired",
                                    message: "epoch \(lease.epoch) → \(lease.newState.rawValue)")
                }
                if let last = expired.first(where: { $0.newState == .failed }) {
                    try failJob(db, job: job, message: "task \(last.task): lease expired on its last attempt")
                }
                return expired
            }
        }
        return all
    }

    /// The holder `agent`'s connection closed: each lease it holds now ends within
    /// `graceSeconds`, unless the agent reconnects and heartbeats first (re-attaching: the
    /// lease renews as usual). - Returns: the tasks whose lease was shortened.
    @discardableResult
    public func shortenLeases(of agent: Int64, graceSeconds: Double) throws -> [Int64] {
        // One row per statement: never two task locks at once outside a job lock.
        try connection.query(Statements.leasesOfAgent, [String(agent)]).rows.compactMap { row in
            let task = try row.int64("id")
            let shortened = try connection.query(Statements.shortenLease, [String(task), String(agent), String(graceSeconds), now])
            return shortened.affectedRows == 1 ? task : nil
        }
    }

    /// Cancels a job that has not ended; its queued and leased tasks are cancelled (holders
    /// get `LOST` on their next heartbeat).
    /// - Throws: `.jobNotFound`, or `.conflict` when the job already ended.
    public func cancelJob(_ job: Int64) throws {
        try connection.transaction { db in
            let state = try lockedJobState(db, job)
            guard !state.isTerminal else { throw JobStoreError.conflict(job: job, state: state) }
            try db.query(Statements.cancelJob, [String(job)])
            try db.query(Statements.cancelOpenTasks, [String(job)])
            try appendEvent(db, job: job, kind: "cancelled", message: "")
        }
    }

    /// Pauses (`paused: true`) or resumes a job that has not ended. A paused job's tasks are
    /// not claimed; leases already held run to their end. The caller wakes the dispatcher
    /// after a resume. - Returns: whether anything changed.
    /// - Throws: `.jobNotFound`, or `.conflict` when the job already ended.
    @discardableResult
    public func setPaused(_ job: Int64, _ paused: Bool) throws -> Bool {
        try connection.transaction { db in
            let state = try lockedJobState(db, job)
            guard !state.isTerminal else { throw JobStoreError.conflict(job: job, state: state) }
            let changed = try db.query(Statements.setJobPaused, [String(job), paused ? "true" : "false"]).singleRow() != nil
            if changed { try appendEvent(db, job: job, kind: paused ? "paused" : "resumed", message: "") }
            return changed
        }
    }

    /// Sets a job's priority (higher is claimed first, among jobs of any age).
    /// - Throws: `.jobNotFound`, or `.conflict` when the job already ended.
    public func setPriority(_ job: Int64, _ priority: Int) throws {
        try connection.transaction { db in
            let state = try lockedJobState(db, job)
            guard !state.isTerminal else { throw JobStoreError.conflict(job: job, state: state) }
            try db.query(Statements.setJobPriority, [String(job), String(priority)])
            try appendEvent(db, job: job, kind: "priority", message: "\(priority)")
        }
    }

    /// Retries a failed or cancelled job: its failed and cancelled tasks are queued again
    /// with a fresh set of attempts; done tasks are kept.
    /// - Throws: `.jobNotFound`, or `.conflict` unless the job is failed or cancelled.
    public func retryJob(_ job: Int64) throws {
        try connection.transaction { db in
            let state = try lockedJobState(db, job)
            guard state == .failed || state == .cancelled else { throw JobStoreError.conflict(job: job, state: state) }
            try db.query(Statements.requeueTasksForRetry, [String(job)])
            try db.query(Statements.retryJob, [String(job)])
            try appendEvent(db, job: job, kind: "retried", message: "")
        }
    }

    /// Per-state task counts, frames and times of one job; `nil` if there is no such job.
    public func jobSummary(_ job: Int64) throws -> JobSummary? {
        try connection.query(Statements.jobSummary, [String(job)]).singleRow().map(JobStore.summary)
    }

    /// The most recent jobs, newest first.
    public func recentJobs(limit: Int = 50) throws -> [JobSummary] {
        try connection.query(Statements.recentJobSummaries, [String(limit)]).rows.map(JobStore.summary)
    }

    /// The job's composition, plan and settings documents as stored.
    public func jobDocuments(_ job: Int64) throws -> (composition: String, plan: String, settings: String)? {
        guard let row = try connection.query(Statements.jobDocuments, [String(job)]).singleRow() else { return nil }
        return (try row.string("composition"), try row.string("plan"), try row.string("settings"))
    }

    /// Every task of a job, audio first, then chunks in order, then finalise (for the
    /// finaliser: chunk results in order).
    public func tasks(ofJob job: Int64) throws -> [TaskRecord] {
        try connection.query(Statements.tasksOfJob, [String(job)]).rows.map { row in
            guard let kind = JobTaskKind(rawValue: try row.string("kind")), let state = TaskState(rawValue: try row.string("state")) else {
                throw PGError(sqlState: nil, message: "unknown task kind or state in task \(row["id"] ?? "")")
            }
            var result: TaskResult?
            if let sha = row["result_sha256"], let key = row["result_key"] {
                result = TaskResult(sha256: sha, size: try row.int64("result_size"), key: key)
            }
            return TaskRecord(id: try row.int64("id"), kind: kind, ordinal: try row.int("ordinal"),
                              frameStart: try row.int64("frame_start"), frameEnd: try row.int64("frame_end"), state: state,
                              attempts: try row.int("attempts"), epoch: try row.int64("epoch"), result: result)
        }
    }

    /// "job J task T frames [a, b)" for each of `tasks` that exists (the agents report).
    public func taskLabels(_ tasks: [Int64]) throws -> [Int64: String] {
        guard !tasks.isEmpty else { return [:] }
        var labels: [Int64: String] = [:]
        for row in try connection.query(Statements.taskLabels, [Self.integerArray(tasks)]).rows {
            let id = try row.int64("id")
            labels[id] = "job \(try row.int64("job_id")) task \(id) frames [\(try row.int64("frame_start")), \(try row.int64("frame_end")))"
        }
        return labels
    }

    // MARK: Agents

    /// Registers (or re-registers, by unique name) an agent as online.
    /// - Returns: the agent id.
    public func registerAgent(name: String, host: String, capabilities: String) throws -> Int64 {
        try connection.query(Statements.registerAgent, [name, host, capabilities]).rows[0].int64("id")
    }

    /// Marks an agent online, draining or offline (offline also clears its current task pointer;
    /// its lease, if any, runs out and is re-queued by `expireLeases`).
    public func setAgentState(_ agent: Int64, _ state: AgentState) throws {
        try connection.query(Statements.setAgentState, [String(agent), state.rawValue])
    }

    public func agents() throws -> [AgentRecord] {
        try connection.query(Statements.listAgents).rows.map { row in
            AgentRecord(id: try row.int64("id"), name: try row.string("name"), host: try row.string("host"),
                        capabilities: try row.string("capabilities"), state: AgentState(rawValue: try row.string("state")) ?? .offline,
                        lastHeartbeatMillis: try row.int64("heartbeat_ms"), heartbeatAgeMillis: try row.int64("age_ms"),
                        currentTask: try row.optionalInt64("current_task"),
                        quarantinedUntilMillis: try row.optionalInt64("quarantined_ms"), lastError: row["last_error"],
                        failures: try row.int("failures"))
        }
    }

    // MARK: Events

    public func appendEvent(job: Int64?, task: Int64? = nil, agent: Int64? = nil, kind: String, message: String) throws {
        try appendEvent(connection, job: job, task: task, agent: agent, kind: kind, message: message)
    }

    /// The message of the job's newest event of `kind`, if it has one.
    public func latestEventMessage(job: Int64, kind: String) throws -> String? {
        try connection.query(Statements.latestEventOfKind, [String(job), kind]).rows.first.map { try $0.string("message") }
    }

    /// Events in order, optionally of one job, after event id `after`.
    public func events(job: Int64? = nil, after: Int64 = 0, limit: Int = 1000) throws -> [EventRecord] {
        try connection.query(Statements.listEvents, [job.map(String.init), String(after), String(limit)]).rows.map { row in
            EventRecord(id: try row.int64("id"), jobID: try row.optionalInt64("job_id"), taskID: try row.optionalInt64("task_id"),
                        agentID: try row.optionalInt64("agent_id"), kind: try row.string("kind"),
                        message: try row.string("message"), atMillis: try row.int64("at_ms"))
        }
    }

    // MARK: Assets

    /// Records a stored, verified asset and releases every waiting job that now has all its
    /// assets. - Returns: the jobs released to `queued`.
    @discardableResult
    public func assetStored(sha256: String, size: Int64, storedKey: String) throws -> [Int64] {
        try connection.transaction { db in
            try db.query(Statements.recordAsset, [sha256, String(size), storedKey])
            var released: [Int64] = []
            for row in try db.query(Statements.waitingJobsForAsset, [sha256]).rows {
                let job = try row.int64("job_id")
                if try db.query(Statements.releaseWaitingJob, [String(job)]).affectedRows == 1 { released.append(job) }
            }
            return released
        }
    }

    public func asset(sha256: String) throws -> AssetRecord? {
        try connection.query(Statements.asset, [sha256]).singleRow().map { row in
            AssetRecord(sha256: try row.string("sha256"), size: try row.int64("size"), storedKey: try row.string("stored_key"))
        }
    }

    /// The hashes among `hashes` that are not stored, sorted.
    public func missingAssets(_ hashes: [String]) throws -> [String] {
        // A text[] literal; hashes are validated hex, but quote anyway so any text is safe.
        let literal = "{" + hashes.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
        return try connection.query(Statements.missingAssets, [literal]).rows.map { try $0.string("h") }
    }

    // MARK: Helpers

    func fenced(_ lease: Lease) -> [String?] {
        [String(lease.task), String(lease.epoch), String(lease.agent)]
    }

    /// Locks the job of the lease's task (first, by the store's lock order). A task that does
    /// not exist is a lease nobody holds.
    func lockJob(_ db: PGConnection, of lease: Lease) throws {
        guard try db.query(Statements.lockJobOfTask, [String(lease.task)]).singleRow() != nil else {
            throw JobStoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
        }
    }

    func lockedJobState(_ db: PGConnection, _ job: Int64) throws -> JobState {
        guard let row = try db.query(Statements.jobState, [String(job)]).singleRow() else { throw JobStoreError.jobNotFound(job) }
        guard let state = JobState(rawValue: try row.string("state")) else {
            throw PGError(sqlState: nil, message: "unknown job state \(row["state"] ?? "")")
        }
        return state
    }

    func failJob(_ db: PGConnection, job: Int64, message: String) throws {
        try db.query(Statements.failJob, [String(job), message])
        try db.query(Statements.cancelOpenTasks, [String(job)])
        try appendEvent(db, job: job, kind: "job_failed", message: message)
    }

    func appendEvent(_ db: PGConnection, job: Int64?, task: Int64? = nil, agent: Int64? = nil, kind: String, message: String) throws {
        try db.query(Statements.appendEvent, [job.map(String.init), task.map(String.init), agent.map(String.init), kind, message])
    }

    private static func summary(_ row: PGRow) throws -> JobSummary {
        let total = try row.int("render_tasks"), done = try row.int("tasks_done"), failed = try row.int("tasks_failed")
        let cancelled = try row.int("tasks_cancelled"), leased = try row.int("leased")
        let counts: [TaskState: Int] = [.done: done, .failed: failed, .cancelled: cancelled, .leased: leased,
                                        .queued: max(0, total - done - failed - cancelled - leased)]
        return JobSummary(
            id: try row.int64("id"), state: JobState(rawValue: try row.string("state")) ?? .failed, error: row["error"],
            outputKey: row["output_key"], taskCounts: counts, settings: try row.string("settings"), priority: try row.int("priority"),
            paused: try row.string("paused") == "t", framesTotal: try row.int64("frames_total"),
            framesDone: try row.int64("frames_done") + row.int64("frames_in_progress"), createdAtMillis: try row.int64("created_ms"),
            startedAtMillis: try row.optionalInt64("started_ms"), updatedAtMillis: try row.int64("updated_ms"),
            finishedAtMillis: try row.optionalInt64("finished_ms"), runStartedAtMillis: try row.optionalInt64("run_started_ms"),
            runFramesBase: try row.int64("run_frames_base"), tasksReused: try row.int("tasks_reused"), videoEncoder: row["video_encoder"])
    }
}
