import ReelStoreTesting
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling

/// Chunk reuse in the store: tasks keep their content key, a later job's task can be created done
/// from an earlier result with the same key (counted as done and as reused, never claimed), and
/// a reused result found damaged is rendered after all.
@Suite("Reused results", .database, .blocking)
struct ReuseStoreTests {
    static func key(_ c: Character) -> String { String(repeating: c, count: 64) }
    static func result(_ c: Character, _ n: Int) -> TaskResult { TaskResult(sha256: key(c), size: Int64(n), key: "results/\(key(c))") }

    static func chunk(_ ordinal: Int, key: String, reusing result: TaskResult? = nil) -> NewTask {
        NewTask(kind: .videoChunk, ordinal: ordinal, frameStart: Int64(ordinal * 30), frameEnd: Int64(ordinal * 30 + 30), spec: "",
                contentKey: key, reusedResult: result)
    }

    @Test func aTaskWithAStoredResultForItsKeyIsCreatedDoneAndNeverClaimed() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a1", host: "h", capabilities: "{}")

        // The first job renders both chunks (no finalise task: it would be claimed before the second job's).
        let first = try store.jobs.create(NewJob(composition: "{}", tasks: []))
        #expect(try store.jobs.createTasks(job: first, renderPlan: "{}", tasks: [Self.chunk(0, key: Self.key("0")), Self.chunk(1, key: Self.key("1"))]))
        #expect(try store.assets.results(forContentKeys: [Self.key("0")]).isEmpty, "not done yet")
        for (n, c) in ["a", "b"].enumerated() {
            let task = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
            try store.lifecycle.complete(task.lease, result: Self.result(Character(c), 100 + n))
        }
        #expect(try store.assets.results(forContentKeys: [Self.key("0"), Self.key("1"), Self.key("9")])
                == [Self.key("0"): Self.result("a", 100), Self.key("1"): Self.result("b", 101)])

        // The second job reuses chunk 0 and renders a changed chunk 1.
        let second = try store.jobs.create(NewJob(composition: "{}", tasks: []))
        #expect(try store.jobs.createTasks(job: second, renderPlan: "{}", tasks: [Self.chunk(0, key: Self.key("0"), reusing: Self.result("a", 100)),
                                                                   Self.chunk(1, key: Self.key("2")), NewTask(kind: .finalise, ordinal: 0)]))
        let summary = try #require(try store.jobs.summary(second))
        #expect(summary.taskCounts[.done] == 1 && summary.taskCounts[.queued] == 1 && summary.tasksReused == 1)
        #expect(summary.framesDone == 30 && summary.framesTotal == 60)
        let tasks = try store.jobs.tasks(ofJob: second)
        #expect(tasks.map(\.state) == [.done, .queued, .queued])
        #expect(tasks[0].result == Self.result("a", 100))

        let claimed = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(claimed.jobID == second && claimed.ordinal == 1, "the reused chunk is never handed out")
        try store.lifecycle.complete(claimed.lease, result: Self.result("c", 102))
        #expect(try store.assets.results(forContentKeys: [Self.key("2")])[Self.key("2")] == Self.result("c", 102))

        // The finaliser finds the reused result gone: it is rendered after all, and no longer counts as reused.
        let finalise = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        #expect(finalise.kind == .finalise && finalise.jobID == second)
        try store.lifecycle.requeueDamagedResults(finalise: finalise.lease, tasks: [tasks[0].id], reason: "missing")
        let after = try #require(try store.jobs.summary(second))
        #expect(after.tasksReused == 0 && after.taskCounts[.done] == 1 && after.taskCounts[.queued] == 1)
        #expect(try store.jobs.summary(first)?.tasksReused == 0)
    }
}
