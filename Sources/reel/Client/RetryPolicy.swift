/// Why a request failed when the coordinator, not the request, is at fault.
enum CoordinatorTrouble: Sendable, Equatable {
    /// The connection is gone (refused, reset, closed by a restarting or draining coordinator,
    /// or a reply timed out, which closes it): reconnect before trying again.
    case connectionLost
    /// The coordinator answered `ERR internal` (typically its database is restarting); the
    /// connection is still usable.
    case internalError
}

/// How long operator commands that follow a job (`submit --wait`, `status --watch`, `fetch`)
/// keep trying while the coordinator is unavailable, and how fast.
///
/// Five minutes covers a coordinator restart (seconds) and a PostgreSQL restart or failover
/// (typically well under a minute) with room to spare, yet a farm that is really gone still
/// fails a script within minutes rather than hanging it. Delays double from `initialDelay` to
/// `maximumDelay`, so a quick restart is noticed within a second and a long outage costs a
/// connection attempt every few seconds.
struct RetryPolicy: Sendable, Equatable {
    var window: Duration = .seconds(300)
    var initialDelay: Duration = .milliseconds(250)
    var maximumDelay: Duration = .seconds(5)

    static let standard = RetryPolicy()
}

/// The pure core of retrying: given the times of transient failures, when to try again and
/// when to give up. One outage runs from its first failure to the next success; the window
/// is counted per outage, so a long download that loses its connection twice, an hour apart,
/// gets the full window both times.
struct RetrySchedule: Sendable {
    let policy: RetryPolicy
    /// When the current outage began; `nil` while requests succeed.
    private(set) var outageStart: ContinuousClock.Instant?
    /// Failures in the current outage.
    private(set) var failures = 0
    private var nextDelay: Duration

    init(policy: RetryPolicy = .standard) {
        self.policy = policy
        nextDelay = policy.initialDelay
    }

    var inOutage: Bool { outageStart != nil }

    /// Records a transient failure at `now`: how long to wait before the next attempt, or `nil`
    /// once the window since the outage began is spent. The last delay is cut short so the
    /// final attempt happens at the window's end, not after it.
    mutating func failed(at now: ContinuousClock.Instant) -> Duration? {
        let start = outageStart ?? now
        outageStart = start
        failures += 1
        let end = start + policy.window
        guard now < end else { return nil }
        let delay = min(nextDelay, end - now)
        nextDelay = min(nextDelay * 2, policy.maximumDelay)
        return delay
    }

    /// A request succeeded: the outage (if any) is over.
    mutating func succeeded() {
        outageStart = nil
        failures = 0
        nextDelay = policy.initialDelay
    }
}

/// The pure core of a ranged download: where the next `OUTPUT` range starts, and whether a
/// `DATA` reply continues the bytes already written. It survives reconnections (the partial
/// file keeps its bytes and the next request asks for the first byte not yet held).
struct DownloadCursor: Sendable, Equatable {
    /// Bytes received and written so far.
    private(set) var offset: Int64 = 0
    /// The output's size, once the first reply said it.
    private(set) var total: Int64?

    var isComplete: Bool { total.map { offset >= $0 } ?? false }

    /// Accepts a `DATA offset=at total=size` reply carrying `count` bytes.
    /// - Throws: `UserError` when the reply is not the next range of the same output (the
    ///   coordinator answered a different offset, the output's size changed, or an empty range
    ///   before the end, which would loop forever).
    mutating func accept(at: Int64, total size: Int64, count: Int, job: Int64) throws {
        guard at == offset, total == nil || total == size, count > 0 || offset == size, offset + Int64(count) <= size else {
            throw UserError("the coordinator sent an inconsistent range of job \(job)'s output (offset \(at), \(count) bytes, "
                            + "total \(size); expected offset \(offset)\(total.map { " of \($0)" } ?? "")); fetch again")
        }
        total = size
        offset += Int64(count)
    }
}
