import Foundation
import ReelScheduling

/// Claims: the one claim routine every caller uses (the coordinator's dispatcher for agents,
/// its finaliser, tests). `ClaimPolicy` decides who gets which task; the statements decide
/// which tasks are claimable and lease them.
extension LifecycleStore {
    /// Leases tasks of `kinds` to the agents of `requests`, at most one each: the first requests
    /// get the first tasks in claim order (`ClaimPolicy`). Three statements and no transaction
    /// held open between them (each round trip counts in a claim's latency): read the claimable
    /// jobs, read candidates, then lease in one statement that locks its tasks with `SKIP LOCKED`
    /// and leases only those still queued. A candidate taken in between by another claimer is
    /// simply not leased (its request gets nil and claims again); no task is ever leased twice.
    /// A quarantined agent gets nothing; a task an agent already failed goes to it only when
    /// every other live, unquarantined agent of `liveAgents` has failed it too; an agent gets
    /// only tasks whose encoder it has (`encoders`, from each agent's `CAPS`).
    /// - Returns: one entry per request, in order: its task, or nil.
    public func claimTasks(for requests: [ClaimRequest], leaseSeconds: Double, kinds: Set<TaskKind>,
                           liveAgents: Set<Int64>, encoders: AgentEncoders = AgentEncoders()) throws -> [ClaimedTask?] {
        try claimBatch(for: requests, leaseSeconds: leaseSeconds, kinds: kinds, liveAgents: liveAgents, encoders: encoders).tasks
    }

    /// `claimTasks`, also saying how many of the tasks it chose were gone by the time it leased
    /// them (`ClaimBatch.lost`): a request left without a task for that reason should claim
    /// again at once, while one left without because nothing was claimable should wait.
    public func claimBatch(for requests: [ClaimRequest], leaseSeconds: Double, kinds: Set<TaskKind>,
                           liveAgents: Set<Int64>, encoders: AgentEncoders = AgentEncoders()) throws -> ClaimBatch {
        guard !requests.isEmpty else { return ClaimBatch(tasks: [], lost: 0) }
        let db = connection
        let firstPage = try db.query(Statements.claimableJobs, [kinds.sorted()]).rows
        let quarantined = Set(try firstPage.first.map { try $0.integers("quarantined") } ?? [])
        var jobs = ClaimableJobs(firstPage: firstPage.filter { $0["id"] != nil }, pageSize: Self.jobsPageSize) { last in
            try db.query(Statements.claimableJobsAfter, [kinds.sorted(), try last.int("priority"), try last.int64("id"),
                                                         try last.int64("claim_turn")]).rows
        }
        let live = liveAgents.subtracting(quarantined)
        // A few more candidates than requests; when that leaves an agent without a task while a
        // job had more to offer (it failed those it was offered), once more with 64 more, so
        // agents kept off tasks they failed find others (an agent that failed more than 64 of
        // the first tasks waits for them to be taken by others). Most claims take the first pass.
        var chosen: [Int: ClaimCandidate] = [:]
        for padding in [8, 64] {
            let (candidates, more) = try claimCandidates(jobs: &jobs, requests: requests, kinds: kinds, encoders: encoders, padding: padding)
            var remaining = candidates
            chosen = [:]
            for (index, request) in requests.enumerated() where !quarantined.contains(request.agent) {
                guard let pick = ClaimPolicy.choose(remaining, for: request.agent, liveAgents: live, encoders: encoders) else { continue }
                chosen[index] = pick
                remaining.removeAll { $0.task == pick.task }
            }
            let unserved = requests.indices.contains { chosen[$0] == nil && !quarantined.contains(requests[$0].agent) }
            if !unserved || !more { break }
        }
        guard !chosen.isEmpty else { return ClaimBatch(tasks: requests.map { _ in nil }, lost: 0) }
        let order = chosen.keys.sorted()
        let rowsLeased = try db.query(Statements.leaseTasks, [
            order.map { chosen[$0]!.task }, order.map { requests[$0].agent }, leaseSeconds, now,
        ]).rows
        let mustMarkJobs = try rowsLeased.contains {
            try $0.value("job_state", as: JobState.self) == .queued || $0.value("kind", as: TaskKind.self).completesJob
        }
        let byTask = Dictionary(uniqueKeysWithValues: try rowsLeased.map(Self.claimedTask).map { ($0.id, $0) })
        let claimed = requests.indices.map { index in chosen[index].flatMap { byTask[$0.task] } }
        // In a statement of its own: a claim locks tasks and must never wait for a job row.
        // Needed only when a job was still queued or a task ending its job was claimed (the
        // reaper also converges jobs a crash left behind).
        if mustMarkJobs {
            let tasks = claimed.compactMap { $0 }
            try markJobsClaimed(jobs: Set(tasks.map(\.jobID)), finalising: Set(tasks.filter { $0.kind.completesJob }.map(\.jobID)))
        }
        return ClaimBatch(tasks: claimed, lost: order.count - rowsLeased.count)
    }

