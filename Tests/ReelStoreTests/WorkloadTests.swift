import ReelStoreTesting
import Foundation
import Testing
@testable import ReelStore
import ReelScheduling

/// `JobStore.workload` (what a scaler reads) against an independent count of the tasks
/// themselves, through a job's life: queued, some chunks leased, done, failed for good, paused.
/// The workload reads the jobs' counters so as not to scan a long queue; the count scans it.
@Suite("Workload for a scaler", .database, .blocking)
struct WorkloadTests {
    /// Queued (of unpaused jobs) and leased tasks of active jobs by encoder, counted row by row.
    static func counted(_ store: FarmStore, finalise: Bool) throws -> [String: [Int]] {
        let rows = try store.connection.query("""
            SELECT t.kind, j.video_encoder, t.state, count(*) AS n FROM jobs j JOIN tasks t ON t.job_id = j.id
            WHERE j.state IN ('queued', 'running', 'finalising') AND t.state IN ('queued', 'leased')
              AND (t.state = 'leased' OR NOT j.paused) AND (t.kind <> 'finalise' OR j.tasks_done = j.render_tasks)
            GROUP BY 1, 2, 3
            """).rows
        var out: [String: [Int]] = [:]
        for row in rows {
            let kind: TaskKind = try row.value("kind")
            if kind == .finalise && !finalise { continue }
            let encoder = kind.encoder(videoEncoder: row["video_encoder"]) ?? "any"
            var entry = out[encoder] ?? [0, 0]
            entry[try row.string("state") == "queued" ? 0 : 1] += try row.int("n")
            out[encoder] = entry
        }
        return out
    }

    static func workload(_ store: FarmStore, finalise: Bool) throws -> [String: [Int]] {
        try store.jobs.workload(finalise: finalise).mapValues { [$0.queued, $0.leased] }
    }

    @Test func theCountersGiveWhatCountingTheTasksGives() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a1", host: "h", capabilities: "{}")
        let other = try store.agents.register(name: "a2", host: "h", capabilities: "{}")
        let first = try store.jobs.create(JobStoreTests.job(chunks: 6, audio: true, maxAttempts: 1))
        let second = try store.jobs.create(JobStoreTests.job(chunks: 4, audio: true))
        func same(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            for finalise in [false, true] {
                let counted = try Self.counted(store, finalise: finalise), read = try Self.workload(store, finalise: finalise)
                #expect(read == counted, "\(what) (finalise \(finalise)): read \(read), counted \(counted)", sourceLocation: sourceLocation)
            }
        }
        try same("all queued")
        #expect(try Self.workload(store, finalise: false).values.reduce(0) { $0 + $1[0] } == 12)

        // Leases: the audio and chunks of both jobs.
        var leases: [ClaimedTask] = []
        for _ in 0..<5 { if let task = try store.lifecycle.claimTask(agent: agent, leaseSeconds: 60, kinds: TaskKind.renderKinds) { leases.append(task) } }
        try same("five leased")
        // Some done, one failed for good (its job fails: no longer active), one handed back.
        try store.lifecycle.complete(leases[0].lease, result: JobStoreTests.result(1))
        try store.lifecycle.complete(leases[1].lease, result: JobStoreTests.result(2))
        try same("two done")
        try store.lifecycle.release(leases[2].lease)
        try same("one handed back")
        #expect(try store.lifecycle.setPaused(job: second, true))
        try same("the second job paused: its queued tasks leave, its leased ones stay")
        _ = try store.lifecycle.fail(leases[3].lease, message: "broken")
        try same("a task failed for good")

        // The first job rendered whole: its finalise task counts when agents run them.
        #expect(try store.lifecycle.setPaused(job: second, false))
        while let task = try store.lifecycle.claimTask(agent: other, leaseSeconds: 60, kinds: TaskKind.renderKinds) {
            try store.lifecycle.complete(task.lease, result: JobStoreTests.result(Int(task.id) + 100))
        }
        for lease in leases.dropFirst(4) { try? store.lifecycle.complete(lease.lease, result: JobStoreTests.result(Int(lease.id) + 200)) }
        try same("everything rendered that can be")
        _ = first
    }
}
