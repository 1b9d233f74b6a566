import ReelScheduling

/// Leases that end without their holder saying so: run out (`expireLeases`, the coordinator's
/// reaper, by the `FarmClock`), or shortened to the reconnect grace when the holder's last
/// connection closed (`agentDisconnected`); a holder that reconnects renews within the grace.
extension LifecycleStore {
    /// Re-queues every task whose lease has run out by the clock (or fails it, and its job, if
    /// that was its last attempt). Run periodically by the coordinator; safe to run concurrently.
    /// One transaction per job, job row first (the store's lock order).
    /// - Returns: the leases that were expired.
    public func expireLeases() throws -> [ExpiredLease] {
        let now = self.now
        var all: [ExpiredLease] = []
        for row in try connection.query(Statements.jobsWithExpiredLeases, [now]).rows {
            let job = try row.int64("job_id")
            all += try connection.transaction { db -> [ExpiredLease] in
                guard try db.query(Statements.lockJob, [job]).singleRow() != nil else { return [] }
                let expired = try db.query(Statements.expireLeasesOfJob, [job, now]).rows.map { row in
                    ExpiredLease(task: try row.int64("id"), jobID: try row.int64("job_id"), epoch: try row.int64("epoch"),
                                 agent: try row.optionalInt64("old_owner"), newState: try row.value("state"))
                }
                for lease in expired {
                    try EventLog.append(db, job: lease.jobID, task: lease.task, agent: lease.agent, kind: "lease_expired",
                                        message: "epoch \(lease.epoch) → \(lease.newState.rawValue)")
                }
                if let last = expired.first(where: { $0.newState == .failed }) {
                    try Self.failJob(db, job: job, message: "task \(last.task): lease expired on its last attempt")
                }
                return expired
            }
        }
        return all
    }

    /// The agent's last connection closed: it is offline, and each lease it holds now ends
    /// within `graceSeconds` unless it reconnects and renews first (`renew`, as usual).
    /// - Returns: the tasks whose lease was shortened.
    @discardableResult
    public func agentDisconnected(_ agent: Int64, graceSeconds: Double) throws -> [Int64] {
        let now = self.now
        try connection.query(Statements.setAgentState, [agent, AgentState.offline])
        // One row per statement: never two task locks at once outside a job lock.
        return try connection.query(Statements.leasesOfAgent, [agent]).rows.compactMap { row in
            let task = try row.int64("id")
            let shortened = try connection.query(Statements.shortenLease, [task, agent, graceSeconds, now])
            return shortened.affectedRows == 1 ? task : nil
        }
    }
}
