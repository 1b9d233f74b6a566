import Foundation
import ReelAgent
import ReelCoordinator
import ReelProtocol
import ReelScheduling
import ReelStore
import ReelStoreTesting
import ReelThreadTesting
import Testing

/// A job's agent time and cost on a real farm: the coordinator, and Reel's own agents rendering
/// in this process, one with a price of its own (`--cost-per-hour`) and one priced by the
/// coordinator's table; in both storage modes (a directory, and S3 with direct uploads).
@Suite(.database, .blocking, .serialized)
struct JobCostFarmTests {
    static func startAgent(_ harness: CoordinatorHarness, name: String, slots: Int, costPerHour: Double?) throws -> AgentFinaliseTests.RunningAgent {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("reel-agent-\(UUID().uuidString)")
        var configuration = AgentConfiguration(coordinatorHost: "127.0.0.1", coordinatorPort: harness.port, name: name,
                                               cacheDirectory: cache, slots: slots, claimWaitSeconds: 2, progressInterval: .milliseconds(500))
        configuration.costPerHour = costPerHour
        let agent = try Agent(configuration: configuration, authenticator: try Authenticator(secret: Array(CoordinatorHarness.secret.utf8)))
        return AgentFinaliseTests.RunningAgent(agent: agent, task: Task { try await agent.run() }, cache: cache)
    }

    /// Renders the test job on two agents: `own` (1 slot, 3.6 an hour of its own) and `table-b`
    /// (2 slots, no price of its own: the coordinator's table prices `table-` agents at 14.4 an
    /// hour, 7.2 a slot). Checks the job's figures against its tasks' and against the render.
    func renderAndCheck(objectStore: ObjectStoreSettings?) async throws {
        let pricing = try AgentPricing(parsing: ["table-=14.4", "own=99"])
        try await withCoordinator(configure: {
            $0.objectStore = objectStore
            $0.agentPricing = pricing
        }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: true)
            let started = Date()
            let agents = [try Self.startAgent(harness, name: "own", slots: 1, costPerHour: 3.6),
                          try Self.startAgent(harness, name: "table-b", slots: 2, costPerHour: nil)]
            let done = try await client.waitForState(job: job, "done", seconds: 180)
            let wall = Date().timeIntervalSince(started)
            for agent in agents { await agent.stop() }

            let agentSeconds = try #require(done.agentSeconds)
            let store = try harness.schema.store()
            let tasks = try #require(try store.console.tasks(ofJob: job))
            let timed = tasks.filter { $0.agentMilliseconds != nil }
            // The job's agent-seconds are its tasks' (the ones agents ran), exactly.
            #expect(Double(timed.compactMap(\.agentMilliseconds).reduce(0, +)) / 1000 == agentSeconds)
            // Plausible against the render: every chunk and the audio took an agent some time, no
            // more than the job's wall time each, and three slots cannot do more than three walls.
            let rendered = tasks.filter { $0.kind != .finalise }
            #expect(rendered.count == 6 && rendered.allSatisfy { ($0.agentMilliseconds ?? 0) > 0 }, "\(rendered.map(\.agentMilliseconds))")
            #expect(timed.allSatisfy { Double($0.agentMilliseconds ?? 0) / 1000 <= wall + 1 }, "wall \(wall) s: \(timed.map(\.agentMilliseconds))")
            #expect(agentSeconds > 0 && agentSeconds <= 3 * (wall + 1), "\(agentSeconds) agent-s in \(wall) s")
            // Each task at its slot's price: its own 3.6 (the table's `own=99` does not override
            // it), or the table's 14.4 over 2 slots.
            for task in rendered {
                let expected: Double? = task.agentName == "own" ? 3.6 : (task.agentName?.hasPrefix("table-b/") == true ? 7.2 : nil)
                #expect(expected != nil && task.costPerHour == expected, "\(task.agentName ?? "-"): \(String(describing: task.costPerHour))")
            }
            let expectedCost = timed.reduce(0.0) { $0 + Double($1.agentMilliseconds ?? 0) / 3_600_000 * ($1.costPerHour ?? 0) }
            let cost = try #require(done.cost)
            #expect(cost > 0 && abs(cost - expectedCost) < 1e-9, "cost \(cost), tasks' \(expectedCost)")
            #expect(done.unpricedTasks == timed.filter { $0.costPerHour == nil }.count)
            // Every agent had a price, and the coordinator's own finalising (with a directory)
            // costs nothing: no task is unpriced.
            #expect(done.unpricedTasks == 0, "\(timed.map { "\($0.kind) \($0.agentName ?? "-") \(String(describing: $0.costPerHour))" })")
            if let finalise = tasks.first(where: { $0.kind == .finalise }), finalise.agentName == "@coordinator" {
                #expect(finalise.costPerHour == 0)
            }
        }
    }

    @Test func aJobsAgentSecondsAndCostAddUpFromItsTasksWithADirectory() async throws {
        try await renderAndCheck(objectStore: nil)
    }

    @Test(.enabled(if: CoordinatorS3.isConfigured, CoordinatorS3.skipReason))
    func aJobsAgentSecondsAndCostAddUpFromItsTasksWithS3() async throws {
        try await renderAndCheck(objectStore: try await CoordinatorS3.settings("job-cost"))
    }
}
