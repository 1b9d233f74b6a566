import Foundation
import ReelScheduling
import ReelStoreTesting
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelStore

/// The store against the pure model of issue 7 (`FarmModel`): seeded random sequences of
/// submits, claims by several agents (and the finaliser), results, failures, releases,
/// heartbeats, forced lease expiry, cancel, retry, pause, resume and priority changes are
/// applied to both, and after every step every task (state, attempts, epoch, holder) and job
/// (state, paused, priority) must agree, as must each operation's answer. No task is ever
/// held twice; none is lost. Times: leases are long and expiry is forced (the store's clock
/// is the wall clock, the model's is injected), so nothing here waits.
@Suite("JobStore matches the FarmModel over random event sequences", .blocking)
struct ModelBasedStoreTests {
    struct Mismatch: Error, CustomStringConvertible { var description: String }

    /// Sequences per test case; `REEL_MODEL_SEQUENCES` runs more (e.g. 10000) when hunting.
    static let sequencesPerCase = Int(ProcessInfo.processInfo.environment["REEL_MODEL_SEQUENCES"] ?? "") ?? 130

    /// 8 cases × `sequencesPerCase` sequences of 25 steps: 1,040 sequences (26,000 events) in CI.
    @Test("random sequences", arguments: 0..<8)
    func randomSequences(caseIndex: Int) throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agents = try (0..<3).map { try store.registerAgent(name: "agent-\($0)", host: "h", capabilities: "{}") }
        let finaliser = try store.registerAgent(name: "@coordinator", host: "h", capabilities: "{}")
        let checker = try schema.connect()
        for sequence in 0..<Self.sequencesPerCase {
            // A clean farm (agents stay): deleting jobs deletes their tasks, failures and events.
            try checker.query("DELETE FROM jobs")
            try checker.query("DELETE FROM events")
            try run(seed: caseIndex * 1_000_000 + sequence, steps: 25, store: store, schema: schema, checker: checker,
                    agents: agents, finaliser: finaliser)
        }
    }

    func run(seed: Int, steps: Int, store: JobStore, schema: TestDatabase.Schema, checker: PGConnection,
             agents: [Int64], finaliser: Int64) throws {
        var random = SplitMix64(seed: UInt64(seed))
        var model = FarmModel(leaseMillis: 1_000_000_000, graceMillis: 5_000)
        let live = Set(agents)
        // Model ids ↔ store ids (both assigned in the same order, but never assumed equal).
        var jobIDs: [Int64: Int64] = [:]     // model → store
        var taskIDs: [Int64: Int64] = [:]    // model → store
        var leases: [LeaseToken] = []        // model tokens handed out (some go stale)
        let storeKind: [ReelScheduling.TaskKind: JobTaskKind] = [.videoChunk: .videoChunk, .audio: .audio, .finalise: .finalise]

        func storeLease(_ token: LeaseToken) -> Lease { Lease(task: taskIDs[token.task]!, epoch: token.epoch, agent: token.agent) }
        func check(_ condition: Bool, _ what: @autoclosure () -> String, step: Int) throws {
            if !condition { throw Mismatch(description: "seed \(seed) step \(step): \(what())") }
        }

        for step in 0..<steps {
            let jobs = Array(jobIDs.keys).sorted()
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<8 where jobs.count < 6:
                let chunks = Int.random(in: 1...4, using: &random), audio = Bool.random(using: &random)
                let attempts = Int.random(in: 1...3, using: &random), priority = Int.random(in: 0...2, using: &random)
                let modelJob = model.submit(chunks: chunks, audio: audio, maxAttempts: attempts, priority: priority)
                var tasks = (0..<chunks).map { NewTask(kind: .videoChunk, ordinal: $0, frameStart: Int64($0 * 10), frameEnd: Int64($0 * 10 + 10),
                                                      spec: "", maxAttempts: attempts) }
                if audio { tasks.append(NewTask(kind: .audio, ordinal: 0, spec: "", maxAttempts: attempts)) }
                tasks.append(NewTask(kind: .finalise, ordinal: 0, spec: "", maxAttempts: attempts))
                let storeJob = try store.createJob(NewJob(composition: "{}", tasks: tasks, priority: priority))
                jobIDs[modelJob] = storeJob
                let records = try store.tasks(ofJob: storeJob)
                for task in model.tasks(ofJob: modelJob) {
                    let kind = storeKind[task.kind]!
                    taskIDs[task.id] = records.first { $0.kind == kind && $0.ordinal == task.ordinal }!.id
                }
            case 0..<40:
                let finalising = Int.random(in: 0..<5, using: &random) == 0
                let agent = finalising ? finaliser : agents[Int.random(in: 0..<agents.count, using: &random)]
                let kinds: Set<ReelScheduling.TaskKind> = finalising ? [.finalise] : [.videoChunk, .audio]
                let claimed = model.claim(agent: agent, kinds: kinds, liveAgents: finalising ? [finaliser] : live, now: 0)
                let stored = try store.claimTask(agent: agent, leaseSeconds: 1_000_000, kinds: Set(kinds.map { storeKind[$0]! }),
                                                 liveAgents: finalising ? [finaliser] : live)
                try check((claimed?.token.task).map { taskIDs[$0] } == stored?.id && claimed?.token.epoch == stored?.epoch,
                          "claim by \(agent): model \(String(describing: claimed)), store \(String(describing: stored.map { ($0.id, $0.epoch) }))",
                          step: step)
                if let claimed { leases.append(claimed.token) }
            case 40..<80 where !leases.isEmpty:
                let token = leases[Int.random(in: 0..<leases.count, using: &random)]
                let lease = storeLease(token)
                let storeRefused: Bool
                let modelRefused: Bool
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    modelRefused = (try? model.complete(token, result: "r").get()) == nil
                    storeRefused = (try? store.complete(lease, result: JobStoreTests.result(1))) == nil
                case 1:
                    modelRefused = (try? model.fail(token, message: "boom").get()) == nil
                    storeRefused = (try? store.fail(lease, message: "boom", policy: .off)) == nil
                case 2:
                    modelRefused = model.release(token) != nil
                    storeRefused = (try? store.release(lease)) == nil
                default:
                    modelRefused = (try? model.heartbeat(token, now: 1).get()) == nil
                    storeRefused = (try? store.renewLease(lease, leaseSeconds: 1_000_000)) == nil
                }
                try check(modelRefused == storeRefused, "holder operation on \(token): model refused \(modelRefused), store \(storeRefused)", step: step)
            case 80..<84:
                model.expireLeases(now: 1_000_000_000_000)
                try schema.connect().query("UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE state = 'leased'")
                _ = try store.expireLeases()
            case 84..<100 where !jobs.isEmpty:
                let job = jobs[Int.random(in: 0..<jobs.count, using: &random)]
                let storeJob = jobIDs[job]!
                let modelConflict: Bool, storeConflict: Bool
                switch Int.random(in: 0..<5, using: &random) {
                case 0:
                    modelConflict = (try? model.cancel(job: job)) == nil
                    storeConflict = (try? store.cancelJob(storeJob)) == nil
                case 1:
                    modelConflict = (try? model.retry(job: job)) == nil
                    storeConflict = (try? store.retryJob(storeJob)) == nil
                case 2 where model.jobs[job]?.state != .paused:
                    modelConflict = (try? model.pause(job: job)) == nil
                    storeConflict = (try? store.setPaused(storeJob, true)) == nil
                case 3 where model.jobs[job]?.state == .paused:
                    modelConflict = (try? model.resume(job: job)) == nil
                    storeConflict = (try? store.setPaused(storeJob, false)) == nil
                default:
                    let priority = Int.random(in: 0...3, using: &random)
                    let finished = model.jobs[job]!.state.isFinished
                    if !finished { model.setPriority(job: job, priority) }
                    modelConflict = finished
                    storeConflict = (try? store.setPriority(storeJob, priority)) == nil
                }
                try check(modelConflict == storeConflict, "job action on \(job): model conflict \(modelConflict), store \(storeConflict)", step: step)
            default:
                continue
            }

            // The whole state agrees (two queries for the whole farm).
            try check(model.isConsistent, "the model is inconsistent", step: step)
            var storeJobs: [Int64: (state: String, paused: Bool, priority: Int)] = [:]
            for row in try checker.query("SELECT id, state, paused, priority FROM jobs").rows {
                storeJobs[try row.int64("id")] = (try row.string("state"), try row.string("paused") == "t", try row.int("priority"))
            }
            var storeTasks: [Int64: (state: String, attempts: Int, epoch: Int64, owner: Int64?)] = [:]
            for row in try checker.query("SELECT id, state, attempts, epoch, lease_owner FROM tasks").rows {
                storeTasks[try row.int64("id")] = (try row.string("state"), try row.int("attempts"), try row.int64("epoch"),
                                                   try row.optionalInt64("lease_owner"))
            }
            for (modelJob, storeJob) in jobIDs {
                let lifecycle = model.jobs[modelJob]!
                let stored = storeJobs[storeJob]!
                let modelState = lifecycle.state == .paused ? lifecycle.pausedFrom! : lifecycle.state
                try check(stored.state == modelState.rawValue && stored.paused == (lifecycle.state == .paused) && stored.priority == lifecycle.priority,
                          "job \(modelJob): model \(lifecycle), store \(stored)", step: step)
            }
            for task in model.tasks.values {
                let stored = storeTasks[taskIDs[task.id]!]!
                let l = task.lifecycle
                try check(stored.state == l.state.rawValue && stored.attempts == l.attempts && stored.epoch == l.epoch && stored.owner == l.holder,
                          "task \(task.id) (\(task.kind) \(task.ordinal)): model \(l.state) attempts \(l.attempts) epoch \(l.epoch) "
                            + "holder \(String(describing: l.holder)), store \(stored)", step: step)
            }
        }
        for storeJob in jobIDs.values { try LockOrderTests.expectCountersMatchRows(schema, job: storeJob) }
    }
}
