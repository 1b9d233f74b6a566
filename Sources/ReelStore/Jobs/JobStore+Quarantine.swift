/// Failure history, agent quarantine and failure-aware claims (issue 8). Kept beside, not
/// inside, the lease operations: the decisions are `QuarantinePolicy` / `TaskFailureMessage`
/// (pure); these methods only read their inputs and apply their answers.

/// What `fail(_:message:policy:)` did.
public struct FailureReport: Hashable, Sendable {
    public var outcome: FailureOutcome
    /// Set when this failure put the agent into quarantine: until when (ms since the Unix epoch).
    public var quarantinedUntilMillis: Int64?
}

extension JobStore {
    /// `fail(_:message:)` that also remembers who failed the task: the failure is recorded
    /// (so the task moves to other agents), a job failing on its last attempt quotes every
    /// agent's error, and the agent is quarantined when `policy` says so.
    public func fail(_ lease: Lease, message: String, policy: QuarantinePolicy) throws -> FailureReport {
        try connection.transaction { db in
            try lockJob(db, of: lease)
            guard let row = try db.query(Statements.failTask, fenced(lease) + [message]).singleRow() else {
                throw JobStoreError.staleEpoch(task: lease.task, epoch: lease.epoch)
            }
            let job = try row.int64("job_id")
            try db.query(Statements.recordTaskFailure, [String(lease.task), String(lease.agent), message])
            try db.query(Statements.clearAgentTask, [String(lease.agent), String(lease.task)])
            try appendEvent(db, job: job, task: lease.task, agent: lease.agent, kind: "failed", message: message)
            let outcome: FailureOutcome
            if try row.string("state") == TaskState.failed.rawValue {
                try failJob(db, job: job, message: try failureText(db, task: lease.task))
                outcome = .jobFailed(jobID: job)
            } else {
                outcome = .requeued(attemptsLeft: try row.int("attempts_left"))
            }
            return FailureReport(outcome: outcome, quarantinedUntilMillis: try applyQuarantine(db, agent: lease.agent, error: message,
                                                                                               policy: policy))
        }
    }

    /// Forgets agents offline since before `cutoffMillis` (and holding no lease), except the
    /// coordinator's own finaliser row. - Returns: their names.
    @discardableResult
    public func forgetOfflineAgents(before cutoffMillis: Int64, keeping finaliser: String) throws -> [String] {
        try connection.query(Statements.forgetOfflineAgents, [String(cutoffMillis), finaliser]).rows.map { try $0.string("name") }
    }

    private func failureText(_ db: PGConnection, task: Int64) throws -> String {
        guard let label = try db.query(Statements.taskLabel, [String(task)]).singleRow(),
              let kind = JobTaskKind(rawValue: try label.string("kind")) else { return "task \(task) failed" }
        let failures = try db.query(Statements.taskFailures, [String(task)]).rows.map {
            (agent: try $0.string("agent_name"), message: try $0.string("message"))
        }
        return TaskFailureMessage.text(kind: kind, ordinal: try label.int("ordinal"), failures: failures)
    }

    private func applyQuarantine(_ db: PGConnection, agent: Int64, error: String, policy: QuarantinePolicy) throws -> Int64? {
        guard let state = try db.query(Statements.agentQuarantineState, [String(agent)]).singleRow() else { return nil }
        let now = try state.int64("now_ms"), previous = try state.optionalInt64("until_ms")
        let since = policy.countsFailuresAfter(nowMillis: now, previousQuarantineEndMillis: previous)
        let times = try db.query(Statements.agentFailuresSince, [String(agent), String(max(since, 0))]).rows.map { try $0.int64("at_ms") }
        guard let until = policy.quarantineUntil(failureMillis: times, nowMillis: now, previousQuarantineEndMillis: previous) else {
            try db.query(Statements.setAgentLastError, [String(agent), error])
            return nil
        }
        try db.query(Statements.quarantineAgent, [String(agent), String(until), error])
        try appendEvent(db, job: nil, agent: agent, kind: "agent_quarantined", message: "until \(until): \(error)")
        return until
    }
}
