import Foundation
import ReelCore
import ReelStoreTesting
import ReelThreadTesting
import Testing
@testable import ReelStore
import ReelScheduling

@Suite("JobStore leases and job lifecycle", .database, .blocking)
struct JobStoreTests {
    static let sha = String(repeating: "ab", count: 32)

    /// A job of `chunks` video chunks of 30 frames, optionally audio, and a finalise task.
    static func job(chunks: Int, audio: Bool = true, maxAttempts: Int = 3) -> NewJob {
        var tasks = (0..<chunks).map {
            NewTask(kind: .videoChunk, ordinal: $0, frameStart: Int64($0 * 30), frameEnd: Int64($0 * 30 + 30),
                    spec: "{\"chunk\":\($0)}", maxAttempts: maxAttempts)
        }
        if audio { tasks.append(NewTask(kind: .audio, ordinal: 0, maxAttempts: maxAttempts)) }
        tasks.append(NewTask(kind: .finalise, ordinal: 0, maxAttempts: maxAttempts))
        return NewJob(composition: #"{"formatVersion":1}"#, tasks: tasks)
    }

    static func result(_ n: Int) -> TaskResult { TaskResult(sha256: sha, size: Int64(n), key: "chunks/\(n)") }

    @Test("refreshing the statistics analyzes this schema's tasks table")
    func refreshTaskStatistics() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        _ = try store.jobs.create(Self.job(chunks: 3_000))
        func analyzed() throws -> Int {
            try store.connection.query("SELECT analyze_count + autoanalyze_count AS n FROM pg_stat_user_tables WHERE relid = 'tasks'::regclass")
                .rows[0].int("n")
        }
        let before = try analyzed()
        try store.jobs.refreshTaskStatistics()
        // Counters are read in a new statistics snapshot.
        try store.connection.query("SELECT pg_stat_clear_snapshot()")
        #expect(try analyzed() > before, "autovacuum may analyze it too, never less")
    }

    @Test("claim order: oldest job first, audio, chunks in order; finalise only after all others are done")
    func claimOrderAndFinalise() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a1", host: "h", capabilities: "{}")
        let job = try store.jobs.create(Self.job(chunks: 2))
        let later = try store.jobs.create(Self.job(chunks: 1, audio: false))

        let audio = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        let first = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        let second = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect([audio.kind, first.kind, second.kind] == [.audio, .videoChunk, .videoChunk])
        #expect([audio.jobID, first.jobID, second.jobID] == [job, job, job])
        #expect([first.frameStart, second.frameStart] == [0, 30])
        #expect(first.spec == #"{"chunk":0}"#)
        #expect(first.epoch == 1 && first.attempts == 1)
        #expect(try store.jobs.summary(job)?.state == .running)

