import Foundation
import ReelCore
import ReelProtocol
import Testing

/// Restart, cancel and retry: everything the coordinator knows survives in PostgreSQL and storage.
@Suite(.database) struct LifecycleTests {
    @Test func aRestartedCoordinatorCompletesTheJob() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let first = try await CoordinatorHarness()
        var client = try await first.connect(role: .client, name: "ops@test")
        let job = try await LeaseTests.queuedJob(client, media, withAudio: false)

        var agentClient = try await first.agent("render-01")
        let work = try makeWorkDirectory()
        let done = try await RenderingAgent(client: agentClient, harness: first, workDirectory: work).work(limit: 1)
        #expect(done.count == 1)
        // A second task is claimed and abandoned when the coordinator goes away: its lease must expire.
        guard case .task(let abandoned, _) = try await agentClient.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
        await agentClient.close()
        await client.close()
        try await first.stop()

        let second = try await CoordinatorHarness(reusing: first)
        second.clock.advance(seconds: 31) // past the abandoned lease
        client = try await second.connect(role: .client, name: "ops@test")
        let before = try await client.status(job: job)
        #expect(before.tasks.done == 1)
        #expect(before.state == "running")
        agentClient = try await second.connect(role: .agent, name: "render-01")
        #expect(try await agentClient.send(.capabilities(agentCaps)) == .ok)
        let rest = try await RenderingAgent(client: agentClient, harness: second, workDirectory: work).work(claimWait: 4)
        #expect(rest.contains { $0.task == abandoned.task && $0.epoch > abandoned.epoch }, "the abandoned task was re-claimed after its lease expired")
        #expect(done.count + rest.count == 5)

        let finished = try await client.waitForState(job: job, "done")
        #expect(finished.framesDone == 50)
        let output = media.directory.appendingPathComponent("restarted.mp4").path
        try await client.download(job: job, to: output)
        #expect(try await countFrames(output) == 50)
        await agentClient.close(); await client.close()
        try await second.stop()
    }

    @Test func cancelAndRetry() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media)

            await expectRefusal(.notReady) { _ = try await client.send(.output(job: job, offset: 0, length: 10)) }
            await expectRefusal(.notFound) { _ = try await client.send(.output(job: 999_999, offset: 0, length: 10)) }
            await expectRefusal(.notFound) { _ = try await client.send(.cancel(job: 999_999)) }
            await expectRefusal(.conflict) { _ = try await client.send(.retry(job: job)) }

            let agent = try await harness.agent("render-01")
            guard case .task(let held, _) = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }

            #expect(try await client.send(.cancel(job: job)) == .ok)
            #expect(try await client.status(job: job).state == "cancelled")
            await expectRefusal(.conflict) { _ = try await client.send(.cancel(job: job)) }
            // The holder learns its lease is gone; nothing is claimable.
            #expect(try await agent.send(.heartbeat(task: held.task, epoch: held.epoch)) == .lost(task: held.task))
            #expect(try await agent.send(.claim(waitSeconds: 0)) == .noTask)

            #expect(try await client.send(.retry(job: job)) == .ok)
            let retried = try await client.status(job: job)
            #expect(retried.state == "queued")
            #expect(retried.tasks.queued == retried.tasks.total && retried.tasks.total == 6)
            guard case .task = try await agent.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK after RETRY"); return }

            // STATUS without a job lists it.
            guard case .report(let json) = try await client.send(.status(job: nil)) else { Issue.record("no REPORT"); return }
            #expect(try JSONDecoder().decode(StatusReport.self, from: Data(json)).jobs.map(\.id) == [job])
            await agent.close()
        }
    }

    @Test func pendingClaimsAreAnsweredWhenDraining() async throws {
        let harness = try await CoordinatorHarness()
        let agent = try await harness.agent("waiter")
        let asked = ContinuousClock.now
        async let reply = agent.send(.claim(waitSeconds: 60))
        try await eventually("the claim waits") { harness.coordinator.waitingClaims == 1 }
        try await harness.stop()
        // A claim the drain did not answer waits out its 60 s and then answers NONE all the same
        // (the server does not close a connection with a request in flight), so NONE alone proves
        // nothing: the answer must come well before the wait's end. Half of it tells the two apart
        // on any machine (a loaded CI machine once took over 10 s to stop).
        #expect(try await reply == .noTask)
        #expect(ContinuousClock.now - asked < .seconds(30), "the 60 s claim was cut short by the drain")
    }
}

