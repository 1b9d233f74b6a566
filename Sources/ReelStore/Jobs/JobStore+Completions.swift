/// Results of many render tasks in one transaction (the coordinator's `Completer` batches
/// `RESULT`s the way the dispatcher batches claims): jobs locked first in id order, then one
/// statement completes every task whose lease still holds.
extension JobStore {
    /// Completes each render task of `items` under its lease.
    /// - Returns: per item, its completion, or nil when the lease was stale (another epoch or
    ///   owner holds the task, or nobody does).
    public func completeTasks(_ items: [(lease: Lease, result: TaskResult)]) throws -> [Completion?] {
        guard !items.isEmpty else { return [] }
        let tasks = items.map(\.lease.task)
        return try connection.transaction { db in
            let jobs = try db.query(Statements.jobsOfTasks, [Self.integerArray(tasks)]).rows.map { try $0.int64("job_id") }
            try db.query(Statements.lockJobs, [Self.integerArray(jobs)])
            let rows = try db.query(Statements.completeTasks, [
                Self.integerArray(tasks), Self.integerArray(items.map(\.lease.epoch)), Self.integerArray(items.map(\.lease.agent)),
                Self.textArray(items.map(\.result.sha256)), Self.integerArray(items.map(\.result.size)), Self.textArray(items.map(\.result.key)),
            ]).rows
            var done: [Int64: Completion] = [:]
            for row in rows {
                let frames = try row.string("kind") == JobTaskKind.videoChunk.rawValue ? try row.int64("frames") : 0
                done[try row.int64("id")] = Completion(jobID: try row.int64("job_id"), jobDone: false, frames: frames)
            }
            var once: Set<Int64> = []
            let completed = items.filter { done[$0.lease.task] != nil && once.insert($0.lease.task).inserted }
            if !completed.isEmpty {
                try db.query(Statements.clearAgentTasks, [Self.integerArray(completed.map(\.lease.agent)),
                                                          Self.integerArray(completed.map(\.lease.task))])
                try db.query(Statements.touchJobs, [Self.integerArray(Array(Set(done.values.map(\.jobID))))])
                try db.query(Statements.appendCompletionEvents, [
                    Self.integerArray(completed.map { done[$0.lease.task]!.jobID }), Self.integerArray(completed.map(\.lease.task)),
                    Self.integerArray(completed.map(\.lease.agent)), Self.integerArray(completed.map(\.result.size)),
                    Self.textArray(completed.map(\.result.sha256)),
                ])
            }
            // A task named twice in one batch completes once: the first item wins.
            var seen: Set<Int64> = []
            return items.map { item in
                guard let completion = done[item.lease.task], seen.insert(item.lease.task).inserted else { return nil }
                return completion
            }
        }
    }
}
