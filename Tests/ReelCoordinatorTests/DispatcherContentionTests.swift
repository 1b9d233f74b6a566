import Foundation
import Logging
@testable import ReelCoordinator
import ReelScheduling
@testable import ReelStore
import Synchronization
import Testing

/// The dispatcher against a claimer that loses tasks to another coordinator (no database: the
/// store's side, reporting the loss, is `SeveralCoordinatorsStoreTests`). A batch whose tasks
/// were taken between its read and its lease must run again by itself: the claims it left
/// waiting belong to agents that are all waiting, so no new claim or result would wake it,
/// and with two coordinators they waited out their claim and were told `NONE` with thousands
/// of tasks queued.
@Suite(.timeLimit(.minutes(2)))
struct DispatcherContentionTests {
    /// Answers each batch with the next of `answers` (lost counts), serving every request once
    /// the answers run out; counts the batches.
    final class LosingClaimer: Sendable {
        let losses: [Int]
        let batches = Mutex(0)
        init(losses: [Int]) { self.losses = losses }

        func claim(_ requests: [ClaimRequest]) -> ClaimBatch {
            let batch = batches.withLock { $0 += 1; return $0 }
            if batch <= losses.count { return ClaimBatch(tasks: requests.map { _ in nil }, lost: losses[batch - 1]) }
            return ClaimBatch(tasks: requests.enumerated().map { index, request in
                ClaimedTask(id: Int64(100 * batch + index), jobID: 1, kind: .videoChunk, ordinal: index, frameStart: 0, frameEnd: 25,
                            spec: "{}", epoch: 1, attempts: 1, leaseExpiresAtMillis: 0, leaseOwner: request.agent)
            }, lost: 0)
        }
    }

    /// A dispatcher on `claimer`, its claim deadlines kept, for `body`.
    static func withDispatcher<T>(_ claimer: LosingClaimer, _ body: (Dispatcher) async throws -> T) async rethrows -> T {
        let dispatcher = Dispatcher(logger: Logger(label: "test"), agents: AgentSessions(), release: { _ in }) { requests, _, _, _ in
            claimer.claim(requests)
        }
        let deadlines = Task { await dispatcher.runDeadlines() }
        defer { deadlines.cancel() }
        return try await body(dispatcher)
    }

    @Test("a batch that lost its tasks to another claimer runs again without a wake, and the claim gets a task")
    func aLostBatchRunsAgain() async throws {
        let claimer = LosingClaimer(losses: [1])
        let task = await Self.withDispatcher(claimer) { await $0.claim(agent: 7, connection: 1, wait: .seconds(60)) }
        #expect(task?.leaseOwner == 7, "the claim was served after the lost batch, not left to its deadline")
        #expect(claimer.batches.withLock { $0 } == 2)
    }

    @Test("batches that keep losing keep trying (pausing a little longer each time) until they lease")
    func repeatedLossesStillEndInATask() async throws {
        let claimer = LosingClaimer(losses: [3, 3, 3, 3, 3, 3, 3, 3])
        let served = await Self.withDispatcher(claimer) { dispatcher in
            async let first = dispatcher.claim(agent: 1, connection: 1, wait: .seconds(60))
            async let second = dispatcher.claim(agent: 2, connection: 2, wait: .seconds(60))
            return await [first, second]
        }
        #expect(served.compactMap { $0?.leaseOwner }.sorted() == [1, 2])
        #expect(claimer.batches.withLock { $0 } >= 9, "eight lost batches, then the one that leased")
    }

    @Test("a batch with nothing claimable (nothing lost) leaves the claim waiting for a wake")
    func nothingClaimableWaitsForAWake() async throws {
        let claimer = LosingClaimer(losses: [0])
        await Self.withDispatcher(claimer) { dispatcher in
            let claim = Task { await dispatcher.claim(agent: 3, connection: 1, wait: .seconds(60)) }
            // The first batch has run and left the claim waiting; only a wake runs a second one.
            let deadline = ContinuousClock.now + .seconds(60)
            while claimer.batches.withLock({ $0 }) < 1 && ContinuousClock.now < deadline { await Task.yield() }
            #expect(dispatcher.waitingCount == 1)
            dispatcher.wake()
            let task = await claim.value
            #expect(task?.leaseOwner == 3)
        }
        #expect(claimer.batches.withLock { $0 } == 2)
    }
}
