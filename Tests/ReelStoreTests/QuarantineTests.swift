import ReelStoreTesting
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling

@Suite("Quarantine decisions (pure)", .database, .blocking)
struct QuarantinePolicyTests {
    let policy = QuarantinePolicy(failures: 3, windowSeconds: 600, durationSeconds: 300)
    let now: Int64 = 10_000_000

    @Test func threeFailuresWithinTheWindowQuarantine() {
        let times = [now - 500_000, now - 100_000, now]
        #expect(policy.quarantineUntil(failureMillis: times, nowMillis: now, previousQuarantineEndMillis: nil) == now + 300_000)
    }

    @Test func failuresOutsideTheWindowDoNotCount() {
        let times = [now - 700_000, now - 100_000, now]
        #expect(policy.quarantineUntil(failureMillis: times, nowMillis: now, previousQuarantineEndMillis: nil) == nil)
    }

    @Test func failuresBeforeTheLastQuarantineEndedDoNotCountAgain() {
        // Served its time for the first three; one more failure right after release is not three.
        let released = now - 10_000
        let times = [now - 400_000, now - 350_000, now - 320_000, now]
        #expect(policy.quarantineUntil(failureMillis: times, nowMillis: now, previousQuarantineEndMillis: released) == nil)
        #expect(policy.quarantineUntil(failureMillis: times + [now - 5_000, now - 1_000], nowMillis: now,
                                       previousQuarantineEndMillis: released) == now + 300_000)
    }

    @Test func zeroFailuresTurnsQuarantineOff() {
        #expect(QuarantinePolicy.off.quarantineUntil(failureMillis: Array(repeating: now, count: 50), nowMillis: now,
                                                     previousQuarantineEndMillis: nil) == nil)
    }

    @Test func theJobsFailureQuotesEveryAgentOnce() {
        let text = TaskFailureMessage.text(kind: .videoChunk, ordinal: 3, failures: [
            ("agent-a", "decoder error"), ("agent-b", "out of memory"), ("agent-a", "disk full"),
        ])
        #expect(text == "chunk 3 failed on agent-a (2×): disk full; agent-b: out of memory")
        #expect(TaskFailureMessage.text(kind: .audio, ordinal: 0, failures: [("x", "boom")]) == "audio failed on x: boom")
    }
}

@Suite("JobStore: failure-aware claims, quarantine, retention, deletion", .database, .blocking)
struct StoreQuarantineTests {
    static let finaliser = "@coordinator"

