import ReelStoreTesting
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling
import ReelCore

/// Work that must happen once, done by two coordinators' stores (two connections) on one
/// database at the same moment (docs/task-lifecycle.md, "Several coordinators"): each race
/// is run on real threads, and whatever the interleaving, the work is done exactly once.
@Suite("Several coordinators on one database", .database, .blocking)
struct SeveralCoordinatorsStoreTests {
    /// Two stores on one schema, sharing one clock.
    static func twoStores(_ schema: TestDatabase.Schema, clock: FarmClock = .wall) throws -> [FarmStore] {
        [try schema.store(clock: clock), try schema.store(clock: clock)]
    }

    @Test("two coordinators' reapers expiring the same leases at once expire each lease once")
    func leasesExpireOnce() throws {
        let schema = try TestDatabase.Schema()
        let clock = AdjustableClock()
        let stores = try Self.twoStores(schema, clock: clock.farmClock)
        let agent = try stores[0].agents.register(name: "a1", host: "h", capabilities: "{}")
        var jobs: [Int64] = []
        for _ in 0..<4 { jobs.append(try stores[0].jobs.create(JobStoreTests.job(chunks: 3, audio: false))) }
        var leased = 0
        while try stores[0].lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]) != nil { leased += 1 }
        #expect(leased == 12)
        clock.advance(seconds: 31)

        let expired = Collector<ExpiredLease>()
        onThreads(2) { index in
            do { expired.append(contentsOf: try stores[index].lifecycle.expireLeases()) } catch { Issue.record("expireLeases: \(error)") }
        }
        #expect(expired.values.count == 12, "each lease expired by exactly one of the two")
        #expect(Set(expired.values.map(\.task)).count == 12)
        var events = 0
        for job in jobs { events += try stores[0].events.list(job: job, after: 0).filter { $0.kind == "lease_expired" }.count }
        #expect(events == 12, "one lease_expired event per lease")
        for job in jobs {
            let tasks = try stores[0].jobs.tasks(ofJob: job).filter { $0.kind == .videoChunk }
            #expect(tasks.allSatisfy { $0.state == .queued && $0.attempts == 1 }, "re-queued once, one attempt used")
        }
    }

    @Test("a claim batch whose chosen tasks another coordinator holds says it lost them, and leases others next time")
    func claimBatchReportsTasksLostToAnotherClaimer() throws {
        let schema = try TestDatabase.Schema()
        let stores = try Self.twoStores(schema)
        let agents = try (1...2).map { try stores[0].agents.register(name: "a\($0)", host: "h", capabilities: "{}") }
        let job = try stores[0].jobs.create(JobStoreTests.job(chunks: 6, audio: false))
        let requests = agents.map { ClaimRequest(agent: $0) }

        // The other coordinator is leasing the first two chunks right now (their rows locked).
        let other = stores[1].connection
        try other.query("BEGIN")
        let held = try other.query("SELECT id FROM tasks WHERE job_id = $1 AND kind = 'video_chunk' ORDER BY ordinal LIMIT 2 FOR UPDATE", [job]).rows
        #expect(held.count == 2)
        let contended = try stores[0].lifecycle.claimBatch(for: requests, leaseSeconds: 30, kinds: [.videoChunk], liveAgents: Set(agents))
        #expect(contended.tasks == [nil, nil], "the tasks it chose were taken between its read and its lease")
        #expect(contended.lost == 2, "and it says so, so its claims run again rather than wait")
        try other.query("ROLLBACK")

        let next = try stores[0].lifecycle.claimBatch(for: requests, leaseSeconds: 30, kinds: [.videoChunk], liveAgents: Set(agents))
        #expect(next.tasks.compactMap { $0?.ordinal } == [0, 1])
        #expect(next.lost == 0)
        _ = try stores[0].lifecycle.claimBatch(for: requests, leaseSeconds: 30, kinds: [.videoChunk], liveAgents: Set(agents))
        _ = try stores[0].lifecycle.claimBatch(for: requests, leaseSeconds: 30, kinds: [.videoChunk], liveAgents: Set(agents))
        let drained = try stores[0].lifecycle.claimBatch(for: requests, leaseSeconds: 30, kinds: [.videoChunk], liveAgents: Set(agents))
        #expect(drained.tasks == [nil, nil] && drained.lost == 0, "nothing claimable is not a loss: \(drained.lost)")
    }

    @Test("two coordinators' finalisers racing for a rendered job: one claims it")
    func finaliseClaimedOnce() throws {
        let schema = try TestDatabase.Schema()
        let stores = try Self.twoStores(schema)
        let agent = try stores[0].agents.register(name: "a1", host: "h", capabilities: "{}")
        // Both coordinators hold finalise leases under the one finaliser row, as they do in production.
        let finaliser = try stores[0].agents.register(name: "@coordinator", host: "h", capabilities: "{}")
        var jobs: [Int64] = []
        for _ in 0..<6 { jobs.append(try stores[0].jobs.create(JobStoreTests.job(chunks: 1, audio: false))) }
        while let chunk = try stores[0].lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]) {
            try stores[0].lifecycle.complete(chunk.lease, result: JobStoreTests.result(Int(chunk.id)))
        }

        let claimed = Collector<(Int, Int64)>()
        onThreads(2) { index in
            do {
                while let task = try stores[index].lifecycle.claimTask(agent: finaliser, leaseSeconds: 30, kinds: [.finalise]) {
                    claimed.append((index, task.jobID))
                }
            } catch { Issue.record("claimTask: \(error)") }
        }
        let jobsClaimed = claimed.values.map(\.1)
        #expect(jobsClaimed.count == 6, "every finalise claimed")
        #expect(Set(jobsClaimed) == Set(jobs), "each job's finalise claimed exactly once")
    }

    @Test("a due notification is claimed by one of two coordinators, and only its attempt is recorded")
    func notificationClaimedOnce() throws {
        let schema = try TestDatabase.Schema()
        let stores = try Self.twoStores(schema)
        var jobs: [Int64] = []
        for n in 0..<8 {
            var job = JobStoreTests.job(chunks: 1, audio: false)
            job.notifyURL = "http://127.0.0.1:9/hook/\(n)"
            jobs.append(try stores[0].jobs.create(job))
        }
        for job in jobs { try stores[0].lifecycle.cancel(job: job) }

        let now = FarmClock.wall.nowMillis()
        let claimed = Collector<DueNotification>()
        onThreads(2) { index in
            do {
                while let due = try stores[index].notifications.due(nowMillis: now, claimUntilMillis: now + 60_000, limit: 1).first {
                    claimed.append(due)
                }
            } catch { Issue.record("due: \(error)") }
        }
        #expect(claimed.values.count == 8, "every notification claimed once")
        #expect(Set(claimed.values.map(\.job)) == Set(jobs))
        #expect(try stores[1].notifications.due(nowMillis: now, claimUntilMillis: now + 60_000).isEmpty, "claimed ones are not due again before the claim ends")
        #expect(try stores[1].notifications.due(nowMillis: now + 61_000, claimUntilMillis: now + 120_000).count == 8,
                "a claim that runs out without an outcome (its coordinator died) makes it due again")

        #expect(try stores[0].notifications.record(job: jobs[0], attempts: 1, outcome: .delivered, message: "POST: 200"))
        #expect(try stores[1].notifications.record(job: jobs[0], attempts: 1, outcome: .retryAt(now), message: "POST: 500") == false,
                "a second outcome of the same attempt is not recorded")
        #expect(try stores[0].notifications.of(job: jobs[0])?.state == "delivered")
        let events = try stores[0].events.list(job: jobs[0], after: 0).map(\.kind)
        #expect(events.filter { $0.hasPrefix("notif") }.count == 1, "one event for the attempt: \(events)")
    }

    @Test("the storage sweep lock is held by one session at a time, and released with its connection")
    func sweepLockIsExclusive() throws {
        let schema = try TestDatabase.Schema()
        var stores = try Self.twoStores(schema)
        #expect(try stores[0].coordinators.tryLock(.storageSweep))
        #expect(try stores[1].coordinators.tryLock(.storageSweep) == false)
        try stores[0].coordinators.unlock(.storageSweep)
        #expect(try stores[1].coordinators.tryLock(.storageSweep))
        #expect(try stores[0].coordinators.tryLock(.storageSweep) == false)
        stores.remove(at: 1) // its connection closes: a killed coordinator's lock goes with it
        // The server releases it when that session's backend has exited, a moment after the close.
        let deadline = Date().addingTimeInterval(30)
        var taken = false
        while !taken && Date() < deadline {
            taken = try stores[0].coordinators.tryLock(.storageSweep)
            if !taken { _ = try stores[0].connection.query("SELECT pg_sleep(0.05)") }
        }
        #expect(taken, "the lock is free once its holder's connection is gone")
    }

    /// Advisory locks belong to the whole database: keyed by the lock alone, a farm's sweep (or a
    /// test's, each test having a schema of its own) would hold every other schema's too.
    @Test("the storage sweep lock is a farm's own: a farm in another schema of the database neither holds nor blocks it")
    func sweepLockIsPerSchema() throws {
        let mine = try TestDatabase.Schema(), theirs = try TestDatabase.Schema()
        let other = try theirs.store(), store = try mine.store()
        #expect(try other.coordinators.tryLock(.storageSweep))
        #expect(try store.coordinators.tryLock(.storageSweep), "another farm's sweep does not hold this one's")
        #expect(try Self.twoStores(mine)[0].coordinators.tryLock(.storageSweep) == false, "within the farm it is still exclusive")
        try store.coordinators.unlock(.storageSweep)
        try other.coordinators.unlock(.storageSweep)
    }

    @Test("changes made through one connection are announced to listeners on another (LISTEN reel)")
    func changesAreNotified() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let listener = try schema.connect()
        try listener.execute(script: "LISTEN reel")
        let agent = try store.agents.register(name: "a1", host: "h", capabilities: "{}")

        func next(_ expected: String) throws -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                let payloads = try listener.waitForNotifications(timeoutMillis: 1000).map(\.payload)
                if payloads.contains(expected) { return true }
            }
            return false
        }
        let job = try store.jobs.create(JobStoreTests.job(chunks: 2, audio: false))
        #expect(try next("\(schema.name) claimable"), "tasks created queued")
        let task = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]))
        try store.lifecycle.release(task.lease)
        #expect(try next("\(schema.name) claimable"), "a task handed back")
        _ = try store.lifecycle.setPaused(job: job, true)
        #expect(try next("\(schema.name) claimable"), "pausing or resuming changes what is claimable")
        try store.lifecycle.cancel(job: job)
        #expect(try next("\(schema.name) ended \(job)"), "the job ended")

        // A claim (the hot path) announces nothing. (Other tests' schemas share the channel.)
        func ours() throws -> [String] {
            try listener.waitForNotifications(timeoutMillis: 300).map(\.payload).filter { $0.hasPrefix(schema.name + " ") }
        }
        let another = try store.jobs.create(JobStoreTests.job(chunks: 1, audio: false))
        #expect(try next("\(schema.name) claimable"))
        while !(try ours()).isEmpty {}
        let claimed = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]))
        #expect(claimed.jobID == another)
        #expect(try ours().isEmpty, "claiming a task is not announced")
    }
}
