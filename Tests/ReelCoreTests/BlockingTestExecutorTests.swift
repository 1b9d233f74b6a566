import Foundation
import Testing
@testable import ReelThreadTesting

/// `BlockingTestExecutor` serves tests already started before it starts new ones: a started
/// test's next step never waits behind tests not yet begun, even when every starting thread is
/// blocked.
@Suite struct BlockingTestExecutorTests {
    @Test func aStartedTestResumesBeforeANewOneStartsAndNewOnesStartWhenAThreadFrees() async throws {
        // One thread may start tests, one is kept for tests already started.
        let pool = BlockingTestExecutor(startingThreads: 1, reservedThreads: 1)
        let events = Collector<String>()
        let parked = Shared<CheckedContinuation<Void, Never>?>(nil)
        let gate = DispatchSemaphore(value: 0)

        // Test x starts and suspends (as a test waiting for a reply does).
        let x = Task(executorPreference: TestCaseExecutor(pool: pool)) {
            events.append("x started")
            await withCheckedContinuation { continuation in parked.update { $0 = continuation } }
            events.append("x resumed")
        }
        try await waitUntil("x is suspended") { parked.current != nil && pool.busyThreads == 0 }

        // Test a starts and blocks its thread (a render, a subprocess waited for).
        let a = Task(executorPreference: TestCaseExecutor(pool: pool)) {
            events.append("a started")
            gate.wait()
        }
        try await waitUntil("a is running") { events.values.contains("a started") }

        // Test b arrives, then x's reply: x resumes on the reserved thread, b waits for a
        // starting thread. First come, first served would start b there, blocking it too.
        let b = Task(executorPreference: TestCaseExecutor(pool: pool)) {
            events.append("b started")
            gate.wait()
        }
        parked.current!.resume()
        try await waitUntil("x resumed and only a is running") {
            events.values.contains("x resumed") && pool.busyThreads == 1
        }
        #expect(events.values == ["x started", "a started", "x resumed"])

        // When a's thread frees, b starts.
        gate.signal()
        try await waitUntil("b started") { events.values.contains("b started") }
        gate.signal()
        await x.value
        await a.value
        await b.value
        #expect(events.values == ["x started", "a started", "x resumed", "b started"])
    }
}
