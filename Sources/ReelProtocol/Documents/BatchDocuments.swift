// Documents of batches on the farm (`BATCH`, `BATCHSTATUS`, proto/PROTOCOL.md §4.3; the
// console's `/api/v1/batches`, proto/console-api.yaml): one job per row of a template's rows,
// grouped under a batch id the coordinator keeps. Defined once, here, because the coordinator
// writes them and the CLI and the console read them.

/// `BATCH`'s payload: a batch to open. Its rows' jobs are then submitted one by one, each
/// `SUBMIT` naming the batch and its row (`JobSettings.batch`).
public struct NewBatchRequest: Codable, Sendable, Hashable {
    /// A label for `reel status` and the console (`card.json × people.csv`).
    public var name: String
    /// How many rows the batch renders: its jobs are `rows` `SUBMIT`s (rows left invalid on
    /// the client are not counted).
    public var rows: Int
    public init(name: String, rows: Int) { self.name = name; self.rows = rows }

    /// The most rows one batch may have.
    public static let maximumRows = 1_000_000
    /// The longest name, in UTF-8 bytes.
    public static let maximumNameBytes = 512

    /// Why this request cannot open a batch; nil when it can.
    public var problem: String? {
        if !(1...Self.maximumRows).contains(rows) { return "rows must be 1…\(Self.maximumRows)" }
        if name.utf8.count > Self.maximumNameBytes { return "name is longer than \(Self.maximumNameBytes) bytes" }
        return nil
    }
}

/// `BATCH`'s reply (a `REPORT`): the new batch's id.
public struct BatchCreated: Codable, Sendable, Hashable {
    public var batch: Int64
    public init(batch: Int64) { self.batch = batch }
}

/// A job's place in a batch (`JobSettings.batch`): the batch's id and the row it renders.
public struct BatchMembership: Codable, Sendable, Hashable {
    public var id: Int64
    /// The row's number in the rows file (1-based, after a CSV header).
    public var row: Int
    public init(id: Int64, row: Int) { self.id = id; self.row = row }
}

/// One row of a batch: its job and how far it is.
public struct BatchRowStatus: Codable, Sendable, Hashable {
    public var row: Int
    public var job: Int64
    /// The job's state, as `JobStatus.state` says it.
    public var state: String
    /// 0…1.
    public var progress: Double
    /// Of its render tasks (video chunks and audio), how many were reused from earlier renders.
    public var reusedChunks: Int
    public var chunks: Int
    /// Seconds agents spent on it so far (reused chunks cost none).
    public var agentSeconds: Double
    /// The output's size once done.
    public var outputBytes: Int64?
    /// Why it failed.
    public var error: String?
    public init(row: Int, job: Int64, state: String, progress: Double, reusedChunks: Int, chunks: Int, agentSeconds: Double,
                outputBytes: Int64? = nil, error: String? = nil) {
        self.row = row; self.job = job; self.state = state; self.progress = progress; self.reusedChunks = reusedChunks
        self.chunks = chunks; self.agentSeconds = agentSeconds; self.outputBytes = outputBytes; self.error = error
    }
}

/// Rows of a batch by where their jobs are. `submitted` is every row whose job exists; rows
/// the batch declared but whose job is not submitted yet are `rows - submitted`.
public struct BatchRowCounts: Codable, Sendable, Hashable {
    /// Waiting for their assets, or queued with no task running yet.
    public var queued: Int
    /// Running or finalising.
    public var running: Int
    public var done: Int
    public var failed: Int
    public var cancelled: Int
    public init(queued: Int = 0, running: Int = 0, done: Int = 0, failed: Int = 0, cancelled: Int = 0) {
        self.queued = queued; self.running = running; self.done = done; self.failed = failed; self.cancelled = cancelled
    }
    public var submitted: Int { queued + running + done + failed + cancelled }
}

/// `BATCHSTATUS`' payload and `GET /api/v1/batches/{id}`: a batch's summary, and with
/// `rows=1` (`?rows=1`) every row.
public struct BatchReport: Codable, Sendable, Hashable {
    public var id: Int64
    public var name: String
    /// The rows the batch was opened with.
    public var rows: Int
    public var counts: BatchRowCounts
    /// `queued`, `running` (some row not ended), `done` (every row done), `failed` (every row
    /// ended, some not done).
    public var state: String
    public var createdAtMillis: Int64
    /// Estimated seconds until every row has ended, from the rows ended so far; nil before
    /// the first ends, or once every row has.
    public var etaSeconds: Double?
    /// Seconds agents spent on the batch's tasks (reused chunks cost none).
    public var agentSeconds: Double
    /// Of the batch's render tasks, how many were reused from earlier renders (the shared
    /// intro of every row after the first, say), and how many there are.
    public var reusedChunks: Int
    public var chunks: Int
    /// Every submitted row in row order; only when asked for.
    public var rowStatuses: [BatchRowStatus]?
    public init(id: Int64, name: String, rows: Int, counts: BatchRowCounts, state: String, createdAtMillis: Int64,
                etaSeconds: Double?, agentSeconds: Double, reusedChunks: Int, chunks: Int, rowStatuses: [BatchRowStatus]? = nil) {
        self.id = id; self.name = name; self.rows = rows; self.counts = counts; self.state = state
        self.createdAtMillis = createdAtMillis; self.etaSeconds = etaSeconds; self.agentSeconds = agentSeconds
        self.reusedChunks = reusedChunks; self.chunks = chunks; self.rowStatuses = rowStatuses
    }

    /// The batch's state from its row counts: `rows` declared.
    public static func state(rows: Int, counts: BatchRowCounts) -> String {
        let ended = counts.done + counts.failed + counts.cancelled
        if ended == rows { return counts.done == rows ? "done" : "failed" }
        return counts.running + ended == 0 ? "queued" : "running"
    }

    /// Seconds left: the batch's time so far per ended row, times the rows not ended.
    public static func eta(rows: Int, ended: Int, elapsedSeconds: Double) -> Double? {
        guard ended > 0, ended < rows, elapsedSeconds > 0 else { return nil }
        return elapsedSeconds / Double(ended) * Double(rows - ended)
    }
}
