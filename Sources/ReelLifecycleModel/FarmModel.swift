import ReelScheduling

/// The whole farm's job and task state in memory: `JobLifecycle`s, `TaskLifecycle`s and the
/// `ClaimPolicy`, composed as the farm's rules say. It is the independent statement of those
/// rules that the store is held to: a model-based test replays random event sequences on
/// both, through the store's production entry points, and compares every task and job.
///
/// The cross-task rules:
/// - a claim takes the policy's first eligible queued task of a job that accepts claims; a
///   task that completes its job only once its job's render tasks are all done;
/// - a task out of attempts fails its job, which cancels the job's other open tasks;
/// - completing the finalise task completes the job;
/// - a disconnected holder keeps its tasks for the reconnect grace, then they expire; a
///   heartbeat within it (after reconnecting) keeps them;
/// - a render task whose stored result is found damaged while finalising is rendered again
///   (fresh attempts), the finalise task goes back un-attempted and the job runs again.
public struct FarmModel: Sendable {
    public struct Task: Hashable, Sendable {
        public let id: Int64
        public let job: Int64
        public let kind: TaskKind
        public let ordinal: Int
        public internal(set) var lifecycle: TaskLifecycle
    }

    public private(set) var jobs: [Int64: JobLifecycle] = [:]
    public private(set) var tasks: [Int64: Task] = [:]
    public let leaseMillis: Millis
    public let graceMillis: Millis
    /// Each job's turn among the jobs of its priority (`ClaimTurns`).
    public private(set) var turns: [Int64: Int64] = [:]
    private var nextJob: Int64 = 1
    private var nextTask: Int64 = 1

    public init(leaseMillis: Millis, graceMillis: Millis) {
        self.leaseMillis = leaseMillis
        self.graceMillis = graceMillis
    }

    public func tasks(ofJob job: Int64) -> [Task] {
        tasks.values.filter { $0.job == job }.sorted { ($0.kind, $0.ordinal, $0.id) < ($1.kind, $1.ordinal, $1.id) }
    }

    // MARK: Jobs

    /// Adds a job with `chunks` video chunks, optionally an audio task, and its finalise task.
    @discardableResult
    public mutating func submit(chunks: Int, audio: Bool, maxAttempts: Int, priority: Int = 0, waitingForAssets: Bool = false) -> Int64 {
        let job = nextJob
        nextJob += 1
        // Its turn among the jobs of its priority (`ClaimTurns`), taken as it is planned.
        let head = ClaimTurns.head(jobs.filter { $0.value.acceptsClaims && $0.value.priority == priority }.compactMap { turns[$0.key] })
        turns[job] = ClaimTurns.assign(head: head, batchNext: nil).turn
        jobs[job] = JobLifecycle(waitingForAssets: waitingForAssets, priority: priority)
        var specs: [(TaskKind, Int)] = (0..<chunks).map { (.videoChunk, $0) }
        if audio { specs.append((.audio, 0)) }
        specs.append((.finalise, 0))
        for (kind, ordinal) in specs {
            tasks[nextTask] = Task(id: nextTask, job: job, kind: kind, ordinal: ordinal, lifecycle: TaskLifecycle(maxAttempts: maxAttempts))
            nextTask += 1
        }
        return job
    }

    public mutating func assetsArrived(job: Int64) { jobs[job]?.assetsArrived() }

    public mutating func cancel(job: Int64) throws(JobLifecycle.Conflict) {
        guard var lifecycle = jobs[job] else { return }
        try lifecycle.cancel()
        jobs[job] = lifecycle
        for id in taskIDs(ofJob: job) { tasks[id]!.lifecycle.cancel() }
    }

    public mutating func retry(job: Int64) throws(JobLifecycle.Conflict) {
        guard var lifecycle = jobs[job] else { return }
        try lifecycle.retry()
        jobs[job] = lifecycle
        for id in taskIDs(ofJob: job) { tasks[id]!.lifecycle.retry() }
    }

    /// Pauses (`true`) or resumes a job; returns whether it changed.
    @discardableResult
    public mutating func setPaused(job: Int64, _ paused: Bool) throws(JobLifecycle.Conflict) -> Bool {
        guard var lifecycle = jobs[job] else { return false }
        let changed = try lifecycle.setPaused(paused)
        jobs[job] = lifecycle
        return changed
    }

