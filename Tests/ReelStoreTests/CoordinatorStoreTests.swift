import ReelStoreTesting
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling

/// The store operations the coordinator added: kind-filtered claims, planning a waiting job
/// once its assets arrive, failing a job, state counts.
@Suite("JobStore additions for the coordinator", .database, .blocking)
struct CoordinatorStoreTests {
    @Test("claims filtered by kind: agents never see finalise, the finaliser sees only finalise")
    func claimByKind() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a1", host: "h", capabilities: "{}")
        let coordinator = try store.agents.register(name: "@coordinator", host: "h", capabilities: "{}")
        let job = try store.jobs.create(JobStoreTests.job(chunks: 1, audio: false))

        #expect(try store.lifecycle.claimTask(agent: coordinator, leaseSeconds: 30, kinds: [.finalise]) == nil, "finalise waits for the chunk")
        let chunk = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk, .audio]))
        #expect(chunk.kind == .videoChunk && chunk.jobID == job)
        try store.lifecycle.complete(chunk.lease, result: JobStoreTests.result(1))
        #expect(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk, .audio]) == nil, "agents never get finalise")
        let finalise = try #require(try store.lifecycle.claimTask(agent: coordinator, leaseSeconds: 30, kinds: [.finalise]))
        #expect(finalise.kind == .finalise)
        #expect(try store.lifecycle.complete(finalise.lease, result: JobStoreTests.result(2)).jobDone)
    }

    @Test("a waiting job without tasks is planned once after its assets arrive")
    func planWaitingJob() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let hash = String(repeating: "cd", count: 32)
        let job = try store.jobs.create(NewJob(composition: "{}", tasks: [], assets: [hash], waitingForAssets: true))
        #expect(try store.jobs.jobsWithoutTasks().isEmpty, "still waiting for its asset")
        #expect(try store.assets.stored(sha256: hash, size: 10, storedKey: "assets/\(hash)") == [job])
        #expect(try store.jobs.jobsWithoutTasks() == [job])

        let tasks = [NewTask(kind: .videoChunk, ordinal: 0, frameStart: 0, frameEnd: 25), NewTask(kind: .finalise, ordinal: 0)]
        #expect(try store.jobs.createTasks(job: job, renderPlan: #"{"plan":1}"#, tasks: tasks))
        #expect(try store.jobs.createTasks(job: job, renderPlan: #"{"plan":2}"#, tasks: tasks) == false, "planning twice changes nothing")
        #expect(try store.jobs.jobsWithoutTasks().isEmpty)
        #expect(try store.jobs.documents(job)?.renderPlan == #"{"plan":1}"#)
        #expect(try store.jobs.tasks(ofJob: job).count == 2)

        let counts = try store.jobs.stateCounts()
        #expect(counts.jobs["queued"] == 1)
        #expect(counts.tasks["queued"] == 2)

        try store.lifecycle.failJob(job, message: "probe failed")
        #expect(try store.jobs.summary(job)?.state == .failed)
        #expect(try store.jobs.summary(job)?.error == "probe failed")
        #expect(try store.jobs.stateCounts().tasks["cancelled"] == 2)
    }
}
