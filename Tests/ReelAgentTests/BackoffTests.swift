import Testing
@testable import ReelAgent
import ReelThreadTesting

@Suite(.blocking) struct BackoffTests {
    /// 0.5 s doubling to 30 s, each delay jittered into [½·base, base).
    @Test func doublesToTheCapWithJitterAndResets() {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(30))
        var base = Duration.milliseconds(500)
        for _ in 0..<12 {
            let delay = backoff.next()
            #expect(delay >= base / 2 && delay < base, "\(delay) for base \(base)")
            base = min(base * 2, .seconds(30))
        }
        #expect(base == .seconds(30))
        backoff.reset()
        #expect(backoff.next() < .milliseconds(500))
    }
}
