import ReelCore
import ReelScheduling

/// Leases and claims, and every task and job transition: the one place the farm's lifecycle
/// rules are decided (docs/task-lifecycle.md).
///
/// The rules are the statements of `Statements+Lifecycle.swift`, each one set-based and fenced,
/// deciding and applying a transition in the same statement under the row locks it takes; the
/// methods here run them in the store's lock order (`FarmStore`) and turn their answers into
/// values. Nothing else in Reel changes a task's or a job's state or a lease: the coordinator's
/// reaper, its connection handling, the dispatcher and the finaliser call these methods and
/// decide nothing themselves. The pure model in `ReelLifecycleModel` states the same rules
/// independently; `ModelBasedStoreTests` drives these entry points and the model with the same
/// random events and compares every task and job after each.
///
/// Leases: a claim sets owner, expiry and a new fencing epoch; every holder operation (`renew`,
/// `recordProgress`, `complete`, `fail`, `release`) presents its `Lease` and is refused with
/// `StoreError.staleEpoch` unless task, epoch and owner are still current. Lease times are
/// the injected `FarmClock`'s.
public struct LifecycleStore: Sendable {
    let connection: PGConnection
    let clock: FarmClock

    /// `clock`'s now, as a statement parameter (ms since the Unix epoch).
    var now: Int64 { clock.nowMillis() }

    /// A lease's fence as the first three parameters of a holder statement.
    static func fence(_ lease: Lease) -> [any PGBindable] { [lease.task, lease.epoch, lease.agent] }

    /// Locks the job of the lease's task (first, by the store's lock order). A task that does
    /// not exist is a lease nobody holds.
    static func lockJob(_ db: PGConnection, of lease: Lease) throws {
        guard try db.query(Statements.lockJobOfTask, [lease.task]).singleRow() != nil else {
            throw StoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
        }
    }

    // MARK: The holder's operations

    /// Extends a live lease to now + `leaseSeconds`; also the holder's sign of life. A holder
    /// whose connection closed keeps its tasks by renewing them within the reconnect grace.
    /// - Returns: the new expiry (ms since the Unix epoch).
    /// - Throws: `StoreError.staleEpoch` when the lease is no longer held or has run out.
    public func renew(_ lease: Lease, leaseSeconds: Double) throws -> Int64 {
        guard let row = try connection.query(Statements.renewLease, Self.fence(lease) + [leaseSeconds, now]).singleRow() else {
            throw StoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
        }
        return try row.int64("expires_ms")
    }

    /// Records frames done (for status) and the holder's sign of life; does not renew the lease.
    public func recordProgress(_ lease: Lease, frames: Int64) throws {
        let result = try connection.query(Statements.recordProgress, Self.fence(lease) + [frames])
        guard result.rows.count == 1 else { throw StoreError.staleEpoch(task: lease.task, epoch: lease.epoch) }
    }

    /// The job of the task `lease` names, if the lease still holds (nil when it does not).
    public func jobOfLease(_ lease: Lease) throws -> Int64? {
        try connection.query(Statements.jobOfLease, Self.fence(lease)).singleRow().map { try $0.int64("job_id") }
    }

    /// The kind of the task `lease` names, if the lease still holds (nil when it does not).
    public func kindOfLease(_ lease: Lease) throws -> TaskKind? {
        try connection.query(Statements.kindOfLease, Self.fence(lease)).singleRow().map { try $0.value("kind") }
    }

    /// Completes the task under `lease` with its verified result: `completeTasks` of one.
    /// - Throws: `StoreError.staleEpoch` when another epoch or owner holds the task.
    @discardableResult
    public func complete(_ lease: Lease, result: TaskResult) throws -> Completion {
        guard let completion = try completeTasks([(lease, result)])[0] else {
            throw StoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
        }
        return completion
    }

    /// Completes each task of `items` under its lease, in one transaction: the jobs locked first
    /// in id order, then one statement completes every task whose lease still holds (the
    /// coordinator's `Completer` batches `RESULT`s this way). Completing a task that ends its
    /// job completes the job.
    /// - Returns: per item, its completion, or nil when the lease was stale (another epoch or
    ///   owner holds the task, or nobody does) or the item repeats an earlier one.
    public func completeTasks(_ items: [(lease: Lease, result: TaskResult)]) throws -> [Completion?] {
        guard !items.isEmpty else { return [] }
        // Each lease once (its first item); two leases of one task cannot both hold.
        var seen: Set<Lease> = []
        let distinct = items.filter { seen.insert($0.lease).inserted }
        return try connection.transaction { db in
            let budgeted = Set(try db.query(Statements.lockAndTouchJobsOfTasks, [distinct.map(\.lease.task)]).rows
                .compactMap { try $0.optionalInt64("budgeted") })
            let rows = try db.query(Statements.completeTasks, [
                distinct.map(\.lease.task), distinct.map(\.lease.epoch), distinct.map(\.lease.agent),
                distinct.map(\.result.sha256), distinct.map(\.result.size), distinct.map(\.result.key),
            ]).rows
            var done: [Lease: Completion] = [:]
            for row in rows {
                let kind: TaskKind = try row.value("kind")
                let lease = Lease(task: try row.int64("id"), epoch: try row.int64("epoch"), agent: try row.int64("agent"))
                let job = try row.int64("job_id")
                done[lease] = Completion(jobID: job, jobDone: try row.bool("job_done"),
                                         frames: kind.countsFrames ? try row.int64("frames") : 0, jobBudgeted: budgeted.contains(job))
            }
            let renderJobs = Set(done.values.filter { !$0.jobDone }.map(\.jobID)).sorted()
            if !renderJobs.isEmpty {
                let rendered = Set(try db.query(Statements.jobsRendered, [renderJobs]).rows.map { try $0.int64("id") })
                for (lease, completion) in done where rendered.contains(completion.jobID) { done[lease]?.jobRendered = true }
            }
            var answered: Set<Lease> = []
            return items.map { item in answered.insert(item.lease).inserted ? done[item.lease] : nil }
        }
    }

