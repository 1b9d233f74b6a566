import Foundation
import Synchronization

/// An exclusive `flock` on `<cache>/agent.lock`: one agent per cache directory.
///
/// Two agents sharing a directory would delete each other's renders in progress, count the
/// same blocks against two limits, and — since the default agent name derives from the cache
/// directory — share a name on the farm. The lock is advisory and dies with the process, so a
/// crashed agent never leaves a stale lock. Owns its file descriptor; `release()` (idempotent)
/// or `deinit` closes it. Thread-safe.
final class CacheDirectoryLock: Sendable {
    /// The open lock file, -1 once released.
    private let descriptor: Mutex<Int32>

    /// Takes the lock or throws `AgentError.configuration` naming the directory in use.
    init(directory: URL) throws {
        let path = directory.appendingPathComponent("agent.lock").path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw AgentError.configuration("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK ? "another agent is using this cache directory; give each agent its own --cache"
                                              : String(cString: strerror(errno))
            close(fd)
            throw AgentError.configuration("cannot lock \(path): \(reason)")
        }
        descriptor = Mutex(fd)
    }

    /// Releases the lock (closing the descriptor releases the flock).
    func release() {
        descriptor.withLock {
            if $0 >= 0 { close($0); $0 = -1 }
        }
    }

    deinit { release() }
}
