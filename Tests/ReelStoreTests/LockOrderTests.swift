import Foundation
import ReelStoreTesting
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling

/// The store's lock order (job, then tasks, then agents; claims never wait on a job row)
/// under the races that used to deadlock (PostgreSQL 40P01): cancelling a large job while
/// agents claim and complete its tasks, and several agents failing the last attempts of one
/// job's tasks at once. Afterwards the job's counters must equal a recount of its rows.
@Suite("JobStore: lock order under racing claims, completions, failures and cancel", .database, .blocking)
struct LockOrderTests {
    static func largeJob(chunks: Int, maxAttempts: Int = 3) -> NewJob {
        var tasks = (0..<chunks).map {
            NewTask(kind: .videoChunk, ordinal: $0, frameStart: Int64($0 * 10), frameEnd: Int64($0 * 10 + 10), spec: "", maxAttempts: maxAttempts)
        }
        tasks.append(NewTask(kind: .finalise, ordinal: 0, spec: "", maxAttempts: maxAttempts))
        return NewJob(composition: #"{"formatVersion":1}"#, tasks: tasks)
    }

    /// The counters kept by migration 3's triggers against a full recount.
    static func expectCountersMatchRows(_ schema: TestDatabase.Schema, job: Int64) throws {
        let row = try schema.connect().query("""
            SELECT j.render_tasks, j.tasks_done, j.tasks_failed, j.tasks_cancelled, j.frames_total, j.frames_done,
                   c.n, c.done, c.failed, c.cancelled, c.frames, c.frames_done
            FROM jobs j, (SELECT count(*) AS n, count(*) FILTER (WHERE state = 'done') AS done,
                                 count(*) FILTER (WHERE state = 'failed') AS failed,
                                 count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
                                 coalesce(sum(frame_end - frame_start) FILTER (WHERE kind = 'video_chunk'), 0) AS frames,
                                 coalesce(sum(frame_end - frame_start) FILTER (WHERE kind = 'video_chunk' AND state = 'done'), 0) AS frames_done
                          FROM tasks WHERE job_id = $1::bigint AND kind <> 'finalise') c
            WHERE j.id = $1::bigint
            """, [String(job)]).rows[0]
        #expect(try row.int("render_tasks") == row.int("n"))
        #expect(try row.int("tasks_done") == row.int("done"))
        #expect(try row.int("tasks_failed") == row.int("failed"))
        #expect(try row.int("tasks_cancelled") == row.int("cancelled"))
        #expect(try row.int64("frames_total") == row.int64("frames"))
        #expect(try row.int64("frames_done") == row.int64("frames_done"))
    }

    @Test("cancelling a 100,000-task job while agents claim and complete: no deadlock, nothing left open")
    func cancelRacesClaims() throws {
        let schema = try TestDatabase.Schema()
        let setup = try schema.store()
        let job = try setup.jobs.create(Self.largeJob(chunks: 100_000))
        let errors = Collector<String>()
        let claimed = Collector<Int64>()
        let cancelled = Collector<Bool>()
        onThreads(5) { index in
            do {
                let store = FarmStore(connection: try schema.connect())
                if index == 0 {
                    // Let the claimers get going (some claims in flight), then cancel.
                    let deadline = Date().addingTimeInterval(60)
                    while claimed.values.count < 200, errors.values.isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
                    try store.lifecycle.cancel(job: job)
                    cancelled.append(true)
                    return
                }
                let agents = try (0..<8).map { try store.agents.register(name: "agent-\(index)-\($0)", host: "h", capabilities: "{}") }
                while true {
                    let tasks = try store.lifecycle.claimTasks(for: agents.map { ClaimRequest(agent: $0) }, leaseSeconds: 60, kinds: [.videoChunk],
                                                     liveAgents: Set(agents))
                    let got = tasks.compactMap { $0 }
                    if got.isEmpty { break }
                    for task in got {
                        claimed.append(task.id)
                        // Half are completed at once, half stay leased for the cancel to stop.
                        if task.id % 2 == 0 { _ = try? store.lifecycle.complete(task.lease, result: JobStoreTests.result(1)) }
                    }
                }
            } catch {
                errors.append("\(error)")
            }
        }
        #expect(errors.values.isEmpty, "\(errors.values.prefix(3))")
        #expect(cancelled.values == [true])
        let open = try schema.connect().query("SELECT count(*) AS n FROM tasks WHERE job_id = $1::bigint AND state IN ('queued', 'leased')",
                                              [String(job)]).rows[0]
        #expect(try open.int("n") == 0, "a cancelled job keeps no claimable or held task")
        #expect(try setup.jobs.summary(job)?.state == .cancelled)
        try Self.expectCountersMatchRows(schema, job: job)
    }

    @Test("agents failing the last attempts of one job's tasks at once while others claim: no deadlock", arguments: 1...3)
    func lastAttemptFailuresRace(round: Int) throws {
        let schema = try TestDatabase.Schema()
        let setup = try schema.store()
        let job = try setup.jobs.create(Self.largeJob(chunks: 400, maxAttempts: 1))
        let errors = Collector<String>()
        onThreads(4) { index in
            do {
                let store = FarmStore(connection: try schema.connect())
                let agent = try store.agents.register(name: "agent-\(index)", host: "h", capabilities: "{}")
                while let task = try store.lifecycle.claimTask(agent: agent, leaseSeconds: 60, kinds: [.videoChunk]) {
                    do {
                        _ = try store.lifecycle.fail(task.lease, message: "boom \(index)")
                    } catch StoreError.staleEpoch {
                        // Another agent's last-attempt failure cancelled this task first.
                    }
                }
            } catch {
                errors.append("\(error)")
            }
        }
        #expect(errors.values.isEmpty, "\(errors.values.prefix(3))")
        #expect(try setup.jobs.summary(job)?.state == .failed)
        try Self.expectCountersMatchRows(schema, job: job)
    }
}