    /// Reports a failed attempt: the failure is recorded against the agent (the task goes to
    /// other agents first), and the task is re-queued while attempts remain; on the last
    /// attempt the task and its job fail (the job's other open tasks are cancelled), with a
    /// message quoting every agent's error. The agent is quarantined when `policy` says so.
    public func fail(_ lease: Lease, message: String, policy: QuarantinePolicy = .off) throws -> FailureReport {
        try connection.transaction { db in
            try Self.lockJob(db, of: lease)
            guard let row = try db.query(Statements.failTask, Self.fence(lease) + [message]).singleRow() else {
                throw StoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
            }
            let job = try row.int64("job_id")
            try db.query(Statements.recordTaskFailure, [lease.task, lease.agent, message])
            try EventLog.append(db, job: job, task: lease.task, agent: lease.agent, kind: "failed", message: message)
            let outcome: FailureOutcome
            if try row.bool("exhausted") {
                let failures = try db.query(Statements.taskFailures, [lease.task]).rows.map {
                    (agent: try $0.string("agent_name"), message: try $0.string("message"))
                }
                let text = TaskFailureMessage.text(kind: try row.value("kind"), ordinal: try row.int("ordinal"), failures: failures)
                try Self.failJob(db, job: job, message: text)
                outcome = .jobFailed(jobID: job)
            } else {
                outcome = .requeued(attemptsLeft: try row.int("attempts_left"))
            }
            return FailureReport(outcome: outcome, quarantinedUntilMillis: try Self.applyQuarantine(db, agent: lease.agent, error: message,
                                                                                                    policy: policy))
        }
    }

    /// Hands a task back un-attempted (agent draining, a claim that ended before its task was
    /// sent): queued again, the attempt not counted.
    public func release(_ lease: Lease) throws {
        try connection.transaction { db in
            try Self.lockJob(db, of: lease)
            try Self.release(db, lease)
        }
    }

    /// `release` inside a transaction that holds the lease's job. - Returns: the job.
    @discardableResult
    static func release(_ db: PGConnection, _ lease: Lease) throws -> Int64 {
        guard let row = try db.query(Statements.releaseTask, fence(lease)).singleRow() else {
            throw StoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
        }
        let job = try row.int64("job_id")
        try EventLog.append(db, job: job, task: lease.task, agent: lease.agent, kind: "released", message: "")
        return job
    }

    /// The epochs under which those of `tasks` are leased right now (a task not leased is absent):
    /// a partial result upload of any other task or epoch can never complete and may go.
    public func leasedEpochs(tasks: [Int64]) throws -> [Int64: Int64] {
        var out: [Int64: Int64] = [:]
        for row in try connection.query(Statements.leasedEpochs, [tasks]).rows {
            out[try row.int64("id")] = try row.int64("epoch")
        }
        return out
    }

    // MARK: Quarantine

    /// Applies `policy` to the agent's recent failures (times by the database's clock), after a
    /// failure; returns the quarantine end when it put the agent into quarantine.
    static func applyQuarantine(_ db: PGConnection, agent: Int64, error: String, policy: QuarantinePolicy) throws -> Int64? {
        guard let state = try db.query(Statements.agentQuarantineState, [agent]).singleRow() else { return nil }
        let now = try state.int64("now_ms"), previous = try state.optionalInt64("until_ms")
        let since = policy.countsFailuresAfter(nowMillis: now, previousQuarantineEndMillis: previous)
        let times = try db.query(Statements.agentFailuresSince, [agent, max(since, 0)]).rows.map { try $0.int64("at_ms") }
        guard let until = policy.quarantineUntil(failureMillis: times, nowMillis: now, previousQuarantineEndMillis: previous) else {
            try db.query(Statements.setAgentLastError, [agent, error])
            return nil
        }
        try db.query(Statements.quarantineAgent, [agent, until, error])
        try EventLog.append(db, job: nil, agent: agent, kind: "agent_quarantined", message: "until \(until): \(error)")
        return until
    }
}
