import Testing
import ReelScheduling
@testable import ReelLifecycleModel
import ReelThreadTesting

/// The lease rules of one task, event by event, on an injected clock (milliseconds).
@Suite(.blocking) struct TaskLifecycleTests {
    let lease: Millis = 30_000, grace: Millis = 5_000

    @Test func aClaimLeasesUnderTheNextEpochAndUsesAnAttempt() {
        var task = TaskLifecycle(maxAttempts: 3)
        #expect(task.claim(by: 7, now: 1_000, leaseMillis: lease) == 1)
        #expect(task.state == .leased && task.holder == 7 && task.expiresAt == 31_000 && task.attempts == 1)
        #expect(task.isConsistent)
    }

    @Test func heartbeatsRenewOnlyALiveLeaseOfTheCurrentHolder() {
        var task = TaskLifecycle(maxAttempts: 3)
        let epoch = task.claim(by: 7, now: 0, leaseMillis: lease)
        #expect(task.renew(epoch: epoch, agent: 7, now: 10_000, leaseMillis: lease, graceMillis: grace) == .success(40_000))
        #expect(task.renew(epoch: epoch, agent: 8, now: 10_000, leaseMillis: lease, graceMillis: grace) == .failure(.notHolder))
        #expect(task.renew(epoch: epoch + 1, agent: 7, now: 10_000, leaseMillis: lease, graceMillis: grace) == .failure(.notHolder))
        // Past the expiry, before any expirer ran: lost all the same.
        #expect(task.renew(epoch: epoch, agent: 7, now: 40_000, leaseMillis: lease, graceMillis: grace) == .failure(.expired))
    }

    @Test func aResultIsAcceptedOnlyUnderTheCurrentEpochEvenJustAfterExpiry() {
        var task = TaskLifecycle(maxAttempts: 3)
        let first = task.claim(by: 7, now: 0, leaseMillis: lease)
        #expect(task.expire(now: 30_000, graceMillis: grace) == .requeued(attemptsLeft: 2))
        let second = task.claim(by: 8, now: 30_001, leaseMillis: lease)
        #expect(task.complete(epoch: first, agent: 7, result: "late") == .notHolder, "the first holder's late result is stale")
        // Expired but not yet re-queued: nobody else holds it, so the holder's result still counts.
        #expect(task.complete(epoch: second, agent: 8, result: "r") == nil)
        #expect(task.state == .done && task.result == "r" && task.isConsistent)
    }

    @Test func failuresRequeueUntilTheAttemptsRunOut() {
        var task = TaskLifecycle(maxAttempts: 2)
        var epoch = task.claim(by: 1, now: 0, leaseMillis: lease)
        #expect(task.fail(epoch: epoch, agent: 1, message: "boom") == .success(.requeued(attemptsLeft: 1)))
        epoch = task.claim(by: 2, now: 1, leaseMillis: lease)
        #expect(task.fail(epoch: epoch, agent: 2, message: "bang") == .success(.exhausted))
        #expect(task.state == .failed && task.failedAgents == [1, 2] && task.lastError == "bang")
        #expect(task.fail(epoch: epoch, agent: 2, message: "again") == .failure(.notHolder))
    }

    @Test func aReleaseHandsTheTaskBackWithoutUsingAnAttempt() {
        var task = TaskLifecycle(maxAttempts: 1)
        let epoch = task.claim(by: 1, now: 0, leaseMillis: lease)
        #expect(task.release(epoch: epoch, agent: 1) == nil)
        #expect(task.state == .queued && task.attempts == 0 && task.failedAgents.isEmpty)
        #expect(task.claim(by: 2, now: 1, leaseMillis: lease) == epoch + 1, "the epoch never goes back")
    }

