import Foundation
import Testing

/// `@Suite(.blocking)`: the suite's tests run on `BlockingTestExecutor`'s own threads instead
/// of Swift's cooperative pool.
///
/// Why: on Linux the cooperative pool is as wide as the machine has cores (two on CI), and a
/// synchronous test holds its pool thread for as long as it runs — a render, a `reel`
/// subprocess waited for, a libpq round trip, a 100,000-case fuzz. Two of them at once stopped
/// every async test in the process: CI once saw pure one-line tests report 87 s, and an agent
/// test whose fake coordinator could not answer time out with nothing delivered. Suites that
/// block are marked, so the pool stays free for the tests (and the product code under test)
/// that need it: the protocol, the agent, the coordinator's handlers, `eventually` loops.
public struct BlockingSuite: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(BlockingTestExecutor.shared) { try await function() }
    }
}

extension Trait where Self == BlockingSuite {
    /// Runs the tests on threads of their own: for suites whose tests block (see `BlockingSuite`).
    public static var blocking: Self { BlockingSuite() }
}

/// A fixed set of plain threads taking jobs first come, first served. Twice as many as there
/// are cores (at least four), so blocked tests leave room for running ones without putting
/// every test of the run on the CPU at once.
public final class BlockingTestExecutor: TaskExecutor, @unchecked Sendable {
    public static let shared = BlockingTestExecutor(threads: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []  // guarded by `condition`

    init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "reel-test-blocking-\(index)"
            thread.stackSize = 16 << 20  // renders and x264 use deep stacks
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs `body` on a new thread of its own and returns what it returns: for blocking work (a
/// subprocess waited for, a render, generating media) inside an async test that stays on the
/// cooperative pool because the code it tests needs the pool.
@discardableResult
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "reel-test-off-pool"
        thread.stackSize = 16 << 20
        thread.start()
    }
}
