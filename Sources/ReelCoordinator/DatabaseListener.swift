import Foundation
import Logging
import ReelStore
import ServiceLifecycle
import Synchronization

/// Wakes from other coordinators on the same database (PostgreSQL `LISTEN reel`, migration 9):
/// a task queued or a job resumed anywhere wakes this coordinator's waiting `CLAIM`s
/// (`onClaimable`), a job ended anywhere wakes its followers here (`onJobEnded`), however many
/// coordinators share the database. Its own changes come back too (one extra batch or status
/// read, cheap).
///
/// One connection of its own, on a thread of its own (libpq blocks): it waits on the
/// connection's socket and on a pipe that graceful shutdown writes to. A lost connection is
/// opened again (after `retryDelay`), and every reconnection calls `onReconnected`, since
/// messages sent meanwhile are lost; the reaper's periodic wake covers that gap as well.
final class DatabaseListener: Service, Sendable {
    static let channel = "reel"

    private let conninfo: String
    private let logger: Logger
    private let onClaimable: @Sendable () -> Void
    private let onJobEnded: @Sendable (Int64) -> Void
    private let onReconnected: @Sendable () -> Void
    private let onDrain: @Sendable (Int64) -> Void
    private let retryDelay: Duration
    private let wakePipe: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)
    private let listening = Mutex<(ready: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    init(conninfo: String, logger: Logger, retryDelay: Duration = .seconds(1), onClaimable: @escaping @Sendable () -> Void,
         onJobEnded: @escaping @Sendable (Int64) -> Void, onReconnected: @escaping @Sendable () -> Void,
         onDrain: @escaping @Sendable (Int64) -> Void = { _ in }) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw CoordinatorStartupError(description: "cannot create a pipe: errno \(errno)") }
        wakePipe = (fds[0], fds[1])
        self.conninfo = conninfo; self.logger = logger; self.retryDelay = retryDelay
        self.onClaimable = onClaimable; self.onJobEnded = onJobEnded; self.onReconnected = onReconnected; self.onDrain = onDrain
    }

    deinit {
        close(wakePipe.read)
        close(wakePipe.write)
    }

    func run() async throws {
        async let ended: Void = withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread { [self] in
                listen()
                done.resume()
            }
            thread.name = "reel.listen"
            thread.start()
        }
        // Whichever comes first: graceful shutdown or cancellation.
        try? await gracefulShutdown()
        stopped.store(true, ordering: .sequentiallyConsistent)
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
        await ended
        setListening(true) // nobody waits for a listener that has stopped
    }

    /// Returns once the first `LISTEN` is in place (or the listener has stopped).
    func waitUntilListening() async {
        await withCheckedContinuation { continuation in
            let ready = listening.withLock { state -> Bool in
                if state.ready { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func setListening(_ ready: Bool) {
        let waiters = listening.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ready = state.ready || ready
            defer { state.waiters = [] }
            return state.ready ? state.waiters : []
        }
        for waiter in waiters { waiter.resume() }
    }

    private var isStopped: Bool { stopped.load(ordering: .sequentiallyConsistent) }

    /// The thread's loop: connect, listen, dispatch, until stopped.
    private func listen() {
        var connectedBefore = false
        while !isStopped {
            do {
                let connection = try PGConnection(conninfo)
                try connection.execute(script: "LISTEN \(Self.channel)")
                let schema = try connection.query("SELECT current_schema() AS schema").rows.first?.string("schema") ?? "public"
                setListening(true)
                if connectedBefore {
                    logger.info("listening to the database again")
                    onReconnected()
                }
                connectedBefore = true
                while !isStopped {
                    for notification in try connection.waitForNotifications(timeoutMillis: 60_000, wakeDescriptor: wakePipe.read) {
                        dispatch(notification.payload, schema: schema)
                    }
                }
            } catch {
                if isStopped { break }
                logger.warning("database listener lost its connection; reconnecting", metadata: ["error": "\(error)"])
                var descriptor = pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)
                let millis = Int32(retryDelay.wholeMilliseconds)
                _ = poll(&descriptor, 1, millis)
            }
        }
    }

    /// `"<schema> claimable"`, `"<schema> ended <job>"` or `"<schema> drain <agent>"`; another
    /// schema's are not ours.
    private func dispatch(_ payload: String, schema: String) {
        let words = payload.split(separator: " ")
        guard words.count >= 2, words[0] == schema else { return }
        switch words[1] {
        case "claimable": onClaimable()
        case "ended": if words.count == 3, let job = Int64(words[2]) { onJobEnded(job) }
        case "drain": if words.count == 3, let agent = Int64(words[2]) { onDrain(agent) }
        default: logger.debug("unknown database notification", metadata: ["payload": "\(payload)"])
        }
    }
}
