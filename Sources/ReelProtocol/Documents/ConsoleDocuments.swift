// Documents of the job history (`EVENTS`, proto/PROTOCOL.md §4.3) and of the operator
// console's job page (`GET /api/v1/jobs/{id}`, proto/console-api.yaml). Like the others in
// Documents.swift they are defined once, here, because the coordinator writes them and the
// CLI and the console read them.

/// One line of a job's history, from the coordinator's events table.
public struct JobEvent: Codable, Sendable, Hashable {
    /// Increasing; `EVENTS after=` pages by it.
    public var id: Int64
    public var atMillis: Int64
    /// submitted, waiting_for_assets, planned, claimed, completed, failed, released,
    /// lease_expired, requeued, paused, resumed, priority, cancelled, retried, job_failed, …
    public var kind: String
    /// Free text: a failure's reason, a priority's value; often empty.
    public var message: String
    /// The task it concerns, if any.
    public var task: Int64?
    /// "chunk 3 frames [30, 40)", "audio" or "finalise" for the task, if any.
    public var taskLabel: String?
    /// The agent's name, if an agent was involved.
    public var agent: String?
    public init(id: Int64, atMillis: Int64, kind: String, message: String, task: Int64? = nil, taskLabel: String? = nil,
                agent: String? = nil) {
        self.id = id; self.atMillis = atMillis; self.kind = kind; self.message = message; self.task = task
        self.taskLabel = taskLabel; self.agent = agent
    }
}

/// `EVENTS`' payload: at most `EventsReport.pageSize` events after the requested id, oldest first.
public struct EventsReport: Codable, Sendable, Hashable {
    /// The most events one reply carries; a full page means ask again `after=` its last id.
    public static let pageSize = 500
    public var job: Int64
    public var events: [JobEvent]
    public init(job: Int64, events: [JobEvent]) { self.job = job; self.events = events }
}

/// One task of a job as the console's job page shows it (a cell of the chunk strip).
public struct ChunkStatus: Codable, Sendable, Hashable {
    public var task: Int64
    /// video_chunk, audio or finalise.
    public var kind: String
    /// The chunk number among tasks of its kind.
    public var ordinal: Int
    public var frameStart: Int64
    public var frameEnd: Int64
    /// queued, leased, done, failed, cancelled.
    public var state: String
    public var attempts: Int
    public var maxAttempts: Int
    /// The agent holding the lease (leased), or the last one that held it.
    public var agent: String?
    /// Frames reported by `PROGRESS` while leased.
    public var framesDone: Int64
    /// When the task was last claimed (ms since the Unix epoch), if ever.
    public var startedAtMillis: Int64?
    public var finishedAtMillis: Int64?
    /// Frames per second of the finished (or running) attempt, when known.
    public var framesPerSecond: Double?
    /// The latest failure's reason.
    public var error: String?
    /// Seconds its agent has spent on it, from its latest claim to its end or to now while
    /// leased (its job's `agentSeconds` is their sum); absent when it has none.
    public var agentSeconds: Double?
    /// Those seconds at its agent's price an hour; absent when its agent had none.
    public var cost: Double?
    public init(task: Int64, kind: String, ordinal: Int, frameStart: Int64, frameEnd: Int64, state: String, attempts: Int,
                maxAttempts: Int, agent: String?, framesDone: Int64, startedAtMillis: Int64?, finishedAtMillis: Int64?,
                framesPerSecond: Double?, error: String?, agentSeconds: Double? = nil, cost: Double? = nil) {
        self.agentSeconds = agentSeconds; self.cost = cost
        self.task = task; self.kind = kind; self.ordinal = ordinal; self.frameStart = frameStart; self.frameEnd = frameEnd
        self.state = state; self.attempts = attempts; self.maxAttempts = maxAttempts; self.agent = agent
        self.framesDone = framesDone; self.startedAtMillis = startedAtMillis; self.finishedAtMillis = finishedAtMillis
        self.framesPerSecond = framesPerSecond; self.error = error
    }
}

/// One job with its tasks (`GET /api/v1/jobs/{id}`): the same `JobStatus` as `STATUS job=`.
public struct JobDetail: Codable, Sendable, Hashable {
    public var job: JobStatus
    public var chunks: [ChunkStatus]
    public init(job: JobStatus, chunks: [ChunkStatus]) { self.job = job; self.chunks = chunks }
}
