/// A job's state (`jobs.state`). Pausing is not a state: a paused job keeps its state and its
/// `paused` flag stops new claims (leases already out run to completion), so resuming needs
/// nothing remembered.
///
/// `waiting` (assets still uploading) → `queued` → `running` (a task was claimed) →
/// `finalising` (its finalise task was claimed) → `done`; `failed` and `cancelled` end it
/// early, and a retry queues it again.
public enum JobState: String, Hashable, Sendable, Codable, CaseIterable {
    /// Submitted; some assets are still being uploaded (or went missing before planning).
    case waiting
    case queued
    case running
    /// Only the finalise task is left or running.
    case finalising
    case done
    case failed
    case cancelled

    /// No further work happens in these states (until a retry).
    public var isTerminal: Bool { self == .done || self == .failed || self == .cancelled }
    /// Whether leases of its tasks may be out (and their results count).
    public var isActive: Bool { self == .queued || self == .running || self == .finalising }
}

/// A task's state (`tasks.state`).
public enum TaskState: String, Hashable, Sendable, Codable, CaseIterable {
    case queued, leased, done, failed, cancelled

    public var isTerminal: Bool { self == .done || self == .failed || self == .cancelled }
}

/// Whether an agent takes work (`agents.state`).
public enum AgentState: String, Hashable, Sendable, Codable, CaseIterable {
    case online
    /// Finishing its current task, taking no new ones (SIGTERM).
    case draining
    /// Disconnected.
    case offline
}