    /// The candidates of `jobs` (the claimable jobs, in claim order) for `requests`, sorted by
    /// `ClaimPolicy.precedes`: job by job in claim order (usually the first has enough), each
    /// an index range scan of up to `padding` more than the requests; only the kinds some
    /// requesting agent has the encoder for; and past that many, on for agents that can use
    /// none of the candidates so far (a job needing libx265 does not hide the next job from
    /// agents without it). `more`: some job may have had more candidates than it returned.
    private func claimCandidates(jobs: inout ClaimableJobs, requests: [ClaimRequest], kinds: Set<TaskKind>, encoders: AgentEncoders,
                                 padding: Int) throws -> (candidates: [ClaimCandidate], more: Bool) {
        let limit = requests.count + padding
        var candidates: [ClaimCandidate] = []
        var more = false
        var position = 0
        while let job = try jobs.job(at: position) {
            position += 1
            let videoEncoder = job["video_encoder"]
            var askers = requests
            if candidates.count >= limit {
                askers = requests.filter { request in !candidates.contains { encoders.allow(request.agent, $0.encoder) } }
                if askers.isEmpty { more = true; break }
            }
            let jobKinds = kinds.filter { kind in
                askers.contains { encoders.allow($0.agent, kind.encoder(videoEncoder: videoEncoder)) }
            }
            guard !jobKinds.isEmpty else { continue }
            let pageSize = Statements.claimCandidatesLimit(atLeast: max(limit - candidates.count, askers.count + padding))
            let page = try connection.query(Statements.claimCandidatesOfJob(limit: pageSize), [
                try job.int64("id"), jobKinds.sorted(), try job.bool("rendered"), try job.int("priority"),
            ]).rows.map { try Self.candidate($0, videoEncoder: videoEncoder, turn: try job.int64("claim_turn")) }
            if page.count == pageSize { more = true }
            candidates += page
        }
        return (candidates.sorted(by: ClaimPolicy.precedes), more)
    }

    /// How many claimable jobs a claim reads at a time (`Statements.claimableJobs`): the first
    /// job usually has tasks for the whole batch; more pages are read only for agents the jobs
    /// so far had nothing for.
    static let jobsPageSize = 16

    /// The claimable jobs in claim order, read a page at a time as `claimCandidates` walks them
    /// (with thousands queued, as a batch of rows makes, a claim reads the first few).
    struct ClaimableJobs {
        private(set) var jobs: [PGRow]
        private var exhausted: Bool
        let pageSize: Int
        let nextPage: (_ after: PGRow) throws -> [PGRow]

        init(firstPage: [PGRow], pageSize: Int, nextPage: @escaping (_ after: PGRow) throws -> [PGRow]) {
            jobs = firstPage; self.pageSize = pageSize; self.nextPage = nextPage
            exhausted = firstPage.count < pageSize
        }

        /// The job at `position` in claim order, reading the next page when needed; nil past the last.
        mutating func job(at position: Int) throws -> PGRow? {
            while position >= jobs.count, !exhausted, let last = jobs.last {
                let page = try nextPage(last)
                exhausted = page.count < pageSize
                jobs += page
            }
            return position < jobs.count ? jobs[position] : nil
        }
    }

    /// One claim for one agent (the finaliser, tests): `claimTasks` with a single request.
    /// `liveAgents` default: only this agent, so a task it failed is offered to it again.
    public func claimTask(agent: Int64, leaseSeconds: Double, kinds: Set<TaskKind> = Set(TaskKind.allCases),
                          liveAgents: Set<Int64>? = nil) throws -> ClaimedTask? {
        try claimTasks(for: [ClaimRequest(agent: agent)], leaseSeconds: leaseSeconds, kinds: kinds,
                       liveAgents: liveAgents ?? [agent])[0]
    }

    /// Marks the jobs of claimed tasks running (finalising for those in `finalising`).
    public func markJobsClaimed(jobs: Set<Int64>, finalising: Set<Int64>) throws {
        try connection.query(Statements.markJobsClaimed, [jobs.sorted(), finalising.sorted()])
    }

    private static func candidate(_ row: PGRow, videoEncoder: String?, turn: Int64) throws -> ClaimCandidate {
        let kind: TaskKind = try row.value("kind")
        return ClaimCandidate(task: try row.int64("id"), job: try row.int64("job_id"), kind: kind, ordinal: try row.int("ordinal"),
                              jobPriority: try row.int("priority"), jobTurn: turn, failedAgents: try row.integers("failed_agents"),
                              encoder: kind.encoder(videoEncoder: videoEncoder))
    }

    private static func claimedTask(_ row: PGRow) throws -> ClaimedTask {
        var plan: RenderPlanReference?
        if let sha256 = row["plan_sha256"] { plan = RenderPlanReference(sha256: sha256, size: try row.int64("plan_size")) }
        return ClaimedTask(id: try row.int64("id"), jobID: try row.int64("job_id"), kind: try row.value("kind"), ordinal: try row.int("ordinal"),
                           frameStart: try row.int64("frame_start"), frameEnd: try row.int64("frame_end"), spec: try row.string("spec"),
                           epoch: try row.int64("epoch"), attempts: try row.int("attempts"),
                           leaseExpiresAtMillis: try row.int64("expires_ms"), planDocument: plan, leaseOwner: try row.int64("lease_owner"),
                           renditionsToEncode: try row["renditions_to_encode"].map { try JSONDecoder().decode([String].self, from: Data($0.utf8)) })
    }
}
