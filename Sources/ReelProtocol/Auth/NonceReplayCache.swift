import NIOCore
import Synchronization

/// Remembers client nonces for a window so a replayed `HELLO` is refused (§3).
///
/// Shared by every connection of one server, hence a mutex; entries older than the window are
/// pruned on insert, and the size is capped so a flood cannot grow it without bound (when
/// full, the oldest entries go first).
public final class NonceReplayCache: Sendable {
    private struct State {
        var seen: [String: Int64] = [:]
        var order: [(nonce: String, at: Int64)] = []
        var head = 0
    }

    private let state = Mutex(State())
    private let windowSeconds: Int64
    private let capacity: Int
    private let now: @Sendable () -> Int64

    /// - Parameters:
    ///   - windowSeconds: how long a nonce is remembered.
    ///   - capacity: most nonces kept.
    ///   - now: the clock in seconds (injected for tests).
    public init(windowSeconds: Int64 = ProtocolLimits.nonceReplayWindowSeconds, capacity: Int = 100_000,
                now: @escaping @Sendable () -> Int64 = { Int64(NIODeadline.now().uptimeNanoseconds / 1_000_000_000) }) {
        self.windowSeconds = windowSeconds
        self.capacity = capacity
        self.now = now
    }

    /// Records `nonce`; returns `false` if it was already seen within the window (a replay).
    public func insert(_ nonce: String) -> Bool {
        let time = now()
        return state.withLock { state in
            while state.head < state.order.count,
                  state.order[state.head].at + windowSeconds <= time || state.seen.count >= capacity {
                let old = state.order[state.head]
                if state.seen[old.nonce] == old.at { state.seen[old.nonce] = nil }
                state.head += 1
            }
            if state.head > 1024 && state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            if let at = state.seen[nonce], at + windowSeconds > time { return false }
            state.seen[nonce] = time
            state.order.append((nonce, time))
            return true
        }
    }
}
