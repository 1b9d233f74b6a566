import Foundation
import ReelScheduling

/// One agent asking for work in a claim batch.
public struct ClaimRequest: Hashable, Sendable {
    public var agent: Int64
    public init(agent: Int64) { self.agent = agent }
}

/// Claims: the one claim routine every caller uses (the coordinator's dispatcher for agents,
/// its finaliser loop, tests). `ClaimPolicy` decides; this file only reads its inputs and
/// applies its answer.
extension JobStore {
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
    public func claimTasks(for requests: [ClaimRequest], leaseSeconds: Double, kinds: Set<JobTaskKind>,
                           liveAgents: Set<Int64>, encoders: AgentEncoders = AgentEncoders()) throws -> [ClaimedTask?] {
        guard !requests.isEmpty else { return [] }
        var mustMarkJobs = false
        let claimed: [ClaimedTask?] = try { (db: PGConnection) in
            let agents = Set(requests.map(\.agent)).union(liveAgents)
            // More than asked for, so agents kept off tasks they failed find others (an agent that
            // failed more than 64 of the first tasks waits for them to be taken by others).
            let limit = requests.count + 64
            let kindList = Self.kindsLiteral(kinds)
            let jobs = try db.query(Statements.claimableJobs, [kindList, Self.integerArray(agents.sorted())]).rows
            let quarantined = Set(try jobs.first.map { Self.integers(try $0.string("quarantined")) } ?? [])
            var candidates: [ClaimCandidate] = []
            // Job by job in claim order (usually the first has enough): each an index range scan.
            // Only the kinds some requesting agent has the encoder for; and past the limit, on
            // for agents that can use none of the candidates so far (a job needing libx265
            // does not hide the next job from agents without it).
            for job in jobs where job["id"] != nil {
                let videoEncoder = job["video_encoder"]
                var askers = requests
                if candidates.count >= limit {
                    askers = requests.filter { request in !candidates.contains { encoders.allow(request.agent, $0.encoder) } }
                    if askers.isEmpty { break }
                }
                let jobKinds = kinds.filter { kind in
                    askers.contains { encoders.allow($0.agent, Self.encoder(of: kind, videoEncoder: videoEncoder)) }
                }
                guard !jobKinds.isEmpty else { continue }
                candidates += try db.query(Statements.claimCandidatesOfJob, [
                    try job.string("id"), Self.kindsLiteral(jobKinds), try job.string("rendered") == "t" ? "true" : "false",
                    try job.string("priority"), String(max(limit - candidates.count, askers.count + 64)),
                ]).rows.map { try Self.candidate($0, videoEncoder: videoEncoder) }
            }
            candidates.sort(by: ClaimPolicy.precedes)
            let live = liveAgents.subtracting(quarantined)
            var chosen: [Int: ClaimCandidate] = [:]
            for (index, request) in requests.enumerated() where !quarantined.contains(request.agent) {
                guard let pick = ClaimPolicy.choose(candidates, for: request.agent, liveAgents: live, encoders: encoders) else { continue }
                chosen[index] = pick
                candidates.removeAll { $0.task == pick.task }
            }
            guard !chosen.isEmpty else { return requests.map { _ in nil } }
            let order = chosen.keys.sorted()
            let rowsLeased = try db.query(Statements.leaseTasks, [
                Self.integerArray(order.map { chosen[$0]!.task }), Self.integerArray(order.map { requests[$0].agent }), String(leaseSeconds), now,
            ]).rows
            mustMarkJobs = try rowsLeased.contains { try $0.string("job_state") == JobState.queued.rawValue || $0.string("kind") == JobTaskKind.finalise.rawValue }
            let byTask = Dictionary(uniqueKeysWithValues: try rowsLeased.map(Self.claimedTask).map { ($0.id, $0) })
            return requests.indices.map { index in chosen[index].flatMap { byTask[$0.task] } }
        }(connection)
        // In a statement of its own: a claim locks tasks and must never wait for a job row. Needed only when a job was still queued or a finalise task was claimed (the reaper
        // also converges jobs a crash left behind).
        let tasks = claimed.compactMap { $0 }
        if mustMarkJobs {
            try markJobsClaimed(jobs: Set(tasks.map(\.jobID)), finalising: Set(tasks.filter { $0.kind == .finalise }.map(\.jobID)))
        }
        return claimed
    }

