import ReelScheduling

/// A task to create with its job.
public struct NewTask: Hashable, Sendable {
    public var kind: TaskKind
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
    /// An HLS ladder chunk's renditions, in the ladder's order (empty for other tasks).
    public var renditions: [TaskRendition] = []

    public init(kind: TaskKind, ordinal: Int, frameStart: Int64 = 0, frameEnd: Int64 = 0, spec: String = "{}", maxAttempts: Int = 3,
                contentKey: String? = nil, reusedResult: TaskResult? = nil) {
        self.kind = kind; self.ordinal = ordinal; self.frameStart = frameStart; self.frameEnd = frameEnd
        self.spec = spec; self.maxAttempts = maxAttempts; self.contentKey = contentKey; self.reusedResult = reusedResult
    }
}

/// A job to create.
public struct NewJob: Hashable, Sendable {
    /// The composition JSON exactly as submitted.
    public var composition: String
    /// The render plan (JSON, opaque to the store) when known at creation; else set when the
    /// job is split into tasks (`JobStore.createTasks`).
    public var renderPlan: String
    /// Render settings (JSON, opaque to the store).
    public var settings: String
    public var tasks: [NewTask]
    /// Content hashes the job reads. When `waitingForAssets`, the job starts in `waiting`.
    public var assets: [String]
    public var waitingForAssets: Bool

    /// Higher runs first (default 0).
    public var priority: Int
    /// Where to POST the job-end notification (`NotificationStore`), if anywhere.
    public var notifyURL: String?
    /// The batch and row the job renders (`BatchStore`), if it is part of one.
    public var batch: BatchRowReference?
    /// Its budget (`LifecycleStore.setBudget`), if it has one.
    public var budget: JobBudget?

    public init(composition: String, renderPlan: String = "{}", settings: String = "{}", tasks: [NewTask],
                assets: [String] = [], waitingForAssets: Bool = false, priority: Int = 0, notifyURL: String? = nil,
                batch: BatchRowReference? = nil, budget: JobBudget? = nil) {
        self.composition = composition; self.renderPlan = renderPlan; self.settings = settings; self.tasks = tasks
        self.assets = assets; self.waitingForAssets = waitingForAssets; self.priority = priority; self.notifyURL = notifyURL
        self.batch = batch; self.budget = budget
    }
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
    /// Why it is paused (nil when it is not).
    public var pauseReason: PauseReason? = nil
    /// Its budget, if it has one.
    public var budget: JobBudget? = nil
}

/// One task of a job as stored (the finaliser reads chunk results in order from these).
public struct TaskRecord: Hashable, Sendable {
    public var id: Int64
    public var kind: TaskKind
    public var ordinal: Int
    public var frameStart: Int64
    public var frameEnd: Int64
    public var state: TaskState
    public var attempts: Int
    public var epoch: Int64
    /// Set once the task is done.
    public var result: TaskResult?
}

/// A job's documents as stored: the composition as submitted, the render plan agents get,
/// and its settings (JSON, opaque to the store).
public struct JobDocuments: Hashable, Sendable {
    public var composition: String
    /// The render plan inline: `{}` before the job is planned, empty when it is planned and the
    /// plan is in its stored document only (`renderPlanDocument`: a job planned since migration
    /// 20), else the plan's JSON (planned before).
    public var renderPlan: String
    public var settings: String
    /// The stored render plan document (`RenderPlanDocument`, whose `plan` is the render plan),
    /// nil before the job is planned.
    public var renderPlanDocument: RenderPlanReference?
    public init(composition: String, renderPlan: String, settings: String, renderPlanDocument: RenderPlanReference? = nil) {
        self.composition = composition; self.renderPlan = renderPlan; self.settings = settings
        self.renderPlanDocument = renderPlanDocument
    }
    /// Whether the render plan is inline (`renderPlan`), rather than only in its document.
    public var hasInlineRenderPlan: Bool { !renderPlan.isEmpty && renderPlan != "{}" }
}

/// The job's render plan document in the coordinator's storage, by content: agents fetch it
/// once per job (`FETCH`) and cache it, so a task row carries only its frame range.
public struct RenderPlanReference: Hashable, Sendable, Codable {
    public var sha256: String
    public var size: Int64
    public init(sha256: String, size: Int64) { self.sha256 = sha256; self.size = size }
}

/// What `JobStore.delete` freed: files the caller should remove.
public struct DeletedJob: Hashable, Sendable {
    /// The job's output file, if it had one.
    public var outputKey: String?
    /// Result hashes no remaining task references.
    public var unreferencedResults: [String]
}

/// One rendition of an HLS ladder chunk (table `task_renditions`): its content key
/// (ReelCore's `ContentKey.renditionChunks`) and where its chunk is — `source` nil: in the
/// task's own result (the task encodes it, or was created done with an archive holding it);
/// else in that stored ladder archive of another task, found by the key (the task does not
/// encode it). A rendition's chunk is the member `<name>.mp4` of its archive.
public struct TaskRendition: Hashable, Sendable {
    public var name: String
    public var key: String
    public var source: TaskResult?
    public init(name: String, key: String, source: TaskResult? = nil) { self.name = name; self.key = key; self.source = source }
}

/// What a job cost so far (`JobStore.cost`): the agent time of its tasks, each from its latest
/// claim to its end (to now while running; reused tasks cost none), and that time at its
/// agents' prices.
public struct JobCost: Hashable, Sendable {
    /// Agent-seconds of its tasks, running ones included.
    public var agentSeconds: Double = 0
    /// Of which the tasks leased now have run so far.
    public var runningSeconds: Double = 0
    /// The agent-seconds at each task's agent price an hour; nil when no task ran on an agent
    /// with a price.
    public var cost: Double?
    /// Tasks counted in `agentSeconds` whose agent named no price (they cost nothing in `cost`).
    public var unpricedTasks: Int = 0
    public init(agentSeconds: Double = 0, runningSeconds: Double = 0, cost: Double? = nil, unpricedTasks: Int = 0) {
        self.agentSeconds = agentSeconds; self.runningSeconds = runningSeconds; self.cost = cost; self.unpricedTasks = unpricedTasks
    }
}
