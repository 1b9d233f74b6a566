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
            try db.query(Statements.lockAndTouchJobsOfTasks, [Self.integerArray(tasks)])
            let rows = try db.query(Statements.completeTasks, [
                Self.integerArray(tasks), Self.integerArray(items.map(\.lease.epoch)), Self.integerArray(items.map(\.lease.agent)),
                Self.textArray(items.map(\.result.sha256)), Self.integerArray(items.map(\.result.size)), Self.textArray(items.map(\.result.key)),
            ]).rows
            var done: [Int64: Completion] = [:]
            for row in rows {
                let frames = try row.string("kind") == JobTaskKind.videoChunk.rawValue ? try row.int64("frames") : 0
                done[try row.int64("id")] = Completion(jobID: try row.int64("job_id"), jobDone: false, frames: frames)
            }
            if !done.isEmpty {
                let jobs = Set(done.values.map(\.jobID)).sorted()
                let rendered = Set(try db.query(Statements.jobsRendered, [Self.integerArray(jobs)]).rows.map { try $0.int64("id") })
                for (task, completion) in done where rendered.contains(completion.jobID) { done[task]?.jobRendered = true }
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
