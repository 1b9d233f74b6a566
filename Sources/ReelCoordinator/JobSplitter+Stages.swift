import Foundation
import ReelCore
import ReelMedia
import ReelProtocol
import ReelStore

/// What each stage of a split makes, and the stages that need no I/O.
enum SplitStages {
    /// The `plan` stage's result: the job's render plan (asset URLs in the coordinator's
    /// storage), the same plan as agents get it (asset URLs `reel-asset:<sha256>`), and the
    /// submitted settings.
    struct Planned: Sendable {
        var plan: RenderPlan
        var agentPlan: RenderPlan
        /// The submitted asset entries of the assets the plan uses, by asset id.
        var manifest: [String: AssetManifestEntry]
        var settings: JobSettings
        var encoderThreads: Int { settings.encoderThreads ?? 4 }
    }

    /// Content keys of the job's video chunks (in order), of its audio task and, for an HLS
    /// ladder, of each chunk's renditions (`ChunkReuse.keys`).
    typealias Keys = (video: [String?], audio: String?, renditions: [[String]?])

    /// Stored results the job can take instead of rendering: by chunk content key, and for a
    /// ladder by rendition key (each checked present in storage).
    struct Reuse: Sendable {
        var results: [String: TaskResult] = [:]
        var archives: [String: TaskResult] = [:]
    }

    /// A job of at least this many tasks has the tasks table's statistics refreshed once its
    /// tasks are stored (`JobStore.refreshTaskStatistics`): enough to change the plans of the
    /// claim queries, few enough jobs that the analyze's cost does not matter.
    static let tasksThatRefreshStatistics = 1_000

    /// `chunk`: the job's video chunks, cut by the composition and its settings alone, never
    /// by the agents online, so the same composition gets the same chunks on any farm and a
    /// re-render finds them all by content key (a short job on a big farm asks for shorter
    /// chunks itself). A batch's row (or a job that asks, `chunkAtEdges`) is cut at its edges
    /// too, so the spans every row shares are chunks every row finds by content key.
    static func chunk(_ plan: RenderPlan, settings: JobSettings, defaultChunkSeconds: Rational) -> [FrameRange] {
        ChunkPlanner.plan(for: plan, targetChunkSeconds: settings.chunkSeconds ?? defaultChunkSeconds,
                          atEdges: settings.chunkAtEdges == true || settings.batch != nil)
    }

    /// `key`: every render task's content key. Keys are computed even with `noCache`, so a
    /// later job can reuse what this one renders.
    static func key(_ planned: Planned, chunks: [FrameRange]) -> Keys {
        ChunkReuse.keys(plan: planned.plan, chunks: chunks, encoderThreads: planned.encoderThreads, manifest: planned.manifest)
    }

    /// The tasks `persist` stores: one per video chunk (created done when `reuse` holds its
    /// key's result; a ladder chunk with its renditions), the audio task when the plan has
    /// sound, and the finalise task last.
    static func tasks(_ plan: RenderPlan, chunks: [FrameRange], keys: Keys, reuse: Reuse, maxAttempts: Int) -> [NewTask] {
        let renditionNames = plan.export.ladder?.renditions.map(\.name) ?? []
        var tasks: [NewTask] = []
        tasks.reserveCapacity(chunks.count + 2)
        for (ordinal, chunk) in chunks.enumerated() {
            var task = NewTask(kind: .videoChunk, ordinal: ordinal, frameStart: Int64(chunk.start), frameEnd: Int64(chunk.end),
                               spec: "", maxAttempts: maxAttempts).keyed(keys.video[ordinal], reusing: reuse.results)
            if let renditionKeys = keys.renditions[ordinal] {
                task = RenditionReuse.keyed(task, names: renditionNames, keys: renditionKeys, archives: reuse.archives)
            }
            tasks.append(task)
        }
        if !plan.audioTracks.isEmpty {
            tasks.append(NewTask(kind: .audio, ordinal: 0, frameStart: 0, frameEnd: Int64(plan.frameCount), spec: "",
                                 maxAttempts: maxAttempts).keyed(keys.audio, reusing: reuse.results))
        }
        tasks.append(NewTask(kind: .finalise, ordinal: 0, spec: "", maxAttempts: maxAttempts))
        return tasks
    }
}

