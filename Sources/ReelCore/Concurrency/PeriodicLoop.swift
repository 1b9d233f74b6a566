/// The loop of every periodic service: a pass, a pause of `interval`, a pass… until the task
/// running it is cancelled (the coordinator's heartbeat, lease reaper and storage sweeper wrap it
/// in `cancelWhenGracefulShutdown`; a finalise's lease renewal and the console's live feed are
/// tasks cancelled when done). A pass always runs to its end; cancellation ends the pause at once
/// and no pass starts after it.
public struct PeriodicLoop<C: Clock>: Sendable where C.Duration == Duration {
    public var interval: Duration
    /// Whether the first pass waits an interval (a heartbeat: the start itself said "alive").
    public var pauseFirst: Bool
    public var clock: C

    public init(every interval: Duration, pauseFirst: Bool = false, clock: C) {
        self.interval = interval; self.pauseFirst = pauseFirst; self.clock = clock
    }

    /// Runs `pass` until the task is cancelled.
    public func run(_ pass: () async -> Void) async {
        if pauseFirst { await pause() }
        while !Task.isCancelled {
            await pass()
            await pause()
        }
    }

    private func pause() async {
        try? await clock.sleep(for: interval)
    }
}

extension PeriodicLoop where C == ContinuousClock {
    public init(every interval: Duration, pauseFirst: Bool = false) {
        self.init(every: interval, pauseFirst: pauseFirst, clock: ContinuousClock())
    }
}
