import Foundation
import ReelCore
import ReelLifecycleModel
import ReelScheduling
import ReelStoreTesting
import ReelThreadTesting
import Testing
@testable import ReelStore

/// The store held to the independent model of the lifecycle (`FarmModel`): seeded random
/// sequences of events are applied to both, the store always through the entry points
/// production calls — the dispatcher's and finaliser's claims, heartbeats and progress,
/// the `Completer`'s batched completion, `FAIL`, `RELEASE`, the coordinator's connection-closed
/// path (`agentDisconnected`, with the reconnect grace) and a reconnect (`CAPS`, then
/// heartbeats), the reaper's expiry by the injected `FarmClock`, the finaliser's damaged-result
/// re-queue, the operator's cancel, retry, pause, resume and priority, a job's budget being
/// set and the budget service's pass, and an asset arriving for a waiting job. After every step
/// every task (state, attempts, epoch, holder, lease end, the agents that failed it) and job
/// (state, paused and why, priority) must agree, as must each operation's answer.
///
/// The model keeps no agent time, so budgets here are ones whose verdict does not depend on
/// what was spent: none left (0: 100 % whatever was spent, so paused and running chunks handed
/// back) or more than any sequence spends (1,000,000 agent-hours: resumes a job its budget
/// paused). `BudgetTests` holds the thresholds in between to their figures. The test writes nothing to the database itself: it only reads.
@Suite("The store matches the lifecycle model over random event sequences", .database, .blocking)
struct ModelBasedStoreTests {
    struct Mismatch: Error, CustomStringConvertible { var description: String }

    /// Sequences per test case; `REEL_MODEL_SEQUENCES` runs more (e.g. 10000) when hunting.
    static let sequencesPerCase = Int(ProcessInfo.processInfo.environment["REEL_MODEL_SEQUENCES"] ?? "") ?? 80

    static let leaseMillis: Int64 = 10_000
    static let graceMillis: Int64 = 3_000

    /// 8 cases × `sequencesPerCase` sequences of 40 steps: 640 sequences (25,600 events) in CI;
    /// long enough for jobs to reach their finalise task and its damaged-result path.
    @Test("random sequences", arguments: 0..<8)
    func randomSequences(caseIndex: Int) throws {
        let schema = try TestDatabase.Schema()
        let clock = ManualClock()
        let store = try schema.store(clock: clock.farmClock)
        let checker = try schema.connect()
        for sequence in 0..<Self.sequencesPerCase {
            var run = try Run(seed: caseIndex * 1_000_000 + sequence, store: store, checker: checker, clock: clock)
            try run.run(steps: 40)
        }
    }

    /// One random sequence on a farm emptied through the production entry points (cancel, then
    /// delete, every job left by the previous sequence).
    struct Run {
        let seed: Int
        let store: FarmStore
        let checker: PGConnection
        let clock: ManualClock
        var random: SplitMix64
        var model = FarmModel(leaseMillis: ModelBasedStoreTests.leaseMillis, graceMillis: ModelBasedStoreTests.graceMillis)
        /// The render agents, the finaliser, and which render agents are connected.
        var agents: [Int64] = []
        var finaliser: Int64 = 0
        var connected: Set<Int64> = []
        /// Model ids ↔ store ids (assigned in the same order, but never assumed equal).
        var jobIDs: [Int64: Int64] = [:]
        var taskIDs: [Int64: Int64] = [:]
        /// Leases handed out (in model ids; some go stale).
        var leases: [Lease] = []
        /// Jobs created waiting for an asset not yet stored: model job → asset hash.
        var waiting: [Int64: String] = [:]
        var step = 0

        init(seed: Int, store: FarmStore, checker: PGConnection, clock: ManualClock) throws {
            self.seed = seed; self.store = store; self.checker = checker; self.clock = clock
            random = SplitMix64(seed: UInt64(seed))
            for job in try store.jobs.recent(limit: 1000) {
                if !job.state.isTerminal { try store.lifecycle.cancel(job: job.id) }
                _ = try store.jobs.delete(job.id)
            }
            agents = try (0..<3).map { try store.agents.register(name: "agent-\($0)", host: "h", capabilities: "{}") }
            finaliser = try store.agents.register(name: "@coordinator", host: "h", capabilities: "{}")
            connected = Set(agents)
        }

        var now: Int64 { clock.nowMillis }

        func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
            if !condition { throw Mismatch(description: "seed \(seed) step \(step): \(what())") }
        }

        func storeLease(_ lease: Lease) -> Lease { Lease(task: taskIDs[lease.task]!, epoch: lease.epoch, agent: lease.agent) }

        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

        /// Leases whose holder can still speak: a connected render agent, or the finaliser.
        var speakingLeases: [Lease] { leases.filter { connected.contains($0.agent) || $0.agent == finaliser } }

