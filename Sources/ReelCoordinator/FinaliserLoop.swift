import Foundation
import ServiceLifecycle
import Logging
import ReelCore
import ReelObjectStore
import ReelProtocol
import ReelStore
import ReelScheduling
import ReelFinalising

/// The coordinator runs finalise tasks itself when agents do not: always with local-directory
/// storage, and with an object store while no agent connected to this coordinator runs them
/// (`CAPS … finalise=1`; with one connected, agents claim them: proto/PROTOCOL.md §4.5.1).
/// It claims one under the coordinator's own agent row, gathers the job's verified chunk and
/// audio results from storage, joins them (`JobFinalising`) into `outputs/<job>.<fileType>`
/// (atomic), and completes the task, which completes the job. A failed finalise fails the task
/// with the message (attempt limits apply). The lease is renewed while finalising, so a slow
/// finalise never loses it; after a crash the lease simply expires and the next coordinator
/// (or a capable agent) finalises again.
struct FinaliserLoop: Service {
    /// The event kind of a normalised job's loudness figures (`LoudnessReport.summary`).
    static let loudnessEvent = "loudness"
    let worker: StoreWorker
    let storage: CoordinatorStorage
    let agent: Int64
    let configuration: CoordinatorConfiguration
    let logger: Logger
    /// Rung when a job's last render task completes, so finalising starts at once rather than
    /// at the next pass (every `reaperInterval`, which still catches anything else).
    let bell: Doorbell
    /// Rung when a finalise ends (the job is done, or its finalise failed).
    let jobWatchers: JobWatchers
    /// The agents connected now: with an object store, finalising is theirs when one can.
    let sessions: AgentSessions

