import Foundation
import ReelConsole
import ReelCore
import ReelProtocol
import ReelStore
import ReelScheduling

/// The console's view of the farm: every answer comes from the same handler code as the line
/// protocol's `STATUS`, `AGENTS`, `EVENTS`, `CANCEL`, `RETRY`, `PAUSE`, `RESUME` and
/// `PRIORITY`, so `reel status --json` and `GET /api/v1/jobs` return the same documents.
struct CoordinatorConsoleBackend: ConsoleBackend {
    let handler: CoordinatorHandler
    let metrics: CoordinatorMetrics
    let previews: JobPreviews

    init(handler: CoordinatorHandler, metrics: CoordinatorMetrics) {
        self.handler = handler; self.metrics = metrics
        previews = JobPreviews(pool: handler.pool, storage: handler.storage, watchers: handler.jobWatchers)
    }

    func jobs(limit: Int) async throws -> [JobStatus] {
        let now = Int64(Date().timeIntervalSince1970 * 1000), connected = handler.connectedEncoders
        return try await translating {
            try await handler.pool.run { store in
                try store.jobs.recent(limit: limit).map { CoordinatorHandler.jobStatus($0, nowMillis: now, connectedEncoders: connected) }
            }
        }
    }

    func job(_ id: Int64) async throws -> JobDetail {
        try await translating { try await handler.jobDetail(job: id) }
    }

    func events(job: Int64, after: Int64, limit: Int) async throws -> EventsReport {
        try await translating { try await handler.eventsReport(job: job, after: after, limit: limit) }
    }

    func agents() async throws -> [AgentStatus] {
        try await translating {
            guard case .report(let json) = try await handler.agents() else { throw ConsoleBackendError(.invalid, "no AGENTS report") }
            return try JSONDecoder().decode(AgentsReport.self, from: Data(json)).agents
        }
    }

    func coordinators() async throws -> [CoordinatorStatus]? {
        try await translating { try await handler.coordinators() }
    }

    func perform(_ action: JobAction, job: Int64) async throws {
        try await translating {
            switch action {
            case .cancel: _ = try await handler.handle(.cancel(job: job))
            case .retry: _ = try await handler.handle(.retry(job: job))
            case .pause: _ = try await handler.handle(.pause(job: job))
            case .resume: _ = try await handler.handle(.resume(job: job))
            }
        }
    }

    func setPriority(job: Int64, priority: Int) async throws {
        guard JobPriority.range.contains(priority) else {
            throw ConsoleBackendError(.invalid, "priority must be \(JobPriority.range.lowerBound)…\(JobPriority.range.upperBound)")
        }
        try await translating { _ = try await handler.handle(.priority(job: job, priority: priority)) }
    }

    func poster(job: Int64) async throws -> [UInt8]? {
        guard let poster = try await handler.storage.poster(job: job) else {
            // A job that does not exist is 404 too, with its own message.
            _ = try await self.job(job)
            return nil
        }
        return poster
    }

    func previewPlaylist(job: Int64) async throws -> PreviewPlaylist {
        try await translating { try await previews.playlist(job: job) }
    }

    func previewInitSegment(job: Int64) async throws -> [UInt8] {
        try await translating { try await previews.initSegment(job: job) }
    }

    func previewSegment(job: Int64, chunk: Int) async throws -> [UInt8] {
        try await translating { try await previews.segment(job: job, chunk: chunk) }
    }

    func metricsExposition() -> String { metrics.exposition() }

    /// The handler's refusals (as the line protocol words them) become the console's.
    func translating<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ReelProtocolError {
            switch error.code {
            case .notFound: throw ConsoleBackendError(.notFound, error.message)
            case .conflict: throw ConsoleBackendError(.conflict, error.message)
            case .malformed: throw ConsoleBackendError(.invalid, error.message)
            default: throw error
            }
        } catch let error as StoreError {
            switch error {
            case .jobNotFound(let job): throw ConsoleBackendError(.notFound, "no job \(job)")
            case .conflict(let job, let state): throw ConsoleBackendError(.conflict, "job \(job) is already \(state.rawValue)")
            case .pausedByBudget(let job): throw ConsoleBackendError(.conflict, CoordinatorHandler.pausedByBudgetMessage(job))
            default: throw error
            }
        }
    }
}

extension CoordinatorHandler {
    /// A request from the console, answered as one from an operator client.
    func handle(_ request: Message) async throws -> Message {
        try await handle(request, from: Peer(role: .client, name: "console", connectionID: 0))
    }
}
