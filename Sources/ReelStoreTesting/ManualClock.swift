import ReelCore
import Synchronization

/// A clock that stands still until the test moves it: a store given `farmClock` reads exactly
/// the milliseconds the test set, so its lease times can be compared with a model's to the
/// millisecond (`AdjustableClock` follows the wall clock instead, for tests of a running farm).
public final class ManualClock: Sendable {
    private let millis: Mutex<Int64>

    /// Starts at `startMillis` (ms since the Unix epoch; a recent date by default).
    public init(startMillis: Int64 = 1_700_000_000_000) { millis = Mutex(startMillis) }

    public var nowMillis: Int64 { millis.withLock { $0 } }

    public func advance(millis delta: Int64) {
        precondition(delta >= 0, "time does not go back")
        millis.withLock { $0 += delta }
    }

    public var farmClock: FarmClock {
        FarmClock { [self] in nowMillis }
    }
}
