import Dispatch
import NIOCore
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
    private let genericPlans: Bool
    private var store: FarmStore

    /// - Parameter genericPlans: plan each prepared statement once (`plan_cache_mode =
    ///   force_generic_plan`) instead of at every call. PostgreSQL keeps re-planning statements
    ///   whose array parameters make a custom plan look cheaper: for the result statements,
    ///   planning cost more than running them (0.22 ms against 0.11 ms a call; a claim's lease
    ///   0.57 ms against 0.27 ms). Only for a connection whose statements all have good generic
    ///   plans: the results' and the dispatcher's (the claim's statements write their limits in
    ///   the text, since a generic `LIMIT $n` made the candidates sort every queued task;
    ///   `StatementBudgetTests` checks their generic plans).
    init(conninfo: String, label: String, clock: FarmClock = .wall, genericPlans: Bool = false) throws {
        self.conninfo = conninfo
        self.clock = clock
        self.genericPlans = genericPlans
        self.queue = DispatchQueue(label: "reel.store.\(label)")
        self.store = FarmStore(connection: try Self.connect(conninfo, genericPlans: genericPlans), clock: clock)
    }

    private static func connect(_ conninfo: String, genericPlans: Bool) throws -> PGConnection {
        let connection = try PGConnection(conninfo)
        // No JIT: the farm's statements are short, and the few whose estimated cost passes
        // jit_above_cost (a job's cost summed over its 15,000 tasks: 50-60 ms) spent more
        // compiling than running (70-230 ms with it).
        try connection.query("SET jit = off")
        if genericPlans { try connection.query("SET plan_cache_mode = force_generic_plan") }
        return connection
    }

    /// Runs `body` with the store on the worker's queue.
    func run<T: Sendable>(_ body: @escaping @Sendable (FarmStore) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result {
                    if !self.store.connection.isOpen {
                        self.store = FarmStore(connection: try Self.connect(self.conninfo, genericPlans: self.genericPlans), clock: self.clock)
                    }
                    return try body(self.store)
                })
            }
        }
    }
}

/// A few `StoreWorker`s shared by request handlers: each call runs on a worker that is idle,
/// or waits in one first-come-first-served line for the next worker to become idle. A call
/// that blocks on a row lock (a result waiting for a job a cancel holds) therefore holds only
/// its own worker; the calls behind it go to the others instead of queueing behind it, as
/// they did when calls were dealt to the workers round-robin.
final class StorePool: Sendable {
    private struct State {
        var idle: [Int]
        /// Calls waiting for a worker, first come first served.
        var waiting = CircularBuffer<CheckedContinuation<Int, Never>>()
    }

    private let workers: [StoreWorker]
    private let state: Mutex<State>

    init(conninfo: String, count: Int, clock: FarmClock = .wall) throws {
        workers = try (0..<max(1, count)).map { try StoreWorker(conninfo: conninfo, label: "pool\($0)", clock: clock) }
        state = Mutex(State(idle: Array(workers.indices.reversed())))
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (FarmStore) throws -> T) async throws -> T {
        let index = await acquire()
        defer { release(index) }
        return try await workers[index].run(body)
    }

    private func acquire() async -> Int {
        if let index = state.withLock({ $0.idle.popLast() }) { return index }
        return await withCheckedContinuation { continuation in
            let index = state.withLock { s -> Int? in
                if let index = s.idle.popLast() { return index }
                s.waiting.append(continuation)
                return nil
            }
            if let index { continuation.resume(returning: index) }
        }
    }

    private func release(_ index: Int) {
        let next = state.withLock { s -> CheckedContinuation<Int, Never>? in
            guard let next = s.waiting.popFirst() else {
                s.idle.append(index)
                return nil
            }
            return next
        }
        next?.resume(returning: index)
    }
}

/// What runs store work off the cooperative pool: one worker, or the pool of them.
protocol StoreRunning: Sendable {
    func run<T: Sendable>(_ body: @escaping @Sendable (FarmStore) throws -> T) async throws -> T
}
extension StoreWorker: StoreRunning {}
extension StorePool: StoreRunning {}