/// A stored chunk result that is damaged or missing by finalise time is not the job's fault:
/// just that chunk is rendered again and the job still ends done, with every frame.
@Suite(.database) struct FinaliseFailureTests {
    @Test func aCorruptStoredChunkIsRenderedAgainAndTheJobSucceeds() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: false)
            let agentClient = try await harness.agent("render-01")
            let agent = RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory())

            // Render the first chunk, then damage its stored result before the others are done.
            guard case .task(let first, let payload) = try await agentClient.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
            try await agent.render(first, payload)
            let results = try harness.storedResults()
            #expect(results.count == 1)
            let damaged = harness.resultPath(results[0])
            try Data("damaged".utf8).write(to: URL(fileURLWithPath: damaged))
            // The other four chunks; the finaliser then finds the damage and re-queues that chunk
            // alone, under a new epoch (it may already come back within this same claim loop).
            var rendered = try await agent.work()
            let deadline = Date().addingTimeInterval(30)
            while !rendered.contains(where: { $0.task == first.task }), Date() < deadline {
                rendered += try await agent.work(claimWait: 1)
            }
            #expect(rendered.count == 5, "four chunks once, the damaged one again: \(rendered.map(\.task))")
            #expect(Set(rendered.map(\.task)).count == 5)
            #expect(rendered.filter { $0.task == first.task }.map { $0.epoch > first.epoch } == [true])

            let done = try await client.waitForState(job: job, "done", seconds: 30)
            #expect(done.tasks.done == 5 && done.framesDone == 50)
            let output = media.directory.appendingPathComponent("output.mp4").path
            try await client.download(job: job, to: output)
            #expect(try await countFrames(output) == 50)
            await agentClient.close()
        }
    }

    func expectNoOutput(_ client: ReelClient, _ job: Int64) async {
        do {
            _ = try await client.send(.output(job: job, offset: 0, length: 1))
            Issue.record("a failed job has output")
        } catch let error as ReelProtocolError {
            #expect(error.code == .notReady)
        } catch {
            Issue.record("\(error)")
        }
    }
}

/// A composition that trapped `Rational` killed the coordinator on SUBMIT + PUT,
/// and again on every restart (it re-planned the job). Now each is a validation error.
@Suite(.database) struct HostileCompositionTests {
    @Test func overflowingTimesAreRefusedAtSubmit() async throws {
        try await withCoordinator { media, harness, client in
            let composition = """
                {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
                 "tracks": [{"id": 1, "mediaType": "video", "segments": [
                   {"asset": "clip", "at": "1/9223372036854775783", "sourceRange": {"start": 0, "duration": "1/9223372036854775643"}}]}]}
                """
            let request = SubmitRequest(composition: composition, assets: try media.manifest().filter { $0.key == "clip" }, settings: JobSettings())
            do {
                _ = try await client.send(.submit(document: Array(try JSONEncoder().encode(request))))
                Issue.record("the overflowing composition was accepted")
            } catch let error as ReelProtocolError {
                #expect(error.code == .invalidComposition)
                #expect(error.message.hasPrefix("tracks[0].segments[0].at: the fraction 1/9223372036854775783"), "\(error.message)")
            }
            // Hostile settings are refused too.
            let settings = JobSettings(chunkSeconds: Rational(1, 9_223_372_036_854_775_783))
            let bad = SubmitRequest(composition: media.composition(withAudio: false), assets: try media.manifest(), settings: settings)
            do {
                _ = try await client.send(.submit(document: Array(try JSONEncoder().encode(bad))))
                Issue.record("a chunk length of 1/9223372036854775783 s was accepted")
            } catch let error as ReelProtocolError {
                #expect(error.code == .invalidComposition && error.message.hasPrefix("settings.chunkSeconds:"), "\(error)")
            }
            #expect(try await client.send(.ping) == .pong, "the coordinator is alive")
        }
    }

    /// Problems found only once the assets are known (here: 250 million frames) fail the job
    /// at planning; the coordinator lives on, also after a restart.
    @Test func aJobThatCannotBePlannedFailsAndTheCoordinatorLivesOn() async throws {
        let media = try await TestMedia()
        defer { media.cleanUp() }
        let first = try await CoordinatorHarness()
        var client = try await first.connect(role: .client, name: "ops@test")
        let composition = """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 9999998, "sourceRange": {"start": 0, "duration": 2}}]}]}
            """
        let request = SubmitRequest(composition: composition, assets: try media.manifest().filter { $0.key == "clip" }, settings: JobSettings())
        guard case .job(let job, let missing) = try await client.send(.submit(document: Array(try JSONEncoder().encode(request)))) else {
            Issue.record("no JOB"); return
        }
        #expect(missing.count == 1)
        _ = try await client.upload(media.video)
        let failed = try await client.waitForState(job: job, "failed")
        #expect(failed.error?.contains("at most 5184000 frames") == true, "\(String(describing: failed.error))")
        #expect(try await client.send(.ping) == .pong)
        await client.close()
        try await first.stop()

        let second = try await CoordinatorHarness(reusing: first)
        client = try await second.connect(role: .client, name: "ops@test")
        #expect(try await client.status(job: job).state == "failed")
        #expect(try await client.send(.ping) == .pong)
        await client.close()
        try await second.stop()
    }
}
