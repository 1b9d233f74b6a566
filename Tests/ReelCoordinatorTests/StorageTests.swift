import Foundation
import Logging
import ReelCoordinator
import ReelMedia
import ReelProtocol
import Testing
import ReelThreadTesting

/// Retention decisions without any I/O.
@Suite(.blocking) struct StorageSweepDecisionTests {
    let policy = RetentionPolicy(keepOutputsSeconds: 7 * 86_400, uploadGraceSeconds: 86_400, unreferencedGraceSeconds: 3_600)
    let now: Int64 = 1_000_000_000_000
    let a = String(repeating: "a", count: 64), b = String(repeating: "b", count: 64), c = String(repeating: "c", count: 64)

    @Test func resultsGoWhenUnneededAndPastTheGrace() {
        let old = now - 2 * 3_600_000, fresh = now - 60_000
        let files = [StoredFile(name: a, modifiedMillis: old), StoredFile(name: b, modifiedMillis: old),
                     StoredFile(name: c, modifiedMillis: fresh), StoredFile(name: "README", modifiedMillis: old)]
        #expect(StorageSweep.resultsToDelete(files, needed: [a], nowMillis: now, policy: policy) == [b],
                "a is needed, c was written just now (its row may be on its way), README is not ours")
    }

    @Test func assetsAndAbandonedUploads() {
        let day = Int64(86_400_000)
        let files = [StoredFile(name: a, modifiedMillis: now - day), StoredFile(name: b, modifiedMillis: now - day),
                     StoredFile(name: c + ".partial", modifiedMillis: now - 2 * day),
                     StoredFile(name: a + ".partial", modifiedMillis: now - 60_000),
                     StoredFile(name: "notes.partial", modifiedMillis: now - 9 * day)]
        let decision = StorageSweep.assetsToDelete(files, needed: [b], nowMillis: now, policy: policy)
        #expect(decision.unneeded == [a])
        #expect(decision.abandonedUploads == [c + ".partial"])
        #expect(StorageSweep.temporariesToDelete([StoredFile(name: "result-1", modifiedMillis: now - 2 * day),
                                                  StoredFile(name: "result-2", modifiedMillis: now)], nowMillis: now, policy: policy) == ["result-1"])
    }

    @Test func partialResultUploadsGoWhenTheirLeaseIsGoneOrAfterTheGrace() {
        let day = Int64(86_400_000)
        let files = [StoredFile(name: "7-2-\(a).partial", modifiedMillis: now - 60_000),      // task 7 leased under epoch 2: kept
                     StoredFile(name: "7-1-\(b).partial", modifiedMillis: now - 60_000),      // an older epoch of task 7
                     StoredFile(name: "8-1-\(c).partial", modifiedMillis: now - 60_000),      // task 8 is not leased
                     StoredFile(name: "9-3-\(a).partial", modifiedMillis: now - 2 * day),     // leased, but untouched for 2 days
                     StoredFile(name: a, modifiedMillis: now - 2 * day),                      // a stored result: not a partial
                     StoredFile(name: "x-1-\(a).partial", modifiedMillis: now - 2 * day),     // not our name
                     StoredFile(name: "7-2-abc.partial", modifiedMillis: now - 2 * day)]
        #expect(StorageSweep.abandonedResultUploads(files, leased: [7: 2, 9: 3], nowMillis: now, policy: policy)
                == ["7-1-\(b).partial", "8-1-\(c).partial", "9-3-\(a).partial"])
    }

    @Test func retentionCutoffAndDurations() {
        #expect(policy.endedCutoffMillis(nowMillis: now) == now - 7 * 86_400_000)
        #expect(RetentionPolicy(keepOutputsSeconds: nil).endedCutoffMillis(nowMillis: now) == nil)
        #expect(DurationText.seconds("7d") == 604_800)
        #expect(DurationText.seconds("12h") == 43_200)
        #expect(DurationText.seconds("30m") == 1_800)
        #expect(DurationText.seconds("45") == 45 && DurationText.seconds("45s") == 45)
        #expect(DurationText.seconds("-1d") == nil && DurationText.seconds("d") == nil && DurationText.seconds("7w") == nil)
        #expect(DurationText.retention("forever") == .some(nil))
        #expect(DurationText.retention("0") == .some(nil))
        #expect(DurationText.retention("2h") == .some(7_200))
        #expect(DurationText.retention("soon") == nil)
    }
}