        mutating func run(steps: Int) throws {
            for step in 0..<steps {
                self.step = step
                if Int.random(in: 0..<3, using: &random) == 0 { clock.advance(millis: Int64.random(in: 0...6_000, using: &random)) }
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<8 where jobIDs.count < 6: try submit()
                case 8..<32: try claim()
                case 32..<46 where !speakingLeases.isEmpty: try completeBatch()
                case 46..<64 where !speakingLeases.isEmpty: try holderOperation()
                case 64..<69: try expire()
                case 69..<75: try disconnectOrReconnect()
                case 75..<81 where leases.contains(where: { $0.agent == finaliser }): try damagedResults()
                case 81..<84 where !waiting.isEmpty: try assetArrives()
                case 84..<100 where !jobIDs.isEmpty: try operatorAction()
                default: continue
                }
                try compare()
            }
        }

        mutating func submit() throws {
            let chunks = Int.random(in: 1...3, using: &random), audio = Bool.random(using: &random)
            let attempts = Int.random(in: 1...3, using: &random), priority = Int.random(in: 0...2, using: &random)
            let waits = Int.random(in: 0..<4, using: &random) == 0
            let modelJob = model.submit(chunks: chunks, audio: audio, maxAttempts: attempts, priority: priority, waitingForAssets: waits)
            var tasks = (0..<chunks).map { NewTask(kind: .videoChunk, ordinal: $0, frameStart: Int64($0 * 10), frameEnd: Int64($0 * 10 + 10),
                                                  spec: "", maxAttempts: attempts) }
            if audio { tasks.append(NewTask(kind: .audio, ordinal: 0, spec: "", maxAttempts: attempts)) }
            tasks.append(NewTask(kind: .finalise, ordinal: 0, spec: "", maxAttempts: attempts))
            // A job waiting for its assets reads one never stored before.
            let hex = String(UInt64(seed) &* 1_000 &+ UInt64(modelJob), radix: 16)
            let asset = String(repeating: "0", count: 64 - hex.count) + hex
            let storeJob = try store.jobs.create(NewJob(composition: "{}", tasks: tasks, assets: waits ? [asset] : [],
                                                        waitingForAssets: waits, priority: priority))
            if waits { waiting[modelJob] = asset }
            jobIDs[modelJob] = storeJob
            let records = try store.jobs.tasks(ofJob: storeJob)
            for task in model.tasks(ofJob: modelJob) {
                taskIDs[task.id] = records.first { $0.kind == task.kind && $0.ordinal == task.ordinal }!.id
            }
        }

        /// A claim by a connected render agent (the dispatcher) or by the finaliser.
        mutating func claim() throws {
            let finalising = Int.random(in: 0..<5, using: &random) == 0
            guard finalising || !connected.isEmpty else { return }
            let agent = finalising ? finaliser : pick(connected.sorted())
            let kinds: Set<TaskKind> = finalising ? [.finalise] : TaskKind.renderKinds
            let live: Set<Int64> = finalising ? [finaliser] : connected
            let claimed = model.claim(agent: agent, kinds: kinds, liveAgents: live, now: now)
            let stored = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: agent)], leaseSeconds: Double(ModelBasedStoreTests.leaseMillis) / 1000,
                                                        kinds: kinds, liveAgents: live)[0]
            try check((claimed?.lease.task).map { taskIDs[$0] } == stored?.id && claimed?.lease.epoch == stored?.epoch,
                      "claim by \(agent): model \(String(describing: claimed)), store \(String(describing: stored.map { ($0.id, $0.epoch) }))")
            if let claimed { leases.append(claimed.lease) }
        }

        /// Results in one batch (the `Completer`): fresh, stale and repeated leases together.
        mutating func completeBatch() throws {
            let batch = (0..<Int.random(in: 1...4, using: &random)).map { _ in pick(speakingLeases) }
            let expected = model.complete(batch.map { (lease: $0, result: "r") })
            let answers = try store.lifecycle.completeTasks(batch.map { (storeLease($0), JobStoreTests.result(1)) })
            for (index, (modelAnswer, storeAnswer)) in zip(expected, answers).enumerated() {
                try check((try? modelAnswer.get()) == storeAnswer?.jobDone,
                          "batch item \(index) \(batch[index]): model \(modelAnswer), store \(String(describing: storeAnswer))")
            }
        }

        mutating func holderOperation() throws {
            let lease = pick(speakingLeases)
            let stored = storeLease(lease)
            let modelRefused: Bool, storeRefused: Bool
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 5:
                modelRefused = (try? model.complete(lease, result: "r").get()) == nil
                storeRefused = (try? store.lifecycle.complete(stored, result: JobStoreTests.result(1))) == nil
            case 1:
                modelRefused = (try? model.fail(lease, message: "boom").get()) == nil
                storeRefused = (try? store.lifecycle.fail(stored, message: "boom", policy: .off)) == nil
            case 2:
                modelRefused = model.release(lease) != nil
                storeRefused = (try? store.lifecycle.release(stored)) == nil
            case 3:
                modelRefused = model.refusesProgress(lease) != nil
                storeRefused = (try? store.lifecycle.recordProgress(stored, frames: 3)) == nil
            default:
                let renewed = model.heartbeat(lease, now: now)
                let storeRenewed = try? store.lifecycle.renew(stored, leaseSeconds: Double(ModelBasedStoreTests.leaseMillis) / 1000)
                try check((try? renewed.get()) == storeRenewed, "heartbeat of \(lease): model \(renewed), store \(String(describing: storeRenewed))")
                return
            }
            try check(modelRefused == storeRefused, "holder operation on \(lease): model refused \(modelRefused), store \(storeRefused)")
        }

        /// The reaper's pass, by the clock.
        mutating func expire() throws {
            let expected = Set(model.expireLeases(now: now).map { taskIDs[$0]! })
            let expired = Set(try store.lifecycle.expireLeases().map(\.task))
            try check(expected == expired, "expiry at \(now): model \(expected.sorted()), store \(expired.sorted())")
        }

        /// An agent's last connection closes (its leases end within the grace), or it comes back:
        /// `CAPS` registers it again and it heartbeats every lease it holds.
        mutating func disconnectOrReconnect() throws {
            let agent = pick(agents)
            if connected.remove(agent) != nil {
                model.disconnected(agent: agent, now: now)
                try store.lifecycle.agentDisconnected(agent, graceSeconds: Double(ModelBasedStoreTests.graceMillis) / 1000)
            } else {
                connected.insert(agent)
                _ = try store.agents.register(name: "agent-\(agents.firstIndex(of: agent)!)", host: "h", capabilities: "{}")
                for lease in leases where lease.agent == agent {
                    let renewed = model.heartbeat(lease, now: now)
                    let storeRenewed = try? store.lifecycle.renew(storeLease(lease), leaseSeconds: Double(ModelBasedStoreTests.leaseMillis) / 1000)
                    try check((try? renewed.get()) == storeRenewed, "reattaching \(lease): model \(renewed), store \(String(describing: storeRenewed))")
                }
            }
        }

        /// The finaliser finds some stored results of its job damaged (and names a task of
        /// another job, which must be left alone).
        mutating func damagedResults() throws {
            // Mostly under the finalise lease that holds (a stale one changes nothing).
            let finaliseLeases = leases.filter { $0.agent == finaliser }
            let live = finaliseLeases.filter { model.refusesProgress($0) == nil }
            let lease = pick(live.isEmpty || Int.random(in: 0..<4, using: &random) == 0 ? finaliseLeases : live)
            let job = model.tasks[lease.task]!.job
            var damaged = model.tasks(ofJob: job).filter { !$0.kind.completesJob && Bool.random(using: &random) }.map(\.id)
            if let other = model.tasks.values.first(where: { $0.job != job && $0.lifecycle.state == .done && !$0.kind.completesJob }) {
                damaged.append(other.id)
            }
            let modelRefusal = model.resultsDamaged(finalise: lease, tasks: damaged)
            let storeRefused = (try? store.lifecycle.requeueDamagedResults(finalise: storeLease(lease), tasks: damaged.map { taskIDs[$0]! },
                                                                          reason: "damaged")) == nil
            try check((modelRefusal != nil) == storeRefused, "damaged results under \(lease): model \(String(describing: modelRefusal)), store refused \(storeRefused)")
        }

        /// The last asset of a waiting job is stored (`PUT` completing): the job is queued.
        mutating func assetArrives() throws {
            let job = pick(waiting.keys.sorted())
            let asset = waiting.removeValue(forKey: job)!
            let wasWaiting = model.jobs[job]!.state == .waiting
            model.assetsArrived(job: job)
            let released = try store.assets.stored(sha256: asset, size: 1, storedKey: "assets/\(asset)")
            try check(released == (wasWaiting ? [jobIDs[job]!] : []), "asset of job \(job) (waiting: \(wasWaiting)): store released \(released)")
        }

        mutating func operatorAction() throws {
            let job = pick(jobIDs.keys.sorted())
            let storeJob = jobIDs[job]!
            let modelAnswer: String, storeAnswer: String
            func answer(_ body: () throws -> Bool) -> String { (try? body()).map { "\($0)" } ?? "conflict" }
            switch Int.random(in: 0..<7, using: &random) {
            case 0:
                modelAnswer = answer { try model.cancel(job: job); return true }
                storeAnswer = answer { try store.lifecycle.cancel(job: storeJob); return true }
            case 1:
                modelAnswer = answer { try model.retry(job: job); return true }
                storeAnswer = answer { try store.lifecycle.retry(job: storeJob); return true }
            case 2, 3:
                let paused = Bool.random(using: &random)
                modelAnswer = answer { try model.setPaused(job: job, paused) }
                storeAnswer = answer { try store.lifecycle.setPaused(job: storeJob, paused) }
            case 5:
                let budget = JobBudget(amount: Bool.random(using: &random) ? 0 : 1_000_000, unit: .agentHours)
                let modelVerdict: JobBudget.Verdict? = try? model.setBudget(job: job, budget.limit, spent: 0)
                modelAnswer = modelVerdict?.rawValue ?? "conflict"
                storeAnswer = (try? store.lifecycle.setBudget(job: storeJob, budget))?.verdict.rawValue ?? "conflict"
            case 6:
                // The budget service's pass over every job with a budget that has not ended.
                for id in model.jobs.keys.sorted() where model.jobs[id]!.budget != nil { model.applyBudget(job: id, spent: 0) }
                _ = try store.lifecycle.enforceBudgets()
                return
            default:
                let priority = Int.random(in: 0...3, using: &random)
                modelAnswer = answer { try model.setPriority(job: job, priority); return true }
                storeAnswer = answer { try store.lifecycle.setPriority(job: storeJob, priority); return true }
            }
            try check(modelAnswer == storeAnswer, "job action on \(job): model \(modelAnswer), store \(storeAnswer)")
        }

        /// The whole state agrees (three reads for the whole farm).
        func compare() throws {
            try check(model.isConsistent, "the model is inconsistent")
            var storeJobs: [Int64: (state: String, paused: Bool, reason: String?, priority: Int)] = [:]
            for row in try checker.query("SELECT id, state, paused, pause_reason, priority FROM jobs").rows {
                storeJobs[try row.int64("id")] = (try row.string("state"), try row.bool("paused"), row["pause_reason"], try row.int("priority"))
            }
            var storeTasks: [Int64: (state: String, attempts: Int, epoch: Int64, owner: Int64?, ends: Int64?)] = [:]
            for row in try checker.query("""
                SELECT id, state, attempts, epoch, lease_owner, (extract(epoch FROM lease_expires_at) * 1000)::bigint AS ends FROM tasks
                """).rows {
                storeTasks[try row.int64("id")] = (try row.string("state"), try row.int("attempts"), try row.int64("epoch"),
                                                   try row.optionalInt64("lease_owner"), try row.optionalInt64("ends"))
            }
            var failedBy: [Int64: Set<Int64>] = [:]
            for row in try checker.query("SELECT task_id, agent_id FROM task_failures").rows {
                failedBy[try row.int64("task_id"), default: []].insert(try row.int64("agent_id"))
            }
            for (modelJob, storeJob) in jobIDs {
                let lifecycle = model.jobs[modelJob]!
                let stored = storeJobs[storeJob]!
                try check(stored.state == lifecycle.state.rawValue && stored.paused == lifecycle.paused
                            && stored.reason == lifecycle.pauseReason?.rawValue && stored.priority == lifecycle.priority,
                          "job \(modelJob): model \(lifecycle), store \(stored)")
            }
            for task in model.tasks.values {
                let id = taskIDs[task.id]!
                let stored = storeTasks[id]!
                let l = task.lifecycle
                try check(stored.state == l.state.rawValue && stored.attempts == l.attempts && stored.epoch == l.epoch && stored.owner == l.holder
                            && stored.ends == l.leaseEnd(graceMillis: ModelBasedStoreTests.graceMillis),
                          "task \(task.id) (\(task.kind) \(task.ordinal)): model \(l.state) attempts \(l.attempts) epoch \(l.epoch) "
                            + "holder \(String(describing: l.holder)) ends \(String(describing: l.leaseEnd(graceMillis: ModelBasedStoreTests.graceMillis))), "
                            + "store \(stored)")
                try check(failedBy[id, default: []] == Set(l.failedAgents), "task \(task.id) failed by: model \(l.failedAgents), store \(failedBy[id, default: []])")
            }
        }
    }

    @Test("every sequence leaves each job's counters equal to a recount of its tasks")
    func countersFollowTheLifecycle() throws {
        let schema = try TestDatabase.Schema()
        let clock = ManualClock()
        let store = try schema.store(clock: clock.farmClock)
        var sequence = try Run(seed: 4242, store: store, checker: try schema.connect(), clock: clock)
        try sequence.run(steps: 200)
        for job in sequence.jobIDs.values { try LockOrderTests.expectCountersMatchRows(schema, job: job) }
    }
}
