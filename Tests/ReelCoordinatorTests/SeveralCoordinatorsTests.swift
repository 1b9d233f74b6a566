import ReelStoreTesting
import Foundation
import ReelCoordinator
import ReelProtocol
import ReelScheduling
import ReelStore
import ReelThreadTesting
import Testing

/// Two coordinators in one process on one database and one storage directory, as
/// `reel coordinator` runs them on two hosts (docs/task-lifecycle.md, "Several coordinators").
@Suite(.database, .blocking) struct SeveralCoordinatorsTests {
    /// No periodic wake: the reaper's pass (which also wakes waiting claims, as a safety net)
    /// runs once at start, so only the database's LISTEN/NOTIFY can wake the other coordinator.
    static func noPeriodicWake(_ configuration: inout CoordinatorConfiguration) { configuration.reaperInterval = .seconds(3600) }

    /// Coordinators A and B on one database and storage, and an operator's connection to A.
    static func withTwo(configure: @escaping (inout CoordinatorConfiguration) -> Void = { _ in },
                        _ body: (TestMedia, CoordinatorHarness, CoordinatorHarness, ReelClient) async throws -> Void) async throws {
        try await withCoordinator(configure: configure) { media, a, client in
            let b = try await CoordinatorHarness(reusing: a, configure: configure)
            do {
                try await body(media, a, b, client)
            } catch {
                try? await b.stop()
                throw error
            }
            try await b.stop()
        }
    }

    @Test func aTaskQueuedThroughOneCoordinatorWakesAClaimWaitingOnAnother() async throws {
        try await Self.withTwo(configure: Self.noPeriodicWake) { media, a, b, client in
            let agent = try await b.agent("on-b")
            defer { Task { await agent.close() } }
            let asked = ContinuousClock.now
            let claim = Task { try await agent.send(.claim(waitSeconds: 60)) }
            try await eventually("B holds the claim") { b.dispatcherWaiting == 1 }
            // Submitted to A: A plans the job, and B hears of its tasks from the database.
            let job = try await LeaseTests.queuedJob(client, media)
            guard case .task(let assignment, _) = try await claim.value else { Issue.record("the claim on B got no task"); return }
            #expect(assignment.job == job)
            #expect(ContinuousClock.now - asked < StatusWaitTests.answeredEarly, "answered when A queued the task, not at the end of the wait")
        }
    }

    @Test func aFollowerOfOneCoordinatorIsAnsweredWhenAnotherEndsTheJob() async throws {
        try await Self.withTwo(configure: Self.noPeriodicWake) { media, a, b, client in
            let job = try await LeaseTests.queuedJob(client, media)
            let (reply, asked) = try await StatusWaitTests.follow(job, b)
            #expect(try await client.send(.cancel(job: job)) == .ok, "cancelled through A")
            #expect(try StatusWaitTests.state(try await reply.value) == "cancelled")
            #expect(ContinuousClock.now - asked < StatusWaitTests.answeredEarly, "answered by the cancel on A, not by the end of the wait")
        }
    }

    /// Agents on both coordinators render one job; it is finalised once (its finalise task
    /// claimed once) and its output is whole.
    @Test func aJobRenderedThroughBothIsFinalisedOnce() async throws {
        try await Self.withTwo { media, a, b, client in
            let job = try await LeaseTests.queuedJob(client, media)
            let onA = try await a.agent("render-a"), onB = try await b.agent("render-b")
            async let doneA = RenderingAgent(client: onA, harness: a, workDirectory: try makeWorkDirectory()).work()
            async let doneB = RenderingAgent(client: onB, harness: b, workDirectory: try makeWorkDirectory()).work()
            let (tasksA, tasksB) = try await (doneA, doneB)
            await onA.close(); await onB.close()
            #expect(tasksA.count + tasksB.count == 6, "five chunks and the audio, each rendered once")
            let status = try await client.waitForState(job: job, "done")
            #expect(status.framesDone == 50)
            let store = try a.schema.store()
            let finalise = try #require(try store.jobs.tasks(ofJob: job).first { $0.kind == .finalise })
            #expect(finalise.state == .done && finalise.attempts == 1 && finalise.epoch == 1, "claimed once: \(finalise)")
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("reel-two-\(UUID().uuidString).mp4").path
            defer { unlink(output) }
            try await client.download(job: job, to: output)
            #expect(try await countFrames(output) == 50, "every frame in the output (decoded by ffprobe)")
        }
    }

    @Test func aJobEndIsNotifiedOnceWhenTwoCoordinatorsRun() async throws {
        let receiver = try WebhookReceiver(answers: [])
        defer { receiver.stop() }
        try await Self.withTwo { media, a, b, client in
            let url = "http://127.0.0.1:\(receiver.port)/hooks/reel"
            var jobs: [Int64] = []
            for _ in 0..<3 { jobs.append(try await NotificationTests.submit(client, media, notify: url)) }
            for job in jobs { #expect(try await client.send(.cancel(job: job)) == .ok) }
            for job in jobs {
                try await eventually("job \(job)'s notification is recorded delivered") {
                    try await NotificationTests.events(client, job).contains { $0.kind == "notified" }
                }
            }
            // Delivered is final: neither coordinator sends it again.
            let notified = try receiver.requests.map { try NotificationTests.notification($0).job.id }
            #expect(notified.sorted() == jobs, "each job notified exactly once: \(notified)")
        }
    }
}
