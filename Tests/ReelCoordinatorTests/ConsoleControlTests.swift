import Foundation
import ReelCore
import ReelProtocol
import Testing

/// Pause, resume, priority and history over the line protocol, against a real coordinator.
@Suite struct ConsoleControlTests {
    static func submit(_ client: ReelClient, _ media: TestMedia, priority: Int? = nil) async throws -> Int64 {
        var request = try JSONDecoder().decode(SubmitRequest.self, from: Data(try media.submission(withAudio: false)))
        request.settings.priority = priority
        guard case .job(let job, let missing) = try await client.send(.submit(document: Array(try JSONEncoder().encode(request)))) else {
            throw TestFailure(description: "SUBMIT did not answer JOB")
        }
        #expect(missing.isEmpty)
        return job
    }

    @Test func aPausedJobsTasksAreNotClaimedUntilItIsResumed() async throws {
        try await withCoordinator { media, harness, client in
            try await client.upload(media.video)
            try await client.upload(media.audio)
            let job = try await Self.submit(client, media)
            #expect(try await client.send(.pause(job: job)) == .ok)
            #expect(try await client.send(.pause(job: job)) == .ok, "pausing a paused job changes nothing")
            let paused = try await client.status(job: job)
            #expect(paused.paused && paused.state == "queued")

            let agent = try await harness.agent("agent-1")
            #expect(try await agent.send(.claim(waitSeconds: 1)) == .noTask, "a paused job's task was handed out")

            // A claim waiting when the job is resumed gets its task (the dispatcher is woken).
            let waiting = Task { try await agent.send(.claim(waitSeconds: 30)) }
            #expect(try await client.send(.resume(job: job)) == .ok)
            guard case .task(let task, _) = try await waiting.value else { Issue.record("no TASK after RESUME"); return }
            #expect(task.job == job)
            #expect(try await client.status(job: job).paused == false)

            // Held leases run on while paused: the holder heartbeats them normally.
            #expect(try await client.send(.pause(job: job)) == .ok)
            guard case .lease = try await agent.send(.heartbeat(task: task.task, epoch: task.epoch)) else {
                Issue.record("pausing took the running task away"); return
            }

            await #expect(throws: ReelProtocolError(.notFound, "no job 999")) { try await client.send(.pause(job: 999)) }
            #expect(try await client.send(.cancel(job: job)) == .ok)
            await #expect(throws: ReelProtocolError(.conflict, "job \(job) is already cancelled")) { try await client.send(.resume(job: job)) }
            await #expect(throws: ReelProtocolError(.conflict, "job \(job) is already cancelled")) {
                try await client.send(.priority(job: job, priority: 1))
            }
            await agent.close()
        }
    }

    @Test func higherPriorityJobsAreClaimedFirstWhateverTheirAge() async throws {
        try await withCoordinator { media, harness, client in
            try await client.upload(media.video)
            try await client.upload(media.audio)
            let old = try await Self.submit(client, media)
            let new = try await Self.submit(client, media)
            let agent = try await harness.agent("agent-1")

            func claimedJob() async throws -> Int64 {
                guard case .task(let task, _) = try await agent.send(.claim(waitSeconds: 60)) else { throw TestFailure(description: "no TASK") }
                // Handed back un-attempted, so the next claim chooses afresh.
                #expect(try await agent.send(.release(task: task.task, epoch: task.epoch)) == .ok)
                return task.job
            }
            #expect(try await claimedJob() == old, "equal priorities: the oldest job first")
            #expect(try await client.send(.priority(job: new, priority: 10)) == .ok)
            #expect(try await claimedJob() == new)
            #expect(try await client.status(job: new).priority == 10)
            #expect(try await client.send(.priority(job: old, priority: 20)) == .ok)
            #expect(try await claimedJob() == old)
            // Negative priorities go after the default.
            #expect(try await client.send(.priority(job: old, priority: -5)) == .ok)
            #expect(try await client.send(.priority(job: new, priority: -6)) == .ok)
            let urgent = try await Self.submit(client, media, priority: 50)
            #expect(try await client.status(job: urgent).priority == 50, "SUBMIT's settings.priority is kept")
            #expect(try await claimedJob() == urgent)
            #expect(try await client.send(.cancel(job: urgent)) == .ok)
            #expect(try await claimedJob() == old)

            // Out of range: refused by the parser before it reaches the coordinator.
            do {
                _ = try await client.send(.priority(job: old, priority: 1001))
                Issue.record("priority 1001 was accepted")
            } catch let error as ReelProtocolError {
                #expect(error.code == .malformed)
            }
            await agent.close()
        }
    }

    @Test func eventsListTheJobsHistoryInOrderWithAgentsAndChunks() async throws {
        try await withCoordinator { media, harness, client in
            try await client.upload(media.video)
            try await client.upload(media.audio)
            let job = try await Self.submit(client, media)
            let agent = try await harness.agent("render-07")
            guard case .task(let task, _) = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
            #expect(try await agent.send(.fail(task: task.task, epoch: task.epoch, reason: "decoder exploded")) == .ok)
            #expect(try await client.send(.pause(job: job)) == .ok)
            #expect(try await client.send(.priority(job: job, priority: 5)) == .ok)
            #expect(try await client.send(.resume(job: job)) == .ok)
            #expect(try await client.send(.cancel(job: job)) == .ok)

            guard case .report(let json) = try await client.send(.events(job: job, after: 0)) else { Issue.record("EVENTS did not REPORT"); return }
            let report = try JSONDecoder().decode(EventsReport.self, from: Data(json))
            #expect(report.job == job)
            let kinds = report.events.map(\.kind)
            #expect(kinds == ["submitted", "planned", "claimed", "failed", "paused", "priority", "resumed", "cancelled"], "\(kinds)")
            #expect(report.events.map(\.id) == report.events.map(\.id).sorted())
            let claimed = try #require(report.events.first { $0.kind == "claimed" })
            #expect(claimed.agent == "render-07")
            #expect(claimed.task == task.task)
            #expect(claimed.taskLabel == "chunk 0 frames [\(task.frameStart), \(task.frameEnd))")
            let failed = try #require(report.events.first { $0.kind == "failed" })
            #expect(failed.message.contains("decoder exploded") && failed.agent == "render-07")
            #expect(report.events.first { $0.kind == "priority" }?.message == "5")

            // Paging: after the last id there is nothing; after the third, the rest.
            guard case .report(let rest) = try await client.send(.events(job: job, after: report.events[2].id)) else { Issue.record("EVENTS after= did not REPORT"); return }
            #expect(try JSONDecoder().decode(EventsReport.self, from: Data(rest)).events.map(\.kind) == Array(kinds.dropFirst(3)))
            guard case .report(let none) = try await client.send(.events(job: job, after: report.events.last!.id)) else { Issue.record("EVENTS after the last did not REPORT"); return }
            #expect(try JSONDecoder().decode(EventsReport.self, from: Data(none)).events.isEmpty)
            await #expect(throws: ReelProtocolError(.notFound, "no job 999")) { try await client.send(.events(job: 999, after: 0)) }
            await agent.close()
        }
    }
}
