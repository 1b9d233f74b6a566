import ReelScheduling

/// A job's state as a pure value, in the form the store keeps it (`jobs.state`, `jobs.paused`,
/// `jobs.priority`), with the operator's actions (cancel, retry, pause, resume, priority) and
/// the transitions its tasks cause. `JobState` lists the states; pausing sets a flag that
/// stops new claims (leases already out run to completion and their results count).
public struct JobLifecycle: Hashable, Sendable {
    /// An operator action the job's state does not allow (the wire's `ERR conflict`).
    public struct Conflict: Error, Hashable, Sendable {
        public var state: JobState
        public var action: String
    }

    public private(set) var state: JobState
    public private(set) var paused = false
    /// Why it is paused (nil when it is not): the operator, or its budget.
    public private(set) var pauseReason: PauseReason?
    /// Its budget (`JobBudget.limit`), nil when it has none.
    public private(set) var budget: Double?
    /// Higher runs first; ties go to the older job.
    public private(set) var priority: Int
    public private(set) var error: String?

    public init(waitingForAssets: Bool = false, priority: Int = 0) {
        state = waitingForAssets ? .waiting : .queued
        self.priority = priority
    }

    /// Whether its queued tasks may be claimed.
    public var acceptsClaims: Bool { state.isActive && !paused }
    /// Whether leases of its tasks may be out (a paused job's run on).
    public var acceptsResults: Bool { state.isActive }

    public mutating func assetsArrived() {
        if state == .waiting { state = .queued }
    }

    /// One of its tasks was claimed: it runs, or finalises when that task ends the job.
    public mutating func taskClaimed(_ kind: TaskKind) {
        precondition(acceptsClaims, "claim in a \(state) job")
        state = kind.completesJob ? .finalising : .running
    }

    /// Its finalise task completed: the job is done.
    public mutating func finaliseCompleted() {
        guard !state.isTerminal else { return }
        state = .done
        unpause()
    }

    /// A stored result of one of its render tasks turned out damaged while it was finalising:
    /// it runs again until that task is rendered anew.
    public mutating func renderTasksReopened() {
        if state == .finalising { state = .running }
    }

    /// A task ran out of attempts (or planning failed): the job fails; its caller cancels the
    /// job's other open tasks.
    public mutating func fail(_ message: String) {
        guard !state.isTerminal else { return }
        state = .failed
        error = message
        unpause()
    }

    public mutating func cancel() throws(Conflict) {
        guard !state.isTerminal else { throw Conflict(state: state, action: "cancel") }
        state = .cancelled
        unpause()
    }

    /// A failed or cancelled job is queued again (its caller re-queues the failed and cancelled tasks).
    public mutating func retry() throws(Conflict) {
        guard state == .failed || state == .cancelled else { throw Conflict(state: state, action: "retry") }
        state = .queued
        error = nil
    }

    private mutating func unpause() {
        paused = false
        pauseReason = nil
    }

    /// The operator pauses (`true`) or resumes a job that has not ended. A job paused already
    /// keeps its reason; a job paused by its budget is not resumed this way (its budget is
    /// raised instead: `setBudget`). - Returns: whether it changed.
    @discardableResult
    public mutating func setPaused(_ paused: Bool) throws(Conflict) -> Bool {
        guard !state.isTerminal else { throw Conflict(state: state, action: paused ? "pause" : "resume") }
        guard paused || pauseReason != .budget else { throw Conflict(state: state, action: "resume over budget") }
        defer {
            if !paused { unpause() } else if !self.paused { self.paused = true; pauseReason = .operator }
        }
        return self.paused != paused
    }

    /// Sets its budget (`JobBudget.limit`) while it has not ended, and applies the rule to it.
    public mutating func setBudget(_ limit: Double, spent: Double) throws(Conflict) -> JobBudget.Verdict {
        guard !state.isTerminal else { throw Conflict(state: state, action: "budget") }
        budget = limit
        return applyBudget(spent: spent, resuming: true)!
    }

    /// The budget rule (`JobBudget.verdict`) for a job that has spent `spent`: from 90 % it is
    /// paused with the reason `budget` (an operator's pause becomes the budget's); below it, and
    /// only when its budget was just set (`resuming`), a job paused by its budget resumes (a
    /// chunk handed back no longer counts as spent, so a check alone never resumes). The caller
    /// hands back its running chunks on `stop`. nil (and nothing changes) when the job has no
    /// budget or has ended.
    @discardableResult
    public mutating func applyBudget(spent: Double, resuming: Bool = false) -> JobBudget.Verdict? {
        guard let budget, !state.isTerminal else { return nil }
        let verdict = JobBudget.verdict(spent: spent, limit: budget)
        switch verdict {
        case .within: if resuming && pauseReason == .budget { unpause() }
        case .pause, .stop: paused = true; pauseReason = .budget
        }
        return verdict
    }

    public mutating func setPriority(_ priority: Int) throws(Conflict) {
        guard !state.isTerminal else { throw Conflict(state: state, action: "priority") }
        self.priority = priority
    }
}