    /// Sets a job's budget and applies the rule to it (`JobLifecycle.setBudget`), as the
    /// budget service does at each check (`applyBudget`).
    @discardableResult
    public mutating func setBudget(job: Int64, _ limit: Double, spent: Double) throws(JobLifecycle.Conflict) -> JobBudget.Verdict? {
        guard var lifecycle = jobs[job] else { return nil }
        let verdict = try lifecycle.setBudget(limit, spent: spent)
        jobs[job] = lifecycle
        if verdict == .stop { handBackRunningChunks(ofJob: job) }
        return verdict
    }

    /// The budget rule for a job that has spent `spent` (`JobLifecycle.applyBudget`): at 100 %
    /// its leased render tasks are handed back (queued, the attempt not counted); a leased
    /// finalise task runs on (the chunks it joins are paid for).
    @discardableResult
    public mutating func applyBudget(job: Int64, spent: Double) -> JobBudget.Verdict? {
        guard var lifecycle = jobs[job] else { return nil }
        let verdict = lifecycle.applyBudget(spent: spent)
        jobs[job] = lifecycle
        if verdict == .stop { handBackRunningChunks(ofJob: job) }
        return verdict
    }

    private mutating func handBackRunningChunks(ofJob job: Int64) {
        for id in taskIDs(ofJob: job) where !tasks[id]!.kind.completesJob { tasks[id]!.lifecycle.handBack() }
    }

    public mutating func pause(job: Int64) throws(JobLifecycle.Conflict) { try setPaused(job: job, true) }
    public mutating func resume(job: Int64) throws(JobLifecycle.Conflict) { try setPaused(job: job, false) }

    public mutating func setPriority(job: Int64, _ priority: Int) throws(JobLifecycle.Conflict) {
        guard var lifecycle = jobs[job] else { return }
        try lifecycle.setPriority(priority)
        jobs[job] = lifecycle
    }

    private func taskIDs(ofJob job: Int64) -> [Int64] { tasks.values.filter { $0.job == job }.map(\.id).sorted() }

    private mutating func failJob(_ job: Int64, _ message: String) {
        jobs[job]?.fail(message)
        for id in taskIDs(ofJob: job) { tasks[id]!.lifecycle.cancel() }
    }

    // MARK: Claims and leases

    /// The policy's candidates: queued tasks of jobs that accept claims, of `kinds`, a task
    /// that completes its job only when the rest of its job is done.
    public func candidates(kinds: Set<TaskKind>) -> [ClaimCandidate] {
        tasks.values.compactMap { task in
            guard task.lifecycle.state == .queued, kinds.contains(task.kind), let job = jobs[task.job], job.acceptsClaims else { return nil }
            if task.kind.completesJob,
               tasks.values.contains(where: { $0.job == task.job && !$0.kind.completesJob && $0.lifecycle.state != .done }) {
                return nil
            }
            return ClaimCandidate(task: task.id, job: task.job, kind: task.kind, ordinal: task.ordinal,
                                  jobPriority: job.priority, jobTurn: turns[task.job] ?? 0, failedAgents: task.lifecycle.failedAgents)
        }
    }

    /// A claim by `agent`; nil when nothing is claimable for it.
    public mutating func claim(agent: Int64, kinds: Set<TaskKind>, liveAgents: Set<Int64>, now: Millis) -> (lease: Lease, kind: TaskKind)? {
        guard let chosen = ClaimPolicy.choose(candidates(kinds: kinds), for: agent, liveAgents: liveAgents) else { return nil }
        let epoch = tasks[chosen.task]!.lifecycle.claim(by: agent, now: now, leaseMillis: leaseMillis)
        jobs[chosen.job]!.taskClaimed(chosen.kind)
        return (Lease(task: chosen.task, epoch: epoch, agent: agent), chosen.kind)
    }

    public mutating func heartbeat(_ lease: Lease, now: Millis) -> Result<Millis, TaskLifecycle.Refusal> {
        guard tasks[lease.task] != nil else { return .failure(.notHolder) }
        return tasks[lease.task]!.lifecycle.renew(epoch: lease.epoch, agent: lease.agent, now: now, leaseMillis: leaseMillis, graceMillis: graceMillis)
    }

    public func refusesProgress(_ lease: Lease) -> TaskLifecycle.Refusal? {
        guard let task = tasks[lease.task] else { return .notHolder }
        return task.lifecycle.refusesProgress(epoch: lease.epoch, agent: lease.agent)
    }

