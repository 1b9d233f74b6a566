import ReelCore
import Testing
import ReelThreadTesting
import ReelScheduling
@testable import ReelLifecycleModel

/// The farm's cross-task rules, and a seeded random walk over every event checking that no
/// task is ever held by two live leases and none is lost.
@Suite(.blocking) struct FarmModelTests {
    @Test func aJobRunsItsTasksInOrderAndTheFinaliseLast() {
        var farm = FarmModel(leaseMillis: 30_000, graceMillis: 5_000)
        let job = farm.submit(chunks: 2, audio: true, maxAttempts: 3)
        var kinds: [TaskKind] = []
        while let (token, kind) = farm.claim(agent: 1, kinds: [.audio, .videoChunk], liveAgents: [1], now: 0) {
            kinds.append(kind)
            let completed = farm.complete(token, result: "r\(token.task)")
            #expect(completed == .success(false))
        }
        #expect(kinds == [.audio, .videoChunk, .videoChunk])
        #expect(farm.jobs[job]?.state == .running)
        let claimed = farm.claim(agent: 0, kinds: [.finalise], liveAgents: [0], now: 1)
        let (finalise, kind) = try! #require(claimed)
        #expect(kind == .finalise && farm.jobs[job]?.state == .finalising)
        let finished = farm.complete(finalise, result: "out")
        #expect(finished == .success(true))
        #expect(farm.jobs[job]?.state == .done && farm.isConsistent)
    }

    @Test func theFinaliseWaitsForEveryOtherTask() {
        var farm = FarmModel(leaseMillis: 30_000, graceMillis: 5_000)
        farm.submit(chunks: 1, audio: false, maxAttempts: 3)
        let claimed = farm.claim(agent: 0, kinds: [.finalise], liveAgents: [0], now: 0)
        #expect(claimed == nil)
    }

    @Test func pausedJobsAreSkippedAndHigherPriorityGoesFirst() throws {
        var farm = FarmModel(leaseMillis: 30_000, graceMillis: 5_000)
        let old = farm.submit(chunks: 2, audio: false, maxAttempts: 3)
        let urgent = farm.submit(chunks: 2, audio: false, maxAttempts: 3, priority: 10)
        func claimedJob() -> Int64? {
            farm.claim(agent: 1, kinds: [.videoChunk], liveAgents: [1], now: 0).map { farm.tasks[$0.lease.task]!.job }
        }
        #expect(claimedJob() == urgent)
        try farm.pause(job: urgent)
        #expect(claimedJob() == old)
        try farm.pause(job: old)
        #expect(claimedJob() == nil)
        try farm.resume(job: urgent)
        #expect(farm.jobs[urgent]?.state == .running && farm.jobs[urgent]?.paused == false)
        #expect(try farm.setPaused(job: urgent, false) == false, "resuming a running job changes nothing")
        try farm.cancel(job: old)
        var again = farm
        #expect(throws: JobLifecycle.Conflict.self) { try again.resume(job: old) }
    }

    @Test func aJobFailsOnlyAfterItsAttemptsSpanTheLiveAgents() {
        var farm = FarmModel(leaseMillis: 30_000, graceMillis: 5_000)
        let job = farm.submit(chunks: 1, audio: false, maxAttempts: 3)
        let first = farm.claim(agent: 1, kinds: [.videoChunk], liveAgents: [1, 2], now: 0)!.lease
        _ = farm.fail(first, message: "bad GPU")
        let refused = farm.claim(agent: 1, kinds: [.videoChunk], liveAgents: [1, 2], now: 1)
        #expect(refused == nil, "agent 1 already failed it")
        let second = farm.claim(agent: 2, kinds: [.videoChunk], liveAgents: [1, 2], now: 1)!.lease
        _ = farm.fail(second, message: "out of memory")
        let third = farm.claim(agent: 1, kinds: [.videoChunk], liveAgents: [1, 2], now: 2)!.lease
        let last = farm.fail(third, message: "bad GPU")
        #expect(last == .success(.exhausted))
        #expect(farm.jobs[job]?.state == .failed)
        #expect(farm.tasks(ofJob: job).allSatisfy { $0.lifecycle.state != .queued && $0.lifecycle.state != .leased })
    }

    /// Thousands of random event sequences: after every event the model is consistent, at most
    /// one of all the tokens ever handed out for a task is obeyed, and a task of an unfinished
    /// job is never failed or cancelled (nothing is lost).
    @Test func randomEventSequencesKeepOneLiveLeasePerTaskAndLoseNothing() throws {
        for seed in 0..<2_000 {
            var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
            var farm = FarmModel(leaseMillis: 3_000, graceMillis: 1_000)
            var now: Millis = 0
            var issued: [Lease] = []
            let agents: [Int64] = [1, 2, 3]
            var connected = Set(agents)
            for _ in 0..<(1 + rng.next() % 3) {
                farm.submit(chunks: Int(1 + rng.next() % 4), audio: rng.next() % 2 == 0, maxAttempts: Int(1 + rng.next() % 3),
                            priority: Int(rng.next() % 3))
            }
            for step in 0..<80 {
                now += Millis(rng.next() % 1_500)
                let agent = agents[Int(rng.next() % 3)]
                let token = issued.isEmpty ? nil : issued[Int(rng.next() % UInt64(issued.count))]
                let job = Int64(1 + rng.next() % UInt64(max(1, farm.jobs.count)))
                switch rng.next() % 13 {
                case 0, 1, 2:
                    if connected.contains(agent), let claimed = farm.claim(agent: agent, kinds: [.audio, .videoChunk], liveAgents: connected, now: now) {
                        issued.append(claimed.lease)
                    }
                case 3:
                    if let claimed = farm.claim(agent: 0, kinds: [.finalise], liveAgents: [0], now: now) { issued.append(claimed.lease) }
                case 4: if let token { _ = farm.heartbeat(token, now: now) }
                case 5, 6: if let token { _ = farm.complete(token, result: "r") }
                case 7: if let token { _ = farm.fail(token, message: "boom") }
                case 8: if let token { farm.release(token) }
                case 9: farm.expireLeases(now: now)
                case 10:
                    if connected.remove(agent) != nil { farm.disconnected(agent: agent, now: now) }
                    else { connected.insert(agent); issued += farm.reattach(agent: agent, now: now) }
                case 11: try? (rng.next() % 2 == 0 ? farm.pause(job: job) : farm.resume(job: job))
                default: try? (rng.next() % 2 == 0 ? farm.cancel(job: job) : farm.retry(job: job))
                }
                #expect(farm.isConsistent, "seed \(seed) step \(step)")
                for task in farm.tasks.values {
                    let obeyed = Set(issued.filter { $0.task == task.id && farm.refusesProgress($0) == nil }.map(\.epoch))
                    #expect(obeyed.count <= 1, "seed \(seed) step \(step): task \(task.id) obeys epochs \(obeyed)")
                    if task.lifecycle.state == .leased {
                        #expect(obeyed.count == 1, "seed \(seed) step \(step): leased task \(task.id) (epoch \(task.lifecycle.epoch), holder \(String(describing: task.lifecycle.holder))) obeys none of \(issued.filter { $0.task == task.id })")
                    }
                    let jobState = farm.jobs[task.job]!.state
                    if !jobState.isTerminal {
                        #expect(task.lifecycle.state != .failed && task.lifecycle.state != .cancelled,
                                "seed \(seed) step \(step): task \(task.id) \(task.lifecycle.state) in a \(jobState) job")
                    }
                }
            }
        }
    }
}
