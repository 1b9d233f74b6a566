import Foundation
import ReelCore
import ReelCoordinator
import ReelProtocol
import ReelScheduling
import ReelStoreTesting
import ReelThreadTesting
import Testing

/// A job's budget on a real farm: the coordinator and one of Reel's own agents rendering in this
/// process. A job with half its estimate as budget (the agent time the same composition took
/// unbudgeted) is paused by it, its running chunks finish or go back to the queue, nothing
/// fails; raising the budget completes it with output identical, byte for byte, to the
/// unbudgeted render.
@Suite(.database, .blocking, .serialized)
struct JobBudgetFarmTests {
    /// The test media's composition with audio, chunks of half a second, rendered anew (no
    /// reuse of the earlier job's chunks), with `budget`.
    static func submit(_ client: ReelClient, _ media: TestMedia, budget: String?) async throws -> Int64 {
        try await client.upload(media.video)
        try await client.upload(media.audio)
        let request = SubmitRequest(composition: media.composition(withAudio: true, codec: nil), assets: try media.manifest(),
                                    settings: JobSettings(chunkSeconds: Rational(1, 2), encoderThreads: 1, name: "budget job",
                                                          noCache: true, budget: budget))
        guard case .job(let job, let missing) = try await client.send(.submit(document: Array(try JSONEncoder().encode(request)))),
              missing.isEmpty else {
            throw TestFailure(description: "SUBMIT did not answer JOB with nothing missing")
        }
        return job
    }

    /// Polls STATUS until `condition` holds (or fails the test after `seconds`).
    static func waitFor(_ client: ReelClient, job: Int64, _ what: String, seconds: Double = 180,
                        _ condition: (JobStatus) -> Bool) async throws -> JobStatus {
        let deadline = Date().addingTimeInterval(seconds)
        var last: JobStatus?
        while Date() < deadline {
            let status = try await client.status(job: job)
            if condition(status) { return status }
            last = status
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure(description: "job \(job): \(what) did not happen: \(String(describing: last))")
    }

    static func hours(_ seconds: Double) -> String { String(format: "%.6fh", seconds / 3600) }

    @Test func aJobWithHalfItsEstimateAsBudgetPausesAndCompletesTheSameOnceRaised() async throws {
        try await withCoordinator { media, harness, client in
            // The reference: the same composition without a budget. Its agent time is the estimate.
            // A render of it first warms the process (codecs, fonts: a second or so the first time
            // on a busy machine, which made the estimate twice what the budgeted job then spent).
            let first = try JobCostFarmTests.startAgent(harness, name: "first", slots: 1, costPerHour: nil)
            let warmUp = try await Self.submit(client, media, budget: nil)
            _ = try await client.waitForState(job: warmUp, "done", seconds: 180)
            let reference = try await Self.submit(client, media, budget: nil)
            let referenceDone = try await client.waitForState(job: reference, "done", seconds: 180)
            await first.stop()
            let estimate = try #require(referenceDone.agentSeconds)
            #expect(referenceDone.budget == nil && referenceDone.pauseReason == nil)
            let referenceOutput = media.directory.appendingPathComponent("reference.mp4").path
            try await client.download(job: reference, to: referenceOutput)

            // Half the estimate: paused at 90 % of it, before the end.
            let budget = Self.hours(estimate / 2)
            let job = try await Self.submit(client, media, budget: budget)
            let agent = try JobCostFarmTests.startAgent(harness, name: "second", slots: 1, costPerHour: nil)
            let paused = try await Self.waitFor(client, job: job, "a pause by its budget") {
                $0.pauseReason == "budget" || ["done", "failed", "cancelled"].contains($0.state)
            }
            #expect(paused.state == "running" && paused.paused && paused.pauseReason == "budget", "\(paused)")
            // The same amount (the coordinator writes it without trailing zeros: "0.00012h" for "0.000120h").
            #expect(paused.budget.flatMap(JobBudget.init(parsing:)) == JobBudget(parsing: budget), "\(paused.budget ?? "none") for \(budget)")
            // Its running chunks finish (or, at 100 %, go back to the queue); nothing fails, and
            // chunks are left that a paused job does not hand out.
            let settled = try await Self.waitFor(client, job: job, "its running chunks ending") { $0.tasks.running == 0 }
            #expect(settled.state == "running" && settled.pauseReason == "budget" && settled.tasks.failed == 0, "\(settled)")
            #expect(settled.tasks.queued > 0 && settled.tasks.done < settled.tasks.total, "\(settled.tasks)")
            let spentHours = try #require(settled.budgetSpent)
            let events = try await NotificationTests.events(client, job)
            // Paused by the rule at 90 %: its event says what was spent then ("budget: S of Bh spent").
            let pause = try #require(events.first { $0.kind == "paused" && $0.message.hasPrefix("budget: ") }, "\(events.map(\.kind))")
            let spentAtPause = try #require(Double(pause.message.dropFirst("budget: ".count).prefix { $0 != " " }), "\(pause.message)")
            // (The event writes S to 4 decimals: up to 0.00005 below what was spent.)
            #expect(spentAtPause + 0.00005 >= 0.9 * estimate / 2 / 3600, "paused at \(spentAtPause) h of \(budget)")
            // Afterwards the spent stays there, unless chunks reached 100 % and were handed back:
            // a handed-back chunk's time no longer counts (docs/farm.md, "Budgets"), which on a
            // loaded machine, where a chunk runs long, happens.
            if !events.contains(where: { $0.kind == "handed_back" }) {
                #expect(spentHours >= 0.9 * estimate / 2 / 3600, "spent \(spentHours) h of \(budget)")
            }
            #expect(!events.contains { $0.kind == "failed" })

            // `reel resume` is refused, with what to do instead.
            do {
                _ = try await client.send(.resume(job: job))
                Issue.record("a resume of a job its budget paused was accepted")
            } catch let error as ReelProtocolError {
                #expect(error.code == .conflict && error.message.contains("reel budget \(job) AMOUNT"), "\(error)")
            }
            // A bad amount is refused, saying what a budget is.
            do {
                _ = try await client.send(.budget(job: job, amount: "lots"))
                Issue.record("a budget of 'lots' was accepted")
            } catch let error as ReelProtocolError {
                #expect(error.code == .malformed && error.message.contains("3.5h"), "\(error)")
            }
            #expect(try await client.status(job: job).pauseReason == "budget", "still paused: a budget pauses until it is raised")

            // Raised: it resumes and completes with the same output.
            guard case .report(let json) = try await client.send(.budget(job: job, amount: Self.hours(estimate * 10))) else {
                throw TestFailure(description: "BUDGET did not REPORT")
            }
            let raised = try JSONDecoder().decode(BudgetReport.self, from: Data(json))
            #expect(!raised.pausedByBudget, "\(raised)")
            let done = try await client.waitForState(job: job, "done", seconds: 180)
            await agent.stop()
            #expect(done.tasks.failed == 0 && done.tasks.done == done.tasks.total && !done.paused && done.pauseReason == nil, "\(done)")
            let output = media.directory.appendingPathComponent("budgeted.mp4").path
            try await client.download(job: job, to: output)
            let (bytes, expected) = (try Data(contentsOf: URL(fileURLWithPath: output)), try Data(contentsOf: URL(fileURLWithPath: referenceOutput)))
            #expect(bytes.count > 0 && bytes == expected, "budgeted output \(bytes.count) bytes, reference \(expected.count)")
        }
    }
}
