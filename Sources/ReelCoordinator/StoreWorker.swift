import Dispatch
import ReelCore
import ReelStore
import ReelScheduling
import Synchronization

/// One PostgreSQL connection on its own serial queue: libpq blocks, so store calls never run
/// on NIO event loops or hold a cooperative-pool thread while waiting on the network — the
/// caller suspends on a continuation until the queue has run the call.
///
/// `@unchecked Sendable`: `store` is only touched on `queue` (reconnected there if the
/// connection broke).
final class StoreWorker: @unchecked Sendable {
    private let queue: DispatchQueue
    private let conninfo: String
    private let clock: FarmClock
    private var store: FarmStore

    init(conninfo: String, label: String, clock: FarmClock = .wall) throws {
        self.conninfo = conninfo
        self.clock = clock
        self.queue = DispatchQueue(label: "reel.store.\(label)")
        self.store = FarmStore(connection: try PGConnection(conninfo), clock: clock)
    }

    /// Runs `body` with the store on the worker's queue.
    func run<T: Sendable>(_ body: @escaping @Sendable (FarmStore) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result {
                    if !self.store.connection.isOpen {
                        self.store = FarmStore(connection: try PGConnection(self.conninfo), clock: self.clock)
                    }
                    return try body(self.store)
                })
            }
        }
    }
}

/// A few `StoreWorker`s used round-robin by request handlers.
final class StorePool: Sendable {
    private let workers: [StoreWorker]
    private let counter = Mutex<UInt64>(0)

    init(conninfo: String, count: Int, clock: FarmClock = .wall) throws {
        workers = try (0..<max(1, count)).map { try StoreWorker(conninfo: conninfo, label: "pool\($0)", clock: clock) }
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (FarmStore) throws -> T) async throws -> T {
        let next = counter.withLock { $0 &+= 1; return $0 }
        return try await workers[Int(next % UInt64(workers.count))].run(body)
    }
}

/// What runs store work off the cooperative pool: one worker, or the pool of them.
protocol StoreRunning: Sendable {
    func run<T: Sendable>(_ body: @escaping @Sendable (FarmStore) throws -> T) async throws -> T
}
extension StoreWorker: StoreRunning {}
extension StorePool: StoreRunning {}