/// Stored files against the database, through a running coordinator.
@Suite struct StorageLifecycleTests {
    @Test func aMissingOrTruncatedStoredAssetIsReportedMissingAgain() async throws {
        try await withCoordinator { media, harness, client in
            try await client.upload(media.video)
            try await client.upload(media.audio)
            let manifest = try media.manifest()
            let clip = manifest["clip"]!.sha256, tone = manifest["tone"]!.sha256
            unlink(harness.assetPath(clip))
            try Data("short".utf8).write(to: URL(fileURLWithPath: harness.assetPath(tone)))

            guard case .job(let job, let missing) = try await client.send(.submit(document: try media.submission())) else {
                Issue.record("SUBMIT did not answer JOB"); return
            }
            #expect(Set(missing) == [clip, tone])
            #expect(try await client.status(job: job).state == "waiting_for_assets")
            try await client.upload(media.video)
            try await client.upload(media.audio)
            #expect(try await client.status(job: job).state == "queued")
        }
    }

    /// A stored source that goes missing after `SUBMIT` checked it but
    /// before the job is split into tasks sends the job back to waiting for its assets, with
    /// an error naming the source and what to do; `PUT`ting it again (what `submit --wait` does)
    /// releases and splits the job. A `PUT` of a source still held is answered complete at once.
    @Test func aSourceLostBeforeSplittingIsAskedForAgainAndThePutReleasesTheJob() async throws {
        try await withCoordinator { media, harness, client in
            try await client.upload(media.video)
            let manifest = try media.manifest()
            let clip = manifest["clip"]!.sha256, tone = manifest["tone"]!.sha256
            guard case .job(let job, let missing) = try await client.send(.submit(document: try media.submission())) else {
                Issue.record("SUBMIT did not answer JOB"); return
            }
            #expect(missing == [tone], "the clip is held")
            // The clip's file goes after SUBMIT looked at it; the last upload then splits the job.
            unlink(harness.assetPath(clip))
            try await client.upload(media.audio)
            let waiting = try await client.status(job: job)
            #expect(waiting.state == "waiting_for_assets" && waiting.tasks.total == 0)
            #expect(waiting.error?.contains("clip") == true && waiting.error?.contains("submit the job again") == true, "\(waiting)")

            // The submitter uploads its sources again: the one still held costs one request.
            let toneSize = manifest["tone"]!.size
            let held = try await client.send(.put(sha256: tone, offset: 0, total: toneSize, bytes: []))
            #expect(held == .stored(sha256: tone, have: toneSize, total: toneSize))
            try await client.upload(media.video)
            let split = try await client.status(job: job)
            #expect(split.state == "queued" && split.tasks.total > 0 && split.error == nil, "\(split)")
        }
    }

