import Foundation
import Logging
import ReelStore
import ReelScheduling
import Synchronization

/// Hands tasks to waiting `CLAIM`s (proto/PROTOCOL.md §4.2) without polling the database per
/// agent: claims queue here, and one loop leases tasks to the whole queue in batches, one
/// transaction per batch (`LifecycleStore.claimTasks`), first come first served.
///
/// The loop runs when a claim arrives and when something may have made a task claimable
/// (`wake()`: a job planned, a task failed or was released, leases expired, a job retried,
/// resumed or re-prioritised). When a batch leaves claims unserved because nothing is
/// claimable for them, the loop sleeps until the next wake; the coordinator's reaper also wakes
/// it once per pass, as a safety net for a wake nobody sent. When it leaves them unserved
/// because tasks it chose were gone by the time it leased them (`ClaimBatch.lost`: another
/// coordinator on the same database leased them first, or a cancel holds them locked), the
/// farm changed under it and nothing else would wake it, so it runs again at once; after the
/// first such retry it waits a few milliseconds more each time (up to `maximumContentionPause`),
/// so a cancel holding thousands of tasks locked is not read again and again while it commits.
///
/// A claim ends with a task, or `nil` at its deadline, when its connection closes, or when
/// the coordinator drains. Deadlines are kept here, not in the database: `runDeadlines` sleeps
/// until the earliest one, and a batch that leaves a claim with a sooner deadline waiting wakes it. A task leased in a batch to a claim that ended meanwhile (its
/// connection closed while the batch ran) is handed back un-attempted (`LifecycleStore.release`),
/// so a closed connection never uses up an attempt.
final class Dispatcher: Sendable {
    struct Waiter {
        let id: UInt64
        let connection: UInt64
        let agent: Int64
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<ClaimedTask?, Never>
        /// Part of the batch being claimed right now.
        var inBatch = false
        /// Answered `nil` while in a batch: a task the batch leases to it goes back.
        var ended = false
    }

    private struct State {
        var order: [UInt64] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        var running = false
        var wokenDuringBatch = false
        var draining = false
        /// When `runDeadlines` wakes next (nil: when rung).
        var nextDeadlineCheck: ContinuousClock.Instant?

        /// The earliest deadline `runDeadlines` must answer (claims in a batch are the batch's).
        var soonestDeadline: ContinuousClock.Instant? {
            waiters.values.filter { !$0.ended && !$0.inBatch }.map(\.deadline).min()
        }

        /// After claims left a batch unanswered: whether `runDeadlines` must wake sooner.
        mutating func deadlineCheckNeededSooner() -> Bool {
            guard let soonest = soonestDeadline, nextDeadlineCheck.map({ soonest < $0 }) ?? true else { return false }
            nextDeadlineCheck = soonest
            return true
        }
    }

    /// Leases tasks to a batch of claims: `LifecycleStore.claimBatch` on the dispatcher's store
    /// worker (tests give their own).
    typealias Claimer = @Sendable (_ requests: [ClaimRequest], _ kinds: Set<TaskKind>, _ liveAgents: Set<Int64>,
                                   _ encoders: AgentEncoders) async throws -> ClaimBatch
    /// Hands a leased task back un-attempted: `LifecycleStore.release`.
    typealias Releaser = @Sendable (_ lease: Lease) async throws -> Void

    /// The longest pause between batches that keep losing their tasks to other claimers.
    static let maximumContentionPause = Duration.milliseconds(50)

    private let state = Mutex(State())
    private let claimer: Claimer
    private let release: Releaser
    private let maxBatch: Int
    private let metrics: CoordinatorMetrics?
    private let agents: AgentSessions
    private let logger: Logger
    private let clock = ContinuousClock()
    /// Rung when a claim left waiting by a batch has a deadline before `runDeadlines`'s next wake.
    private let deadlineBell = Doorbell()

    /// - Parameter agents: the agents connected now and their encoders (for `ClaimPolicy`: who
    ///   may take what, and the "another agent could take it" rule).
    /// The kinds agents claim: render tasks, and finalise tasks too when the storage is an
    /// object store (only agents with `TaskKind.finaliseCapability` get those).
    private let kinds: Set<TaskKind>

