import Foundation
import ReelCore
import ReelProtocol
import ReelStore
import ReelScheduling

// Pause, resume, priority and history (proto/PROTOCOL.md §4.3), and the job page of the
// operator console. The line protocol and the console's HTTP API both call these.
extension CoordinatorHandler {
    func pause(job: Int64) async throws -> Message {
        let changed = try await pool.run { try $0.lifecycle.setPaused(job: job, true) }
        if changed { logger.info("job paused", metadata: ["job": "\(job)"]) }
        return .ok
    }

    func resume(job: Int64) async throws -> Message {
        let changed = try await pool.run { try $0.lifecycle.setPaused(job: job, false) }
        if changed {
            logger.info("job resumed", metadata: ["job": "\(job)"])
            dispatcher.wake()
        }
        return .ok
    }

    /// The refusal of a resume of a job its budget paused.
    static func pausedByBudgetMessage(_ job: Int64) -> String {
        "job \(job) is paused by its budget; raise the budget with `reel budget \(job) AMOUNT` (money like 12.50, or agent-hours like 3.5h), which resumes it"
    }

    /// `BUDGET job= amount=`: sets (raises) the job's budget and applies it at once; a job its
    /// budget paused resumes when the new one puts it under 90 %. Answers what it spent.
    func setBudget(job: Int64, amount: String) async throws -> Message {
        guard let budget = JobBudget(parsing: amount) else {
            throw ReelProtocolError(.malformed, "amount=\(amount.escapingControlCharacters): a budget is \(JobBudget.syntax)")
        }
        let check = try await pool.run { try $0.lifecycle.setBudget(job: job, budget) }
        logger.info("job budget set", metadata: ["job": "\(job)", "budget": "\(budget)", "spent": "\(check.spent)",
                                                 "resumed": "\(check.resumed)", "paused": "\(check.pausedByBudget)"])
        if check.resumed { dispatcher.wake() }
        let report = BudgetReport(job: job, budget: "\(budget)", spent: check.spent, pausedByBudget: check.pausedByBudget)
        return .report(json: Array(try CoordinatorJSON.encode(report).utf8))
    }

    func setPriority(job: Int64, priority: Int) async throws -> Message {
        guard JobPriority.range.contains(priority) else {
            throw ReelProtocolError(.malformed, "priority must be \(JobPriority.range.lowerBound)…\(JobPriority.range.upperBound)")
        }
        try await pool.run { try $0.lifecycle.setPriority(job: job, priority) }
        logger.info("job priority set", metadata: ["job": "\(job)", "priority": "\(priority)"])
        // Waiting claims may now prefer this job's tasks.
        dispatcher.wake()
        return .ok
    }

    func events(job: Int64, after: Int64) async throws -> Message {
        .report(json: Array(try CoordinatorJSON.encode(try await eventsReport(job: job, after: after)).utf8))
    }

    /// Up to `EventsReport.pageSize` events of `job` after event id `after`.
    func eventsReport(job: Int64, after: Int64, limit: Int = EventsReport.pageSize) async throws -> EventsReport {
        let limit = max(1, min(limit, EventsReport.pageSize))
        guard let records = try await pool.run({ try $0.console.events(job: job, after: after, limit: limit) }) else {
            throw StoreError.jobNotFound(job)
        }
        return EventsReport(job: job, events: records.map { record in
            JobEvent(id: record.id, atMillis: record.atMillis, kind: record.kind, message: record.message, task: record.taskID,
                     taskLabel: record.taskKind.map { Self.taskLabel(kind: $0, ordinal: record.taskOrdinal ?? 0,
                                                                     frames: (record.frameStart ?? 0, record.frameEnd ?? 0)) },
                     agent: record.agentName)
        })
    }

    /// One job's `JobStatus` (as `STATUS job=`) with its tasks.
    func jobDetail(job: Int64) async throws -> JobDetail {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let hidden = configuration.finaliserAgentName, connected = connectedEncoders
        return try await pool.run { store in
            guard let summary = try store.jobs.summary(job), let tasks = try store.console.tasks(ofJob: job) else {
                throw StoreError.jobNotFound(job)
            }
            let chunks = tasks.map { task -> ChunkStatus in
                let frames = task.kind == .videoChunk ? task.frameEnd - task.frameStart : 0
                let done = task.state == .done ? frames : min(task.progressFrames, frames)
                var fps: Double?
                if let start = task.claimedAtMillis, frames > 0, task.state == .done || task.state == .leased {
                    let seconds = Double((task.state == .done ? task.finishedAtMillis ?? now : now) - start) / 1000
                    if seconds > 0, done > 0 { fps = Double(done) / seconds }
                }
                return ChunkStatus(task: task.id, kind: task.kind.rawValue, ordinal: task.ordinal, frameStart: task.frameStart,
                                   frameEnd: task.frameEnd, state: task.state.rawValue, attempts: task.attempts, maxAttempts: task.maxAttempts,
                                   agent: task.agentName == hidden ? "coordinator" : task.agentName, framesDone: done,
                                   startedAtMillis: task.claimedAtMillis, finishedAtMillis: task.finishedAtMillis,
                                   framesPerSecond: fps, error: task.error,
                                   agentSeconds: task.agentMilliseconds.map { Double($0) / 1000 },
                                   cost: task.agentMilliseconds.flatMap { ms in task.costPerHour.map { Double(ms) / 3_600_000 * $0 } })
            }
            var status = Self.jobStatus(summary, nowMillis: now, connectedEncoders: connected)
            // The job's cost from the task rows just read (the sum `Statements.jobCost` makes),
            // not a second pass over every task of the job.
            Self.add(JobCost(tasks: tasks), to: &status)
            return JobDetail(job: status, chunks: chunks)
        }
    }

    /// "chunk 3 frames [30, 40)", "audio", "finalise".
    static func taskLabel(kind: TaskKind, ordinal: Int, frames: (Int64, Int64)) -> String {
        kind.countsFrames ? "\(kind.label(ordinal: ordinal)) frames [\(frames.0), \(frames.1))" : kind.label(ordinal: ordinal)
    }
}
