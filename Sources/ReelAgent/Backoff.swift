/// Reconnect delays ("full jitter"): after the n-th failed attempt in a row, a delay drawn
/// uniformly from [0, min(initial · 2ⁿ⁻¹, maximum)). Agents that lost the coordinator together
/// (it restarted) spread their attempts over the whole window instead of arriving in lockstep,
/// and the first attempt comes within `initial`, with no floor under it.
///
/// A coordinator that refused because too many connections are authenticating at once
/// (`ERR too_many_connections`) is busy, not failing: `nextAfterBusy()` draws from
/// [0, `busyWindow`) and leaves the window of `next()` as it was, so a herd that meets the
/// limit comes back within about `busyWindow` instead of doubling its wait at every refusal.
///
/// `random` returns a fraction in [0, 1); tests inject their own. `jitterFloor` raises the
/// lowest delay of `next()` to that fraction of the window (0: full jitter; the result
/// upload's retries use ½, delays in [½·window, window)).
struct Backoff: Sendable {
    let initial: Duration
    let maximum: Duration
    let busyWindow: Duration
    /// The window the next `next()` draws from.
    private(set) var window: Duration
    let jitterFloor: Double
    private let random: @Sendable () -> Double

    init(initial: Duration, maximum: Duration, busyWindow: Duration = .seconds(1), jitterFloor: Double = 0,
         random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.initial = initial; self.maximum = max(initial, maximum); self.busyWindow = busyWindow
        self.jitterFloor = min(max(jitterFloor, 0), 1)
        self.window = initial
        self.random = random
    }

    /// The delay after a failed attempt; doubles the window for the next one, up to `maximum`.
    mutating func next() -> Duration {
        let delay = window * (jitterFloor + (1 - jitterFloor) * fraction())
        window = min(window * 2, maximum)
        return delay
    }

    /// The delay after `ERR too_many_connections`; the window of `next()` is left alone.
    func nextAfterBusy() -> Duration {
        busyWindow * fraction()
    }

    /// Back to `initial` after a successful connection.
    mutating func reset() { window = initial }

    /// `random()` clamped into [0, 1).
    private func fraction() -> Double {
        let value = random()
        return value.isFinite ? min(max(value, 0), 0.999_999) : 0
    }
}
