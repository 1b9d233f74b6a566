import Foundation
import Synchronization
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
///
/// The rule: every suite with a synchronous test is marked, however quick its tests look
/// (`TestPoolRuleTests` checks the sources). Pure tests count too: in a debug build a
/// property test or an exact-arithmetic sum takes seconds, and Swift Testing starts every test
/// at once, so a few dozen of them queued on the pool held both its threads for the first
/// 30–40 s of a CI run. An async test that does blocking work between its awaits uses
/// `offThePool` for that work.
public struct BlockingSuite: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        let executor = TestCaseExecutor(pool: BlockingTestExecutor.shared)
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == BlockingSuite {
    /// Runs the tests on threads of their own: for suites whose tests block (see `BlockingSuite`).
    public static var blocking: Self { BlockingSuite() }
}

/// Plain threads for the `.blocking` suites, which serve the tests already started before
/// starting new ones.
///
/// Swift Testing starts every test of the run at once, so the first job of each of several
/// hundred tests arrives here within a second. Taken first come, first served, those jobs
/// would queue a started test's next step (a reply from a coordinator it connected to, an
/// `await` on a render) behind every test not yet begun: once that wait outlasted the
/// coordinator's idle timeout, and four tests failed together with their connections closed.
/// So jobs come in two queues:
/// - **resumed**: any job of a test case that has already run once: taken first, by any thread;
/// - **fresh**: a test case's first job: taken only while fewer than `startingThreads` threads
///   are busy. The other `reservedThreads` are kept for resumed jobs, so a started test waits
///   for a thread only when every thread is inside a running test.
///
/// On CI's two cores that is four threads starting tests, as before, and four more in reserve.
public final class BlockingTestExecutor: @unchecked Sendable {
    public static let shared: BlockingTestExecutor = {
        let starting = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
        return BlockingTestExecutor(startingThreads: starting, reservedThreads: starting)
    }()

    let startingThreads: Int
    private let condition = NSCondition()
    // guarded by `condition`:
    private var resumed: [(job: UnownedJob, on: TestCaseExecutor)] = []
    private var fresh: [(job: UnownedJob, on: TestCaseExecutor)] = []
    private var head = 0  // `fresh` is taken from the front; compacted when drained
    private var busy = 0

    init(startingThreads: Int, reservedThreads: Int) {
        self.startingThreads = startingThreads
        for index in 0..<(startingThreads + reservedThreads) {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "reel-test-blocking-\(index)"
            thread.stackSize = 16 << 20  // renders and x264 use deep stacks
            thread.start()
        }
    }

    /// Threads running a job now.
    var busyThreads: Int { condition.lock(); defer { condition.unlock() }; return busy }

    func enqueue(_ job: UnownedJob, on executor: TestCaseExecutor, first: Bool) {
        condition.lock()
        if first { fresh.append((job, executor)) } else { resumed.append((job, executor)) }
        condition.broadcast()
        condition.unlock()
    }

    /// The next job this thread may run: a resumed one if any, else a fresh one while fewer than
    /// `startingThreads` threads are busy. Called with `condition` locked.
    private func next() -> (job: UnownedJob, on: TestCaseExecutor)? {
        if !resumed.isEmpty { return resumed.removeFirst() }
        guard busy < startingThreads, head < fresh.count else { return nil }
        let taken = fresh[head]
        head += 1
        if head == fresh.count { fresh.removeAll(keepingCapacity: true); head = 0 }
        return taken
    }

    private func work() {
        while true {
            condition.lock()
            var taken = next()
            while taken == nil {
                condition.wait()
                taken = next()
            }
            busy += 1
            condition.unlock()
            let (job, executor) = taken!
            job.runSynchronously(on: executor.asUnownedTaskExecutor())
            condition.lock()
            busy -= 1
            condition.broadcast()  // a fresh job may start now
            condition.unlock()
        }
    }
}

/// One test case's view of `BlockingTestExecutor`: it tells the pool whether a job is the test
/// case's first, and every later job of the test case (its child tasks' too) comes back
/// through it, because the jobs run with it as their task executor.
final class TestCaseExecutor: TaskExecutor, @unchecked Sendable {
    private let pool: BlockingTestExecutor
    private let started = Mutex(false)

    init(pool: BlockingTestExecutor) { self.pool = pool }

    func enqueue(_ job: consuming ExecutorJob) {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        pool.enqueue(UnownedJob(job), on: self, first: first)
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
