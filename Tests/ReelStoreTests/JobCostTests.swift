import Foundation
import ReelStoreTesting
import ReelThreadTesting
import Testing
@testable import ReelStore
import ReelScheduling

@Suite("A job's agent time and cost", .database, .blocking)
struct JobCostTests {
    /// Sets task `id`'s latest claim and end to `claimed` and `finished` seconds after
    /// 2026-01-01 00:00 UTC (the test's own clock: claims and results stamp the database's now()).
    static func setTimes(_ store: FarmStore, task id: Int64, claimed: Int, finished: Int?) throws {
        try store.connection.query("""
            UPDATE tasks SET claimed_at = timestamptz '2026-01-01 00:00:00+00' + $2::integer * interval '1 second',
                             finished_at = timestamptz '2026-01-01 00:00:00+00' + $3::integer * interval '1 second'
            WHERE id = $1::bigint
            """, [id, claimed, finished])
    }

    /// Moves agent `agent`'s price rows, in the order they were written, to start at `seconds`
    /// after 2026-01-01 00:00 UTC.
    static func setPriceTimes(_ store: FarmStore, agent: Int64, _ seconds: [Int]) throws {
        let rows = try store.connection.query("SELECT since::text AS since FROM agent_prices WHERE agent_id = $1::bigint ORDER BY since",
                                              [agent]).rows.map { try $0.string("since") }
        #expect(rows.count == seconds.count, "price rows of agent \(agent): \(rows)")
        for (since, offset) in zip(rows, seconds).reversed() {
            try store.connection.query("""
                UPDATE agent_prices SET since = timestamptz '2026-01-01 00:00:00+00' + $3::integer * interval '1 second'
                WHERE agent_id = $1::bigint AND since = $2::timestamptz
                """, [agent, since, offset])
        }
    }

    @Test("a job's agent-seconds are the sum of its tasks', each at the price its agent had when it claimed the task")
    func costAddsUp() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let priced = try store.agents.registration(name: "priced", host: "h", capabilities: "{}", costPerHour: 3.6).id
        let free = try store.agents.registration(name: "free", host: "h", capabilities: "{}").id
        let job = try store.jobs.create(JobStoreTests.job(chunks: 2))
        #expect(try store.jobs.cost(job) == JobCost(), "nothing claimed yet")

        let audio = try #require(try store.lifecycle.claimTask(agent: priced, leaseSeconds: 30))
        let chunk0 = try #require(try store.lifecycle.claimTask(agent: free, leaseSeconds: 30))
        let chunk1 = try #require(try store.lifecycle.claimTask(agent: priced, leaseSeconds: 30))
        for (n, claim) in [audio, chunk0, chunk1].enumerated() {
            try store.lifecycle.complete(claim.lease, result: JobStoreTests.result(n))
        }
        // The priced agent comes back dearer: tasks it claimed before keep the old price.
        #expect(try store.agents.registration(name: "priced", host: "h", capabilities: "{}", costPerHour: 3.6).id == priced)
        #expect(try store.agents.registration(name: "priced", host: "h", capabilities: "{}", costPerHour: 7.2).id == priced)
        let finalise = try #require(try store.lifecycle.claimTask(agent: priced, leaseSeconds: 30))
        #expect(finalise.kind == .finalise)
        try store.lifecycle.complete(finalise.lease, result: JobStoreTests.result(9))

        // Prices from 00:00 (3.6 an hour) and 01:00 (7.2); an unchanged price wrote no row.
        try Self.setPriceTimes(store, agent: priced, [0, 3_600])
        try Self.setTimes(store, task: audio.lease.task, claimed: 600, finished: 610)          // 10 s at 3.6: 0.01
        try Self.setTimes(store, task: chunk0.lease.task, claimed: 600, finished: 620)         // 20 s, no price
        try Self.setTimes(store, task: chunk1.lease.task, claimed: 700, finished: 730)         // 30 s at 3.6: 0.03
        try Self.setTimes(store, task: finalise.lease.task, claimed: 4_200, finished: 4_240)   // 40 s at 7.2: 0.08

        let cost = try store.jobs.cost(job)
        #expect(cost.agentSeconds == 100 && cost.runningSeconds == 0 && cost.unpricedTasks == 1, "\(cost)")
        #expect(abs((cost.cost ?? 0) - 0.12) < 1e-9, "\(cost)")

