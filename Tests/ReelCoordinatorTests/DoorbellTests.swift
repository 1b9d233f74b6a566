import Testing
@testable import ReelCoordinator

/// The finaliser's wake-up: a ring ends the wait, a ring while busy ends the next one, and a
/// wait with nothing rung still ends at its timeout or when cancelled. The long timeouts make
/// a lost ring hang the test (and its time limit fail it), never pass it.
@Suite(.timeLimit(.minutes(1)))
struct DoorbellTests {
    @Test func aRingEndsTheWaitAndARingWhileBusyEndsTheNextOne() async {
        let bell = Doorbell()
        bell.ring()
        await bell.wait(upTo: .seconds(3600)) // rung before: returns at once
        let waiting = Task { await bell.wait(upTo: .seconds(3600)) }
        bell.ring()
        await waiting.value
    }

    @Test func aWaitEndsAtItsTimeoutOrWhenCancelled() async {
        let bell = Doorbell()
        await bell.wait(upTo: .milliseconds(1))
        let waiting = Task { await bell.wait(upTo: .seconds(3600)) }
        waiting.cancel()
        await waiting.value
    }
}
