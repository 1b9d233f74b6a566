import ReelStoreTesting
import Foundation
import ReelAgent
import ReelCoordinator
import ReelProtocol
import ReelScheduling
import ReelStore
import Synchronization
import Testing

/// `reel drain` and `DRAINING` through a real coordinator (proto/PROTOCOL.md §4.2): an operator's
/// request reaches the agent on its next answer, whichever coordinator it is connected to; an
/// agent that drains by itself is shown draining; an agent too old to understand is refused
/// with a message saying what to do.
@Suite(.database) struct DrainTests {
    static let drainingCaps = AgentCapabilities(threads: 1, encoders: ["libx264", "aac"], cacheBytes: 1 << 20, host: "localhost",
                                                drain: true)

    static func state(of name: String, _ client: ReelClient) async throws -> String? {
        guard case .report(let json) = try await client.send(.agents) else { return nil }
        return try JSONDecoder().decode(AgentsReport.self, from: Data(json)).agents.first { $0.name == name }?.state
    }

    static func drained(_ reply: Message) throws -> [String] {
        guard case .report(let json) = reply else { throw TestFailure(description: "DRAINAGENT answered \(reply)") }
        return try JSONDecoder().decode(DrainReport.self, from: Data(json)).agents
    }

    @Test func aWaitingClaimIsAnsweredDrainAndABusyAgentsHeartbeatSaysSo() async throws {
        try await withCoordinator(leaseSeconds: 120) { media, harness, client in
            // Two slots of one agent process: one idle with a claim held, one holding a task.
            let idle = try await harness.connect(role: .agent, name: "render-07/1")
            #expect(try await idle.send(.capabilities(Self.drainingCaps)) == .ok)
            let busy = try await harness.connect(role: .agent, name: "render-07/2")
            #expect(try await busy.send(.capabilities(Self.drainingCaps)) == .ok)
            let other = try await harness.agent("render-08", caps: Self.drainingCaps)
            let job = try await LeaseTests.queuedJob(client, media)
            guard case .task(let task, _) = try await busy.send(.claim(waitSeconds: 5)) else {
                Issue.record("the busy slot got no task"); return
            }
            guard case .lease(_, _, _, let before) = try await busy.send(.heartbeat(task: task.task, epoch: task.epoch)) else {
                Issue.record("no LEASE"); return
            }
            #expect(!before, "nobody asked it to drain yet")
            // Nothing else claimable: the idle slot's claim is held.
            #expect(try await client.send(.pause(job: job)) == .ok)
            let waiting = Task { try await idle.send(.claim(waitSeconds: 60)) }
            try await eventually("the idle slot's claim waits") { harness.dispatcherWaiting == 1 }

            #expect(try Self.drained(try await client.send(.drainAgent(name: "render-07"))) == ["render-07/1", "render-07/2"])
            #expect(try await waiting.value == .drain, "the held claim is answered DRAIN at once")
            #expect(try await idle.send(.claim(waitSeconds: 60)) == .drain, "and so is every later claim")
            guard case .lease(_, _, _, let after) = try await busy.send(.heartbeat(task: task.task, epoch: task.epoch)) else {
                Issue.record("no LEASE"); return
            }
            #expect(after, "the busy slot's heartbeat renews its lease and says drain=1: it finishes its chunk")
            #expect(try await Self.state(of: "render-07/1", client) == "draining")
            #expect(try await Self.state(of: "render-07/2", client) == "draining")
            #expect(try await Self.state(of: "render-08", client) != "draining", "only the agent named drains")
            _ = other

            // Goodbye: offline, and a new process of the same name is online again and gets work.
            await idle.close()
            try await eventually("the drained slot is offline once it left") { try await Self.state(of: "render-07/1", client) == "offline" }
            let restarted = try await harness.connect(role: .agent, name: "render-07/1")
            #expect(try await restarted.send(.capabilities(Self.drainingCaps)) == .ok)
            #expect(try await Self.state(of: "render-07/1", client) == "idle")
            #expect(try await client.send(.resume(job: job)) == .ok)
            guard case .task = try await restarted.send(.claim(waitSeconds: 5)) else { Issue.record("a restarted agent gets work"); return }
            await restarted.close(); await busy.close(); await other.close()
        }
    }

    @Test func anAgentThatDrainsByItselfIsShownDraining() async throws {
        try await withCoordinator { _, harness, client in
            let agent = try await harness.agent("stopping", caps: Self.drainingCaps)
            #expect(try await Self.state(of: "stopping", client) == "idle")
            #expect(try await agent.send(.draining(seconds: 120)) == .ok)
            #expect(try await Self.state(of: "stopping", client) == "draining")
            #expect(try await agent.send(.claim(waitSeconds: 5)) == .drain, "a draining agent that claims is reminded")
            await agent.close()
        }
    }

