import Foundation
import ReelStoreTesting
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling

@Suite("JobStore: results completed in batches", .database, .blocking)
struct BatchCompletionTests {
    @Test("a batch completes the fresh leases and refuses the stale ones, counters included")
    func freshAndStaleInOneBatch() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let a = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let b = try store.agents.register(name: "b", host: "h", capabilities: "{}")
        let job = try store.jobs.create(JobStoreTests.job(chunks: 3, audio: false))
        let first = try #require(try store.lifecycle.claimTask(agent: a, leaseSeconds: 60, kinds: [.videoChunk]))
        let second = try #require(try store.lifecycle.claimTask(agent: b, leaseSeconds: 60, kinds: [.videoChunk]))
        let third = try #require(try store.lifecycle.claimTask(agent: a, leaseSeconds: 60, kinds: [.videoChunk]))
        var stale = second.lease
        stale.epoch += 1
        let completions = try store.lifecycle.completeTasks([
            (first.lease, JobStoreTests.result(1)), (stale, JobStoreTests.result(2)), (third.lease, JobStoreTests.result(3)),
            (first.lease, JobStoreTests.result(1)),
        ])
        #expect(completions.map { $0?.jobID } == [job, nil, job, nil], "the stale lease and the repeated task are refused")
        #expect(completions[0]?.frames == 30 && completions[2]?.frames == 30)
        let states = Dictionary(uniqueKeysWithValues: try store.jobs.tasks(ofJob: job).map { ($0.id, $0.state) })
        #expect(states[first.id] == .done && states[second.id] == .leased && states[third.id] == .done)
        let summary = try #require(try store.jobs.summary(job))
        #expect(summary.taskCounts[.done] == 2 && summary.framesDone == 60)
        #expect(try store.agents.list().first { $0.id == a }?.currentTask == nil, "a holds nothing now")
        #expect(try store.agents.list().first { $0.id == b }?.currentTask == second.id)
        #expect(try store.events.list(job: job).filter { $0.kind == "completed" }.count == 2)
        try LockOrderTests.expectCountersMatchRows(schema, job: job)
    }
}

@Suite("JobStore: a retried job's run", .database, .blocking)
struct RetriedRunTests {
    @Test("retry starts a new run: its speed counts from the next claim and the frames done since")
    func retryStartsANewRun() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let job = try store.jobs.create(JobStoreTests.job(chunks: 3, audio: false))
        let first = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 60, kinds: [.videoChunk]))
        #expect(try store.jobs.summary(job)?.runStartedAtMillis != nil)
        try store.lifecycle.complete(first.lease, result: JobStoreTests.result(1))
        try store.lifecycle.cancel(job: job)
        try store.lifecycle.retry(job: job)
        let retried = try #require(try store.jobs.summary(job))
        #expect(retried.runStartedAtMillis == nil && retried.runFramesBase == 30 && retried.framesDone == 30,
                "the done chunk is kept, and the new run has not started")
        _ = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 60, kinds: [.videoChunk]))
        let running = try #require(try store.jobs.summary(job))
        #expect(running.runStartedAtMillis != nil && running.runStartedAtMillis! >= retried.createdAtMillis)
    }
}
