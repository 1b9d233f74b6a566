import Foundation
import ReelProtocol
import Synchronization

/// A rendered chunk the coordinator has not accepted yet: its file (read in parts as they are
/// sent, never whole) and how much of it the coordinator holds. Kept across `ERR internal`
/// replies and reconnections while its lease lives, so a coordinator or database restart costs
/// at most the parts it did not acknowledge, never a re-render. Whoever drops it calls `discard()`.
struct PendingResult: Sendable {
    let assignment: TaskAssignment
    let sha256: String
    /// The rendered file, owned by this value from the end of the render until `discard()`.
    let path: String
    let byteCount: Int64
    /// Bytes the coordinator said it holds (`STORED have=`, or `ERR bad_range have=`): the next
    /// part starts here.
    var have: Int64 = 0
    /// The lease's expiry as last heard from the coordinator (`TASK`, then every `LEASE`).
    var leaseExpiresAtMillis: Int64

    /// Deletes the rendered file: the result was delivered, or can no longer count.
    func discard() { unlink(path) }
}

/// The lease expiry as last renewed, written by the heartbeat supervisor and read when the
/// result is uploaded. Thread-safe.
final class LeaseExpiry: Sendable {
    private let millis: Mutex<Int64>
    init(_ millis: Int64) { self.millis = Mutex(millis) }
    var value: Int64 { millis.withLock { $0 } }
    func renewed(_ expires: Int64) { millis.withLock { $0 = max($0, expires) } }
}

/// The pure policy for delivering a `RESULT`: after each attempt, deliver again, reconnect
/// first, or stop. Retries what the coordinator failed at (`ERR internal` — its database
/// restarting — `shutting_down`, a timeout, a lost connection) while the lease lives; gives
/// up only when the result can no longer count (`stale_epoch`, `LOST`, the lease expired)
/// or is refused for what it is (`checksum_mismatch` and other request errors).
struct ResultRetry {
    enum Attempt: Equatable {
        case accepted
        /// An `ERR` reply (or a `ReelClient` failure reported as one).
        case refused(ReelProtocolError)
        /// The connection is gone (closed by the coordinator, reset, or a reply timeout).
        case connectionLost
        /// A `HEARTBEAT` between attempts answered `LOST`.
        case leaseLost
    }

    enum Decision: Equatable {
        case delivered
        case discard(reason: String)
        case retry(after: Duration)
        case reconnect
    }

    var backoff: Backoff

    init(initial: Duration, maximum: Duration) { backoff = Backoff(initial: initial, maximum: maximum, jitterFloor: 0.5) }

    mutating func decide(after attempt: Attempt, leaseExpiresAtMillis: Int64, nowMillis: Int64) -> Decision {
        switch attempt {
        case .accepted:
            return .delivered
        case .leaseLost:
            return .discard(reason: "the lease was lost (LOST)")
        case .refused(let error) where error.code == .staleEpoch:
            return .discard(reason: "refused as stale: \(error.message)")
        case .refused(let error) where !Self.isCoordinatorTrouble(error.code):
            return .discard(reason: "refused: \(error)")
        case .refused, .connectionLost:
            let left = leaseExpiresAtMillis - nowMillis
            guard left > 0 else { return .discard(reason: "the lease expired before the coordinator could accept the result") }
            if attempt == .connectionLost { return .reconnect }
            if case .refused(let error) = attempt, error.code.closesConnection { return .reconnect }
            // Wait, but leave time for at least two more attempts within the lease.
            return .retry(after: max(.milliseconds(50), min(backoff.next(), .milliseconds(left / 3))))
        }
    }

    /// Codes that say the coordinator, not the request, failed — trying again may work.
    /// (`internal` is also how `ReelClient` reports a connection that closed under a request.)
    static func isCoordinatorTrouble(_ code: ReelProtocolError.Code) -> Bool {
        [.internal, .shuttingDown, .timeout].contains(code)
    }
}
