import ReelCore
import ReelScheduling

// The JSON documents carried as payloads (proto/PROTOCOL.md §4: SUBMIT, TASK, STATUS,
// AGENTS). The wire leaves them to the coordinator; they are defined here, once, because the
// coordinator, the agent and the operator client all read or write them. Encoded with
// JSONEncoder (sorted keys) / decoded with JSONDecoder; times are exact `Rational`s ("N/D").

/// One asset a job needs, by content: the coordinator stores and serves sources by hash.
public struct AssetManifestEntry: Codable, Sendable, Hashable {
    /// SHA-256 of the file's bytes, 64 lower-case hex digits.
    public var sha256: String
    public var size: Int64
    public init(sha256: String, size: Int64) { self.sha256 = sha256; self.size = size }
}

/// Per-job settings chosen at submit time.
public struct JobSettings: Codable, Sendable, Hashable {
    /// Target video chunk length (whole GOPs near it). Default 10 s.
    public var chunkSeconds: Rational?
    /// x264 threads, identical for every chunk of the job (output bytes depend on it). Default 4.
    public var encoderThreads: Int?
    /// A human label for `reel status` (default: the composition's file name).
    public var name: String?
    /// The container when the composition's `export.fileType` is absent: the client derives it
    /// from its output name (`OutputContainer`). Default MP4.
    public var fileType: FileType?
    /// The job's priority (`JobPriority.range`; higher is claimed first). Default 0.
    public var priority: Int?
    /// Render every chunk anew, even those whose content key has a stored result (`--no-cache`).
    /// Default false: such chunks are reused, not rendered.
    public var noCache: Bool?
    /// An `http://` or `https://` URL the coordinator POSTs a signed `JobEndNotification` to
    /// when the job ends (done, failed or cancelled); `reel submit --notify URL`.
    public var notify: String?
    /// The batch (opened with `BATCH`) and row this job renders; nil for a job of its own.
    public var batch: BatchMembership?
    /// Cut the chunks at the composition's edges (`ChunkPlanner`'s edges mode), so that spans
    /// the job shares with others, such as a template's intro and outro, are chunks of their
    /// own and found by content key. A batch's rows are always cut so (`reel batch` sets it;
    /// `batch` implies it). Default false: chunks on the fixed grid.
    public var chunkAtEdges: Bool?
    /// The job's budget (`JobBudget`): `12.50` (money, in the currency of the agents' prices) or
    /// `3.5h` (agent-hours); `reel submit --budget`. From 90 % of it spent the job is paused
    /// (`pauseReason` `budget`), from 100 % its running chunks are handed back. Default none.
    public var budget: String?
    public init(chunkSeconds: Rational? = nil, encoderThreads: Int? = nil, name: String? = nil, fileType: FileType? = nil,
                priority: Int? = nil, noCache: Bool? = nil, notify: String? = nil, batch: BatchMembership? = nil,
                chunkAtEdges: Bool? = nil, budget: String? = nil) {
        self.chunkSeconds = chunkSeconds; self.encoderThreads = encoderThreads; self.name = name; self.fileType = fileType
        self.priority = priority; self.noCache = noCache; self.notify = notify; self.batch = batch
        self.chunkAtEdges = chunkAtEdges; self.budget = budget
    }
}

/// `SUBMIT`'s payload.
public struct SubmitRequest: Codable, Sendable, Hashable {
    /// The composition document exactly as the user wrote it (docs/composition.md), as UTF-8 text: the
    /// coordinator parses and validates it with the same rules as `reel validate`.
    public var composition: String
    /// Every asset id of the composition → its content. Asset URLs in the composition are
    /// not used by the coordinator; the manifest says which bytes each id means.
    public var assets: [String: AssetManifestEntry]
    public var settings: JobSettings
    public init(composition: String, assets: [String: AssetManifestEntry], settings: JobSettings) {
        self.composition = composition; self.assets = assets; self.settings = settings
    }
}

