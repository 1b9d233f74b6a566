import Foundation
import Synchronization
import Testing

/// `@Suite(.database)`: each of the suite's test cases waits for one of
/// `AdmissionGate.database`'s places before it runs, and gives it back when it ends.
///
/// Why: a test that talks to PostgreSQL holds connections while it runs — a store or two, and
/// for a coordinator about eight (its pool, its workers, its listener), some tests run three
/// coordinators. Swift Testing starts every test of the run at once, so once the cooperative
/// pool stopped being clogged at start-up, about a hundred such tests started within seconds
/// and the test server refused connections ("too many clients already", CI run 42). The gate
/// keeps the number of database tests in progress at once well under what the server takes
/// (`max_connections` 500 in `ops/postgres.sh`); the others wait without holding a thread.
///
/// The rule (checked by `TestPoolRuleTests`): every suite with a test in a file that uses
/// `TestDatabase`, a `CoordinatorHarness`, `FreshDatabase` or `REEL_TEST_DATABASE_URL` is
/// marked. A test case holds one place for its whole run and never asks for a second, so the
/// gate cannot deadlock.
public struct DatabaseSuite: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        // Only test cases take a place: a suite-wide scope holding one while its own test
        // cases wait for theirs could starve them.
        guard testCase != nil else { return try await function() }
        await AdmissionGate.database.enter()
        defer { AdmissionGate.database.leave() }
        try await function()
    }
}

extension Trait where Self == DatabaseSuite {
    /// At most `AdmissionGate.database`'s number of these tests at once (see `DatabaseSuite`).
    public static var database: Self { DatabaseSuite() }
}

/// An asynchronous counting semaphore: `enter` waits (suspended, holding no thread) until one
/// of `places` is free; `leave` frees it for the longest waiter.
public final class AdmissionGate: Sendable {
    /// The gate of `.database` suites: 20 places.
    public static let database = AdmissionGate(places: 20)

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
        var inside = 0
        var mostInside = 0
    }

    private let state: Mutex<State>

    public init(places: Int) {
        precondition(places > 0)
        state = Mutex(State(free: places))
    }

    public func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { s -> Bool in
                guard s.free > 0 else { s.waiting.append(continuation); return false }
                s.free -= 1
                s.inside += 1
                s.mostInside = max(s.mostInside, s.inside)
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    public func leave() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.waiting.isEmpty else {
                s.free += 1
                s.inside -= 1
                return nil
            }
            return s.waiting.removeFirst()  // the place passes straight to the next waiter
        }
        next?.resume()
    }

    /// Tasks waiting to enter.
    public var waiting: Int { state.withLock { $0.waiting.count } }

    /// Holders now, and the most there have been at once.
    public var occupancy: (inside: Int, most: Int) { state.withLock { ($0.inside, $0.mostInside) } }
}
