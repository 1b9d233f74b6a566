import Dispatch
import ServiceLifecycle
import Synchronization

/// Records how a service group ended, so a caller can poll for start-up failures.
final class ServiceEnd: Sendable {
    private let result = Mutex<Error??>(nil)
    func record(_ error: Error?) { result.withLock { $0 = .some(error) } }
    /// nil while running; `.some(nil)` after a clean stop; `.some(error)` after a failure.
    var outcome: Error?? { result.withLock { $0 } }
}

/// Runs a service group to completion from synchronous code (a command's `run()`): the calling
/// thread waits while the group runs on the cooperative pool. Rethrows the group's error.
func runServiceGroup(_ group: ServiceGroup) throws {
    let finished = DispatchSemaphore(value: 0)
    let end = ServiceEnd()
    Task.detached {
        do { try await group.run(); end.record(nil) } catch { end.record(error) }
        finished.signal()
    }
    finished.wait()
    if case let .some(.some(error)) = end.outcome { throw error }
}