/// `TASK`'s payload: which frames of which job to render. The job's plan is not inline: it
/// is one `RenderPlanDocument` per job, stored by the coordinator by content, which the agent
/// fetches with `FETCH` once and caches (a 100,000-task job stores and sends its plan once,
/// not once per task).
public struct TaskSpecification: Codable, Sendable, Hashable {
    public var job: Int64
    public var task: Int64
    public var kind: TaskKind
    /// The frames of a video chunk (the whole composition for audio).
    public var frames: FrameRange
    /// The job's `RenderPlanDocument` (JSON) by content: `FETCH sha256=…` reads it.
    public var planDocument: AssetManifestEntry
    /// A finalise task's input results (proto/PROTOCOL.md §4.5.1), each with a presigned `GET`;
    /// nil for render tasks.
    public var inputs: [FinaliseInput]?
    /// A finalise task's: the job has no poster yet, so the agent sends one of the output's last
    /// frame (`POSTER`, under the finalise lease) before `FINALDONE`.
    public var wantsPoster: Bool?
    /// An HLS ladder chunk's: the renditions to encode (by name, in the ladder's order), the
    /// others being reused from stored archives (proto/PROTOCOL.md §4.6); nil: every rendition.
    public var renditions: [String]?
    public init(job: Int64, task: Int64, kind: TaskKind, frames: FrameRange, planDocument: AssetManifestEntry,
                inputs: [FinaliseInput]? = nil, wantsPoster: Bool? = nil, renditions: [String]? = nil) {
        self.job = job; self.task = task; self.kind = kind; self.frames = frames; self.planDocument = planDocument
        self.inputs = inputs; self.wantsPoster = wantsPoster; self.renditions = renditions
    }
}

/// One verified result a finalise task joins (a video chunk or the audio track): what the
/// render task stored, by content, and a presigned `GET` for it. The URL is a bearer
/// credential: the description shows it without its query.
public struct FinaliseInput: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The render task's kind (`video_chunk` or `audio`).
    public var kind: TaskKind
    /// Its ordinal within the job.
    public var ordinal: Int
    /// The frames it covers (a video chunk's; the whole composition for audio).
    public var frames: FrameRange
    public var size: Int64
    public var sha256: String
    /// A presigned `GET` of the stored result.
    public var url: String
    /// Headers to send with the `GET`, as they are.
    public var headers: [String: String]
    /// When the URL stops working (ms since the Unix epoch): past it, `INPUTBAD` is wrong —
    /// the agent fails the task instead, and the next attempt gets fresh URLs.
    public var expiresAtMillis: Int64
    /// An HLS ladder chunk's archive: the renditions to take from it; nil: every rendition
    /// (it is the chunk task's own result, holding them all). A chunk whose renditions were
    /// partly reused has several inputs with its ordinal and frames (proto/PROTOCOL.md §4.6).
    public var renditions: [String]?

    public init(kind: TaskKind, ordinal: Int, frames: FrameRange, size: Int64, sha256: String, url: String,
                headers: [String: String], expiresAtMillis: Int64, renditions: [String]? = nil) {
        self.kind = kind; self.ordinal = ordinal; self.frames = frames; self.size = size; self.sha256 = sha256
        self.url = url; self.headers = headers; self.expiresAtMillis = expiresAtMillis; self.renditions = renditions
    }

    public var description: String {
        let bare = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        return "\(kind.rawValue) \(ordinal) (\(size) bytes, \(sha256)) at \(bare)?<signed query redacted>"
    }
}

/// Everything the tasks of one job share: the validated plan, its assets by content and the
/// encoder's thread count. Stored once per job by the coordinator, content-addressed.
public struct RenderPlanDocument: Codable, Sendable, Hashable {
    /// The validated plan. Its asset URLs are `reel-asset:<sha256>`; the agent reads them
    /// from a local file it can see or from the coordinator with `FETCH`, through its cache.
    public var plan: RenderPlan
    /// Plan asset id → content.
    public var assets: [String: AssetManifestEntry]
    /// x264 threads (fixed per job: output bytes depend on it).
    public var encoderThreads: Int
    public init(plan: RenderPlan, assets: [String: AssetManifestEntry], encoderThreads: Int) {
        self.plan = plan; self.assets = assets; self.encoderThreads = encoderThreads
    }
}