    /// One claim for one agent (the finaliser loop, tests): `claimTasks` with a single request.
    /// `liveAgents` default: only this agent, so a task it failed is offered to it again.
    public func claimTask(agent: Int64, leaseSeconds: Double, kinds: Set<JobTaskKind> = Set(JobTaskKind.allCases),
                          liveAgents: Set<Int64>? = nil) throws -> ClaimedTask? {
        try claimTasks(for: [ClaimRequest(agent: agent)], leaseSeconds: leaseSeconds, kinds: kinds,
                       liveAgents: liveAgents ?? [agent])[0]
    }

    /// Marks the jobs of claimed tasks running (finalising for those in `finalising`). Also run
    /// by the reaper, so a coordinator that stopped between a claim and this still converges.
    public func markJobsClaimed(jobs: Set<Int64>, finalising: Set<Int64>) throws {
        try connection.query(Statements.markJobsClaimed, [Self.integerArray(jobs.sorted()), Self.integerArray(finalising.sorted())])
    }

    /// The integers of a `bigint[]` column's text (`{1,2,3}`).
    static func integers(_ array: String) -> [Int64] {
        array.trimmingCharacters(in: ["{", "}"]).split(separator: ",").compactMap { Int64($0) }
    }

    /// A `text[]` literal of `kinds` for the claim statement.
    static func kindsLiteral(_ kinds: Set<JobTaskKind>) -> String {
        "{" + kinds.map(\.rawValue).sorted().joined(separator: ",") + "}"
    }

    /// The encoder a task of `kind` needs: its job's video encoder for a chunk (nil for jobs
    /// planned before jobs recorded it), AAC for audio, none for the finalise task.
    static func encoder(of kind: JobTaskKind, videoEncoder: String?) -> String? {
        switch kind {
        case .videoChunk: videoEncoder
        case .audio: "aac"
        case .finalise: nil
        }
    }

    private static func candidate(_ row: PGRow, videoEncoder: String?) throws -> ClaimCandidate {
        guard let kind = TaskKind(rawValue: try row.string("kind")) else {
            throw PGError(sqlState: nil, message: "unknown task kind \(row["kind"] ?? "")")
        }
        let failed = integers(try row.string("failed_agents"))
        return ClaimCandidate(task: try row.int64("id"), job: try row.int64("job_id"), kind: kind, ordinal: try row.int("ordinal"),
                              jobPriority: try row.int("priority"), failedAgents: failed,
                              encoder: encoder(of: kind, videoEncoder: videoEncoder))
    }

    private static func claimedTask(_ row: PGRow) throws -> ClaimedTask {
        guard let kind = JobTaskKind(rawValue: try row.string("kind")) else {
            throw PGError(sqlState: nil, message: "unknown task kind \(row["kind"] ?? "")")
        }
        var plan: PlanDocumentReference?
        if let sha256 = row["plan_sha256"] { plan = PlanDocumentReference(sha256: sha256, size: try row.int64("plan_size")) }
        return ClaimedTask(id: try row.int64("id"), jobID: try row.int64("job_id"), kind: kind, ordinal: try row.int("ordinal"),
                           frameStart: try row.int64("frame_start"), frameEnd: try row.int64("frame_end"), spec: try row.string("spec"),
                           epoch: try row.int64("epoch"), attempts: try row.int("attempts"),
                           leaseExpiresAtMillis: try row.int64("expires_ms"), planDocument: plan, leaseOwner: try row.int64("lease_owner"))
    }
}