    convenience init(worker: StoreWorker, leaseSeconds: Double, maxBatch: Int = 256, logger: Logger, agents: AgentSessions,
                     agentsFinalise: Bool = false, metrics: CoordinatorMetrics? = nil) {
        self.init(maxBatch: maxBatch, logger: logger, agents: agents, agentsFinalise: agentsFinalise, metrics: metrics,
                  release: { lease in try await worker.run { try $0.lifecycle.release(lease) } }) { requests, kinds, live, encoders in
            try await worker.run { try $0.lifecycle.claimBatch(for: requests, leaseSeconds: leaseSeconds, kinds: kinds,
                                                             liveAgents: live, encoders: encoders) }
        }
    }

    init(maxBatch: Int = 256, logger: Logger, agents: AgentSessions, agentsFinalise: Bool = false,
         metrics: CoordinatorMetrics? = nil, release: @escaping Releaser, claimer: @escaping Claimer) {
        self.claimer = claimer; self.release = release; self.maxBatch = max(1, maxBatch)
        self.logger = logger; self.agents = agents; self.metrics = metrics
        self.kinds = agentsFinalise ? Set(TaskKind.allCases) : TaskKind.renderKinds
    }

    /// Number of claims waiting (metrics, tests).
    var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Waits up to `wait` for a task for `agent` on `connection`; nil when none came.
    func claim(agent: Int64, connection: UInt64, wait: Duration) async -> ClaimedTask? {
        let deadline = clock.now + wait
        return await withCheckedContinuation { continuation in
            let accepted = state.withLock { s -> Bool in
                guard !s.draining else { return false }
                s.nextID += 1
                s.waiters[s.nextID] = Waiter(id: s.nextID, connection: connection, agent: agent, deadline: deadline,
                                             continuation: continuation)
                s.order.append(s.nextID)
                return true
            }
            guard accepted else { return continuation.resume(returning: nil) }
            // Every claim goes through a batch first; one it leaves waiting is timed from there.
            kick()
        }
    }

    /// Something may have become claimable: run a batch if claims are waiting.
    func wake() {
        kick()
    }

    /// The connection closed: its pending claims end (answered nil; nobody reads the answer).
    func connectionClosed(_ connection: UInt64) {
        end { $0.connection == connection }
    }

    /// The agent was asked to drain (`reel drain`, here or through another coordinator): its
    /// connections here are marked draining, and its pending claims end now (answered nil; the
    /// handler then says `DRAIN`).
    func drainAgent(_ agent: Int64) {
        if agents.drain(agent: agent) { end { $0.agent == agent } }
    }

    /// Ends claims whose deadline has passed. A claim in the batch being leased right now is
    /// left to the batch: if it gets a task it is answered with it (late, rather than leasing
    /// and handing back), else with nil (the batch checks deadlines as it ends).
    func expireDeadlines() {
        let now = clock.now
        end { $0.deadline <= now && !$0.inBatch }
    }

    /// Answers each claim at its deadline, until cancelled: sleeps until the earliest deadline
    /// of the claims waiting (or until a claim with an earlier one arrives), then ends those due.
    func runDeadlines() async {
        while !Task.isCancelled {
            expireDeadlines()
            let next = state.withLock { s -> ContinuousClock.Instant? in
                s.nextDeadlineCheck = s.soonestDeadline
                return s.nextDeadlineCheck
            }
            // With no claim waiting, only a batch leaving one waiting (which rings) ends the wait.
            await deadlineBell.wait(upTo: next.map { $0 - clock.now } ?? .seconds(3600))
        }
    }

    /// Graceful shutdown: every pending claim answers nil now, later ones at once.
    func drain() {
        state.withLock { $0.draining = true }
        end { _ in true }
    }

    // MARK: The batch loop

    private func end(where matches: (Waiter) -> Bool) {
        let ended = state.withLock { s -> [CheckedContinuation<ClaimedTask?, Never>] in
            var out: [CheckedContinuation<ClaimedTask?, Never>] = []
            for id in s.order {
                guard var waiter = s.waiters[id], !waiter.ended, matches(waiter) else { continue }
                out.append(waiter.continuation)
                if waiter.inBatch {
                    waiter.ended = true
                    s.waiters[id] = waiter
                } else {
                    s.waiters[id] = nil
                }
            }
            s.order.removeAll { s.waiters[$0] == nil }
            return out
        }
        for continuation in ended { continuation.resume(returning: nil) }
    }

