import Foundation
import Logging
import ReelCore
import ReelMedia
import ReelProtocol
import ReelStore
import ReelScheduling
import Synchronization

/// Splits a job whose assets are all stored into tasks: probes and validates the composition
/// against the stored files (`CompositionLoader.plan` makes its `RenderPlan`), cuts the frames
/// into video chunks (`ChunkPlanner`), adds the audio task (if the render plan has audio) and
/// the finalise task, keys each render task by content (reusing stored results), and stores
/// the render plan with asset URLs rewritten to `reel-asset:<sha256>` (the form agents get in
/// the job's `RenderPlanDocument`, stored once per job by content: `RenderPlanDocuments`).
///
/// Splitting is idempotent (`JobStore.createTasks` creates tasks only once), so it can run on
/// every trigger — a `SUBMIT` with nothing missing, the `PUT` completing the last asset, and the
/// reaper's pass that resumes jobs after a restart.
struct JobSplitter: Sendable {
    let pool: StorePool
    let storage: CoordinatorStorage
    let configuration: CoordinatorConfiguration
    let logger: Logger
    /// Woken when a job's tasks are created.
    let dispatcher: Dispatcher
    /// Rung when a job cannot be split (it fails).
    let jobWatchers: JobWatchers
    /// The splits running now, by job: a trigger for a job being split waits for that split
    /// instead of planning the job a second time beside it (a `SUBMIT` and the reaper's pass
    /// used to plan a 14,400-chunk job twice at once, doubling what the submitter waited for).
    let inFlight = SplitsInFlight()

    /// Splits every queued job that has no tasks yet.
    func splitPendingJobs() async {
        do {
            // A job being split now is left to that split (the reaper's pass does not wait on it).
            for job in try await pool.run({ try $0.jobs.jobsWithoutTasks() }) where !inFlight.contains(job) {
                await split(job: job)
            }
        } catch {
            logger.error("listing jobs without tasks failed", metadata: ["error": "\(error)"])
        }
    }

    /// When `job` is the first row of a batch and has ended, plans the batch's other rows,
    /// which waited for it (`BatchStore.isHeldForLead`): the chunks they share with it are
    /// stored now, so they are reused, not rendered once per row. Any other job: one indexed
    /// lookup that finds nothing.
    func releaseBatch(ledBy job: Int64) async {
        do {
            for held in try await pool.run({ try $0.batches.released(byLead: job) }) where !inFlight.contains(held) {
                await split(job: held)
            }
        } catch {
            logger.error("listing a batch's rows to plan failed; the reaper's next pass plans them", metadata: ["job": "\(job)", "error": "\(error)"])
        }
    }

    /// Splits one job (or waits for the split of it already running); a composition that does
    /// not validate against its stored assets fails the job.
    func split(job: Int64) async {
        await inFlight.run(job) { await splitNow(job: job) }
    }

    /// The stages in order — plan, chunk, key, reuse, persist — each a function of what the
    /// stage before it made (`JobSplitter+Stages.swift`). Only `plan` and `reuse` read the
    /// storage and only `persist` writes; `chunk` and `key` are pure, and so is the assembly of
    /// the tasks `persist` stores (`SplitStages.tasks`).
    private func splitNow(job: Int64) async {
        var stages = StageClock()
        do {
            guard let planned = try await plan(job: job) else { return }
            stages.end("plan")
            let chunks = SplitStages.chunk(planned.plan, settings: planned.settings, defaultChunkSeconds: configuration.defaultChunkSeconds)
            stages.end("chunk")
            let document = try await storeDocument(planned)
            stages.end("document")
            let keys = try await offload { [planned, chunks] in SplitStages.key(planned, chunks: chunks) }
            stages.end("key")
            let reuse = planned.settings.noCache == true ? SplitStages.Reuse() : try await self.reuse(keys)
            stages.end("reuse")
            let tasks = SplitStages.tasks(planned.plan, chunks: chunks, keys: keys, reuse: reuse, maxAttempts: configuration.maxAttempts)
            let created = try await persist(job: job, planned: planned, document: document, tasks: tasks)
            stages.end("persist")
            guard created else { return }
            dispatcher.wake()
            logger.info("planned job", metadata: ["job": "\(job)", "chunks": "\(chunks.count)", "frames": "\(planned.plan.frameCount)",
                                                  "reused": "\(tasks.filter { $0.reusedResult != nil }.count)",
                                                  "audio": "\(!planned.plan.audioTracks.isEmpty)",
                                                  "plan": "\(document.sha256.prefix(12)) (\(document.size) bytes)", "ms": "\(stages.summary)"])
        } catch let error as CompositionError {
            logger.warning("job cannot be planned", metadata: ["job": "\(job)", "error": "\(error.summary)"])
            _ = try? await pool.run { try $0.lifecycle.failJob(job, message: "invalid composition: \(error.summary)") }
            jobWatchers.jobMayHaveEnded(job)
        } catch let error as PGError {
            // The database hiccuped: leave the job without tasks; the reaper's next pass tries again.
            logger.error("planning failed; will retry", metadata: ["job": "\(job)", "error": "\(error)"])
        } catch {
            logger.error("planning failed", metadata: ["job": "\(job)", "error": "\(error)"])
            _ = try? await pool.run { try $0.lifecycle.failJob(job, message: "planning failed: \(error)") }
            jobWatchers.jobMayHaveEnded(job)
        }
    }
}

/// How long each stage of a split took, for the "planned job" log line
/// (`plan=12 chunk=0 document=3 key=360 reuse=2 persist=210`, milliseconds).
struct StageClock {
    private let clock = ContinuousClock()
    private var last: ContinuousClock.Instant
    private var stages: [(String, Duration)] = []

    init() { last = clock.now }

    /// Ends the stage running since the previous call (or since the clock was made).
    mutating func end(_ stage: String) {
        let now = clock.now
        stages.append((stage, now - last))
        last = now
    }

    var summary: String {
        stages.map { name, d in "\(name)=\(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000)" }
            .joined(separator: " ")
    }
}

/// The jobs being split right now, each with the task splitting it.
final class SplitsInFlight: Sendable {
    private let running = Mutex<[Int64: Task<Void, Never>]>([:])

    func contains(_ job: Int64) -> Bool { running.withLock { $0[job] != nil } }

    /// Runs `split` for `job` unless a split of it is running, and waits for whichever runs.
    func run(_ job: Int64, _ split: @escaping @Sendable () async -> Void) async {
        let task = running.withLock { running -> Task<Void, Never> in
            if let task = running[job] { return task }
            let task = Task { await split() }
            running[job] = task
            return task
        }
        await task.value
        running.withLock { running in
            if running[job] == task { running[job] = nil }
        }
    }
}
