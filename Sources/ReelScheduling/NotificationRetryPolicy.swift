/// When a job-end notification (`reel submit --notify URL`) that failed is tried again: the
/// first retry `baseSeconds` after the first failure, each next one twice as late, never more
/// than `capSeconds` apart, and none after `maxAttempts` attempts. Pure: the coordinator's
/// notifier records attempts in the store and asks this when the next one is due.
public struct NotificationRetryPolicy: Hashable, Sendable {
    public var maxAttempts: Int
    public var baseSeconds: Double
    public var capSeconds: Double

    /// Defaults: 8 attempts, 2 s after the first failure, then 4, 8, … up to 5 minutes apart —
    /// about 12 minutes in all, long enough to ride out a receiver's restart or deploy.
    public init(maxAttempts: Int = 8, baseSeconds: Double = 2, capSeconds: Double = 300) {
        self.maxAttempts = maxAttempts; self.baseSeconds = baseSeconds; self.capSeconds = capSeconds
    }

    /// After `attempts` failed attempts at `nowMillis`: when to try again (ms), or `nil` to give up.
    public func nextAttemptMillis(afterFailedAttempts attempts: Int, nowMillis: Int64) -> Int64? {
        guard attempts >= 1, attempts < maxAttempts else { return nil }
        let delay = min(capSeconds, baseSeconds * Double(1 << min(attempts - 1, 30)))
        return nowMillis + Int64((delay * 1000).rounded())
    }
}