/// Per-state counts of a job's render tasks (video chunks + audio; finalising is the job state).
public struct TaskCounts: Codable, Sendable, Hashable {
    public var done: Int, running: Int, queued: Int, failed: Int
    /// Stopped because the job was cancelled or failed elsewhere (not failures of their own).
    public var cancelled: Int
    public var total: Int
    /// Of `done`: created done at planning from a stored result with the same content key
    /// (an identical chunk rendered before, by any job), not rendered by this job.
    public var reused: Int
    public init(done: Int = 0, running: Int = 0, queued: Int = 0, failed: Int = 0, cancelled: Int = 0, total: Int = 0, reused: Int = 0) {
        self.done = done; self.running = running; self.queued = queued; self.failed = failed; self.cancelled = cancelled
        self.total = total; self.reused = reused
    }

    private enum CodingKeys: String, CodingKey { case done, running, queued, failed, cancelled, total, reused }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(done: try c.decode(Int.self, forKey: .done), running: try c.decode(Int.self, forKey: .running),
                  queued: try c.decode(Int.self, forKey: .queued), failed: try c.decode(Int.self, forKey: .failed),
                  cancelled: try c.decodeIfPresent(Int.self, forKey: .cancelled) ?? 0, total: try c.decode(Int.self, forKey: .total),
                  reused: try c.decodeIfPresent(Int.self, forKey: .reused) ?? 0)
    }
}

/// One job in a `STATUS` report.
public struct JobStatus: Codable, Sendable, Hashable {
    public var id: Int64
    public var name: String
    /// waiting_for_assets, queued, running, finalising, done, failed, cancelled.
    public var state: String
    public var tasks: TaskCounts
    public var frameCount: Int
    public var framesDone: Int
    /// 0…1.
    public var progress: Double
    /// Frames per second over the job's running time so far, if it has started.
    public var framesPerSecond: Double?
    /// Estimated seconds left at the current speed.
    public var etaSeconds: Double?
    public var submittedAtMillis: Int64
    public var updatedAtMillis: Int64
    /// Size of the finished output, when done.
    public var outputBytes: Int64?
    /// `mp4` or `mov` once the output exists (so `fetch -o` can check the name's extension).
    public var outputFileType: String?
    /// The first error, when failed.
    public var error: String?
    /// Higher is claimed first (`JobPriority.range`); 0 unless set at submit or by `PRIORITY`.
    public var priority: Int
    /// A paused job's tasks are not handed out (`PAUSE` / `RESUME`); running ones finish.
    public var paused: Bool
    /// Why it is paused: `operator` (`PAUSE`) or `budget` (90 % of its budget spent; `BUDGET`
    /// raises it); absent when it is not paused.
    public var pauseReason: String?
    /// Its budget (`12.50` money, `3.5h` agent-hours) and what it has spent of it in the same
    /// unit (`cost`, or `agentSeconds` in hours); absent for a job without a budget.
    public var budget: String?
    public var budgetSpent: Double?
    /// Set while the job's chunks wait for an encoder (`libx265`, `prores_ks`, …) that no
    /// connected agent has (`CAPS encoders=`): they are handed out when such an agent connects.
    public var needsEncoder: String?
    /// What loudness normalisation did (target, figures before and after, gain), once the job
    /// is done; only in a report about one job (`STATUS job=`), and only with `export.audio.loudness`.
    public var loudness: String?
    /// Seconds agents spent on the job's tasks so far, each from its latest claim to its end,
    /// or to now while it runs (the upload of its result included; reused tasks cost none);
    /// only in a report about one job (`STATUS job=`), and in a held one (`wait=`) only once
    /// the job has ended. Once the job has ended, its total.
    public var agentSeconds: Double?
    /// What the job cost so far: each task's agent-seconds at the price an hour its agent had
    /// when it claimed the task (`reel agent --cost-per-hour`, or the coordinator's price
    /// table), in the farm's currency; absent when none of its tasks ran on a priced agent.
    /// Only in a report about one job (`STATUS job=`), with `agentSeconds`.
    public var cost: Double?
    /// Tasks counted in `agentSeconds` whose agent had no price (so `cost` leaves them out);
    /// with `agentSeconds`.
    public var unpricedTasks: Int?
    public init(id: Int64, name: String, state: String, tasks: TaskCounts, frameCount: Int, framesDone: Int,
                progress: Double, framesPerSecond: Double?, etaSeconds: Double?, submittedAtMillis: Int64,
                updatedAtMillis: Int64, outputBytes: Int64?, error: String?, priority: Int = 0, paused: Bool = false) {
        self.id = id; self.name = name; self.state = state; self.tasks = tasks; self.frameCount = frameCount
        self.framesDone = framesDone; self.progress = progress; self.framesPerSecond = framesPerSecond
        self.etaSeconds = etaSeconds; self.submittedAtMillis = submittedAtMillis; self.updatedAtMillis = updatedAtMillis
        self.outputBytes = outputBytes; self.error = error; self.priority = priority; self.paused = paused
    }
}

