import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// A `ServiceGroup` running one service in a background task, as the `reel` command runs it;
/// `shutDownGracefully()` is what SIGTERM does.
final class ServiceGroupHandle: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    private let done: DoneFlag

    init(service: any Service, logger: Logger) {
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: logger))
        self.group = group
        let done = DoneFlag()
        self.done = done
        self.task = Task {
            defer { done.set() }
            try await group.run()
        }
    }

    /// Triggers graceful shutdown and waits (at most `timeout`) for the service to return.
    /// Returns whether it returned in time, and rethrows its error.
    @discardableResult
    func shutDownGracefully(timeout: Duration = .seconds(60)) async throws -> Bool {
        await group.triggerGracefulShutdown()
        return try await waitForExit(timeout: timeout)
    }

    /// Triggers graceful shutdown without waiting for it.
    func triggerShutdown() async { await group.triggerGracefulShutdown() }

    /// Whether the service has returned (or thrown).
    var hasExited: Bool { done.isSet }

    /// Waits up to `timeout` for the group to finish; rethrows the service's error.
    func waitForExit(timeout: Duration) async throws -> Bool {
        let finished = await eventually(timeout: timeout) { done.isSet }
        if finished { try await task.value }
        return finished
    }
}

final class DoneFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
