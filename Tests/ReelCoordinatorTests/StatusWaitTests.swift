import Foundation
import ReelProtocol
import Testing

/// `STATUS job= wait=`: a follower (`submit --wait`, `reel render`) is answered the moment its
/// job ends, by whatever ends it, instead of polling for it.
@Suite(.database) struct StatusWaitTests {
    /// The waits here are 60 s; an answer by the end of the job comes within milliseconds. Half
    /// the wait tells the two apart on any machine.
    static let answeredEarly: Duration = .seconds(30)

    /// Sends `STATUS job= wait=60` on a connection of its own and returns the pending reply, once
    /// the coordinator is holding it (so the job's end comes after its first look).
    static func follow(_ job: Int64, _ harness: CoordinatorHarness) async throws -> (Task<Message, Error>, ContinuousClock.Instant) {
        let follower = try await harness.connect(role: .client, name: "follower@test")
        let asked = ContinuousClock.now
        let reply = Task {
            defer { Task { await follower.close() } }
            return try await follower.send(.status(job: job, waitSeconds: 60))
        }
        try await eventually("the coordinator holds the STATUS of job \(job)") { harness.coordinator.followedJobs.contains(job) }
        return (reply, asked)
    }

    static func state(_ reply: Message) throws -> String {
        try status(reply).state
    }

    static func status(_ reply: Message) throws -> JobStatus {
        guard case .report(let json) = reply else { throw TestFailure(description: "STATUS answered \(reply)") }
        let report = try JSONDecoder().decode(StatusReport.self, from: Data(json))
        return try #require(report.jobs.first)
    }

    @Test func aFollowerIsAnsweredWhenTheJobIsCancelled() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media)
            let (reply, asked) = try await Self.follow(job, harness)
            #expect(try await client.send(.cancel(job: job)) == .ok)
            #expect(try Self.state(try await reply.value) == "cancelled")
            #expect(ContinuousClock.now - asked < Self.answeredEarly, "answered by the cancel, not by the end of the wait")
            try await eventually("the follower is forgotten") { harness.coordinator.followedJobs.isEmpty }
        }
    }

    /// A job waiting for its assets has not ended: its follower is held too.
    @Test func aFollowerOfAJobWaitingForItsAssetsIsHeldUntilItEnds() async throws {
        try await withCoordinator { media, harness, client in
            guard case .job(let job, let missing) = try await client.send(.submit(document: try media.submission())), !missing.isEmpty else {
                Issue.record("SUBMIT without uploads did not leave the job waiting"); return
            }
            #expect(try await client.status(job: job).state == "waiting_for_assets")
            let (reply, asked) = try await Self.follow(job, harness)
            #expect(try await client.send(.cancel(job: job)) == .ok)
            #expect(try Self.state(try await reply.value) == "cancelled")
            #expect(ContinuousClock.now - asked < Self.answeredEarly, "answered by the cancel, not by the end of the wait")
        }
    }

    /// The finaliser completing the job answers its follower; the same STATUS on the job that
    /// has ended is answered at once.
    @Test func aFollowerIsAnsweredWhenTheJobIsDone() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: false)
            // Every chunk but the last is rendered before the follower asks, so that its wait
            // spans one chunk and the finalise, not the whole job (which takes tens of seconds
            // on a loaded machine, and then looked like the end of the wait).
            let agent = try await harness.agent("render-01")
            let renderer = RenderingAgent(client: agent, harness: harness, workDirectory: try makeWorkDirectory())
            let total = try await client.status(job: job).tasks.total
            #expect(total >= 2, "the job has several chunks: \(total)")
            try await renderer.work(limit: total - 1)
            let (reply, asked) = try await Self.follow(job, harness)
            try await renderer.work()
            let done = try Self.status(try await reply.value)
            #expect(done.state == "done")
            #expect(ContinuousClock.now - asked < Self.answeredEarly, "answered by the finaliser, not by the end of the wait")
            #expect((done.agentSeconds ?? 0) > 0 && done.unpricedTasks != nil, "a held report of an ended job carries its agent time")

            let again = ContinuousClock.now
            #expect(try Self.state(try await client.send(.status(job: job, waitSeconds: 60))) == "done")
            #expect(ContinuousClock.now - again < Self.answeredEarly, "an ended job is answered at once")
            await agent.close()
        }
    }

    /// A task failing its last attempt fails the job, which answers its follower.
    @Test func aFollowerIsAnsweredWhenTheJobFails() async throws {
        try await withCoordinator(configure: { $0.maxAttempts = 1 }) { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: false)
            let (reply, asked) = try await Self.follow(job, harness)
            let agent = try await harness.agent("render-01")
            guard case .task(let task, _) = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
            #expect(try await agent.send(.fail(task: task.task, epoch: task.epoch, reason: "decoder error: boom")) == .ok)
            #expect(try Self.state(try await reply.value) == "failed")
            #expect(ContinuousClock.now - asked < Self.answeredEarly, "answered by the failure, not by the end of the wait")
            await agent.close()
        }
    }

    /// A coordinator shutting down answers its followers at once, as it answers waiting claims.
    @Test func followersAreAnsweredWhenTheCoordinatorDrains() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let harness = try await CoordinatorHarness()
        let client = try await harness.connect(role: .client, name: "ops@test")
        let job = try await LeaseTests.queuedJob(client, media)
        let (reply, asked) = try await Self.follow(job, harness)
        try await harness.stop()
        #expect(try Self.state(try await reply.value) == "queued")
        #expect(ContinuousClock.now - asked < Self.answeredEarly, "the 60 s wait was cut short by the drain")
        await client.close()
    }

    /// A job that does not end is answered when the wait is over, with where it stands.
    @Test func aFollowerOfARunningJobIsAnsweredWhenTheWaitIsOver() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media)
            #expect(try Self.state(try await client.send(.status(job: job, waitSeconds: 1))) == "queued")
            #expect(harness.coordinator.followedJobs.isEmpty)
            await expectRefusal(.notFound) { _ = try await client.send(.status(job: 999_999, waitSeconds: 1)) }
        }
    }

    /// A job's cost reads every one of its tasks: a held report (a follower reads the job at
    /// least once a second) leaves it out until the job has ended; `STATUS job=` without a wait
    /// (`reel status JOB`) has it while the job runs.
    @Test func aHeldReportOfARunningJobLeavesItsCostOut() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media)
            let agent = try await harness.agent("render-01")
            guard case .task = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
            let held = try Self.status(try await client.send(.status(job: job, waitSeconds: 1)))
            #expect(held.state == "running" && held.agentSeconds == nil && held.cost == nil && held.unpricedTasks == nil, "\(held)")
            let now = try await client.status(job: job)
            #expect(now.state == "running" && now.agentSeconds != nil && now.unpricedTasks == 1, "\(now)")
            await agent.close()
        }
    }
}