        // The same figures task by task, as the console lists them: they add up to the job's.
        let tasks = try #require(try store.console.tasks(ofJob: job))
        #expect(tasks.map(\.agentMilliseconds) == [10_000, 20_000, 30_000, 40_000])
        #expect(tasks.map(\.costPerHour) == [3.6, nil, 3.6, 7.2])
        #expect(Double(tasks.compactMap(\.agentMilliseconds).reduce(0, +)) / 1000 == cost.agentSeconds)
        let taskCosts = tasks.map { task in task.costPerHour.map { Double(task.agentMilliseconds ?? 0) / 3_600_000 * $0 } ?? 0 }
        #expect(abs(taskCosts.reduce(0, +) - (cost.cost ?? 0)) < 1e-9)
        // The console's job page adds them up itself (JobCost(tasks:)) rather than read them twice.
        let summed = JobCost(tasks: tasks)
        #expect(summed.agentSeconds == cost.agentSeconds && summed.runningSeconds == cost.runningSeconds
                && summed.unpricedTasks == cost.unpricedTasks && abs((summed.cost ?? -1) - (cost.cost ?? 0)) < 1e-12, "\(summed)")
        #expect(try store.jobs.cost(job + 1000) == JobCost(), "no such job")
    }

    @Test("a running task counts to now; an attempt queued again, or a reused task, counts nothing")
    func runningAndRequeued() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.registration(name: "a", host: "h", capabilities: "{}", costPerHour: 36).id
        let job = try store.jobs.create(JobStoreTests.job(chunks: 2, audio: false))
        let first = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        let second = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30))
        // The second one fails: queued again, its attempt's time is not the task's any more.
        _ = try store.lifecycle.fail(second.lease, message: "boom")
        try store.connection.query("UPDATE tasks SET claimed_at = now() - interval '100 seconds' WHERE id = $1::bigint", [first.lease.task])
        try store.connection.query("UPDATE agent_prices SET since = now() - interval '1 hour' WHERE agent_id = $1::bigint", [agent])
        let cost = try store.jobs.cost(job)
        #expect(cost.agentSeconds >= 100 && cost.agentSeconds < 1_000 && cost.runningSeconds == cost.agentSeconds, "\(cost)")
        #expect(abs((cost.cost ?? 0) - cost.agentSeconds / 100) < 1e-9, "36 an hour is 0.01 a second: \(cost)")
        // The console's sum of its task rows is the same, read at the same now() (one transaction).
        try store.connection.transaction { _ in
            let inOne = try store.jobs.cost(job)
            let summed = JobCost(tasks: try #require(try store.console.tasks(ofJob: job)))
            #expect(summed.agentSeconds == inOne.agentSeconds && summed.runningSeconds == inOne.runningSeconds
                    && summed.unpricedTasks == inOne.unpricedTasks && abs((summed.cost ?? -1) - (inOne.cost ?? 0)) < 1e-12, "\(summed) \(inOne)")
        }

        // A reused task keeps no agent time, whatever its columns say.
        try store.connection.query("UPDATE tasks SET reused = true, finished_at = now() WHERE id = $1::bigint", [first.lease.task])
        #expect(try store.jobs.cost(job) == JobCost())
    }

    @Test("an agent's price is recorded when it changes, and its absence too")
    func priceHistory() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        func prices() throws -> [Double?] {
            try store.connection.query("SELECT cost_per_hour FROM agent_prices ORDER BY since").rows.map { try $0.optionalDouble("cost_per_hour") }
        }
        _ = try store.agents.registration(name: "a", host: "h", capabilities: "{}")
        #expect(try prices() == [], "an agent without a price, never priced, writes nothing")
        _ = try store.agents.registration(name: "a", host: "h", capabilities: "{}", costPerHour: 0.5)
        _ = try store.agents.registration(name: "a", host: "h", capabilities: "{}", costPerHour: 0.5)
        _ = try store.agents.registration(name: "a", host: "h", capabilities: "{}")
        _ = try store.agents.registration(name: "a", host: "h", capabilities: "{}")
        _ = try store.agents.registration(name: "a", host: "h", capabilities: "{}", costPerHour: 0)
        #expect(try prices() == [0.5, nil, 0])
    }
}