    func claim(_ store: FarmStore, _ agent: Int64) throws -> ClaimedTask? {
        // Live: online agents other than the coordinator's finaliser row (the dispatcher's view
        // is its connected agents).
        let live = Set(try store.agents.list().filter { $0.state == .online && $0.name != Self.finaliser }.map(\.id))
        return try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk, .audio], liveAgents: live)
    }

    @Test func aTaskIsNotReofferedToTheAgentThatFailedItWhileAnotherLiveAgentExists() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        _ = try store.agents.register(name: Self.finaliser, host: "h", capabilities: "{}")
        let a = try store.agents.register(name: "agent-a", host: "h", capabilities: "{}")
        let job = try store.jobs.create(JobStoreTests.job(chunks: 1, audio: false))
        let first = try #require(try claim(store, a))
        _ = try store.lifecycle.fail(first.lease, message: "boom on a", policy: .off)

        // Alone on the farm, a gets the task again (else the job could never finish).
        let again = try #require(try claim(store, a))
        #expect(again.id == first.id && again.epoch == first.epoch + 1)
        _ = try store.lifecycle.fail(again.lease, message: "boom on a again", policy: .off)

        // With b live, a is skipped and b gets it.
        let b = try store.agents.register(name: "agent-b", host: "h", capabilities: "{}")
        #expect(try claim(store, a) == nil)
        let onB = try #require(try claim(store, b))
        #expect(onB.id == first.id)
        let report = try store.lifecycle.fail(onB.lease, message: "boom on b", policy: .off)
        #expect(report.outcome == .jobFailed(jobID: job))
        #expect(try store.jobs.summary(job)?.error == "chunk 0 failed on agent-a (2×): boom on a again; agent-b: boom on b")
    }

    @Test func anOfflineOrQuarantinedAgentDoesNotCountAsAnotherAgent() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let a = try store.agents.register(name: "agent-a", host: "h", capabilities: "{}")
        let b = try store.agents.register(name: "agent-b", host: "h", capabilities: "{}")
        _ = try store.jobs.create(JobStoreTests.job(chunks: 1, audio: false))
        let first = try #require(try claim(store, a))
        _ = try store.lifecycle.fail(first.lease, message: "boom", policy: .off)
        try store.agents.setState(b, .offline)
        #expect(try claim(store, a)?.id == first.id, "b is offline, so a may retry")
    }

    @Test func repeatedFailuresQuarantineTheAgentAndItGetsNoWork() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let a = try store.agents.register(name: "agent-a", host: "h", capabilities: "{}")
        _ = try store.jobs.create(JobStoreTests.job(chunks: 3, audio: false, maxAttempts: 5))
        let policy = QuarantinePolicy(failures: 2, windowSeconds: 600, durationSeconds: 600)
        let first = try #require(try claim(store, a))
        #expect(try store.lifecycle.fail(first.lease, message: "no codec", policy: policy).quarantinedUntilMillis == nil)
        let second = try #require(try claim(store, a))
        let report = try store.lifecycle.fail(second.lease, message: "no codec either", policy: policy)
        let until = try #require(report.quarantinedUntilMillis)
        #expect(try claim(store, a) == nil, "quarantined agents get nothing")
        let record = try #require(try store.agents.list().first { $0.id == a })
        #expect(record.quarantinedUntilMillis == until)
        #expect(record.lastError == "no codec either")
        #expect(record.failures == 2)

        // Let back (quarantine over): claims work again.
        try schema.connect().query("UPDATE agents SET quarantined_until = now() - interval '1 second' WHERE id = $1::bigint", [String(a)])
        #expect(try claim(store, a) != nil)
        #expect(try store.agents.list().first { $0.id == a }?.quarantinedUntilMillis == nil)
    }

    @Test func longOfflineAgentsAreForgotten() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let old = try store.agents.register(name: "old", host: "h", capabilities: "{}")
        _ = try store.agents.register(name: "fresh", host: "h", capabilities: "{}")
        try store.agents.setState(old, .offline)
        try schema.connect().query("UPDATE agents SET last_heartbeat = now() - interval '2 days' WHERE id = $1::bigint", [String(old)])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(try store.agents.forgetOffline(before: now - 86_400_000, keeping: Self.finaliser) == ["old"])
        #expect(try store.agents.list().map(\.name) == ["fresh"])
    }

    @Test func damagedResultsAreRequeuedAndFinaliseWaits() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let job = try store.jobs.create(JobStoreTests.job(chunks: 2, audio: false))
        for n in 0..<2 {
            let task = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]))
            try store.lifecycle.complete(task.lease, result: TaskResult(sha256: String(repeating: "\(n)", count: 64), size: 10, key: "k\(n)"))
        }
        let finalise = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.finalise]))
        let damaged = try store.jobs.tasks(ofJob: job).first { $0.kind == .videoChunk && $0.ordinal == 1 }!
        try store.lifecycle.requeueDamagedResults(finalise: finalise.lease, tasks: [damaged.id], reason: "damaged")
        #expect(try store.jobs.summary(job)?.state == .running)
        let tasks = try store.jobs.tasks(ofJob: job)
        #expect(tasks.map(\.state) == [.done, .queued, .queued])
        #expect(tasks[1].result == nil && tasks[1].attempts == 0)
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.finalise]) == nil, "finalise waits for the re-render")
        let again = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]))
        #expect(again.id == damaged.id && again.epoch == damaged.epoch + 1)
        // The old finalise lease is gone.
        #expect(throws: StoreError.self) { try store.lifecycle.requeueDamagedResults(finalise: finalise.lease, tasks: [], reason: "x") }
    }

    @Test func deletingAJobFreesOnlyResultsNoOtherJobUses() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let shared = String(repeating: "a", count: 64), own = String(repeating: "b", count: 64)
        let first = try store.jobs.create(JobStoreTests.job(chunks: 2, audio: false))
        let second = try store.jobs.create(JobStoreTests.job(chunks: 1, audio: false))
        for hash in [shared, own, shared] {
            let task = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]))
            try store.lifecycle.complete(task.lease, result: TaskResult(sha256: hash, size: 1, key: hash))
        }
        #expect(throws: StoreError.conflict(job: first, state: .running)) { try store.jobs.delete(first) }
        try store.lifecycle.cancel(job: first)
        let deleted = try store.jobs.delete(first)
        #expect(deleted.unreferencedResults == [own])
        #expect(try store.jobs.summary(first) == nil)
        #expect(try store.events.list(job: first).isEmpty)
        #expect(try store.jobs.summary(second) != nil)
        #expect(throws: StoreError.jobNotFound(first)) { try store.jobs.delete(first) }
    }

    @Test func aDoneJobsChunksAreKeptForReuseUntilTheirOwnCutoff() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let hash = String(repeating: "a", count: 64)
        let job = try store.jobs.create(JobStoreTests.job(chunks: 1, audio: false))
        let chunk = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]))
        try store.lifecycle.complete(chunk.lease, result: TaskResult(sha256: hash, size: 1, key: hash))
        let finalise = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.finalise]))
        #expect(try store.lifecycle.complete(finalise.lease, result: TaskResult(sha256: String(repeating: "b", count: 64), size: 2, key: "out")).jobDone)
        #expect(try store.jobs.summary(job)?.state == .done)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // The outputs' cutoff does not decide a done job's chunks; the chunks' own does.
        #expect(try store.assets.neededResultHashes(endedAfter: now + 60_000, doneEndedAfter: now - 60_000) == [hash], "kept for reuse")
        #expect(try store.assets.neededResultHashes(endedAfter: now - 60_000, doneEndedAfter: now + 60_000) == [], "past --keep-chunks")
        #expect(try store.assets.neededResultHashes(endedAfter: now + 60_000, doneEndedAfter: nil) == [hash], "--keep-chunks forever")
    }

    @Test func neededFilesFollowJobStatesAndRetention() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let hash = String(repeating: "c", count: 64), asset = String(repeating: "d", count: 64)
        var spec = JobStoreTests.job(chunks: 1, audio: false)
        spec.assets = [asset]
        let job = try store.jobs.create(spec)
        try store.assets.stored(sha256: asset, size: 1, storedKey: "x")
        let task = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]))
        try store.lifecycle.complete(task.lease, result: TaskResult(sha256: hash, size: 1, key: hash))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(try store.assets.neededResultHashes(endedAfter: now, doneEndedAfter: now) == [hash], "a running job needs its chunks")
        #expect(try store.assets.forgetIfUnneeded(sha256: asset, endedAfter: now) == false)

        try store.lifecycle.cancel(job: job)
        #expect(try store.assets.neededResultHashes(endedAfter: now - 60_000, doneEndedAfter: now + 60_000) == [hash],
                "a recently cancelled job may be retried")
        #expect(try store.assets.neededResultHashes(endedAfter: now + 60_000, doneEndedAfter: nil) == [], "…until retention ends")
        #expect(try store.assets.neededResultHashes(endedAfter: nil, doneEndedAfter: now + 60_000) == [hash], "keep forever")
        #expect(try store.assets.neededAssetHashes(endedAfter: now + 60_000) == [])
        #expect(try store.assets.forgetIfUnneeded(sha256: asset, endedAfter: now + 60_000) == true)
        #expect(try store.assets.asset(sha256: asset) == nil)
    }
}