    @Test func anAgentAskedWhileAwayIsToldWhenItComesBack() async throws {
        try await withCoordinator { _, harness, client in
            // Online in the database but connected nowhere (its coordinator died under it, say).
            let caps = String(decoding: try JSONEncoder().encode(Self.drainingCaps), as: UTF8.self)
            _ = try harness.schema.store().agents.register(name: "away", host: "h", capabilities: caps)
            #expect(try Self.drained(try await client.send(.drainAgent(name: "away"))) == ["away"])
            let back = try await harness.connect(role: .agent, name: "away")
            #expect(try await back.send(.capabilities(Self.drainingCaps)) == .ok)
            #expect(try await Self.state(of: "away", client) == "draining", "coming back does not undo the request")
            #expect(try await back.send(.claim(waitSeconds: 5)) == .drain)
            await back.close()
        }
    }

    @Test func anUnknownOrOldAgentIsRefusedWithWhatToDo() async throws {
        try await withCoordinator { _, harness, client in
            do {
                _ = try await client.send(.drainAgent(name: "nobody"))
                Issue.record("draining nobody succeeded")
            } catch let error as ReelProtocolError {
                #expect(error.code == .notFound && error.message.contains("reel agents"), "\(error)")
            }
            let old = try await harness.agent("old-agent")   // CAPS without drain=1
            do {
                _ = try await client.send(.drainAgent(name: "old-agent"))
                Issue.record("an agent that cannot understand DRAIN was asked to")
            } catch let error as ReelProtocolError {
                #expect(error.message.contains("upgrade it") && error.message.contains("SIGTERM"), "\(error)")
            }
            #expect(try await Self.state(of: "old-agent", client) == "idle", "nothing changed")
            await old.close()
        }
    }

    @Test func anAgentOnAnotherCoordinatorIsToldThroughTheDatabase() async throws {
        try await SeveralCoordinatorsTests.withTwo(configure: SeveralCoordinatorsTests.noPeriodicWake) { _, a, b, client in
            let agent = try await b.connect(role: .agent, name: "on-b")
            #expect(try await agent.send(.capabilities(Self.drainingCaps)) == .ok)
            let claim = Task { try await agent.send(.claim(waitSeconds: 60)) }
            try await eventually("B holds the claim") { b.dispatcherWaiting == 1 }
            let asked = ContinuousClock.now
            #expect(try Self.drained(try await client.send(.drainAgent(name: "on-b"))) == ["on-b"], "asked through A")
            #expect(try await claim.value == .drain)
            #expect(ContinuousClock.now - asked < StatusWaitTests.answeredEarly, "told when A asked, not at the end of the wait")
            await agent.close()
            _ = a
        }
    }

    /// Reel's own agent, drained with `reel drain` while it renders: it finishes what it holds,
    /// claims nothing more, says goodbye and its `run()` returns; nothing it did is lost or
    /// attempted twice, and another agent finishes the job.
    @Test func reelsAgentDrainedWhileRenderingFinishesItsChunkAndStops() async throws {
        try await withCoordinator(leaseSeconds: 120) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media)
            let first = try AgentFinaliseTests.RunningAgent.start(harness, name: "drained", finalise: false)
            try await eventually("the agent holds a task") { try await client.status(job: job).tasks.running > 0 }
            #expect(try Self.drained(try await client.send(.drainAgent(name: "drained"))) == ["drained"])
            // run() returns: it drained and said goodbye (waited for with a deadline, not forever).
            let stopped = Mutex(false)
            Task { _ = try? await first.task.value; stopped.withLock { $0 = true } }
            try await eventually("the drained agent's run() returns") { stopped.withLock { $0 } }
            try? FileManager.default.removeItem(at: first.cache)
            try await eventually("the drained agent is offline") { try await Self.state(of: "drained", client) == "offline" }
            let afterDrain = try await client.status(job: job).tasks
            #expect(afterDrain.running == 0 && afterDrain.failed == 0, "what it held it finished or handed back: \(afterDrain)")
            #expect(afterDrain.done >= 1, "the chunk it was rendering counts: \(afterDrain)")
            #expect(afterDrain.done < afterDrain.total, "it stopped claiming: the job is not done by it alone: \(afterDrain)")

            let second = try AgentFinaliseTests.RunningAgent.start(harness, name: "finisher", finalise: false)
            let done = try await client.waitForState(job: job, "done")
            await second.stop()
            #expect(done.tasks.failed == 0)
            let attempts = try harness.schema.connect().query("SELECT sum(attempts) AS a, count(*) AS n FROM tasks WHERE job_id = $1::bigint",
                                                               [String(job)]).rows[0]
            #expect(try attempts.int("a") == attempts.int("n"), "one attempt per task: the drain wasted none")
            let output = try makeWorkDirectory() + "/out.mp4"
            try await client.download(job: job, to: output)
            #expect(try await countFrames(output) == 50, "the whole 2 s at 25 fps")
        }
    }
}
