import Foundation
import ReelCore
import ReelProtocol
import ReelStore
import ReelScheduling
import ReelStoreTesting
import Testing

/// The dispatch rules, end to end through a real coordinator: a claim waiting when a
/// job arrives is answered at once; a claim whose connection closed is withdrawn without
/// using an attempt; a disconnected holder's task is claimable again after the reconnect
/// grace, not the full lease; an agent that reconnects within the grace re-attaches.
///
/// Times here are generous bounds on things that happen in a second or two (the grace, the
/// reaper's pass), set far below the lease they are told apart from, so a loaded CI machine
/// does not blur them.
@Suite(.database) struct DispatchTests {
    @Test func aWaitingClaimIsAnsweredWhenAJobArrivesAndAClosedClaimUsesNoAttempt() async throws {
        try await withCoordinator(leaseSeconds: 120) { media, harness, client in

            // An agent waits with nothing to do, then goes away while its claim is pending.
            let gone = try await harness.agent("gone")
            let pending = Task { try? await gone.send(.claim(waitSeconds: 60)) }
            let waiting = try await harness.agent("waiting")
            try await eventually("both claims wait") { harness.dispatcherWaiting == 1 }
            await gone.abort()
            _ = await pending.value
            try await eventually("the closed connection's claim is withdrawn") { harness.dispatcherWaiting == 0 }

            // A claim waiting when the job is planned gets its first task without polling.
            let claim = Task { try await waiting.send(.claim(waitSeconds: 60)) }
            try await eventually("the claim waits") { harness.dispatcherWaiting == 1 }
            let job = try await LeaseTests.queuedJob(client, media)
            guard case .task(let task, _) = try await claim.value else { Issue.record("the waiting claim got no TASK"); return }
            #expect(task.job == job && task.epoch == 1, "the first lease of the job's first task: no attempt went to the closed claim")

            let schema = harness.schema
            let attempts = try schema.connect().query("SELECT max(attempts) AS a, sum(attempts) AS s FROM tasks WHERE job_id = $1::bigint",
                                                      [String(job)]).rows[0]
            #expect(try attempts.int("a") == 1 && attempts.int("s") == 1, "one attempt used in all, by the live agent")
            await waiting.close()
        }
    }

    /// `CAPS encoders=` decides what an agent is offered: on a farm where only some hosts have
    /// libx265, an HEVC job's chunks go to those, and its AAC audio to anyone.
    @Test func chunksGoOnlyToAgentsThatHaveTheirEncoder() async throws {
        try await withCoordinator(leaseSeconds: 120) { media, harness, client in
            try await client.upload(media.video)
            try await client.upload(media.audio)
            guard case .job(let job, _) = try await client.send(.submit(document: try media.submission(codec: "hevc"))) else {
                Issue.record("SUBMIT did not answer JOB"); return
            }

            let x264 = try await harness.connect(role: .agent, name: "x264-only")
            #expect(try await x264.send(.capabilities(agentCaps)) == .ok)  // libx264 and aac
            guard case .task(let audio, _) = try await x264.send(.claim(waitSeconds: 30)) else { Issue.record("no TASK"); return }
            #expect(audio.job == job && audio.kind == .audio, "the audio needs only AAC")
            #expect(try await x264.send(.claim(waitSeconds: 1)) == .noTask, "four HEVC chunks are queued, none for it")
            #expect(try await client.status(job: job).needsEncoder == "libx265", "STATUS says what the job waits for")
            guard case .report(let json) = try await client.send(.agents) else { Issue.record("no REPORT"); return }
            #expect(try JSONDecoder().decode(AgentsReport.self, from: Data(json)).agents.first { $0.name == "x264-only" }?.encoders == ["libx264", "aac"],
                    "AGENTS shows what each agent can encode")

            let x265 = try await harness.connect(role: .agent, name: "with-x265")
            let caps = AgentCapabilities(threads: 1, encoders: ["libx264", "libx265", "aac"], cacheBytes: 1 << 20, host: "localhost")
            #expect(try await x265.send(.capabilities(caps)) == .ok)
            guard case .task(let chunk, _) = try await x265.send(.claim(waitSeconds: 30)) else { Issue.record("no TASK"); return }
            #expect(chunk.job == job && chunk.kind == .videoChunk && chunk.frameStart == 0)
            #expect(try await client.status(job: job).needsEncoder == nil, "an agent with libx265 is connected")
            await x264.close(); await x265.close()
        }
    }

    @Test func aDisconnectedHoldersTaskIsClaimableAfterTheGraceNotTheLease() async throws {
        // A 10-minute lease: only the 1 s grace can explain the task moving within the test.
        try await withCoordinator(leaseSeconds: 600, configure: { $0.reconnectGraceSeconds = 1 }) { media, harness, client in
            _ = try await LeaseTests.queuedJob(client, media, withAudio: false)

            let lost = try await harness.agent("lost")
            guard case .task(let first, _) = try await lost.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
            #expect(first.expiresAtMillis > Int64(Date().timeIntervalSince1970 * 1000) + 500_000)
            await lost.abort()

            let other = try await harness.agent("other")
            // Claim until the lost agent's task comes back (the other chunks come first or after).
            var again: TaskAssignment?
            for _ in 0..<20 {
                guard case .task(let task, _) = try await other.send(.claim(waitSeconds: 60)) else { break }
                if task.task == first.task { again = task; break }
            }
            let back = try #require(again, "the disconnected agent's task never became claimable")
            #expect(back.epoch == first.epoch + 1)
            await other.close()
        }
    }

    @Test func anAgentThatReconnectsWithinTheGraceReattachesToItsTask() async throws {
        try await withCoordinator(leaseSeconds: 600, configure: { $0.reconnectGraceSeconds = 60 }) { media, harness, client in
            _ = try await LeaseTests.queuedJob(client, media, withAudio: false)

            let first = try await harness.agent("flaky")
            guard case .task(let task, _) = try await first.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }
            await first.abort()
            try await eventually("the lease is cut to the grace") {
                let row = try harness.schema.connect().query(
                    "SELECT (extract(epoch FROM lease_expires_at - now()))::float8 AS left FROM tasks WHERE id = $1::bigint", [String(task.task)]).rows[0]
                return (Double(row["left"] ?? "") ?? 1e9) < 61
            }

            // Same name, new connection: a HEARTBEAT under the old epoch renews the full lease.
            let second = try await harness.agent("flaky")
            guard case .lease(let renewed, let epoch, let expires, _) = try await second.send(.heartbeat(task: task.task, epoch: task.epoch)) else {
                Issue.record("the reconnected agent lost its task"); return
            }
            #expect(renewed == task.task && epoch == task.epoch)
            #expect(expires > Int64(Date().timeIntervalSince1970 * 1000) + 500_000, "renewed to the full lease, not the grace")
            #expect(try await second.send(.release(task: task.task, epoch: task.epoch)) == .ok)
            await second.close()
        }
    }
}

/// Waits until `condition` holds (checked every 50 ms, up to a generous 60 s).
func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw TestFailure(description: "timed out waiting until \(what)")
}
