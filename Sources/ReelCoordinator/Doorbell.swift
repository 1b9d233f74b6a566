import Synchronization

/// Wakes a polling loop early. The loop calls `wait(upTo:)` where it would sleep; `ring()`
/// ends that wait at once, or the next one if the loop is busy (a ring is never lost; rings
/// while busy count once). Cancelling the waiting task ends the wait too. One waiter at a time.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func ring() {
        state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let waiter = s.waiter {
                s.waiter = nil
                return waiter
            }
            s.rung = true
            return nil
        }?.resume()
    }

    /// Returns when rung (or already rung since the last wait), after `timeout`, or when the
    /// task is cancelled.
    func wait(upTo timeout: Duration) async {
        let timer = Task { [self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            ring()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let already = state.withLock { s -> Bool in
                    if s.rung {
                        s.rung = false
                        return true
                    }
                    s.waiter = continuation
                    return false
                }
                if already { continuation.resume() }
            }
        } onCancel: {
            ring()
        }
    }
}
