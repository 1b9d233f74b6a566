import Foundation

/// The server-wide count of connections that have not reached `WELCOME` (proto/PROTOCOL.md §7).
///
/// Each such connection costs at most a handshake line of buffer and lives at most the
/// handshake timeout, so capping how many exist at once caps what unauthenticated peers can
/// hold (memory, file descriptors) without touching authenticated ones: agents and clients
/// over the cap are refused with `ERR too_many_connections` and retry. Shared by all event
/// loops, hence the lock; `@unchecked Sendable` because the count is only touched under it.
final class HandshakeSlots: @unchecked Sendable {
    private let lock = NSLock()
    private var inUse = 0
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Takes a slot for a new connection, or returns false when all are taken.
    func acquire() -> Bool {
        lock.withLock {
            guard inUse < limit else { return false }
            inUse += 1
            return true
        }
    }

    /// Gives back a slot (the connection authenticated or closed).
    func release() {
        lock.withLock { inUse -= 1 }
    }

    /// Slots taken now (for tests).
    var count: Int { lock.withLock { inUse } }
}