        // The first job's finalise is blocked, so the next claim goes to the later job.
        let other = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(other.jobID == later && other.kind == .videoChunk)
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30) == nil)

        try store.lifecycle.complete(audio.lease, result: Self.result(1))
        try store.lifecycle.complete(first.lease, result: Self.result(2))
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30) == nil, "finalise claimable with a chunk still leased")
        try store.lifecycle.complete(second.lease, result: Self.result(3))

        let finalise = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(finalise.kind == .finalise && finalise.jobID == job)
        #expect(try store.jobs.summary(job)?.state == .finalising)
        let completion = try store.lifecycle.complete(finalise.lease, result: TaskResult(sha256: Self.sha, size: 9, key: "out/job.mp4"))
        #expect(completion == Completion(jobID: job, jobDone: true))

        let tasks = try store.jobs.tasks(ofJob: job)
        #expect(tasks.map(\.kind) == [.audio, .videoChunk, .videoChunk, .finalise])
        #expect(tasks.map(\.state) == [.done, .done, .done, .done])
        #expect(tasks.map { $0.result?.key } == ["chunks/1", "chunks/2", "chunks/3", "out/job.mp4"])

        let summary = try #require(try store.jobs.summary(job))
        #expect(summary.state == .done)
        #expect(summary.outputKey == "out/job.mp4")
        #expect(summary.taskCounts[.done] == 3, "render tasks only: the finalise task is the job's own state")
        #expect(summary.framesTotal == 60 && summary.framesDone == 60)
        #expect(summary.finishedAtMillis != nil && summary.startedAtMillis != nil)
        #expect(try store.jobs.recent().map(\.id) == [later, job])
        #expect(try store.events.list(job: job).map(\.kind).contains("completed"))
    }

    @Test("concurrent claimers never get the same task", arguments: 1...8)
    func concurrentClaims(round: Int) throws {
        let schema = try TestDatabase.Schema()
        let setup = try schema.store()
        let chunks = 60
        let jobs = try (0..<3).map { _ in try setup.jobs.create(Self.job(chunks: chunks / 3, audio: false)) }
        #expect(jobs.count == 3)
        let claimed = Collector<Int64>()
        let failures = Collector<String>()
        onThreads(4) { index in
            do {
                let store = FarmStore(connection: try schema.connect())
                let agent = try store.agents.register(name: "agent-\(index)", host: "h", capabilities: "{}")
                while let task = try store.lifecycle.claimTask(agent: agent, leaseSeconds: 60) {
                    claimed.append(task.id)
                }
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.values == [])
        let ids = claimed.values
        #expect(ids.count == chunks, "every chunk claimed exactly once (finalise tasks stay blocked)")
        #expect(Set(ids).count == ids.count, "a task was claimed twice")
    }

    @Test("an expired lease is requeued; the old epoch's completion is rejected, the new holder's accepted")
    func leaseExpiry() throws {
        let schema = try TestDatabase.Schema()
        let clock = AdjustableClock()
        let store = try schema.store(clock: clock.farmClock)
        let slow = try store.agents.register(name: "slow", host: "h", capabilities: "{}")
        let fast = try store.agents.register(name: "fast", host: "h", capabilities: "{}")
        _ = try store.jobs.create(Self.job(chunks: 1, audio: false))

        let old = try #require(try store.lifecycle.claimTask(agent: slow, leaseSeconds: 30))
        #expect(try store.lifecycle.expireLeases() == [], "lease expired too early")
        #expect(try store.lifecycle.renew(old.lease, leaseSeconds: 30) >= old.leaseExpiresAtMillis)
        clock.advance(seconds: 31)
        #expect(throws: StoreError.staleEpoch(task: old.id, epoch: old.epoch)) { try store.lifecycle.renew(old.lease, leaseSeconds: 10) }

        let expired = try store.lifecycle.expireLeases()
        #expect(expired == [ExpiredLease(task: old.id, jobID: old.jobID, epoch: 1, agent: slow, newState: .queued)])
        let new = try #require(try store.lifecycle.claimTask(agent: fast, leaseSeconds: 30))
        #expect(new.id == old.id && new.epoch == 2 && new.attempts == 2)

        #expect(throws: StoreError.staleEpoch(task: old.id, epoch: 1)) { try store.lifecycle.complete(old.lease, result: Self.result(1)) }
        #expect(throws: StoreError.staleEpoch(task: old.id, epoch: 1)) { try store.lifecycle.recordProgress(old.lease, frames: 3) }
        #expect(throws: StoreError.self) { try store.lifecycle.fail(old.lease, message: "late") }
        // Right epoch, wrong owner is refused too.
        #expect(throws: StoreError.self) {
            try store.lifecycle.complete(Lease(task: new.id, epoch: new.epoch, agent: slow), result: Self.result(1))
        }
        try store.lifecycle.recordProgress(new.lease, frames: 12)
        #expect(try store.jobs.summary(new.jobID)?.framesDone == 12)
        #expect(try store.lifecycle.complete(new.lease, result: Self.result(2)).jobDone == false)
        #expect(throws: StoreError.self) { try store.lifecycle.complete(new.lease, result: Self.result(2)) } // only once
    }

    @Test("failures retry until max_attempts, then the job fails; retry requeues it")
    func retryLimits() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let job = try store.jobs.create(Self.job(chunks: 2, audio: false, maxAttempts: 2))

        let first = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(try store.lifecycle.fail(first.lease, message: "boom 1").outcome == .requeued(attemptsLeft: 1))
        let again = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(again.id == first.id && again.attempts == 2)
        let sibling = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(try store.lifecycle.fail(again.lease, message: "boom 2").outcome == .jobFailed(jobID: job))

        let summary = try #require(try store.jobs.summary(job))
        #expect(summary.state == .failed)
        #expect(summary.error?.contains("boom 2") == true)
        #expect(summary.taskCounts[.failed] == 1 && summary.taskCounts[.cancelled] == 1, "\(summary.taskCounts)")
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30) == nil)
        #expect(throws: StoreError.self) { try store.lifecycle.renew(sibling.lease, leaseSeconds: 30) } // LOST

        // A release does not use up an attempt.
        try store.lifecycle.retry(job: job)
        #expect(try store.jobs.summary(job)?.state == .queued)
        let retried = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(retried.attempts == 1)
        try store.lifecycle.release(retried.lease)
        #expect(try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30)).attempts == 1)
        #expect(throws: StoreError.conflict(job: job, state: .running)) { try store.lifecycle.retry(job: job) }
    }

    @Test("a lease expiring on the last attempt fails the job")
    func expiryOnLastAttempt() throws {
        let schema = try TestDatabase.Schema()
        let clock = AdjustableClock()
        let store = try schema.store(clock: clock.farmClock)
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let job = try store.jobs.create(Self.job(chunks: 1, audio: false, maxAttempts: 1))
        let task = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(try store.lifecycle.expireLeases() == [])
        clock.advance(seconds: 31)
        #expect(try store.lifecycle.expireLeases().map(\.newState) == [.failed])
        #expect(try store.jobs.summary(job)?.state == .failed)
        #expect(throws: StoreError.self) { try store.lifecycle.complete(task.lease, result: Self.result(1)) }
    }

    @Test("cancel stops a job and its leases; cancelling twice conflicts")
    func cancel() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let job = try store.jobs.create(Self.job(chunks: 3))
        let task = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        try store.lifecycle.cancel(job: job)
        #expect(try store.jobs.summary(job)?.state == .cancelled)
        #expect(try store.jobs.summary(job)?.taskCounts[.cancelled] == 4, "3 chunks and audio (finalise is not a render task)")
        #expect(throws: StoreError.staleEpoch(task: task.id, epoch: task.epoch)) { try store.lifecycle.renew(task.lease, leaseSeconds: 30) }
        #expect(throws: StoreError.self) { try store.lifecycle.complete(task.lease, result: Self.result(1)) }
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30) == nil)
        #expect(throws: StoreError.conflict(job: job, state: .cancelled)) { try store.lifecycle.cancel(job: job) }
        #expect(throws: StoreError.jobNotFound(999_999)) { try store.lifecycle.cancel(job: 999_999) }
        try store.lifecycle.retry(job: job)
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30)?.jobID == job)
    }

    @Test("a job waits for its assets, then becomes claimable")
    func waitingForAssets() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let other = String(repeating: "cd", count: 32)
        var new = Self.job(chunks: 1, audio: false)
        new.assets = [Self.sha, other]
        new.waitingForAssets = true
        try store.assets.stored(sha256: other, size: 5, storedKey: "assets/cd")
        let job = try store.jobs.create(new)
        #expect(try store.jobs.summary(job)?.state == .waiting)
        #expect(try store.assets.missing([Self.sha, other]) == [Self.sha])
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30) == nil)
        #expect(try store.assets.stored(sha256: Self.sha, size: 7, storedKey: "assets/ab") == [job])
        #expect(try store.assets.asset(sha256: Self.sha) == AssetRecord(sha256: Self.sha, size: 7, storedKey: "assets/ab"))
        #expect(try store.assets.missing([Self.sha, other]) == [])
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30)?.jobID == job)
    }

    @Test("agents register by name, a claim is a sign of life, and they show their current task")
    func agents() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let id = try store.agents.register(name: "render-01", host: "h1", capabilities: #"{"threads":4}"#)
        #expect(try store.agents.register(name: "render-01", host: "h2", capabilities: "{}") == id)
        _ = try store.jobs.create(Self.job(chunks: 1, audio: false))
        let task = try #require(try store.lifecycle.claimTask(agent: id, leaseSeconds: 30))
        var listed = try store.agents.list()
        #expect(listed.count == 1)
        #expect(listed[0].host == "h2" && listed[0].currentTask == task.id && listed[0].state == .online)
        #expect(listed[0].heartbeatAgeMillis >= 0 && listed[0].heartbeatAgeMillis < 10_000)
        try store.lifecycle.complete(task.lease, result: Self.result(1))
        try store.agents.setState(id, .offline)
        listed = try store.agents.list()
        #expect(listed[0].currentTask == nil && listed[0].state == .offline)
        try store.events.append(job: nil, agent: id, kind: "note", message: "hello")
        #expect(try store.events.list().last?.message == "hello")
    }
}
