import ReelScheduling

/// The lease rules of one task as a pure value, stated independently of the store (which
/// decides them in SQL, docs/task-lifecycle.md) so that the store can be held to them: the
/// fields the store keeps in a task row, and one `mutating` function per event returning what
/// happened — claim, heartbeat, progress, complete, fail, release, expire, a holder's
/// disconnect and reconnect, cancel, retry, a lost result.
///
/// Invariants (checked by `isConsistent`):
/// - `leased` ⇔ `holder != nil` ⇔ `expiresAt != nil`; a lease is held by exactly one agent
///   under exactly one epoch, and `epoch` increases by one on every claim;
/// - `attempts ≤ maxAttempts`; a task is `failed` only when an attempt failed or expired with
///   none left (or its job failed);
/// - `done` carries its result; nothing but `retry` leaves `done`, `failed` or `cancelled`.
public struct TaskLifecycle: Hashable, Sendable {
    public private(set) var state: TaskState = .queued
    public private(set) var attempts = 0
    public let maxAttempts: Int
    public private(set) var epoch: Int64 = 0
    public private(set) var holder: Int64?
    public private(set) var expiresAt: Millis?
    /// Set while the holder's connection is gone: the lease then ends at `min(expiresAt, disconnectedAt + grace)`.
    public private(set) var holderDisconnectedAt: Millis?
    /// The agents whose attempts failed (`FAIL`), in order, without repeats: the claim policy
    /// offers the task to others first, and a job's failure message names them. A lease that
    /// merely expired does not count (the agent may have crashed or lost its network, and is
    /// welcome to the task again); neither does a retry forget them.
    public private(set) var failedAgents: [Int64] = []
    public private(set) var lastError: String?
    public private(set) var result: String?

    public init(maxAttempts: Int) {
        precondition(maxAttempts >= 1)
        self.maxAttempts = maxAttempts
    }

    // MARK: Outcomes

    /// Why an operation by a (former) holder was refused: the wire's `LOST` / `ERR stale_epoch`.
    public enum Refusal: Error, Hashable, Sendable {
        /// Another epoch or agent holds the task, or nobody does any more.
        case notHolder
        /// The lease ran out (it may not have been re-queued yet).
        case expired
    }

    /// What ending an attempt did.
    public enum AttemptEnd: Hashable, Sendable {
        /// Queued again; this many attempts remain.
        case requeued(attemptsLeft: Int)
        /// That was the last attempt: the task failed (and so must its job).
        case exhausted
    }

    // MARK: Events

    /// A claim by `agent` at `now`: a queued task becomes leased until `now + leaseMillis`
    /// under the next epoch, using up one attempt. Only for `queued` tasks (the claim policy
    /// picks which); returns the new epoch.
    public mutating func claim(by agent: Int64, now: Millis, leaseMillis: Millis) -> Int64 {
        precondition(state == .queued, "claim of a \(state) task")
        state = .leased
        epoch += 1
        attempts += 1
        holder = agent
        expiresAt = now + leaseMillis
        holderDisconnectedAt = nil
        return epoch
    }

    /// When the lease ends, counting a disconnected holder's reconnect grace.
    public func leaseEnd(graceMillis: Millis) -> Millis? {
        guard let expiresAt else { return nil }
        if let gone = holderDisconnectedAt { return min(expiresAt, gone + graceMillis) }
        return expiresAt
    }

    private func check(_ epoch: Int64, _ agent: Int64) -> Refusal? {
        state == .leased && epoch == self.epoch && agent == holder ? nil : .notHolder
    }

    /// A heartbeat: extends a live lease to `now + leaseMillis`. An expired lease is lost even
    /// before it is re-queued, so a stalled agent cannot revive a task someone may be redoing.
    public mutating func renew(epoch: Int64, agent: Int64, now: Millis, leaseMillis: Millis, graceMillis: Millis) -> Result<Millis, Refusal> {
        if let refusal = check(epoch, agent) { return .failure(refusal) }
        guard let end = leaseEnd(graceMillis: graceMillis), end > now else { return .failure(.expired) }
        expiresAt = now + leaseMillis
        holderDisconnectedAt = nil
        return .success(expiresAt!)
    }

    /// A progress report: accepted (nil) from the holder; it does not renew the lease.
    public func refusesProgress(epoch: Int64, agent: Int64) -> Refusal? {
        check(epoch, agent)
    }

    /// A verified result from the holder. Accepted under the current epoch even if the lease
    /// has just run out but was not re-queued: nobody else can hold the task, so it is still
    /// the one result. Returns nil when accepted.
    @discardableResult
    public mutating func complete(epoch: Int64, agent: Int64, result: String) -> Refusal? {
        if let refusal = check(epoch, agent) { return refusal }
        state = .done
        self.result = result
        holder = nil; expiresAt = nil; holderDisconnectedAt = nil
        lastError = nil
        return nil
    }

