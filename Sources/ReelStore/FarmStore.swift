import ReelScheduling
import Foundation
import ReelCore

/// The farm's only durable state, in PostgreSQL, in parts named for what each keeps:
///
/// - `lifecycle` (`LifecycleStore`): leases and claims, and every task and job transition —
///   claim, heartbeat, progress, complete (one or a batch), fail, release, expire, a holder's
///   disconnection, damaged results, cancel, retry, pause, resume, priority, quarantine. The
///   one place the farm's rules are decided (docs/task-lifecycle.md);
/// - `jobs` (`JobStore`): jobs and their tasks as records — creation, render plans,
///   documents, summaries, deletion;
/// - `agents` (`AgentStore`): registration, state, the `AGENTS` list;
/// - `assets` (`AssetStore`): stored sources, task results and outputs — reuse, retention;
/// - `events` (`EventLog`): what happened, per job;
/// - `console` (`ConsoleQueries`): the operator console's read-only views;
/// - `batches` (`BatchStore`): batches of jobs, one per row of a template's rows;
/// - `coordinators` (`CoordinatorStore`): the coordinators sharing the database, and the
///   advisory locks of work one of them does at a time.
///
/// Every operation that changes state is one transaction (or one statement) on the store's
/// connection, built from the named statements in `Statements`. Lock order, the same in every
/// transaction, so that no two can deadlock: a job row (`FOR NO KEY UPDATE`), then its task
/// rows, then agent rows. A claim is the exception that keeps the rule: its leasing statement
/// locks only tasks, with `SKIP LOCKED` (it never waits for one), then agents, and never a job
/// row (the job is marked running in a statement of its own afterwards). Every other task
/// state change locks the task's job first, which also serialises the job's counters
/// (migration 3).
///
/// `@unchecked Sendable` like its `PGConnection`: use one store from one thread at a time
/// (the coordinator gives each store its own connection and worker).
public final class FarmStore: @unchecked Sendable {
    public let connection: PGConnection
    /// The time lease rules read (grant, renewal, expiry, grace); tests move it instead of sleeping.
    public let clock: FarmClock

    public let lifecycle: LifecycleStore
    public let jobs: JobStore
    public let agents: AgentStore
    public let assets: AssetStore
    public let events: EventLog
    public let console: ConsoleQueries
    public let notifications: NotificationStore
    public let coordinators: CoordinatorStore
    public let batches: BatchStore

    public init(connection: PGConnection, clock: FarmClock = .wall) {
        self.connection = connection
        self.clock = clock
        lifecycle = LifecycleStore(connection: connection, clock: clock)
        jobs = JobStore(connection: connection)
        agents = AgentStore(connection: connection)
        assets = AssetStore(connection: connection)
        events = EventLog(connection: connection)
        console = ConsoleQueries(connection: connection)
        notifications = NotificationStore(connection: connection)
        coordinators = CoordinatorStore(connection: connection)
        batches = BatchStore(connection: connection)
    }
}

/// Errors of store operations that the protocol reports to peers.
public enum StoreError: Error, Hashable, Sendable {
    /// The lease (task, epoch, agent) is not the current one: someone else holds the task,
    /// it was re-queued, or its job was cancelled. Protocol: `LOST` / `ERR stale_epoch`.
    case staleEpoch(task: Int64, epoch: Int64)
    case jobNotFound(Int64)
    /// The job's state does not allow the operation (e.g. cancelling a finished job).
    case conflict(job: Int64, state: JobState)
    /// The job is paused by its budget: a resume is refused (`reel budget JOB AMOUNT` raises it).
    case pausedByBudget(job: Int64)
}

extension PGRow {
    /// A column holding one of the store's vocabulary types (`TaskKind`, `JobState`, …); an
    /// unknown value is a schema/code mismatch and fails loudly.
    func value<T: RawRepresentable>(_ column: String, as type: T.Type = T.self) throws -> T where T.RawValue == String {
        let text = try string(column)
        guard let value = T(rawValue: text) else { throw PGError(sqlState: nil, message: "column \(column): unknown \(T.self) '\(text)'") }
        return value
    }

    /// The integers of a `bigint[]` column's text (`{1,2,3}`).
    func integers(_ column: String) throws -> [Int64] {
        try string(column).trimmingCharacters(in: ["{", "}"]).split(separator: ",").compactMap { Int64($0) }
    }
}
