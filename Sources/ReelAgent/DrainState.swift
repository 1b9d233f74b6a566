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

/// Reconnect delays: `initial`, doubling to `maximum`, each scaled by a random factor in
/// [0.5, 1) so agents that lost the coordinator together do not reconnect in lockstep.
struct Backoff {
    let initial: Duration
    let maximum: Duration
    private var current: Duration

    init(initial: Duration, maximum: Duration) {
        self.initial = initial; self.maximum = maximum; self.current = initial
    }

    /// The next delay to wait; advances the sequence.
    mutating func next() -> Duration {
        let base = current
        current = min(current * 2, maximum)
        return base * Double.random(in: 0.5..<1.0)
    }

    /// Back to `initial` after a successful connection.
    mutating func reset() { current = initial }
}
