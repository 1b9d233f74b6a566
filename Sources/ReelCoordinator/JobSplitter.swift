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

    /// Existence and size of the job's asset files (SHA-256 was verified when each upload
    /// completed; re-hashing every source at every plan would cost more than the check is
    /// worth). A missing or wrong-sized file is forgotten and the job goes back to waiting for
    /// its assets, with an error that says how to get them back: submitting again re-uploads
    /// them, which releases this job too. - Returns: whether the job went back to waiting.
    private func returnToWaitingIfAssetsAreDamaged(job: Int64, assets: [String: AssetManifestEntry]) async throws -> Bool {
        var damaged: [(String, String, String)] = []
        for (id, entry) in assets.sorted(by: { $0.key < $1.key }) {
            if let problem = await storage.problem(.asset(sha256: entry.sha256), size: entry.size, sha256: nil) {
                damaged.append((id, entry.sha256, problem))
            }
        }
        guard !damaged.isEmpty else { return false }
        for (_, hash, _) in damaged {
            await storage.removeAssetEverywhere(hash)
            try await pool.run { try $0.assets.forget(sha256: hash) }
        }
        let list = damaged.map { "\($0.0) (sha256 \($0.1.prefix(12))…: \($0.2))" }.joined(separator: ", ")
        let reason = "stored asset \(list) is missing or damaged in the coordinator's storage; submit the job again to re-upload it"
        logger.warning("job waits for assets again", metadata: ["job": "\(job)", "reason": "\(reason)"])
        // Not moved only when the job left `queued` meanwhile (cancelled): not planned either way.
        _ = try await pool.run { try $0.lifecycle.returnToWaiting(job: job, reason: reason) }
        return true
    }

    /// Splits one job (or waits for the split of it already running); a composition that does
    /// not validate against its stored assets fails the job.
    func split(job: Int64) async {
        await inFlight.run(job) { await splitNow(job: job) }
    }

    private func splitNow(job: Int64) async {
        var stages = StageClock()
        do {
            guard let documents = try await pool.run({ try $0.jobs.documents(job) }) else { return }
            let stored = try CoordinatorJSON.decode(StoredJobSettings.self, from: documents.settings)
            var composition = try Composition.parse(documents.composition)
            for (id, _) in composition.assets {
                guard let entry = stored.assets[id] else {
                    throw CompositionError(problems: [Problem(path: "assets.\(id)", message: "not in the submitted asset manifest")])
                }
                composition.assets[id]?.url = storage.assetPath(entry.sha256)
            }
            if try await returnToWaitingIfAssetsAreDamaged(job: job, assets: stored.assets.filter { composition.assets[$0.key] != nil }) {
                return
            }
            // Planning probes the directory's files, or with an object store the stored objects
            // through ranged reads (only the headers and index libav needs cross this host).
            let planning = storage.planningSources(stored.assets.filter { composition.assets[$0.key] != nil }.map(\.value))
            let root = storage.root
            // The container the client's output name gave counts as written: it decides whether
            // there is a picture (M4A, WAV: sound only, no video chunks) and the codec defaults.
            let outputFileType = stored.settings.fileType
            let plan = try await offload { [composition, planning] in
                try CompositionLoader.plan(composition, directory: root, outputFileType: outputFileType, sources: planning.sources)
            }
            stages.end("plan")
            if !planning.blocks.isEmpty {
                logger.info("probed sources by ranged reads", metadata: [
                    "job": "\(job)", "bytes": "\(planning.blocks.reduce(0) { $0 + $1.fetchedBytes })",
                    "of": "\(planning.blocks.reduce(0) { $0 + $1.size })", "requests": "\(planning.blocks.reduce(0) { $0 + $1.fetchCount })"])
            }
            // Cut by the composition and its settings alone, never by the agents online: the
            // same composition gets the same chunks on any farm, so a re-render finds them all
            // by content key (a short job on a big farm asks for shorter chunks itself).
            let chunks = ChunkPlanner.plan(for: plan, targetChunkSeconds: stored.settings.chunkSeconds ?? configuration.defaultChunkSeconds)
            stages.end("chunk")
            var agentPlan = plan
            var manifest: [String: AssetManifestEntry] = [:]
            for id in plan.assets.keys {
                guard let entry = stored.assets[id] else { continue }
                agentPlan.assets[id]?.url = "reel-asset:\(entry.sha256)"
                manifest[id] = entry
            }
            let threads = stored.settings.encoderThreads ?? 4
            // The plan is stored once, by content; tasks name their frames only.
            let document = RenderPlanDocument(plan: agentPlan, assets: manifest, encoderThreads: threads)
            let reference = try await RenderPlanDocuments.store(document, storage: storage)
            let documentPath = storage.storedKey(.asset(sha256: reference.sha256))
            stages.end("document")
            // Chunks whose content key has a stored result (any job) are created done with it.
            let keys = try await offload { [plan, chunks, manifest] in
                ChunkReuse.keys(plan: plan, chunks: chunks, encoderThreads: threads, manifest: manifest)
            }
            stages.end("key")
            var reusable: [String: TaskResult] = [:]
            // An HLS ladder's renditions not reused whole with their chunk: found by rendition key.
            var archives: [String: TaskResult] = [:]
            if stored.settings.noCache != true {
                let wanted = (keys.video + [keys.audio]).compactMap { $0 }
                let found = try await pool.run { try $0.assets.results(forContentKeys: wanted) }
                reusable = await ChunkReuse(storage: storage).present(found)
                let renditionKeys = chunks.indices.filter { keys.video[$0].flatMap { reusable[$0] } == nil }.flatMap { keys.renditions[$0] ?? [] }
                if !renditionKeys.isEmpty {
                    let found = try await pool.run { try $0.assets.archives(forRenditionKeys: renditionKeys) }
                    archives = await ChunkReuse(storage: storage).present(found)
                }
            }
            stages.end("reuse")
            let renditionNames = plan.export.ladder?.renditions.map(\.name) ?? []
            var tasks: [NewTask] = []
            for (ordinal, chunk) in chunks.enumerated() {
                var task = NewTask(kind: .videoChunk, ordinal: ordinal, frameStart: Int64(chunk.start), frameEnd: Int64(chunk.end),
                                   spec: "", maxAttempts: configuration.maxAttempts).keyed(keys.video[ordinal], reusing: reusable)
                if let renditionKeys = keys.renditions[ordinal] {
                    task = RenditionReuse.keyed(task, names: renditionNames, keys: renditionKeys, archives: archives)
                }
                tasks.append(task)
            }
            if !plan.audioTracks.isEmpty {
                tasks.append(NewTask(kind: .audio, ordinal: 0, frameStart: 0, frameEnd: Int64(plan.frameCount), spec: "",
                                     maxAttempts: configuration.maxAttempts).keyed(keys.audio, reusing: reusable))
            }
            tasks.append(NewTask(kind: .finalise, ordinal: 0, spec: "", maxAttempts: configuration.maxAttempts))
            let planJSON = try CoordinatorJSON.encode(agentPlan)
            let videoEncoder = plan.hasPicture ? plan.export.video.videoCodec?.encoderName : nil
            let created = try await pool.run { [tasks] store in
                try store.assets.stored(sha256: reference.sha256, size: reference.size, storedKey: documentPath)
                return try store.jobs.createTasks(job: job, renderPlan: planJSON, document: reference,
                                         videoEncoder: videoEncoder, tasks: tasks)
            }
            stages.end("persist")
            if created {
                if let summary = RenditionReuse.summary(tasks, names: renditionNames) {
                    try await pool.run { try $0.events.append(job: job, kind: "renditions", message: summary) }
                }
                dispatcher.wake()
                logger.info("planned job", metadata: ["job": "\(job)", "chunks": "\(chunks.count)", "frames": "\(plan.frameCount)",
                                                      "reused": "\(tasks.filter { $0.reusedResult != nil }.count)",
                                                      "audio": "\(!plan.audioTracks.isEmpty)", "plan": "\(reference.sha256.prefix(12)) (\(reference.size) bytes)",
                                                      "ms": "\(stages.summary)"])
            }
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
