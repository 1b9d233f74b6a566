/// When an agent stops getting work: `failures` FAILs within `windowSeconds` quarantine it for
/// `durationSeconds`, then it is let back. Pure: the store reads the failure times and applies
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
