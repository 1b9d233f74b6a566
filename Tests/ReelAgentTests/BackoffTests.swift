import Synchronization
import Testing
@testable import ReelAgent
import ReelCore
import ReelThreadTesting

/// Hands out fixed fractions as the backoff's random source, then 0.5.
final class Fractions: Sendable {
    private let values: Mutex<[Double]>
    init(_ values: [Double]) { self.values = Mutex(values) }
    func next() -> Double { values.withLock { $0.isEmpty ? 0.5 : $0.removeFirst() } }
}

@Suite(.blocking) struct BackoffTests {
    /// Full jitter: each delay is the window times the draw, from 0 up; the window is 0.5 s,
    /// doubling to 30 s; `reset` starts over.
    @Test func drawsFromTheWholeWindowWhichDoublesToTheCap() {
        let windows: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16),
                                   .seconds(30), .seconds(30)]
        let lowest = Fractions(Array(repeating: 0, count: windows.count))
        var low = Backoff(initial: .milliseconds(500), maximum: .seconds(30), random: lowest.next)
        for _ in windows { #expect(low.next() == .zero, "no floor under the delay") }

        let highest = Fractions(Array(repeating: 0.999_999, count: windows.count + 1))
        var high = Backoff(initial: .milliseconds(500), maximum: .seconds(30), random: highest.next)
        for window in windows {
            let delay = high.next()
            #expect(delay < window && delay > window * 0.999, "\(delay) for the window \(window)")
        }
        high.reset()
        let afterReset = high.next()
        #expect(afterReset < .milliseconds(500) && afterReset > .milliseconds(499))
    }

    /// A busy refusal draws from the busy window and leaves the reconnect window alone.
    @Test func aBusyRefusalNeitherWaitsTheBackoffNorGrowsIt() {
        let draws = Fractions(Array(repeating: 0.999_999, count: 10))
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(30), busyWindow: .seconds(1), random: draws.next)
        _ = backoff.next(); _ = backoff.next(); _ = backoff.next()  // window now 4 s
        for _ in 0..<5 {
            let delay = backoff.nextAfterBusy()
            #expect(delay < .seconds(1) && delay > .milliseconds(999))
        }
        #expect(backoff.window == .seconds(4))
        #expect(backoff.next() > .milliseconds(3_990), "the window did not grow with the busy refusals")
    }

    /// 1,000 agents drawing their first reconnect from the system's random source spread over
    /// the whole window, not into its upper half: every tenth of it gets some of them.
    @Test func aThousandFirstDelaysCoverTheWindow() {
        var buckets = [Int](repeating: 0, count: 10)
        for _ in 0..<1000 {
            var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(30))
            let delay = backoff.next()
            #expect(delay >= .zero && delay < .milliseconds(500))
            buckets[min(9, Int(delay / .milliseconds(50)))] += 1
        }
        #expect(buckets.allSatisfy { $0 > 20 }, "\(buckets)")
    }
}