    /// The holder reports that rendering failed.
    public mutating func fail(epoch: Int64, agent: Int64, message: String) -> Result<AttemptEnd, Refusal> {
        if let refusal = check(epoch, agent) { return .failure(refusal) }
        return .success(endAttempt(failedBy: agent, error: message))
    }

    /// The holder hands the task back un-attempted (draining): queued again, the attempt not
    /// counted. Returns nil when accepted.
    @discardableResult
    public mutating func release(epoch: Int64, agent: Int64) -> Refusal? {
        if let refusal = check(epoch, agent) { return refusal }
        state = .queued
        attempts -= 1
        holder = nil; expiresAt = nil; holderDisconnectedAt = nil
        return nil
    }

    /// Its job's budget ran out while the task was leased (`FarmModel.applyBudget`): the task
    /// is handed back, queued again with the attempt not counted, as a release is, but on the
    /// coordinator's word rather than the holder's (its holder learns `LOST`). Returns whether
    /// it changed.
    @discardableResult
    public mutating func handBack() -> Bool {
        guard state == .leased else { return false }
        state = .queued
        attempts -= 1
        holder = nil; expiresAt = nil; holderDisconnectedAt = nil
        return true
    }

    /// The lease ran out by `now` (after the reconnect grace of a disconnected holder): the
    /// attempt is used up. nil when the lease is still live (or there is none).
    public mutating func expire(now: Millis, graceMillis: Millis) -> AttemptEnd? {
        guard state == .leased, let end = leaseEnd(graceMillis: graceMillis), end <= now, holder != nil else { return nil }
        let disconnected = holderDisconnectedAt != nil
        return endAttempt(failedBy: nil, error: disconnected ? "the agent disconnected and did not come back" : "lease expired")
    }

    /// The holder's connection closed at `now`: the task becomes claimable again after the
    /// reconnect grace instead of the full lease. Returns whether this task was affected.
    @discardableResult
    public mutating func holderDisconnected(agent: Int64, now: Millis) -> Bool {
        guard state == .leased, holder == agent, holderDisconnectedAt == nil else { return false }
        holderDisconnectedAt = now
        return true
    }

    /// The holder connected again within its lease: it keeps the task (same epoch), with a
    /// fresh lease. Returns the epoch it holds, or nil if the task is no longer its.
    public mutating func reattach(agent: Int64, now: Millis, leaseMillis: Millis, graceMillis: Millis) -> Int64? {
        guard state == .leased, holder == agent, let end = leaseEnd(graceMillis: graceMillis), end > now else { return nil }
        expiresAt = now + leaseMillis
        holderDisconnectedAt = nil
        return epoch
    }

    /// The job was cancelled, or failed because another task did: an unfinished task stops
    /// (its holder learns `LOST`). Returns whether it changed.
    @discardableResult
    public mutating func cancel() -> Bool {
        guard state == .queued || state == .leased else { return false }
        state = .cancelled
        holder = nil; expiresAt = nil; holderDisconnectedAt = nil
        return true
    }

    /// The job is retried: a failed or cancelled task is queued with a fresh set of attempts
    /// (done tasks keep their results). Returns whether it changed.
    @discardableResult
    public mutating func retry() -> Bool {
        guard state == .failed || state == .cancelled else { return false }
        state = .queued
        attempts = 0
        lastError = nil
        return true
    }

    /// A stored result turned out missing or damaged: the task is rendered again (a fresh
    /// attempt budget: the agent did nothing wrong).
    @discardableResult
    public mutating func resultLost() -> Bool {
        guard state == .done else { return false }
        state = .queued
        result = nil
        attempts = 0
        return true
    }

    private mutating func endAttempt(failedBy agent: Int64?, error: String) -> AttemptEnd {
        if let agent, !failedAgents.contains(agent) { failedAgents.append(agent) }
        lastError = error
        holder = nil; expiresAt = nil; holderDisconnectedAt = nil
        if attempts < maxAttempts {
            state = .queued
            return .requeued(attemptsLeft: maxAttempts - attempts)
        }
        state = .failed
        return .exhausted
    }

    /// The invariants of the type's doc comment.
    public var isConsistent: Bool {
        let leased = state == .leased
        guard leased == (holder != nil), leased == (expiresAt != nil) else { return false }
        guard holderDisconnectedAt == nil || leased else { return false }
        guard (0...maxAttempts).contains(attempts), epoch >= Int64(attempts) else { return false }
        return (state == .done) == (result != nil)
    }
}