    /// A task whose holder disconnected is claimable after a short grace, not the full lease.
    @Test func aDisconnectedHolderLosesTheTaskAfterTheGraceNotTheFullLease() {
        var task = TaskLifecycle(maxAttempts: 3)
        _ = task.claim(by: 1, now: 0, leaseMillis: lease)
        let byOther = task.holderDisconnected(agent: 2, now: 1_000)
        #expect(!byOther, "only the holder's disconnect counts")
        let byHolder = task.holderDisconnected(agent: 1, now: 1_000)
        #expect(byHolder)
        #expect(task.expire(now: 5_999, graceMillis: grace) == nil)
        #expect(task.expire(now: 6_000, graceMillis: grace) == .requeued(attemptsLeft: 2))
        #expect(task.lastError == "the agent disconnected and did not come back")
    }

    @Test func aReconnectingHolderReattachesWithinTheGraceAndKeepsItsEpoch() {
        var task = TaskLifecycle(maxAttempts: 3)
        let epoch = task.claim(by: 1, now: 0, leaseMillis: lease)
        task.holderDisconnected(agent: 1, now: 1_000)
        #expect(task.reattach(agent: 1, now: 3_000, leaseMillis: lease, graceMillis: grace) == epoch)
        #expect(task.holderDisconnectedAt == nil && task.expiresAt == 33_000)
        #expect(task.expire(now: 10_000, graceMillis: grace) == nil, "the grace no longer applies")
        task.holderDisconnected(agent: 1, now: 20_000)
        #expect(task.reattach(agent: 1, now: 25_001, leaseMillis: lease, graceMillis: grace) == nil, "too late: the grace is over")
    }

    @Test func cancelStopsOpenTasksAndRetryGivesFreshAttempts() {
        var task = TaskLifecycle(maxAttempts: 1)
        let epoch = task.claim(by: 1, now: 0, leaseMillis: lease)
        let cancelled = task.cancel()
        #expect(cancelled)
        #expect(task.renew(epoch: epoch, agent: 1, now: 1, leaseMillis: lease, graceMillis: grace) == .failure(.notHolder))
        let retried = task.retry()
        #expect(retried && task.state == .queued && task.attempts == 0)
        var done = TaskLifecycle(maxAttempts: 1)
        let e = done.claim(by: 1, now: 0, leaseMillis: lease)
        _ = done.complete(epoch: e, agent: 1, result: "r")
        let (cancelledDone, retriedDone) = (done.cancel(), done.retry())
        #expect(!cancelledDone && !retriedDone, "a done task keeps its result")
        let lost = done.resultLost()
        #expect(lost && done.state == .queued && done.result == nil, "a lost result is rendered again")
    }
}

@Suite(.blocking) struct ClaimPolicyTests {
    @Test func priorityThenAgeThenKindThenOrdinal() {
        let c = [
            ClaimCandidate(task: 10, job: 2, kind: .videoChunk, ordinal: 0, jobPriority: 0),
            ClaimCandidate(task: 3, job: 1, kind: .videoChunk, ordinal: 1, jobPriority: 0),
            ClaimCandidate(task: 4, job: 1, kind: .audio, ordinal: 0, jobPriority: 0),
            ClaimCandidate(task: 20, job: 3, kind: .videoChunk, ordinal: 5, jobPriority: 5),
        ]
        #expect(ClaimPolicy.choose(c, for: 1, liveAgents: [1])?.task == 20)
        #expect(ClaimPolicy.choose(Array(c.dropLast()), for: 1, liveAgents: [1])?.task == 4)
        #expect(ClaimPolicy.choose(Array(c.dropLast().filter { $0.kind != .audio }), for: 1, liveAgents: [1])?.task == 3)
    }

    @Test func withinAPriorityTheEarlierTurnGoesBeforeTheOlderJob() {
        let older = ClaimCandidate(task: 1, job: 1, kind: .audio, ordinal: 0, jobPriority: 0, jobTurn: 3)
        let newer = ClaimCandidate(task: 9, job: 7, kind: .videoChunk, ordinal: 4, jobPriority: 0, jobTurn: 2)
        let urgent = ClaimCandidate(task: 12, job: 8, kind: .videoChunk, ordinal: 0, jobPriority: 1, jobTurn: 50)
        #expect(ClaimPolicy.choose([older, newer], for: 1, liveAgents: [1]) == newer)
        #expect(ClaimPolicy.choose([older, newer, urgent], for: 1, liveAgents: [1]) == urgent)
    }

