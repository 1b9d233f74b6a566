import ReelCore
import ReelStore
import Synchronization

/// The wall clock plus an offset the test moves forward. Give a store or coordinator
/// `farmClock` and age its leases with `advance(seconds:)`: a lease then expires when the test
/// says so, never because a loaded machine happened to be slow, and never before.
public final class AdjustableClock: Sendable {
    private let offsetMillis = Mutex<Int64>(0)

    public init() {}

    public func advance(seconds: Double) {
        offsetMillis.withLock { $0 += Int64((seconds * 1000).rounded()) }
    }

    public var farmClock: FarmClock {
        FarmClock { [self] in FarmClock.wall.nowMillis() + offsetMillis.withLock { $0 } }
    }
}