    private func kick() {
        let start = state.withLock { s -> Bool in
            if s.running { s.wokenDuringBatch = true; return false }
            guard !s.waiters.isEmpty else { return false }
            s.running = true
            return true
        }
        if start { Task { await self.runBatches() } }
    }

    private func runBatches() async {
        // Batches in a row that lost tasks to other claimers.
        var contended = 0
        while true {
            let batch = state.withLock { s -> [Waiter] in
                s.wokenDuringBatch = false
                var batch: [Waiter] = []
                for id in s.order where batch.count < maxBatch {
                    guard var waiter = s.waiters[id], !waiter.ended else { continue }
                    waiter.inBatch = true
                    s.waiters[id] = waiter
                    batch.append(waiter)
                }
                if batch.isEmpty { s.running = false }
                return batch
            }
            if batch.isEmpty { return }

            let requests = batch.map { ClaimRequest(agent: $0.agent) }
            // One snapshot: the agents connected now are those whose encoders it lists.
            let encoders = agents.encoders, live = Set(encoders.byAgent.keys)
            let results: [ClaimedTask?]
            var failed = false
            var lost = 0
            do {
                let leased = try await claimer(requests, kinds, live, encoders)
                results = leased.tasks
                lost = leased.lost
            } catch {
                logger.error("claim batch failed", metadata: ["claims": "\(batch.count)", "error": "\(error)"])
                results = batch.map { _ in nil }
                failed = true
            }
            if lost > 0 { metrics?.claimsContended.increment(by: lost) }

            var unwanted: [ClaimedTask] = []
            var answers: [(CheckedContinuation<ClaimedTask?, Never>, ClaimedTask)] = []
            var expired: [CheckedContinuation<ClaimedTask?, Never>] = []
            var soonerDeadline = false
            let again = state.withLock { s -> Bool in
                for (waiter, result) in zip(batch, results) {
                    guard var current = s.waiters[waiter.id] else { continue }
                    if current.ended {
                        s.waiters[waiter.id] = nil
                        if let result { unwanted.append(result) }
                    } else if let result {
                        s.waiters[waiter.id] = nil
                        answers.append((current.continuation, result))
                    } else if current.deadline <= clock.now {
                        // Its deadline passed while the batch ran, and the batch had nothing for it.
                        s.waiters[waiter.id] = nil
                        expired.append(current.continuation)
                    } else {
                        current.inBatch = false
                        s.waiters[waiter.id] = current
                    }
                }
                s.order.removeAll { s.waiters[$0] == nil }
                soonerDeadline = s.deadlineCheckNeededSooner()
                // Everyone in the batch served: more may be claimable for those still waiting.
                // Tasks lost to another claimer: others are claimable, or will be once it commits.
                let servedAll = !failed && results.allSatisfy { $0 != nil }
                if (servedAll || lost > 0 || s.wokenDuringBatch) && !s.waiters.isEmpty { return true }
                s.running = false
                return false
            }
            if soonerDeadline { deadlineBell.ring() }
            for (continuation, task) in answers { continuation.resume(returning: task) }
            for continuation in expired { continuation.resume(returning: nil) }
            if !unwanted.isEmpty { await handBack(unwanted) }
            if !again { return }
            if failed { try? await Task.sleep(for: .milliseconds(200)) }
            contended = lost > 0 ? contended + 1 : 0
            if contended > 1 {
                // 1, 2, 4 … ms, at most `maximumContentionPause`.
                try? await Task.sleep(for: min(.milliseconds(1 << min(contended - 2, 16)), Self.maximumContentionPause))
            }
        }
    }

    /// Tasks leased to claims that ended during their batch go back un-attempted.
    private func handBack(_ tasks: [ClaimedTask]) async {
        for task in tasks {
            do {
                try await release(task.lease)
                logger.info("claim ended before its task was sent; task handed back", metadata: ["task": "\(task.id)"])
            } catch {
                logger.warning("could not hand back a task whose claim ended", metadata: ["task": "\(task.id)", "error": "\(error)"])
            }
        }
        kick()
    }
}