/// `BUDGET`'s answer: the budget set and what the job has spent of it, in its unit (money, or
/// agent-hours), and whether the job is still paused by it (spent is 90 % of it or more).
public struct BudgetReport: Codable, Sendable, Hashable {
    public var job: Int64
    public var budget: String
    public var spent: Double
    public var pausedByBudget: Bool
    public init(job: Int64, budget: String, spent: Double, pausedByBudget: Bool) {
        self.job = job; self.budget = budget; self.spent = spent; self.pausedByBudget = pausedByBudget
    }
}

/// `STATUS`'s payload: the requested job, or the recent jobs (newest first).
public struct StatusReport: Codable, Sendable, Hashable {
    public var jobs: [JobStatus]
    /// The coordinator's storage use; in the farm overview (`STATUS` without `job=`) only.
    public var storage: StorageUsage?
    public init(jobs: [JobStatus], storage: StorageUsage? = nil) { self.jobs = jobs; self.storage = storage }
}

/// Bytes the coordinator's storage directory holds, by kind.
public struct StorageUsage: Codable, Sendable, Hashable {
    /// Uploaded sources, including uploads in progress.
    public var assetBytes: Int64
    /// Verified chunk and audio results.
    public var resultBytes: Int64
    /// Finished jobs' outputs.
    public var outputBytes: Int64
    public init(assetBytes: Int64, resultBytes: Int64, outputBytes: Int64) {
        self.assetBytes = assetBytes; self.resultBytes = resultBytes; self.outputBytes = outputBytes
    }
}

/// One agent in an `AGENTS` report.
public struct AgentStatus: Codable, Sendable, Hashable {
    public var name: String
    public var host: String
    /// idle, busy, draining, offline, quarantined (failed too often lately; gets no work until
    /// `quarantinedUntilMillis`).
    public var state: String
    public var threads: Int
    public var heartbeatAgeSeconds: Double?
    /// "job J task T frames [a, b)" while it holds a lease.
    public var currentTask: String?
    /// While quarantined: when it gets work again, ms since the Unix epoch.
    public var quarantinedUntilMillis: Int64?
    /// Its latest `FAIL` reason.
    public var lastError: String?
    /// `FAIL`s recorded against it, for the tasks the farm still keeps (absent from older coordinators).
    public var failures: Int?
    /// The encoders it advertised (`CAPS encoders=`): it is offered only chunks they can encode.
    public var encoders: [String]?
    public init(name: String, host: String, state: String, threads: Int, heartbeatAgeSeconds: Double?, currentTask: String?,
                quarantinedUntilMillis: Int64? = nil, lastError: String? = nil, failures: Int? = nil, encoders: [String]? = nil) {
        self.name = name; self.host = host; self.state = state; self.threads = threads
        self.heartbeatAgeSeconds = heartbeatAgeSeconds; self.currentTask = currentTask
        self.quarantinedUntilMillis = quarantinedUntilMillis; self.lastError = lastError; self.failures = failures
        self.encoders = encoders
    }
}