    /// Finalises jobs as they become ready until graceful shutdown, which cancels a finalise
    /// in flight (its lease expires, and the next coordinator finalises the job again).
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    if try await finaliseNext() { continue }
                } catch {
                    logger.error("finaliser pass failed", metadata: ["error": "\(error)"])
                }
                await bell.wait(upTo: configuration.reaperInterval)
            }
        }
    }

    /// Checks every done task's stored result (exists, size, SHA-256). A missing or damaged
    /// one is not the job's fault: those tasks alone are rendered again (fresh attempts, new
    /// epochs), the damaged files removed, and the finalise task handed back to wait for them.
    /// - Returns: whether anything was re-queued (then this finalise attempt is over).
    func requeueDamagedResults(_ tasks: [TaskRecord], renditions: [Int64: [TaskRendition]], job: Int64, lease: Lease) async throws -> Bool {
        try await Self.requeueDamagedResults(tasks, renditions: renditions, job: job, lease: lease, readingBytes: true,
                                             storage: storage, worker: worker, logger: logger)
    }

    /// `requeueDamagedResults` for whoever holds a finalise lease. `readingBytes`: hash each
    /// result (downloading it from an object store); without, only what a HEAD tells (present,
    /// size, and the SHA-256 the store checked where it reports one), which is what the
    /// coordinator checks before handing a finalise to an agent, which then hashes each input
    /// itself and reports a wrong one (`INPUTBAD`).
    /// The ladder archives a ladder chunk's renditions were reused from (`renditions`) are
    /// checked as well: a missing or damaged one is deleted and the chunks that took renditions
    /// from it encode those renditions themselves (`requeue`'s `lostSources`).
    static func requeueDamagedResults(_ tasks: [TaskRecord], renditions: [Int64: [TaskRendition]] = [:], job: Int64, lease: Lease,
                                      readingBytes: Bool, storage: CoordinatorStorage, worker: some StoreRunning,
                                      logger: Logger) async throws -> Bool {
        var damaged: [(TaskRecord, String)] = []
        var checkedSources: Set<String> = []
        var lostSources: [String: String] = [:]
        for task in tasks {
            guard task.kind != .finalise, task.state == .done, let result = task.result else { continue }
            guard CoordinatorStorage.isValidHash(result.sha256) else { damaged.append((task, "not a content hash")); continue }
            if let problem = await storage.problem(.result(sha256: result.sha256), size: result.size, sha256: readingBytes ? result.sha256 : nil,
                                                   storedSHA256: result.sha256) {
                damaged.append((task, problem))
            }
            for source in (renditions[task.id] ?? []).compactMap(\.source) where checkedSources.insert(source.sha256).inserted {
                if let problem = await storage.problem(.result(sha256: source.sha256), size: source.size,
                                                       sha256: readingBytes ? source.sha256 : nil, storedSHA256: source.sha256) {
                    lostSources[source.sha256] = problem
                }
            }
        }
        let takers = tasks.filter { task in (renditions[task.id] ?? []).contains { $0.source.map { lostSources[$0.sha256] != nil } ?? false } }
        return try await requeue(damaged, lostSources: lostSources, takers: takers, job: job, lease: lease,
                                 storage: storage, worker: worker, logger: logger)
    }

    /// Renders `damaged` tasks again (their stored results deleted) and hands the finalise
    /// task back to wait for them. `lostSources` (hash → problem): reused ladder archives gone
    /// missing or bad, deleted; `takers`, the chunks that took renditions from them, render
    /// those renditions themselves (their own results are kept until they are replaced).
    /// - Returns: whether there was anything to re-queue.
    static func requeue(_ damaged: [(TaskRecord, String)], lostSources: [String: String] = [:], takers: [TaskRecord] = [],
                        job: Int64, lease: Lease, storage: CoordinatorStorage, worker: some StoreRunning, logger: Logger) async throws -> Bool {
        guard !damaged.isEmpty || !lostSources.isEmpty else { return false }
        for (task, problem) in damaged {
            logger.warning("stored result is missing or damaged; rendering the task again",
                           metadata: ["job": "\(job)", "task": "\(task.id)", "problem": "\(problem)"])
            if let hash = task.result?.sha256, CoordinatorStorage.isValidHash(hash) { await storage.delete([.result(sha256: hash)]) }
        }
        for (hash, problem) in lostSources.sorted(by: { $0.key < $1.key }) {
            logger.warning("a stored ladder archive renditions were reused from is missing or damaged; encoding them again",
                           metadata: ["job": "\(job)", "archive": "\(hash.prefix(12))", "problem": "\(problem)"])
            await storage.delete([.result(sha256: hash)])
        }
        let ids = Array(Set(damaged.map { $0.0.id } + takers.map(\.id))).sorted()
        let reason = (damaged.map { "stored result of task \($0.0.id): \($0.1)" }
                      + lostSources.sorted(by: { $0.key < $1.key }).map { "reused ladder archive \($0.key.prefix(12))…: \($0.value)" })
            .joined(separator: "; ") + "; rendering again"
        try await worker.run { try $0.lifecycle.requeueDamagedResults(finalise: lease, tasks: ids, reason: reason, lostSources: lostSources.keys.sorted()) }
        return true
    }

    /// A job done without a poster (every chunk reused from earlier jobs, so no agent rendered
    /// one, or none arrived) gets one made from its output's last frame, so the console shows
    /// what it made. Best effort: a job never fails for its poster.
    private func posterFromOutputIfNone(job: Int64, output: String, plan: RenderPlan) async {
        let storage = storage
        do {
            guard plan.hasPicture, plan.export.ladder == nil, try await storage.blobs.info(.poster(job: job)) == nil else { return }
            guard let jpeg = try await offload({ try JobFinalising.posterFromOutput(output, plan: plan) }) else { return }
            try await storage.storePoster(job: job, jpeg: jpeg)
        } catch {
            logger.debug("no poster made from the output", metadata: ["job": "\(job)", "error": "\(error)"])
        }
    }

    /// Finalises one claimable job; `false` when there was none.
    func finaliseNext() async throws -> Bool {
        let agent = agent, leaseSeconds = configuration.leaseSeconds
        // With an object store a connected agent that can finalise takes the task (no result
        // bytes through this process); this loop finalises only while none is connected.
        if storage.isRemote && sessions.anyCanFinalise { return false }
        guard let claimed = try await worker.run({ try $0.lifecycle.claimTask(agent: agent, leaseSeconds: leaseSeconds, kinds: [.finalise]) }) else {
            return false
        }
        let job = claimed.jobID
        let lease = claimed.lease
        logger.info("finalising job", metadata: ["job": "\(job)", "task": "\(claimed.id)", "epoch": "\(claimed.epoch)"])
        let renewal = Task {
            await PeriodicLoop(every: .seconds(max(0.2, leaseSeconds / 3)), pauseFirst: true).run {
                _ = try? await worker.run { try $0.lifecycle.renew(lease, leaseSeconds: leaseSeconds) }
            }
        }
        defer { renewal.cancel() }
        do {
            let (documents, tasks, renditions) = try await worker.run { store -> (JobDocuments, [TaskRecord], [Int64: [TaskRendition]]) in
                guard let documents = try store.jobs.documents(job) else { throw StoreError.jobNotFound(job) }
                return (documents, try store.jobs.tasks(ofJob: job), try store.jobs.renditions(ofJob: job))
            }
            if try await requeueDamagedResults(tasks, renditions: renditions, job: job, lease: lease) { return true }
            guard let plan = try await RenderPlanDocuments.renderPlan(of: documents, storage: storage) else {
                throw FinaliseError(description: "job \(job) has no render plan")
            }
            var inputs: [JobFinalising.Input] = []
            for task in tasks where task.kind != .finalise {
                guard task.state == .done, let result = task.result else {
                    throw FinaliseError(description: "task \(task.id) is \(task.state.rawValue), not done")
                }
                // A ladder chunk with reused renditions also names the archives they come from.
                for (archive, holding) in RenditionReuse.archives(result: result, renditions: renditions[task.id]) {
                    inputs.append(JobFinalising.Input(kind: task.kind, frames: FrameRange(start: Int(task.frameStart), end: Int(task.frameEnd)),
                                                      path: storage.resultPath(archive.sha256), size: archive.size, sha256: archive.sha256,
                                                      renditions: holding))
                }
            }
            let output = storage.outputPath(job: job, fileType: plan.export.fileType.rawValue)
            let outcome = try await offload { [inputs] in try JobFinalising.finalise(plan, inputs: inputs, to: output) }
            let (report, digest) = (outcome.report, (hex: outcome.sha256, byteCount: outcome.size))
            let outputKey = BlobKey.output(job: job, fileType: plan.export.fileType.rawValue)
            try await storage.publish(outputKey, sha256: digest.hex)
            // Before completing: a job seen done has its poster, and its loudness figures.
            await posterFromOutputIfNone(job: job, output: output, plan: plan)
            if let loudness = outcome.loudnessSummary {
                try await worker.run { try $0.events.append(job: job, kind: Self.loudnessEvent, message: loudness) }
            }
            let storedOutput = storage.storedKey(outputKey)
            let completion = try await worker.run {
                try $0.lifecycle.complete(lease, result: TaskResult(sha256: digest.hex, size: Int64(digest.byteCount), key: storedOutput))
            }
            jobWatchers.jobMayHaveEnded(job)
            logger.info("job done", metadata: ["job": "\(job)", "frames": "\(report.frames)", "bytes": "\(report.byteCount)",
                                               "output": "\(output)", "jobDone": "\(completion.jobDone)"])
        } catch StoreError.staleEpoch {
            logger.warning("finalise lease lost (job cancelled or lease expired)", metadata: ["job": "\(job)"])
        } catch {
            logger.error("finalise failed", metadata: ["job": "\(job)", "error": "\(error)"])
            _ = try? await worker.run { try $0.lifecycle.fail(lease, message: "finalise failed: \(error)") }
            jobWatchers.jobMayHaveEnded(job)
        }
        return true
    }
}
