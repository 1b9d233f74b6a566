import Testing
@testable import ReelCoordinator

/// The finaliser's wake-up: a ring ends the wait, a ring while busy ends the next one (and
/// several count once), and a wait with nothing rung ends at its timeout, not before, or when
/// cancelled. Every wait that should end is raced against a generous deadline, so a lost ring
/// or an ignored cancellation fails the test instead of hanging it; every wait that should
/// last is checked from below (a loaded machine can only make it longer).
@Suite(.timeLimit(.minutes(1)))
struct DoorbellTests {
    /// Far beyond any deadline below: a wait that ends did so because of a ring or a cancel.
    static let forever = Duration.seconds(3600)
    /// Generous for "at once" on a loaded CI machine.
    static let deadline = Duration.seconds(20)

    @Test func aRingEndsTheWaitAndARingWhileBusyEndsTheNextOne() async {
        let bell = Doorbell()
        bell.ring()
        #expect(await Self.ends(within: Self.deadline) { await bell.wait(upTo: Self.forever) }, "a ring before the wait was lost")
        let waiting = Task { await bell.wait(upTo: Self.forever) }
        bell.ring()
        #expect(await Self.ends(within: Self.deadline) { await waiting.value }, "a ring during the wait was lost")
    }

    @Test func ringsWhileBusyCountOnce() async {
        let bell = Doorbell()
        bell.ring()
        bell.ring()
        #expect(await Self.ends(within: Self.deadline) { await bell.wait(upTo: Self.forever) })
        // Both rings were used up by that wait: this one lasts its whole timeout.
        let start = ContinuousClock.now
        await bell.wait(upTo: .milliseconds(300))
        #expect(ContinuousClock.now - start >= .milliseconds(300), "a second wait ended early after \(ContinuousClock.now - start)")
    }

    @Test func aWaitEndsAtItsTimeoutNotBeforeOrWhenCancelled() async {
        let bell = Doorbell()
        let start = ContinuousClock.now
        #expect(await Self.ends(within: Self.deadline) { await bell.wait(upTo: .milliseconds(300)) }, "the timeout did not end the wait")
        #expect(ContinuousClock.now - start >= .milliseconds(300), "ended after \(ContinuousClock.now - start) with nothing rung")
        let waiting = Task { await bell.wait(upTo: Self.forever) }
        waiting.cancel()
        #expect(await Self.ends(within: Self.deadline) { await waiting.value }, "cancelling did not end the wait")
    }

    /// Whether `body` returns within `deadline`. A body that never returns is left running
    /// (the test fails instead of hanging on it).
    static func ends(within deadline: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
        let (outcomes, outcome) = AsyncStream.makeStream(of: Bool.self)
        let work = Task { await body(); outcome.yield(true) }
        let timer = Task { try? await Task.sleep(for: deadline); outcome.yield(false) }
        var iterator = outcomes.makeAsyncIterator()
        let ended = await iterator.next() ?? false
        timer.cancel()
        _ = work
        return ended
    }
}