    /// A result; returns whether it completed the job.
    public mutating func complete(_ lease: Lease, result: String) -> Result<Bool, TaskLifecycle.Refusal> {
        guard let task = tasks[lease.task] else { return .failure(.notHolder) }
        if let refusal = tasks[lease.task]!.lifecycle.complete(epoch: lease.epoch, agent: lease.agent, result: result) {
            return .failure(refusal)
        }
        guard task.kind.completesJob else { return .success(false) }
        jobs[task.job]!.finaliseCompleted()
        return .success(true)
    }

    /// Results in one batch, in order (as one after the other: a task named twice completes once).
    public mutating func complete(_ batch: [(lease: Lease, result: String)]) -> [Result<Bool, TaskLifecycle.Refusal>] {
        batch.map { complete($0.lease, result: $0.result) }
    }

    public mutating func fail(_ lease: Lease, message: String) -> Result<TaskLifecycle.AttemptEnd, TaskLifecycle.Refusal> {
        guard let task = tasks[lease.task] else { return .failure(.notHolder) }
        let outcome = tasks[lease.task]!.lifecycle.fail(epoch: lease.epoch, agent: lease.agent, message: message)
        if case .success(.exhausted) = outcome { failJob(task.job, "task \(task.id) failed: \(message)") }
        return outcome
    }

    @discardableResult
    public mutating func release(_ lease: Lease) -> TaskLifecycle.Refusal? {
        guard tasks[lease.task] != nil else { return .notHolder }
        return tasks[lease.task]!.lifecycle.release(epoch: lease.epoch, agent: lease.agent)
    }

    /// The finaliser, holding `finalise`, found the stored results of `damaged` missing or
    /// damaged: those of them that are done render tasks are rendered again, the finalise task
    /// goes back un-attempted and its job runs again. Refused (nothing changes) when the
    /// finalise lease is not held.
    @discardableResult
    public mutating func resultsDamaged(finalise: Lease, tasks damaged: [Int64]) -> TaskLifecycle.Refusal? {
        guard let task = tasks[finalise.task] else { return .notHolder }
        if let refusal = tasks[finalise.task]!.lifecycle.release(epoch: finalise.epoch, agent: finalise.agent) { return refusal }
        for id in damaged where tasks[id]?.job == task.job && tasks[id]?.kind.completesJob == false {
            tasks[id]!.lifecycle.resultLost()
        }
        jobs[task.job]!.renderTasksReopened()
        return nil
    }

    /// Every lease over by `now` ends; returns the tasks that expired.
    @discardableResult
    public mutating func expireLeases(now: Millis) -> [Int64] {
        // Every lease over ends first, then the jobs of those out of attempts fail: two tasks
        // of a job expiring together on their last attempts both fail (neither is cancelled
        // by the other).
        var expired: [Int64] = []
        var exhausted: [Int64] = []
        for id in tasks.keys.sorted() {
            guard let end = tasks[id]!.lifecycle.expire(now: now, graceMillis: graceMillis) else { continue }
            expired.append(id)
            if end == .exhausted { exhausted.append(id) }
        }
        for id in exhausted {
            failJob(tasks[id]!.job, "task \(id): \(tasks[id]!.lifecycle.lastError ?? "lease expired") on its last attempt")
        }
        return expired
    }

    /// `agent`'s last connection closed at `now`: its tasks expire after the reconnect grace
    /// unless it heartbeats them first (after reconnecting).
    public mutating func disconnected(agent: Int64, now: Millis) {
        for id in tasks.keys where tasks[id]!.lifecycle.holder == agent { tasks[id]!.lifecycle.holderDisconnected(agent: agent, now: now) }
    }

    /// `agent` connected again and heartbeats every lease it holds: it keeps those still live.
    public mutating func reattach(agent: Int64, now: Millis) -> [Lease] {
        tasks.keys.sorted().compactMap { id in
            tasks[id]!.lifecycle.reattach(agent: agent, now: now, leaseMillis: leaseMillis, graceMillis: graceMillis)
                .map { Lease(task: id, epoch: $0, agent: agent) }
        }
    }

    // MARK: Invariants

    /// Every task is consistent, a finished job holds no lease, a done job's tasks are all done,
    /// and only jobs that accept results hold leases.
    public var isConsistent: Bool {
        for task in tasks.values {
            guard task.lifecycle.isConsistent, let job = jobs[task.job] else { return false }
            if task.lifecycle.state == .leased && !job.acceptsResults { return false }
            if job.state == .done && task.lifecycle.state != .done { return false }
        }
        return true
    }
}
