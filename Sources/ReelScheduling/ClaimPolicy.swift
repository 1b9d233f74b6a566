/// A queued task as the claim policy sees it.
public struct ClaimCandidate: Hashable, Sendable {
    public var task: Int64
    public var job: Int64
    public var kind: TaskKind
    public var ordinal: Int
    public var jobPriority: Int
    /// The agents whose attempts at this task failed or expired.
    public var failedAgents: [Int64]

    public init(task: Int64, job: Int64, kind: TaskKind, ordinal: Int, jobPriority: Int, failedAgents: [Int64] = []) {
        self.task = task; self.job = job; self.kind = kind; self.ordinal = ordinal
        self.jobPriority = jobPriority; self.failedAgents = failedAgents
    }
}

/// Which queued task an agent gets: the one rule both the in-memory model and the store's
/// claim statement follow.
///
/// Order: higher job priority first; then the older job (lower id); within a job audio, then
/// video chunks by ordinal, then finalise; then task id. An agent is not offered a task it
/// already failed while some other live agent has not failed it, so a bad agent cannot burn
/// a task's attempts alone and a job fails only after its attempts span different agents
/// (when every live agent has failed it, it is offered again so the job can end).
public enum ClaimPolicy {
    public static func precedes(_ a: ClaimCandidate, _ b: ClaimCandidate) -> Bool {
        if a.jobPriority != b.jobPriority { return a.jobPriority > b.jobPriority }
        if a.job != b.job { return a.job < b.job }
        if a.kind != b.kind { return a.kind < b.kind }
        if a.ordinal != b.ordinal { return a.ordinal < b.ordinal }
        return a.task < b.task
    }

    public static func offers(_ candidate: ClaimCandidate, to agent: Int64, liveAgents: Set<Int64>) -> Bool {
        guard candidate.failedAgents.contains(agent) else { return true }
        return liveAgents.allSatisfy { candidate.failedAgents.contains($0) }
    }

    /// The candidate `agent` gets, or nil.
    public static func choose(_ candidates: [ClaimCandidate], for agent: Int64, liveAgents: Set<Int64>) -> ClaimCandidate? {
        candidates.filter { offers($0, to: agent, liveAgents: liveAgents) }.min(by: precedes)
    }
}
