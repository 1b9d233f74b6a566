import Foundation

/// The time the lease rules read: when a lease is granted or renewed it runs until this clock's
/// now plus the lease, and it has expired once this clock passes its expiry.
///
/// Production uses the wall clock (`.wall`). Tests age leases by moving a clock forward instead
/// of sleeping, so a lease expires exactly when the test says and never because a loaded
/// machine was slow. Every other time the store records (job start and finish, heartbeats,
/// quarantine) is PostgreSQL's own `now()`.
public struct FarmClock: Sendable {
    /// Milliseconds since 1970.
    public let nowMillis: @Sendable () -> Int64

    public init(nowMillis: @escaping @Sendable () -> Int64) {
        self.nowMillis = nowMillis
    }

    public static let wall = FarmClock { Int64(Date().timeIntervalSince1970 * 1000) }
}
