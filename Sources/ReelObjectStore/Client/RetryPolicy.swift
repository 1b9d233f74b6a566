/// How often, and after how long, a request that failed for a passing reason is tried again: a
/// connection refused or broken, a timeout, HTTP 500/502/503/504, or S3's `SlowDown`,
/// `InternalError`, `RequestTimeout`. Anything else (a 403, a 404, a checksum refused) is final
/// at once. Pure: the delay takes its randomness as an argument.
public struct RetryPolicy: Hashable, Sendable {
    /// Attempts in all, the first included (1: never retry).
    public var maxAttempts: Int
    /// The delay before the second attempt; each later one doubles, up to `maxDelay`.
    public var baseDelay: Duration
    public var maxDelay: Duration

    /// Five attempts, at most about 3 s of delays between them: rides out a dropped connection or
    /// a busy server. (Each attempt may also spend the HTTP client's connect timeout trying to
    /// connect, so a server that restarts within it is waited for.)
    public init(maxAttempts: Int = 5, baseDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(2)) {
        self.maxAttempts = max(1, maxAttempts); self.baseDelay = baseDelay; self.maxDelay = maxDelay
    }

    /// The wait after failed attempt `attempt` (1-based): half the doubled delay plus a random
    /// half ("equal jitter"), so that many clients failing at once do not retry in step.
    /// - Parameter random: a number in `0..<1`.
    public func delay(afterAttempt attempt: Int, random: Double) -> Duration {
        let doublings = min(max(attempt - 1, 0), 30)
        let ceiling = min(baseDelay * (1 << doublings), maxDelay)
        return ceiling / 2 + (ceiling / 2) * min(max(random, 0), 1)
    }

    /// Whether an answer with this HTTP status and S3 error code is worth another attempt.
    public static func isRetryable(status: Int, s3Code: String?) -> Bool {
        if [500, 502, 503, 504, 429, 408].contains(status) { return true }
        return ["SlowDown", "InternalError", "RequestTimeout", "ServiceUnavailable"].contains(s3Code ?? "")
    }
}