/// `AGENTS`' payload.
public struct AgentsReport: Codable, Sendable, Hashable {
    public var agents: [AgentStatus]
    /// Every coordinator sharing the farm's database (absent from older coordinators).
    public var coordinators: [CoordinatorStatus]?
    public init(agents: [AgentStatus], coordinators: [CoordinatorStatus]? = nil) {
        self.agents = agents; self.coordinators = coordinators
    }
}

/// `DRAINAGENT`'s payload: the agents (an agent's slots are agents of their own, `name/1` …)
/// asked to drain.
public struct DrainReport: Codable, Sendable, Hashable {
    public var agents: [String]
    public init(agents: [String]) { self.agents = agents }
}

/// One coordinator of the farm, as `AGENTS` reports it (proto/PROTOCOL.md, "Several coordinators").
public struct CoordinatorStatus: Codable, Sendable, Hashable {
    public var id: Int64
    /// Where agents and clients reach it (`HOST:PORT`).
    public var address: String
    public var host: String
    /// `alive` (heartbeating), `stopped` (shut down gracefully) or `silent` (no heartbeat for
    /// three periods: killed, hung, or cut off from the database).
    public var state: String
    public var startedAtMillis: Int64
    public var heartbeatAgeSeconds: Double
    /// Whether it is the coordinator that answered this report.
    public var answering: Bool
    public init(id: Int64, address: String, host: String, state: String, startedAtMillis: Int64, heartbeatAgeSeconds: Double,
                answering: Bool) {
        self.id = id; self.address = address; self.host = host; self.state = state; self.startedAtMillis = startedAtMillis
        self.heartbeatAgeSeconds = heartbeatAgeSeconds; self.answering = answering
    }
}

/// The body of a job-end notification (`settings.notify`, docs/notifications.md): POSTed as
/// JSON when the job ends, signed in the `Reel-Signature` header (`NotificationSignature`).
public struct JobEndNotification: Codable, Sendable, Hashable {
    /// Always `job.ended`.
    public var event: String
    /// The job as `STATUS` reports it at its end: `state` is `done`, `failed` or `cancelled`,
    /// with the output's size and type when done and the first error when failed.
    public var job: JobStatus
    /// Where the output is, when done: the line-protocol command that downloads it
    /// (`reel fetch ID -o FILE`), and the console's route when the coordinator serves one.
    public var output: Output?
    /// 1 for the first delivery; retries count up.
    public var attempt: Int

    public struct Output: Codable, Sendable, Hashable {
        public var fetchCommand: String
        public var bytes: Int64?
        public var fileType: String?
        public init(fetchCommand: String, bytes: Int64?, fileType: String?) {
            self.fetchCommand = fetchCommand; self.bytes = bytes; self.fileType = fileType
        }
    }

    public init(job: JobStatus, output: Output?, attempt: Int) {
        self.event = "job.ended"; self.job = job; self.output = output; self.attempt = attempt
    }
}

/// `ESTIMATE`'s payload: the render to predict, as the client planned it (`reel estimate`).
public struct EstimateRequest: Codable, Sendable, Hashable {
    public var load: RenderLoad
    /// Render slots at work at once (≥ 1).
    public var agents: Int
    /// The render's chunks, when known (no more slots than chunks work at once).
    public var chunks: Int?
    /// The price an hour of one slot; nil: the average of the jobs the estimate learns from.
    public var costPerHour: Double?
    public init(load: RenderLoad, agents: Int, chunks: Int? = nil, costPerHour: Double? = nil) {
        self.load = load; self.agents = agents; self.chunks = chunks; self.costPerHour = costPerHour
    }
}
