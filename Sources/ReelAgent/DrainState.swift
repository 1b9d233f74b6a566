import Foundation
import Synchronization

/// The agent's graceful-shutdown state, shared by its slots.
///
/// Once draining, slots claim nothing more; a task in flight may finish until `deadline`
/// (drain start + grace period), after which it is released. Thread-safe.
final class DrainState: Sendable {
    private let deadline = Mutex<ContinuousClock.Instant?>(nil)

    var isDraining: Bool { deadline.withLock { $0 != nil } }

    /// Whether draining began and its grace period is over.
    var graceExpired: Bool {
        deadline.withLock { $0.map { ContinuousClock.now >= $0 } ?? false }
    }

    /// Starts draining (idempotent: a second call keeps the first deadline).
    func begin(gracePeriod: Duration) {
        deadline.withLock { if $0 == nil { $0 = .now + gracePeriod } }
    }
}
