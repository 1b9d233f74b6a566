import ReelCore
import ReelThreadTesting
import Synchronization
import Testing

/// `PeriodicLoop`: passes until cancelled; the first at once or after a pause; none after the
/// cancellation, which ends a pause at once.
@Suite struct PeriodicLoopTests {
    final class Passes: Sendable {
        let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }

    @Test func passesRepeatUntilCancelled() async throws {
        let passes = Passes()
        let loop = Task { await PeriodicLoop(every: .milliseconds(1)).run { passes.add() } }
        try await waitUntil("three passes") { passes.value >= 3 }
        loop.cancel()
        await loop.value
        let ended = passes.value
        try await Task.sleep(for: .milliseconds(20))
        #expect(passes.value == ended)
    }

    @Test func theFirstPassIsAtOnceAndCancellingEndsThePause() async throws {
        let passes = Passes()
        let loop = Task { await PeriodicLoop(every: .seconds(3600)).run { passes.add() } }
        try await waitUntil("the first pass") { passes.value == 1 }
        loop.cancel()
        await loop.value
        #expect(passes.value == 1)
    }

    @Test func pausingFirstRunsNoPassBeforeTheInterval() async throws {
        let passes = Passes()
        let loop = Task { await PeriodicLoop(every: .seconds(3600), pauseFirst: true).run { passes.add() } }
        try await Task.sleep(for: .milliseconds(50))
        loop.cancel()
        await loop.value
        #expect(passes.value == 0)
    }
}
