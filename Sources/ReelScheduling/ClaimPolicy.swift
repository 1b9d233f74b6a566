/// A queued task as the claim policy sees it.
public struct ClaimCandidate: Hashable, Sendable {
    public var task: Int64
    public var job: Int64
    public var kind: TaskKind
    public var ordinal: Int
    public var jobPriority: Int
    /// The job's turn among the jobs of its priority (`ClaimTurns`): lower goes first.
    public var jobTurn: Int64
    /// The agents whose attempts at this task failed or expired.
    public var failedAgents: [Int64]
    /// The encoder its render needs (libavcodec's name: `libx265`, `aac`, …), or nil for none.
    public var encoder: String?

    public init(task: Int64, job: Int64, kind: TaskKind, ordinal: Int, jobPriority: Int, jobTurn: Int64 = 0, failedAgents: [Int64] = [],
                encoder: String? = nil) {
        self.task = task; self.job = job; self.kind = kind; self.ordinal = ordinal
        self.jobPriority = jobPriority; self.jobTurn = jobTurn; self.failedAgents = failedAgents; self.encoder = encoder
    }
}

/// The encoders each agent said it has (`CAPS encoders=`). An agent not listed is taken to
/// have every encoder: the coordinator's own finaliser, and agents known before they said.
public struct AgentEncoders: Hashable, Sendable {
    public var byAgent: [Int64: Set<String>]

    public init(_ byAgent: [Int64: Set<String>] = [:]) { self.byAgent = byAgent }

    /// Whether `agent` can render a task that needs `encoder`.
    public func allow(_ agent: Int64, _ encoder: String?) -> Bool {
        guard let encoder, let has = byAgent[agent] else { return true }
        return has.contains(encoder)
    }
}

/// Which queued task an agent gets: the one rule both the in-memory model and the store's
/// claim statement follow.
///
/// Order: higher job priority first; then the job whose turn comes first (`ClaimTurns`: jobs
/// of one priority take turns, so a batch of thousands of rows does not hold back a job
/// submitted after it); then the older job (lower id); within a job audio, then
/// video chunks by ordinal, then finalise; then task id. An agent is not offered a task it
/// already failed while some other live agent has not failed it, so a bad agent cannot burn
/// a task's attempts alone and a job fails only after its attempts span different agents
/// (when every live agent has failed it, it is offered again so the job can end).
///
/// An agent is offered only tasks whose encoder it has (a farm may mix hosts with and without
/// libx265, say); "other live agents" counts only those that have it too, since the others
/// will never take the task.
public enum ClaimPolicy {
    public static func precedes(_ a: ClaimCandidate, _ b: ClaimCandidate) -> Bool {
        if a.jobPriority != b.jobPriority { return a.jobPriority > b.jobPriority }
        if a.jobTurn != b.jobTurn { return a.jobTurn < b.jobTurn }
        if a.job != b.job { return a.job < b.job }
        if a.kind != b.kind { return a.kind < b.kind }
        if a.ordinal != b.ordinal { return a.ordinal < b.ordinal }
        return a.task < b.task
    }

    public static func offers(_ candidate: ClaimCandidate, to agent: Int64, liveAgents: Set<Int64>,
                              encoders: AgentEncoders = AgentEncoders()) -> Bool {
        guard encoders.allow(agent, candidate.encoder) else { return false }
        guard candidate.failedAgents.contains(agent) else { return true }
        return liveAgents.allSatisfy { candidate.failedAgents.contains($0) || !encoders.allow($0, candidate.encoder) }
    }

    /// The candidate `agent` gets, or nil.
    public static func choose(_ candidates: [ClaimCandidate], for agent: Int64, liveAgents: Set<Int64>,
                              encoders: AgentEncoders = AgentEncoders()) -> ClaimCandidate? {
        candidates.filter { offers($0, to: agent, liveAgents: liveAgents, encoders: encoders) }.min(by: precedes)
    }
}
