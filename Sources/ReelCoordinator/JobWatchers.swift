import Synchronization

/// Clients following jobs (`STATUS job=ID wait=S`): each waits on a `Doorbell` of its own,
/// registered under its job. Whatever can end a job — the finaliser completing or failing it, a
/// task failing its last attempt, a lease expiring on its last attempt, a cancel, a planning
/// failure — calls `jobMayHaveEnded`, and the followers read the job again at once instead of at
/// their next poll. A ring that turns out to change nothing costs one status read.
///
/// Register before the first read (`follow`): a job that ends between the two still rings the
/// bell, which keeps the ring for the next wait.
final class JobWatchers: Sendable {
    private let bells = Mutex<[Int64: [ObjectIdentifier: Doorbell]]>([:])

    /// Wakes everyone following `job`.
    func jobMayHaveEnded(_ job: Int64) {
        for bell in bells.withLock({ Array(($0[job] ?? [:]).values) }) { bell.ring() }
    }

    /// Runs `body` with a bell rung whenever `job` may have ended, and unregisters it after.
    func follow<T>(_ job: Int64, _ body: (Doorbell) async throws -> T) async rethrows -> T {
        let bell = Doorbell()
        let id = ObjectIdentifier(bell)
        bells.withLock { $0[job, default: [:]][id] = bell }
        defer {
            bells.withLock {
                $0[job]?[id] = nil
                if $0[job]?.isEmpty == true { $0[job] = nil }
            }
        }
        return try await body(bell)
    }

    /// Jobs with a follower now (tests).
    var followedJobs: Set<Int64> { bells.withLock { Set($0.keys) } }
}
