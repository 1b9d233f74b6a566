import ReelScheduling
/// A job's lifecycle state (`jobs.state`).
public enum JobState: String, Hashable, Sendable, Codable, CaseIterable {
    /// Submitted; some assets are still being uploaded. Its tasks are not claimable.
    case waiting
    case queued
    case running
    /// Only the finalise task is left or running.
    case finalising
    case done
    case failed
    case cancelled

    /// No further work happens in these states (until a retry).
    public var isTerminal: Bool { [.done, .failed, .cancelled].contains(self) }
}

/// A task's state (`tasks.state`).
public enum TaskState: String, Hashable, Sendable, Codable, CaseIterable {
    case queued, leased, done, failed, cancelled
}

/// What kind of work a task is (`tasks.kind`): the one task kind of the lifecycle model
/// (`ReelScheduling.TaskKind`), under a name of its own so that a module importing both this
/// and `ReelProtocol` (whose `TaskKind` is the wire's `TASK kind=`) needs no qualification.
public typealias JobTaskKind = ReelScheduling.TaskKind

/// A task to create with its job.
public struct NewTask: Hashable, Sendable {
    public var kind: JobTaskKind
    /// Chunk number among the job's tasks of this kind (unique per job and kind).
    public var ordinal: Int
    /// Frames `[frameStart, frameEnd)` for a video chunk; 0, 0 otherwise.
    public var frameStart: Int64
    public var frameEnd: Int64
    /// The specification handed to the agent with the task (JSON, opaque to the store).
    public var spec: String
    public var maxAttempts: Int
    /// SHA-256 over everything that decides the task's output (ReelCore's `ContentKey`); a
    /// later task with the same key may reuse this one's result.
    public var contentKey: String?
    /// A stored result with the same content key: the task is created done with it, not rendered.
    public var reusedResult: TaskResult?

    public init(kind: JobTaskKind, ordinal: Int, frameStart: Int64 = 0, frameEnd: Int64 = 0, spec: String = "{}", maxAttempts: Int = 3,
                contentKey: String? = nil, reusedResult: TaskResult? = nil) {
        self.kind = kind; self.ordinal = ordinal; self.frameStart = frameStart; self.frameEnd = frameEnd
        self.spec = spec; self.maxAttempts = maxAttempts; self.contentKey = contentKey; self.reusedResult = reusedResult
    }
}

/// A job to create.
public struct NewJob: Hashable, Sendable {
    /// The composition JSON exactly as submitted.
    public var composition: String
    /// The chunk plan (JSON, opaque to the store).
    public var plan: String
    /// Render settings (JSON, opaque to the store).
    public var settings: String
    public var tasks: [NewTask]
    /// Content hashes the job reads. When `waitingForAssets`, the job starts in `waiting`.
    public var assets: [String]
    public var waitingForAssets: Bool

    /// Higher runs first (default 0).
    public var priority: Int

    public init(composition: String, plan: String = "{}", settings: String = "{}", tasks: [NewTask],
                assets: [String] = [], waitingForAssets: Bool = false, priority: Int = 0) {
        self.composition = composition; self.plan = plan; self.settings = settings; self.tasks = tasks
        self.assets = assets; self.waitingForAssets = waitingForAssets; self.priority = priority
    }
}

/// A task as claimed: everything the agent needs, under a fresh lease.
public struct ClaimedTask: Hashable, Sendable {
    public var id: Int64
    public var jobID: Int64
    public var kind: JobTaskKind
    public var ordinal: Int
    public var frameStart: Int64
    public var frameEnd: Int64
    public var spec: String
    /// The fencing epoch of this lease.
    public var epoch: Int64
    /// Attempts including this one.
    public var attempts: Int
    /// Lease expiry, ms since the Unix epoch (database clock).
    public var leaseExpiresAtMillis: Int64
    /// The job's plan document (nil for tasks planned before migration 3, whose `spec`
    /// carries the whole plan).
    public var planDocument: PlanDocumentReference? = nil

    /// The lease to present for every later operation on the task.
    public var lease: Lease { Lease(task: id, epoch: epoch, agent: leaseOwner) }
    /// The agent holding the lease.
    public var leaseOwner: Int64
}

/// Proof of holding a task: the task, the epoch it was claimed under, and the claiming agent.
/// Every lease-fenced operation checks all three.
public struct Lease: Hashable, Sendable {
    public var task: Int64
    public var epoch: Int64
    public var agent: Int64

