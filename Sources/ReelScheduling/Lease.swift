/// Milliseconds since the Unix epoch, on the coordinator's clock (`FarmClock`). Every lease
/// decision takes `now` as an argument (an injected clock), so the rules are tested without waiting.
public typealias Millis = Int64

/// Proof of holding a task: the task, the fencing epoch it was claimed under, and the claiming
/// agent. Every holder operation (heartbeat, progress, result, fail, release) presents all
/// three; only the current triple is obeyed (the wire's `LOST` / `ERR stale_epoch` otherwise).
public struct Lease: Hashable, Sendable, CustomStringConvertible {
    public var task: Int64
    public var epoch: Int64
    public var agent: Int64

    public init(task: Int64, epoch: Int64, agent: Int64) {
        self.task = task; self.epoch = epoch; self.agent = agent
    }

    public var description: String { "task \(task) epoch \(epoch) agent \(agent)" }
}