    @Test func aDoneJobsFilesGoAfterRetentionAndAbandonedUploadsToo() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: false)
            let agentClient = try await harness.agent("render-01")
            try await RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory()).work()
            _ = try await client.waitForState(job: job, "done", seconds: 30)

            guard case .report(let json) = try await client.send(.status(job: nil)) else { Issue.record("no REPORT"); return }
            let before = try #require(try JSONDecoder().decode(StatusReport.self, from: Data(json)).storage)
            #expect(before.assetBytes > 0 && before.resultBytes > 0 && before.outputBytes > 0)

            // The console preview's pieces of a stored result, and one whose result is gone.
            // Results sit at results/sha256/XX/<sha256> (the blob-key layout).
            let hash = try #require(FileManager.default.subpaths(atPath: harness.storage + "/results")?
                .map { ($0 as NSString).lastPathComponent }.first { $0.count == 64 })
            let piece = harness.storage + "/previews/\(hash)-0.m4s", orphan = harness.storage + "/previews/" + String(repeating: "d", count: 64) + ".init.mp4"
            for path in [piece, orphan] { try Data("piece".utf8).write(to: URL(fileURLWithPath: path)) }

            // Two hours on, the done job's chunks are kept for later jobs to reuse (--keep-chunks, 1 day).
            let soon = try StorageSweeper(configuration: harness.configuration, now: { Int64(Date().addingTimeInterval(2 * 3_600).timeIntervalSince1970 * 1000) })
            let kept = try await soon.sweep()
            #expect(kept.results == 0 && kept.outputs == 0 && kept.assets == 0, "\(kept)")
            #expect(FileManager.default.fileExists(atPath: piece) && !FileManager.default.fileExists(atPath: orphan),
                    "a preview piece goes with its result, not before")
            // A day and an hour on, they go (the output is the product), and the output and sources stay.
            let early = try StorageSweeper(configuration: harness.configuration, now: { Int64(Date().addingTimeInterval(25 * 3_600).timeIntervalSince1970 * 1000) })
            let first = try await early.sweep()
            #expect(first.results == 5 && first.outputs == 0 && first.assets == 0)
            #expect(!FileManager.default.fileExists(atPath: piece), "the result is gone, so is its preview piece")
            let output = media.directory.appendingPathComponent("kept.mp4").path
            try await client.download(job: job, to: output)
            #expect(try await countFrames(output) == 50)

            // An upload abandoned long ago, and one still in progress ("now" is a week and a day on).
            let later = Date().addingTimeInterval(8 * 86_400)
            let abandoned = harness.storage + "/assets/" + String(repeating: "e", count: 64) + ".partial"
            let inProgress = harness.storage + "/assets/" + String(repeating: "f", count: 64) + ".partial"
            for path in [abandoned, inProgress] { try Data("partial".utf8).write(to: URL(fileURLWithPath: path)) }
            try FileManager.default.setAttributes([.modificationDate: later.addingTimeInterval(-3_600)], ofItemAtPath: inProgress)

            let sweeper = try StorageSweeper(configuration: harness.configuration, now: { Int64(later.timeIntervalSince1970 * 1000) })
            let report = try await sweeper.sweep()
            // Assets: the two sources and the job's plan document.
            #expect(report.outputs == 1 && report.assets == 3 && report.abandonedUploads == 1, "\(report)")
            #expect(!FileManager.default.fileExists(atPath: abandoned))
            #expect(FileManager.default.fileExists(atPath: inProgress))
            #expect(try FileManager.default.contentsOfDirectory(atPath: harness.storage + "/outputs").isEmpty)
            #expect(try harness.storedResults().isEmpty)
            do {
                _ = try await client.send(.output(job: job, offset: 0, length: 1))
                Issue.record("an expired output was served")
            } catch let error as ReelProtocolError {
                #expect(error.code == .notFound && error.message.contains("retention"), "\(error)")
            }
            // The sources are forgotten too: submitting again asks for them.
            guard case .job(_, let missing) = try await client.send(.submit(document: try media.submission(withAudio: false))) else {
                Issue.record("SUBMIT did not answer JOB"); return
            }
            #expect(missing.count == 2, "clip and tone (the composition names both)")
            await agentClient.close()
        }
    }

    @Test func deleteRemovesAnEndedJobAndRefusesARunningOne() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: false)
            let agentClient = try await harness.agent("render-01")
            try await RenderingAgent(client: agentClient, harness: harness, workDirectory: try makeWorkDirectory()).work(limit: 2)

            await expectRefusal(.conflict) { _ = try await client.send(.delete(job: job)) }
            #expect(try await client.send(.cancel(job: job)) == .ok)
            #expect(try await client.send(.delete(job: job)) == .ok)
            await expectRefusal(.notFound) { _ = try await client.status(job: job) }
            await expectRefusal(.notFound) { _ = try await client.send(.delete(job: job)) }
            #expect(try harness.storedResults().isEmpty)
            await agentClient.close()
        }
    }
}

/// An agent that keeps failing is quarantined, and its tasks go to the agent that works.
@Suite struct QuarantineFlowTests {
    @Test func aFailingAgentIsQuarantinedAndTheJobFinishesOnTheOther() async throws {
        try await withCoordinator { media, harness, client in
            let job = try await LeaseTests.queuedJob(client, media, withAudio: false)
            let bad = try await harness.agent("agent-bad")
            let good = try await harness.agent("agent-good")

            // The bad agent fails three different chunks: it never gets one it already failed
            // while the good agent is live, and after the third it is quarantined.
            var failed: [Int64] = []
            for _ in 0..<3 {
                guard case .task(let task, _) = try await bad.send(.claim(waitSeconds: 60)) else { Issue.record("no TASK for the bad agent"); break }
                #expect(!failed.contains(task.task))
                #expect(try await bad.send(.fail(task: task.task, epoch: task.epoch, reason: "libx264 missing")) == .ok)
                failed.append(task.task)
            }
            #expect(try await bad.send(.claim(waitSeconds: 1)) == .noTask, "a quarantined agent gets no work")
            guard case .report(let json) = try await client.send(.agents) else { Issue.record("no REPORT"); return }
            let agents = try JSONDecoder().decode(AgentsReport.self, from: Data(json)).agents
            let badStatus = try #require(agents.first { $0.name == "agent-bad" })
            #expect(badStatus.state == "quarantined")
            #expect(badStatus.lastError == "libx264 missing")
            #expect(badStatus.failures == 3)
            #expect(agents.first { $0.name == "agent-good" }?.failures == 0)
            #expect((badStatus.quarantinedUntilMillis ?? 0) > Int64(Date().timeIntervalSince1970 * 1000) + 500_000)
            #expect(agents.first { $0.name == "agent-good" }?.state == "idle")

            let rendered = try await RenderingAgent(client: good, harness: harness, workDirectory: try makeWorkDirectory()).work()
            #expect(rendered.count == 5 && Set(failed).isSubset(of: Set(rendered.map(\.task))))
            let done = try await client.waitForState(job: job, "done", seconds: 30)
            #expect(done.framesDone == 50)
            await bad.close(); await good.close()
        }
    }
}
