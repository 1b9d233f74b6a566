/// The text a job fails with when one of its tasks used its last attempt: which task, and
/// every agent that failed it with its (latest) error, so the operator sees at once whether
/// one agent is broken or the task itself fails everywhere.
public enum TaskFailureMessage {
    /// `chunk 3 failed on agent-a: boom; agent-b: bang` (agents in order of first failure,
    /// each with its latest error and a count when it failed more than once).
    public static func text(kind: TaskKind, ordinal: Int, failures: [(agent: String, message: String)]) -> String {
        let label = kind.label(ordinal: ordinal)
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
