import Synchronization

/// Clients following jobs (`STATUS job=ID wait=S`): each waits on a `Doorbell` of its own,
/// registered under its job. Whatever can end a job — the finaliser completing or failing it, a
/// task failing its last attempt, a lease expiring on its last attempt, a cancel, a planning
/// failure — calls `jobMayHaveEnded`, and the followers read the job again at once instead of at
/// their next poll. A ring that turns out to change nothing costs one status read.
///
/// Register before the first read (`follow`): a job that ends between the two still rings the
/// bell, which keeps the ring for the next wait. When the coordinator drains, every follower is
/// answered at once, as pending claims are.
final class JobWatchers: Sendable {
    private struct State {
        var bells: [Int64: [ObjectIdentifier: Doorbell]] = [:]
        var draining = false
    }

    private let state = Mutex(State())
    /// Rung whenever any job may have ended: the notifier's bell (`Notifier`).
    let anyJobMayHaveEnded = Doorbell()

    /// Wakes everyone following `job`, and the notifier.
    func jobMayHaveEnded(_ job: Int64) {
        anyJobMayHaveEnded.ring()
        for bell in state.withLock({ Array(($0.bells[job] ?? [:]).values) }) { bell.ring() }
    }

    /// The coordinator is shutting down: followers stop waiting, now and from now on.
    func drain() {
        let all = state.withLock { s -> [Doorbell] in
            s.draining = true
            return s.bells.values.flatMap(\.values)
        }
        for bell in all { bell.ring() }
    }

    /// Whether followers should answer without waiting (the coordinator drains).
    var isDraining: Bool { state.withLock { $0.draining } }

    /// Runs `body` with a bell rung whenever `job` may have ended, and unregisters it after.
    func follow<T>(_ job: Int64, _ body: (Doorbell) async throws -> T) async rethrows -> T {
        let bell = Doorbell()
        let id = ObjectIdentifier(bell)
        state.withLock { $0.bells[job, default: [:]][id] = bell }
        defer {
            state.withLock {
                $0.bells[job]?[id] = nil
                if $0.bells[job]?.isEmpty == true { $0.bells[job] = nil }
            }
        }
        return try await body(bell)
    }

    /// Jobs with a follower now (tests).
    var followedJobs: Set<Int64> { state.withLock { Set($0.bells.keys) } }
}