    public init(task: Int64, epoch: Int64, agent: Int64) {
        self.task = task; self.epoch = epoch; self.agent = agent
    }
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

/// What `complete` did.
public struct Completion: Hashable, Sendable {
    public var jobID: Int64
    /// The completed task was the finalise task: the job is done.
    public var jobDone: Bool
    /// Frames of the completed video chunk (0 for other kinds).
    public var frames: Int64 = 0
    /// Every render task of the job is now done: its finalise task can be claimed.
    public var jobRendered: Bool = false
}

/// The job's plan document in the coordinator's storage, by content: agents fetch it once
/// per job (`FETCH`) and cache it, so a task row carries only its frame range.
public struct PlanDocumentReference: Hashable, Sendable, Codable {
    public var sha256: String
    public var size: Int64
    public init(sha256: String, size: Int64) { self.sha256 = sha256; self.size = size }
}

/// What `fail` did.
public enum FailureOutcome: Hashable, Sendable {
    /// The task is queued again; `attemptsLeft` more claims are allowed.
    case requeued(attemptsLeft: Int)
    /// The task used its last attempt: it and its job have failed.
    case jobFailed(jobID: Int64)
}

/// A lease found expired by `expireLeases`.
public struct ExpiredLease: Hashable, Sendable {
    public var task: Int64
    public var jobID: Int64
    public var epoch: Int64
    public var agent: Int64?
    /// `queued` (claimable again) or `failed` (no attempts left; the job failed).
    public var newState: TaskState
}

/// Errors of `JobStore` operations that the protocol reports to peers.
public enum JobStoreError: Error, Hashable, Sendable {
    /// The lease (task, epoch, agent) is not the current one: someone else holds the task,
    /// it was re-queued, or its job was cancelled. Protocol: `LOST` / `ERR stale_epoch`.
    case staleEpoch(task: Int64, epoch: Int64)
    case jobNotFound(Int64)
    /// The job's state does not allow the operation (e.g. cancelling a finished job).
    case conflict(job: Int64, state: JobState)
}

/// A job's progress for `reel status`.
public struct JobSummary: Hashable, Sendable {
    public var id: Int64
    public var state: JobState
    public var error: String?
    public var outputKey: String?
    /// Render-task counts by state (video chunks and audio; every state present, possibly 0).
    /// The finalise task is not counted: it is the job's `finalising` state.
    public var taskCounts: [TaskState: Int]
    /// The job's settings document as stored (opaque to the store; the coordinator reads the
    /// job's name from it).
    public var settings: String
    /// Higher runs first.
    public var priority: Int
    /// A paused job's tasks are not claimed (leases already held run on).
    public var paused: Bool
    /// Frames of all video chunks.
    public var framesTotal: Int64
    /// Frames of done chunks plus the reported progress of leased ones.
    public var framesDone: Int64
    public var createdAtMillis: Int64
    public var startedAtMillis: Int64?
    public var updatedAtMillis: Int64
    public var finishedAtMillis: Int64?
    /// When the current run started (the first claim after submit or the last retry), and the
    /// frames already done then: speed and ETA count from there.
    public var runStartedAtMillis: Int64? = nil
    public var runFramesBase: Int64 = 0
    /// Render tasks created done from another task's result with the same content key.
    public var tasksReused: Int = 0
    /// The encoder its video chunks need (nil for jobs planned before it was recorded).
    public var videoEncoder: String? = nil
}

/// Whether an agent takes work (`agents.state`).
public enum AgentState: String, Hashable, Sendable, Codable, CaseIterable {
    case online
    /// Finishing its current task, taking no new ones (SIGTERM).
    case draining
    /// Disconnected.
    case offline
}

/// One task of a job as stored (the finaliser reads chunk results in order from these).
public struct TaskRecord: Hashable, Sendable {
    public var id: Int64
    public var kind: JobTaskKind
    public var ordinal: Int
    public var frameStart: Int64
    public var frameEnd: Int64
    public var state: TaskState
    public var attempts: Int
    public var epoch: Int64
    /// Set once the task is done.
    public var result: TaskResult?
}

/// An agent as `reel agents` shows it.
public struct AgentRecord: Hashable, Sendable {
    public var id: Int64
    public var name: String
    public var host: String
    /// Capabilities JSON as the coordinator stored it.
    public var capabilities: String
    public var state: AgentState
    public var lastHeartbeatMillis: Int64
    /// Milliseconds since the last heartbeat, by the database clock.
    public var heartbeatAgeMillis: Int64
    public var currentTask: Int64?
    /// Set while the agent is quarantined (gets no work): when it is let back, ms since the Unix epoch.
    public var quarantinedUntilMillis: Int64? = nil
    /// The agent's latest `FAIL` reason.
    public var lastError: String? = nil
    /// `FAIL`s recorded against it (of tasks the farm still keeps).
    public var failures: Int = 0
}

/// One line of a job's history.
public struct EventRecord: Hashable, Sendable {
    public var id: Int64
    public var jobID: Int64?
    public var taskID: Int64?
    public var agentID: Int64?
    public var kind: String
    public var message: String
    public var atMillis: Int64
}

/// A stored source asset, by content hash.
public struct AssetRecord: Hashable, Sendable {
    public var sha256: String
    public var size: Int64
    public var storedKey: String
}
