import ReelCore
import ReelProtocol

/// A job action of the console (`POST /api/v1/jobs/{id}/ACTION`).
public enum JobAction: String, Sendable, CaseIterable {
    case cancel, retry, pause, resume
}

/// A request the farm refused, mapped to an HTTP status by the console.
public struct ConsoleBackendError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// 404: no such job.
        case notFound
        /// 409: the job's state does not allow it.
        case conflict
        /// 400: a bad value (priority out of range).
        case invalid
        /// 415: what was asked for exists in a form browsers cannot play (a ProRes or PNG
        /// job's preview).
        case unplayable
        /// 503: not there yet, after waiting for it as long as a request may (a preview piece
        /// whose chunk still renders), or the coordinator is shutting down; ask again later.
        case unavailable
    }
    public var kind: Kind
    public var message: String
    /// Every problem, one a line, when there are several (the rows of a batch that are invalid).
    public var problems: [String]?
    public init(_ kind: Kind, _ message: String, problems: [String]? = nil) {
        self.kind = kind; self.message = message; self.problems = problems
    }
    public var description: String { message }
}

/// What the console reads and does, implemented by the coordinator on its store: the same
/// answers as the line protocol's `STATUS`, `AGENTS`, `EVENTS`, `CANCEL`, … (so the console
/// and the CLI show the same documents). Throws `ConsoleBackendError` for refusals; anything
/// else becomes a 500 whose details go to the coordinator's log only.
public protocol ConsoleBackend: Sendable {
    /// The most recent `limit` jobs, newest first (`STATUS`' documents).
    func jobs(limit: Int) async throws -> [JobStatus]
    /// One job (as `STATUS job=`) with its tasks.
    func job(_ id: Int64) async throws -> JobDetail
    /// The job's events after event id `after`, oldest first.
    func events(job: Int64, after: Int64, limit: Int) async throws -> EventsReport
    /// `AGENTS`' documents.
    func agents() async throws -> [AgentStatus]
    func perform(_ action: JobAction, job: Int64) async throws
    func setPriority(job: Int64, priority: Int) async throws
    /// The job's newest poster frame (JPEG), nil when it has none yet.
    func poster(job: Int64) async throws -> [UInt8]?
    /// The job's preview (`GET /api/v1/jobs/{id}/preview.m3u8`): while the job runs, every
    /// planned video chunk; once it has ended, its finished chunks in order up to the first
    /// unfinished one. `.notFound` for a job without video chunks (sound only, or not planned yet).
    func previewPlaylist(job: Int64) async throws -> PreviewPlaylist
    /// The preview's init segment (`ftyp` + `moov`), from the job's first chunk, once that is
    /// rendered (the request waits for it).
    func previewInitSegment(job: Int64) async throws -> [UInt8]
    /// The preview's media segment of video chunk `chunk` (its ordinal): `moof` + `mdat` with
    /// absolute decode times, once the chunk is rendered (the request waits for it).
    /// `.notFound` when the job ended without it, `.unavailable` when waiting took too long.
    func previewSegment(job: Int64, chunk: Int) async throws -> [UInt8]
    /// The Prometheus text for `/metrics`.
    func metricsExposition() -> String
    /// The coordinators sharing the farm's database (`AgentsReport.coordinators`); nil when unknown.
    func coordinators() async throws -> [CoordinatorStatus]?
    /// A batch's report (as `BATCHSTATUS`), with every row when `rows`. `.notFound` for no such batch.
    func batch(_ id: Int64, rows: Bool) async throws -> BatchReport
    /// `POST /api/v1/batches`: a template, its rows and their assets by content (the request's
    /// JSON body, proto/console-api.yaml `BatchSubmission`) become a batch of one job per row;
    /// every row is checked first and nothing is created while any is invalid (`.invalid`
    /// with the problems) or an asset is not stored on the farm (`.conflict`).
    func submitBatch(_ body: [UInt8]) async throws -> BatchReport
}

extension ConsoleBackend {
    public func coordinators() async throws -> [CoordinatorStatus]? { nil }
}
