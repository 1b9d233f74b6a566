import ReelScheduling

/// One agent asking for work in a claim batch.
public struct ClaimRequest: Hashable, Sendable {
    public var agent: Int64
    public init(agent: Int64) { self.agent = agent }
}

/// What one claim batch leased (`LifecycleStore.claimBatch`).
public struct ClaimBatch: Sendable {
    /// One entry per request, in order: its task, or nil.
    public var tasks: [ClaimedTask?]
    /// Tasks the batch chose that were no longer claimable when it leased them: another
    /// claimer (another coordinator on the same database) leased them first, holds them locked
    /// right now, or a cancel or pause took them between the two statements. Not 0 means the
    /// farm changed under the batch, so its unserved requests should claim again rather than
    /// wait for something new to become claimable.
    public var lost: Int

    public init(tasks: [ClaimedTask?], lost: Int) { self.tasks = tasks; self.lost = lost }
}

/// A task as claimed: everything the agent needs, under a fresh lease.
public struct ClaimedTask: Hashable, Sendable {
    public var id: Int64
    public var jobID: Int64
    public var kind: TaskKind
    public var ordinal: Int
    public var frameStart: Int64
    public var frameEnd: Int64
    public var spec: String
    /// The fencing epoch of this lease.
    public var epoch: Int64
    /// Attempts including this one.
    public var attempts: Int
    /// Lease expiry, ms since the Unix epoch (the farm clock).
    public var leaseExpiresAtMillis: Int64
    /// The job's render plan document (nil for tasks planned before migration 3, whose `spec`
    /// carries the whole plan).
    public var planDocument: RenderPlanReference? = nil

    /// The lease to present for every later operation on the task.
    public var lease: Lease { Lease(task: id, epoch: epoch, agent: leaseOwner) }
    /// The agent holding the lease.
    public var leaseOwner: Int64
    /// For a ladder chunk some of whose renditions are reused from other archives: the names of
    /// the renditions it encodes itself, in the ladder's order; nil when it encodes all of them
    /// (or is no ladder chunk).
    public var renditionsToEncode: [String]? = nil
}

/// A task's result as uploaded and verified by the coordinator.
public struct TaskResult: Hashable, Sendable {
    public var sha256: String
    public var size: Int64
    /// Where the coordinator stored the bytes.
    public var key: String

    public init(sha256: String, size: Int64, key: String) {
        self.sha256 = sha256; self.size = size; self.key = key
    }
}

/// What completing a task did.
public struct Completion: Hashable, Sendable {
    public var jobID: Int64
    /// The completed task ended its job: the job is done.
    public var jobDone: Bool
    /// Frames of the completed video chunk (0 for other kinds).
    public var frames: Int64 = 0
    /// Every render task of the job is now done: the task that ends it can be claimed.
    public var jobRendered: Bool = false
    /// Its job has a budget: the caller checks it (`LifecycleStore.enforceBudget`).
    public var jobBudgeted: Bool = false
}

/// What a failed attempt did to its task.
public enum FailureOutcome: Hashable, Sendable {
    /// The task is queued again; `attemptsLeft` more claims are allowed.
    case requeued(attemptsLeft: Int)
    /// The task used its last attempt: it and its job have failed.
    case jobFailed(jobID: Int64)
}

/// What `fail` did.
public struct FailureReport: Hashable, Sendable {
    public var outcome: FailureOutcome
    /// Set when this failure put the agent into quarantine: until when (ms since the Unix epoch).
    public var quarantinedUntilMillis: Int64?
}

/// A lease found run out by `expireLeases`.
public struct ExpiredLease: Hashable, Sendable {
    public var task: Int64
    public var jobID: Int64
    public var epoch: Int64
    public var agent: Int64?
    /// `queued` (claimable again) or `failed` (no attempts left; the job failed).
    public var newState: TaskState
}
