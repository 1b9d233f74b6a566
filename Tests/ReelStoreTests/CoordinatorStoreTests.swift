import ReelStoreTesting
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelStore

/// The store operations the coordinator added: kind-filtered claims, planning a waiting job
/// once its assets arrive, failing a job, state counts.
@Suite("JobStore additions for the coordinator", .blocking)
struct CoordinatorStoreTests {
    @Test("claims filtered by kind: agents never see finalise, the finaliser sees only finalise")
    func claimByKind() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.registerAgent(name: "a1", host: "h", capabilities: "{}")
        let coordinator = try store.registerAgent(name: "@coordinator", host: "h", capabilities: "{}")
        let job = try store.createJob(JobStoreTests.job(chunks: 1, audio: false))

        #expect(try store.claimTask(agent: coordinator, leaseSeconds: 30, kinds: [.finalise]) == nil, "finalise waits for the chunk")
        let chunk = try #require(try store.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk, .audio]))
        #expect(chunk.kind == .videoChunk && chunk.jobID == job)
        try store.complete(chunk.lease, result: JobStoreTests.result(1))
        #expect(try store.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk, .audio]) == nil, "agents never get finalise")
        let finalise = try #require(try store.claimTask(agent: coordinator, leaseSeconds: 30, kinds: [.finalise]))
        #expect(finalise.kind == .finalise)
        #expect(try store.complete(finalise.lease, result: JobStoreTests.result(2)).jobDone)
    }

    @Test("a waiting job without tasks is planned once after its assets arrive")
    func planWaitingJob() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let hash = String(repeating: "cd", count: 32)
        let job = try store.createJob(NewJob(composition: "{}", tasks: [], assets: [hash], waitingForAssets: true))
        #expect(try store.unplannedJobs().isEmpty, "still waiting for its asset")
        #expect(try store.assetStored(sha256: hash, size: 10, storedKey: "assets/\(hash)") == [job])
        #expect(try store.unplannedJobs() == [job])

        let tasks = [NewTask(kind: .videoChunk, ordinal: 0, frameStart: 0, frameEnd: 25), NewTask(kind: .finalise, ordinal: 0)]
        #expect(try store.setPlan(job: job, plan: #"{"plan":1}"#, tasks: tasks))
        #expect(try store.setPlan(job: job, plan: #"{"plan":2}"#, tasks: tasks) == false, "planning twice changes nothing")
        #expect(try store.unplannedJobs().isEmpty)
        #expect(try store.jobDocuments(job)?.plan == #"{"plan":1}"#)
        #expect(try store.tasks(ofJob: job).count == 2)

        let counts = try store.stateCounts()
        #expect(counts.jobs["queued"] == 1)
        #expect(counts.tasks["queued"] == 2)

        try store.failJob(job, message: "probe failed")
        #expect(try store.jobSummary(job)?.state == .failed)
        #expect(try store.jobSummary(job)?.error == "probe failed")
        #expect(try store.stateCounts().tasks["cancelled"] == 2)
    }
}
