/// What a task renders; the claim order runs audio, then video chunks in order, then the
/// finalise task (claimable only once every other task of its job is done).
public enum TaskKind: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    case audio
    case videoChunk = "video_chunk"
    case finalise

    /// Position in the claim order within a job.
    public var claimRank: Int {
        switch self {
        case .audio: 0
        case .videoChunk: 1
        case .finalise: 2
        }
    }
    public static func < (l: TaskKind, r: TaskKind) -> Bool { l.claimRank < r.claimRank }
}

/// A job's state as a pure value, with the operator's actions (cancel, retry, pause, resume,
/// priority) and the transitions its tasks cause.
///
/// `waiting` (assets still uploading) → `queued` → `running` (a task was claimed) →
/// `finalising` (its finalise task was claimed) → `done`; `failed` and `cancelled` end it early.
/// `paused` stops new claims (leases already out run to completion and their results count);
/// resuming returns to the state it was paused in.
public struct JobLifecycle: Hashable, Sendable {
    public enum State: String, Hashable, Sendable, CaseIterable {
        case waiting, queued, running, paused, finalising, done, failed, cancelled
        public var isFinished: Bool { self == .done || self == .failed || self == .cancelled }
    }

    /// An operator action the job's state does not allow (the wire's `ERR conflict`).
    public struct Conflict: Error, Hashable, Sendable {
        public var state: State
        public var action: String
    }

    public private(set) var state: State
    /// Higher runs first; ties go to the older job.
    public private(set) var priority: Int
    /// The state a paused job resumes to.
    public private(set) var pausedFrom: State?
    public private(set) var error: String?

    public init(waitingForAssets: Bool = false, priority: Int = 0) {
        state = waitingForAssets ? .waiting : .queued
        self.priority = priority
    }

    /// Whether its queued tasks may be claimed.
    public var acceptsClaims: Bool { state == .queued || state == .running || state == .finalising }
    /// Whether results of leases already out are still accepted (a paused job's are).
    public var acceptsResults: Bool { acceptsClaims || state == .paused }

    public mutating func assetsArrived() {
        if state == .waiting { state = .queued }
    }

    /// One of its tasks was claimed.
    public mutating func taskClaimed(_ kind: TaskKind) {
        precondition(acceptsClaims, "claim in a \(state) job")
        state = kind == .finalise ? .finalising : .running
    }

    /// Its finalise task completed: the job is done.
    public mutating func finaliseCompleted() {
        if !state.isFinished { state = .done }
    }

    /// A task ran out of attempts (or planning failed): the job fails; its caller cancels the
    /// job's other open tasks.
    public mutating func fail(_ message: String) {
        guard !state.isFinished else { return }
        state = .failed
        error = message
        pausedFrom = nil
    }

    public mutating func cancel() throws(Conflict) {
        guard !state.isFinished else { throw Conflict(state: state, action: "cancel") }
        state = .cancelled
        pausedFrom = nil
    }

    /// A failed or cancelled job is queued again (its caller re-queues the failed and cancelled tasks).
    public mutating func retry() throws(Conflict) {
        guard state == .failed || state == .cancelled else { throw Conflict(state: state, action: "retry") }
        state = .queued
        error = nil
    }

    public mutating func pause() throws(Conflict) {
        guard state == .waiting || state == .queued || state == .running || state == .finalising else {
            throw Conflict(state: state, action: "pause")
        }
        pausedFrom = state
        state = .paused
    }

    public mutating func resume() throws(Conflict) {
        guard state == .paused, let from = pausedFrom else { throw Conflict(state: state, action: "resume") }
        state = from
        pausedFrom = nil
    }

    public mutating func setPriority(_ priority: Int) {
        self.priority = priority
    }
}
