import Synchronization

/// The server-wide count of connections that have not reached `WELCOME` (proto/PROTOCOL.md §7).
///
/// Each such connection costs at most a handshake line of buffer and lives at most the
/// handshake timeout, so capping how many exist at once caps what unauthenticated peers can
/// hold (memory, file descriptors) without touching authenticated ones: agents and clients
/// over the cap are refused with `ERR too_many_connections` and retry. Shared by all event
/// loops, hence the mutex.
final class HandshakeSlots: Sendable {
    private let inUse = Mutex(0)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Takes a slot for a new connection, or returns false when all are taken.
    func acquire() -> Bool {
        inUse.withLock {
            guard $0 < limit else { return false }
            $0 += 1
            return true
        }
    }

    /// Gives back a slot (the connection authenticated or closed).
    func release() {
        inUse.withLock { $0 -= 1 }
    }

    /// Slots taken now (for tests).
    var count: Int { inUse.withLock { $0 } }
}
