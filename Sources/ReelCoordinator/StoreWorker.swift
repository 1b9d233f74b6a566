import Dispatch
import Foundation
import ReelCore
import ReelStore

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
    private var store: JobStore

    init(conninfo: String, label: String, clock: FarmClock = .wall) throws {
        self.conninfo = conninfo
        self.clock = clock
        self.queue = DispatchQueue(label: "reel.store.\(label)")
        self.store = JobStore(connection: try PGConnection(conninfo), clock: clock)
    }

    /// Runs `body` with the store on the worker's queue.
    func run<T: Sendable>(_ body: @escaping @Sendable (JobStore) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result {
                    if !self.store.connection.isOpen {
                        self.store = JobStore(connection: try PGConnection(self.conninfo), clock: self.clock)
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
    private let counter = LockedCounter()

    init(conninfo: String, count: Int, clock: FarmClock = .wall) throws {
        workers = try (0..<max(1, count)).map { try StoreWorker(conninfo: conninfo, label: "pool\($0)", clock: clock) }
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (JobStore) throws -> T) async throws -> T {
        try await workers[Int(counter.next() % UInt64(workers.count))].run(body)
    }
}

/// A counter behind a lock.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value: UInt64 = 0
    func next() -> UInt64 { lock.withLock { value &+= 1; return value } }
}

/// A value behind a lock, for small shared mutable state (agent sessions, flags).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withValue<T>(_ body: (inout Value) throws -> T) rethrows -> T { try lock.withLock { try body(&value) } }
    var current: Value { lock.withLock { value } }
}

/// Runs blocking work (file I/O, probing, finalising) on a global queue, not the cooperative pool.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