    @Test func turnsRoundRobinABatchsRowsAndGiveALoneJobTheHead() {
        // A lone job takes the head's turn; a batch's rows take one turn after another, never
        // before the head.
        #expect(ClaimTurns.head([]) == 0)
        #expect(ClaimTurns.head([7, 4, 9]) == 4)
        #expect(ClaimTurns.assign(head: 4, batchNext: nil) == (4, nil))
        #expect(ClaimTurns.assign(head: 4, batchNext: 0) == (4, 5))
        #expect(ClaimTurns.assign(head: 4, batchNext: 9) == (9, 10))
    }

    @Test func anAgentIsNotOfferedATaskItFailedWhileAnotherLiveAgentHasNot() {
        let failed = ClaimCandidate(task: 1, job: 1, kind: .videoChunk, ordinal: 0, jobPriority: 0, failedAgents: [7])
        let other = ClaimCandidate(task: 2, job: 1, kind: .videoChunk, ordinal: 1, jobPriority: 0)
        #expect(ClaimPolicy.choose([failed, other], for: 7, liveAgents: [7, 8])?.task == 2)
        #expect(ClaimPolicy.choose([failed], for: 7, liveAgents: [7, 8]) == nil)
        #expect(ClaimPolicy.choose([failed], for: 8, liveAgents: [7, 8])?.task == 1)
        #expect(ClaimPolicy.choose([failed], for: 7, liveAgents: [7])?.task == 1, "alone, it may try again so the job can end")
    }

    @Test func anAgentIsOfferedOnlyTasksWhoseEncoderItHas() {
        // An HEVC job: its chunks need libx265, its audio aac. Agent 1 has no libx265.
        let chunk = ClaimCandidate(task: 1, job: 1, kind: .videoChunk, ordinal: 0, jobPriority: 0, encoder: "libx265")
        let audio = ClaimCandidate(task: 2, job: 1, kind: .audio, ordinal: 0, jobPriority: 0, encoder: "aac")
        let finalise = ClaimCandidate(task: 3, job: 1, kind: .finalise, ordinal: 0, jobPriority: 0)
        let encoders = AgentEncoders([1: ["libx264", "aac"], 2: ["libx264", "libx265", "aac"]])
        #expect(ClaimPolicy.choose([chunk], for: 1, liveAgents: [1, 2], encoders: encoders) == nil)
        #expect(ClaimPolicy.choose([chunk, audio], for: 1, liveAgents: [1, 2], encoders: encoders)?.task == 2)
        #expect(ClaimPolicy.choose([chunk], for: 2, liveAgents: [1, 2], encoders: encoders)?.task == 1)
        #expect(ClaimPolicy.choose([finalise], for: 1, liveAgents: [1], encoders: encoders)?.task == 3, "no encoder needed")
        #expect(ClaimPolicy.choose([chunk], for: 9, liveAgents: [9], encoders: encoders)?.task == 1, "an agent that never said is not held back")
    }

    @Test func aFailedTaskWaitsOnlyForOtherAgentsThatCouldRenderIt() {
        // Agent 2 failed the HEVC chunk; agent 1 is live but has no libx265, so it will never
        // take it: agent 2 gets it again rather than the job waiting forever.
        let chunk = ClaimCandidate(task: 1, job: 1, kind: .videoChunk, ordinal: 0, jobPriority: 0, failedAgents: [2], encoder: "libx265")
        let encoders = AgentEncoders([1: ["libx264", "aac"], 2: ["libx265", "aac"], 3: ["libx265"]])
        #expect(ClaimPolicy.choose([chunk], for: 2, liveAgents: [1, 2], encoders: encoders)?.task == 1)
        #expect(ClaimPolicy.choose([chunk], for: 2, liveAgents: [1, 2, 3], encoders: encoders) == nil, "agent 3 could")
    }
}
