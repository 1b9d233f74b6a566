/// When an agent stops getting work: `failures` FAILs within `windowSeconds` quarantine it for
/// `durationSeconds`, then it is let back. Pure: `JobStore` reads the failure times and applies
/// the answer. Only explicit `FAIL`s count (an expired lease is a lost connection or a crash,
/// which the lease already handles; it says little about the agent's ability to render).
public struct QuarantinePolicy: Hashable, Sendable {
    /// FAILs that trigger a quarantine; 0 turns quarantine off.
    public var failures: Int
    public var windowSeconds: Double
    public var durationSeconds: Double

    /// Defaults: 3 failures within 10 minutes → 10 minutes without work. Three, because one or
    /// two failures are usually the composition's fault (and the task moves to another agent);
    /// ten minutes, because a broken agent (full disk, missing codec) rarely heals faster.
    public init(failures: Int = 3, windowSeconds: Double = 600, durationSeconds: Double = 600) {
        self.failures = failures; self.windowSeconds = windowSeconds; self.durationSeconds = durationSeconds
    }

    public static let off = QuarantinePolicy(failures: 0)

    /// Failures older than this (ms) do not count: outside the window, or before the agent's
    /// last quarantine ended (it served its time for those).
    public func countsFailuresAfter(nowMillis: Int64, previousQuarantineEndMillis: Int64?) -> Int64 {
        max(nowMillis - Int64(windowSeconds * 1000), previousQuarantineEndMillis ?? .min)
    }

    /// The quarantine end (ms) if the agent's failures at `failureMillis` warrant one now, else `nil`.
    public func quarantineUntil(failureMillis: [Int64], nowMillis: Int64, previousQuarantineEndMillis: Int64?) -> Int64? {
        guard failures > 0 else { return nil }
        let since = countsFailuresAfter(nowMillis: nowMillis, previousQuarantineEndMillis: previousQuarantineEndMillis)
        let recent = failureMillis.filter { $0 > since && $0 <= nowMillis }.count
        return recent >= failures ? nowMillis + Int64(durationSeconds * 1000) : nil
    }
}

/// The text a job fails with when one of its tasks used its last attempt: which task, and
/// every agent that failed it with its (latest) error, so the operator sees at once whether
/// one agent is broken or the task itself fails everywhere.
public enum TaskFailureMessage {
    /// `chunk 3 failed on agent-a: boom; agent-b: bang` (agents in order of first failure,
    /// each with its latest error and a count when it failed more than once).
    public static func text(kind: JobTaskKind, ordinal: Int, failures: [(agent: String, message: String)]) -> String {
        let label = switch kind {
        case .videoChunk: "chunk \(ordinal)"
        case .audio: "audio"
        case .finalise: "finalise"
        }
        var order: [String] = []
        var latest: [String: (message: String, count: Int)] = [:]
        for failure in failures {
            if latest[failure.agent] == nil { order.append(failure.agent) }
            latest[failure.agent] = (failure.message, (latest[failure.agent]?.count ?? 0) + 1)
        }
        guard !order.isEmpty else { return "\(label) failed" }
        let parts = order.map { agent -> String in
            let entry = latest[agent]!
            return entry.count > 1 ? "\(agent) (\(entry.count)×): \(entry.message)" : "\(agent): \(entry.message)"
        }
        return "\(label) failed on " + parts.joined(separator: "; ")
    }
}
