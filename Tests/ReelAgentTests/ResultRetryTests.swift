import ReelProtocol
import Testing
@testable import ReelAgent
import ReelThreadTesting

/// The RESULT delivery policy, without a coordinator: what is retried, what reconnects, what is given up.
@Suite(.blocking) struct ResultRetryTests {
    let now: Int64 = 1_000_000
    func retry() -> ResultRetry { ResultRetry(initial: .milliseconds(500), maximum: .seconds(30)) }

    @Test func coordinatorTroubleIsRetriedWhileTheLeaseLives() {
        var policy = retry()
        let lease = now + 30_000
        // ERR internal (e.g. the database restarting) leaves the connection usable: wait and send again.
        guard case .retry(let delay) = policy.decide(after: .refused(.init(.internal, "x")), leaseExpiresAtMillis: lease, nowMillis: now) else {
            Issue.record("ERR internal must be retried"); return
        }
        #expect(delay > .zero && delay <= .milliseconds(10_000), "at most a third of the lease left: \(delay)")
        // shutting_down and a timeout close the connection: a new one first.
        #expect(policy.decide(after: .refused(.init(.shuttingDown, "x")), leaseExpiresAtMillis: lease, nowMillis: now) == .reconnect)
        #expect(policy.decide(after: .refused(.init(.timeout, "x")), leaseExpiresAtMillis: lease, nowMillis: now) == .reconnect)
        #expect(policy.decide(after: .connectionLost, leaseExpiresAtMillis: lease, nowMillis: now) == .reconnect)
        #expect(policy.decide(after: .accepted, leaseExpiresAtMillis: lease, nowMillis: now) == .delivered)
    }

    @Test func theDelayLeavesTimeForMoreAttemptsBeforeTheLeaseEnds() {
        var policy = ResultRetry(initial: .seconds(20), maximum: .seconds(30))
        #expect(policy.decide(after: .refused(.init(.internal, "x")), leaseExpiresAtMillis: now + 3_000, nowMillis: now) == .retry(after: .seconds(1)))
    }

    @Test func staleLostExpiredAndRequestErrorsAreGivenUp() {
        var policy = retry()
        func isDiscard(_ d: ResultRetry.Decision) -> Bool { if case .discard = d { return true }; return false }
        #expect(isDiscard(policy.decide(after: .refused(.init(.staleEpoch, "x")), leaseExpiresAtMillis: now + 30_000, nowMillis: now)))
        #expect(isDiscard(policy.decide(after: .refused(.init(.checksumMismatch, "x")), leaseExpiresAtMillis: now + 30_000, nowMillis: now)))
        #expect(isDiscard(policy.decide(after: .leaseLost, leaseExpiresAtMillis: now + 30_000, nowMillis: now)))
        #expect(isDiscard(policy.decide(after: .refused(.init(.internal, "x")), leaseExpiresAtMillis: now, nowMillis: now)))
        #expect(isDiscard(policy.decide(after: .connectionLost, leaseExpiresAtMillis: now - 1, nowMillis: now)))
    }
}