/// The stages that read or write: `plan`, the plan document, `reuse` and `persist`.
extension JobSplitter {
    /// `plan`: the job's documents read back, its assets checked present, and its composition
    /// probed and validated against the stored files (`CompositionLoader.plan`). Nil when the
    /// job is gone or went back to waiting for damaged assets.
    func plan(job: Int64) async throws -> SplitStages.Planned? {
        guard let documents = try await pool.run({ try $0.jobs.documents(job) }) else { return nil }
        let stored = try CoordinatorJSON.decode(StoredJobSettings.self, from: documents.settings)
        // A batch's later rows are planned once its first has ended (`releaseBatch(ledBy:)`).
        if stored.settings.batch != nil, try await pool.run({ try $0.batches.isHeldForLead(job: job) }) { return nil }
        var composition = try Composition.parse(documents.composition)
        for (id, _) in composition.assets {
            guard let entry = stored.assets[id] else {
                throw CompositionError(problems: [Problem(path: "assets.\(id)", message: "not in the submitted asset manifest")])
            }
            composition.assets[id]?.url = storage.assetPath(entry.sha256)
        }
        if try await returnToWaitingIfAssetsAreDamaged(job: job, assets: stored.assets.filter { composition.assets[$0.key] != nil }) {
            return nil
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
        if !planning.blocks.isEmpty {
            logger.info("probed sources by ranged reads", metadata: [
                "job": "\(job)", "bytes": "\(planning.blocks.reduce(0) { $0 + $1.fetchedBytes })",
                "of": "\(planning.blocks.reduce(0) { $0 + $1.size })", "requests": "\(planning.blocks.reduce(0) { $0 + $1.fetchCount })"])
        }
        var agentPlan = plan
        var manifest: [String: AssetManifestEntry] = [:]
        for id in plan.assets.keys {
            guard let entry = stored.assets[id] else { continue }
            agentPlan.assets[id]?.url = "reel-asset:\(entry.sha256)"
            manifest[id] = entry
        }
        return SplitStages.Planned(plan: plan, agentPlan: agentPlan, manifest: manifest, settings: stored.settings)
    }

    /// The plan as agents get it, stored once by content (`RenderPlanDocuments`); tasks name
    /// their frames only.
    func storeDocument(_ planned: SplitStages.Planned) async throws -> RenderPlanReference {
        let document = RenderPlanDocument(plan: planned.agentPlan, assets: planned.manifest, encoderThreads: planned.encoderThreads)
        return try await RenderPlanDocuments.store(document, storage: storage)
    }

    /// `reuse`: the stored results (of any job) whose content keys match, and for a ladder the
    /// stored archives of renditions not reused whole with their chunk, each checked present.
    func reuse(_ keys: SplitStages.Keys) async throws -> SplitStages.Reuse {
        var reuse = SplitStages.Reuse()
        let wanted = (keys.video + [keys.audio]).compactMap { $0 }
        let found = try await pool.run { try $0.assets.results(forContentKeys: wanted) }
        reuse.results = await ChunkReuse(storage: storage).present(found)
        let renditionKeys = keys.video.indices.filter { keys.video[$0].flatMap { reuse.results[$0] } == nil }.flatMap { keys.renditions[$0] ?? [] }
        if !renditionKeys.isEmpty {
            let found = try await pool.run { try $0.assets.archives(forRenditionKeys: renditionKeys) }
            reuse.archives = await ChunkReuse(storage: storage).present(found)
        }
        return reuse
    }

    /// `persist`: the plan document recorded, then the job's render plan (the reference to that
    /// document: the row keeps no second copy of the plan) and its tasks in one transaction
    /// (`JobStore.createTasks`, which creates them only once). Whether they were created now.
    func persist(job: Int64, planned: SplitStages.Planned, document: RenderPlanReference, tasks: [NewTask]) async throws -> Bool {
        let videoEncoder = planned.plan.hasPicture ? planned.plan.export.video.videoCodec?.encoderName : nil
        let documentPath = storage.storedKey(.asset(sha256: document.sha256))
        let created = try await pool.run { [tasks] store in
            try store.assets.stored(sha256: document.sha256, size: document.size, storedKey: documentPath)
            return try store.jobs.createTasks(job: job, renderPlan: "", document: document,
                                              videoEncoder: videoEncoder, tasks: tasks)
        }
        if created, let summary = RenditionReuse.summary(tasks, names: planned.plan.export.ladder?.renditions.map(\.name) ?? []) {
            try await pool.run { try $0.events.append(job: job, kind: "renditions", message: summary) }
        }
        if created, tasks.count >= SplitStages.tasksThatRefreshStatistics {
            // Claims plan their queries by these statistics; the submitter does not wait for it.
            let pool = pool, logger = logger
            Task.detached(priority: .background) {
                do { try await pool.run { try $0.jobs.refreshTaskStatistics() } } catch {
                    logger.warning("refreshing the tasks table's statistics failed", metadata: ["error": "\(error)"])
                }
            }
        }
        return created
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

}
