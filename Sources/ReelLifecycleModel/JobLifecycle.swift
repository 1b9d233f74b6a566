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
        paused = false
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
        paused = false
    }

    public mutating func cancel() throws(Conflict) {
        guard !state.isTerminal else { throw Conflict(state: state, action: "cancel") }
        state = .cancelled
        paused = false
    }

    /// A failed or cancelled job is queued again (its caller re-queues the failed and cancelled tasks).
    public mutating func retry() throws(Conflict) {
        guard state == .failed || state == .cancelled else { throw Conflict(state: state, action: "retry") }
        state = .queued
        error = nil
    }

    /// Pauses (`true`) or resumes a job that has not ended. - Returns: whether it changed.
    @discardableResult
    public mutating func setPaused(_ paused: Bool) throws(Conflict) -> Bool {
        guard !state.isTerminal else { throw Conflict(state: state, action: paused ? "pause" : "resume") }
        defer { self.paused = paused }
        return self.paused != paused
    }

    public mutating func setPriority(_ priority: Int) throws(Conflict) {
        guard !state.isTerminal else { throw Conflict(state: state, action: "priority") }
        self.priority = priority
    }
}
