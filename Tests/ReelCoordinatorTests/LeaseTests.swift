import Foundation
import ReelCore
import ReelMedia
import ReelProtocol
import Testing

/// Leases, fencing and result verification.
@Suite struct LeaseTests {
    /// Uploads both assets, then submits: nothing is missing, so the job is planned at once.
    static func queuedJob(_ client: ReelClient, _ media: TestMedia, withAudio: Bool = true) async throws -> Int64 {
        try await client.upload(media.video)
        try await client.upload(media.audio)
        guard case .job(let job, let missing) = try await client.send(.submit(document: try media.submission(withAudio: withAudio))) else {
            throw TestFailure(description: "SUBMIT did not answer JOB")
        }
        #expect(missing.isEmpty)
        return job
    }

    @Test func wrongChecksumAndStaleEpochResultsAreRefused() async throws {
        try await withCoordinator { media, harness, client in
            _ = try await Self.queuedJob(client, media)

            let slow = try await harness.agent("slow")
            guard case .task(let first, _) = try await slow.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK"); return }

            let bytes: [UInt8] = Array("not really a chunk".utf8)
            let (_, rightHash) = try sha256(bytes)
            do {
                _ = try await slow.send(.result(task: first.task, epoch: first.epoch, sha256: String(repeating: "a", count: 64), data: bytes))
                Issue.record("a wrong checksum was accepted")
            } catch let error as ReelProtocolError {
                #expect(error.code == .checksumMismatch)
            }

            // The lease runs out (PROGRESS does not renew it); the reaper re-queues the task and
            // another agent claims it, whose lease lasts (the clock moves no further).
            harness.clock.advance(seconds: 31)
            try await eventually("the lease expires") {
                try await slow.send(.progress(task: first.task, epoch: first.epoch, frames: 1)) == .lost(task: first.task)
            }
            #expect(try await slow.send(.heartbeat(task: first.task, epoch: first.epoch)) == .lost(task: first.task))
            #expect(try await slow.send(.progress(task: first.task, epoch: first.epoch, frames: 1)) == .lost(task: first.task))
            let fast = try await harness.agent("fast")
            guard case .task(let again, _) = try await fast.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK after expiry"); return }
            #expect(again.task == first.task)
            #expect(again.epoch == first.epoch + 1)

            do {
                _ = try await slow.send(.result(task: first.task, epoch: first.epoch, sha256: rightHash, data: bytes))
                Issue.record("a stale-epoch result was accepted")
            } catch let error as ReelProtocolError {
                #expect(error.code == .staleEpoch)
            }
            // The current holder can still release it (and a stale RELEASE is LOST).
            #expect(try await slow.send(.release(task: first.task, epoch: first.epoch)) == .lost(task: first.task))
            #expect(try await fast.send(.release(task: again.task, epoch: again.epoch)) == .ok)
            #expect(harness.coordinator.metrics.exposition().contains("reel_lease_expiries_total 1"))

            await slow.close(); await fast.close()
        }
    }

    @Test func failedTasksAreRetriedUntilTheAttemptLimit() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await Self.queuedJob(client, media)
            let agent = try await harness.agent("broken")
            var attempts = 0
            for _ in 0..<3 {
                guard case .task(let task, _) = try await agent.send(.claim(waitSeconds: 60)) else { break }
                #expect(try await agent.send(.fail(task: task.task, epoch: task.epoch, reason: "decoder error: boom")) == .ok)
                attempts += 1
            }
            #expect(attempts == 3)
            let status = try await client.waitForState(job: job, "failed", seconds: 10)
            #expect(status.error?.contains("boom") == true)
            await agent.close()
        }
    }

    func sha256(_ bytes: [UInt8]) throws -> (Int, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-coord-hash-\(UUID().uuidString)").path
        defer { unlink(path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try FileDigest.sha256(path: path)
    }
}
