import Foundation
import ReelCore
import ReelFinalising
import ReelObjectStore
import ReelProtocol
import ReelStore
import ReelScheduling

// Finalise tasks run by agents, with an object store (proto/PROTOCOL.md §4.5.1): the TASK lists
// each input result with a presigned GET, the agent joins them, uploads the output through a
// PUT bound to its SHA-256 (`FINALURL`), and the coordinator checks it with a HEAD before it
// completes the task (`FINALDONE`). No result or output byte passes through the coordinator.
extension CoordinatorHandler {
    /// The coordinator's HEAD check found an input result missing or damaged: those tasks are
    /// rendered again and the finalise task waits for them (the claim is answered `NONE`).
    struct FinaliseRequeued: Error {}

    /// What a held finalise task is about: its job, the job's plan and its tasks.
    private struct HeldFinalise: Sendable {
        var lease: Lease
        var job: Int64
        var plan: RenderPlan
        var tasks: [TaskRecord]
        var outputKey: BlobKey { .output(job: job, fileType: plan.export.fileType.rawValue) }
    }

    /// `TASK`'s payload for a finalise task: the specification with `inputs`, every render
    /// task's result checked with a HEAD first (present, its size, the store's SHA-256 where it
    /// reports one). A missing or damaged one is rendered again (`FinaliseRequeued`).
    func finaliseSpecification(for claimed: ClaimedTask, planDocument reference: RenderPlanReference) async throws -> TaskSpecification {
        let job = claimed.jobID
        let (tasks, renditions) = try await pool.run { store -> ([TaskRecord], [Int64: [TaskRendition]]) in
            (try store.jobs.tasks(ofJob: job), try store.jobs.renditions(ofJob: job))
        }
        if try await FinaliserLoop.requeueDamagedResults(tasks, renditions: renditions, job: job, lease: claimed.lease, readingBytes: false,
                                                         storage: storage, worker: pool, logger: logger) {
            dispatcher.wake()
            throw FinaliseRequeued()
        }
        let expires = configuration.presignExpirySeconds
        var inputs: [FinaliseInput] = []
        for task in tasks where task.kind != .finalise {
            guard task.state == .done, let done = task.result else {
                throw ReelProtocolError(.internal, "task \(task.id) of job \(job) is \(task.state.rawValue), not done")
            }
            // A ladder chunk with reused renditions also names the archives they come from.
            for (result, holding) in RenditionReuse.archives(result: done, renditions: renditions[task.id]) {
                let request: PresignedRequest?
                do {
                    request = try storage.blobs.presign(.result(sha256: result.sha256), .read, expires: expires)
                } catch let error as ObjectStoreError {
                    throw ReelProtocolError(.internal, "cannot presign the result of task \(task.id): \(error.message)")
                }
                guard let request else { throw ReelProtocolError(.noDirect, "the storage hands out no URLs; the coordinator finalises") }
                metrics.presignedURLs.increment()
                inputs.append(FinaliseInput(kind: task.kind, ordinal: task.ordinal,
                                            frames: FrameRange(start: Int(task.frameStart), end: Int(task.frameEnd)),
                                            size: result.size, sha256: result.sha256, url: request.url, headers: request.headers,
                                            expiresAtMillis: request.expiresAt.epochSeconds * 1000, renditions: holding))
            }
        }
        let wantsPoster = (try? await storage.blobs.info(.poster(job: job))) == nil
        return TaskSpecification(job: job, task: claimed.id, kind: .finalise, frames: FrameRange(start: 0, end: 0),
                                 planDocument: AssetManifestEntry(sha256: reference.sha256, size: reference.size),
                                 inputs: inputs, wantsPoster: wantsPoster)
    }

    /// `FINALURL`: fenced and renewing like `RESULTURL`; a PUT of the job's output key bound to
    /// the output's SHA-256.
    func finalURL(task: Int64, epoch: Int64, sha256: String, total: Int64, peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw ReelProtocolError(.noDirect, "the coordinator stores in a local directory and finalises itself") }
        let held = try await heldFinalise(task: task, epoch: epoch, peer: peer)
        let request: PresignedRequest?
        do {
            request = try storage.blobs.presign(held.outputKey, .write(sha256: sha256), expires: configuration.presignExpirySeconds)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "cannot presign \(held.outputKey): \(error.message)")
        }
        guard let request else { throw ReelProtocolError(.noDirect, "the storage hands out no URLs") }
        metrics.presignedURLs.increment()
        return .url(DirectURL(method: request.method, url: request.url, headers: request.headers,
                              expiresAtMillis: request.expiresAt.epochSeconds * 1000, total: total))
    }

    /// `FINALPARTS`: as `FINALURL` (fenced, renewing), but an output larger than the part size
    /// is uploaded in parts (`PARTS`: the multipart upload of the job's output key, found again
    /// with the parts it holds when an earlier attempt left one), as `RESULTPARTS` does for a
    /// result.
    func finalParts(task: Int64, epoch: Int64, sha256: String, total: Int64, peer: Peer) async throws -> Message {
        guard total > configuration.directPartSize else { return try await finalURL(task: task, epoch: epoch, sha256: sha256, total: total, peer: peer) }
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw ReelProtocolError(.noDirect, "the coordinator stores in a local directory and finalises itself") }
        let held = try await heldFinalise(task: task, epoch: epoch, peer: peer)
        return try await openParts(held.outputKey, sha256: sha256, total: total, partSize: resultPartSize(total),
                                   readWith: "the coordinator finalises itself")
    }

    /// The output key of the finalise task held under `epoch` (renewed): where its `PARTURL`s
    /// upload.
    func finaliseOutputKey(task: Int64, epoch: Int64, peer: Peer) async throws -> BlobKey {
        try await heldFinalise(task: task, epoch: epoch, peer: peer).outputKey
    }

    /// `FINALDONE`: the output must be in the store under the job's output key (its multipart
    /// `upload` completed first, if any), `total` bytes and the declared SHA-256 where the store
    /// reports one (HEAD); then the loudness figures are recorded and the task completed, which
    /// completes the job.
    func finalDone(task: Int64, epoch: Int64, sha256: String, total: Int64, loudness: String?, upload: UploadedParts? = nil,
                   peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw ReelProtocolError(.noDirect, "the coordinator stores in a local directory and finalises itself") }
        let held = try await heldFinalise(task: task, epoch: epoch, peer: peer)
        let key = held.outputKey
        if let upload { try await completeParts(key, upload: upload, total: total, partSize: resultPartSize(total)) }
        try await verifyUploaded(key, sha256: sha256, total: total)
        let job = held.job
        if let loudness {
            try await pool.run { try $0.events.append(job: job, kind: FinaliserLoop.loudnessEvent, message: loudness) }
        }
        let reply = try await complete(held.lease, result: TaskResult(sha256: sha256, size: total, key: storage.storedKey(key)), peer: peer)
        jobWatchers.jobMayHaveEnded(job)
        logger.info("job done (finalised by an agent)", metadata: ["job": "\(job)", "agent": "\(peer.name.escapingControlCharacters)",
                                                                   "bytes": "\(total)"])
        return reply
    }

    /// `INPUTBAD`: an input of the held finalise did not hash to `sha256` when the agent read
    /// it. The tasks whose result that is are rendered again (their stored results deleted) and
    /// the finalise waits for them, a fresh attempt; the job does not fail.
    func inputBad(task: Int64, epoch: Int64, sha256: String, peer: Peer) async throws -> Message {
        let held = try await heldFinalise(task: task, epoch: epoch, peer: peer)
        let damaged = held.tasks.filter { $0.kind != .finalise && $0.state == .done && $0.result?.sha256 == sha256 }
        // Or a ladder archive some chunks took renditions from: they encode those renditions again.
        let renditions = try await pool.run { try $0.jobs.renditions(ofJob: held.job) }
        let takers = held.tasks.filter { (renditions[$0.id] ?? []).contains { $0.source?.sha256 == sha256 } }
        guard !damaged.isEmpty || !takers.isEmpty else {
            throw ReelProtocolError(.notFound, "no input of task \(task) has SHA-256 \(sha256)")
        }
        let problem = "its bytes read by \(peer.name.escapingControlCharacters) do not have SHA-256 \(sha256)"
        do {
            _ = try await FinaliserLoop.requeue(damaged.map { ($0, problem) }, lostSources: takers.isEmpty ? [:] : [sha256: problem], takers: takers,
                                                job: held.job, lease: held.lease, storage: storage, worker: pool, logger: logger)
        } catch StoreError.staleEpoch {
            return .lost(task: task)
        }
        dispatcher.wake()
        return .ok
    }

    /// The finalise task `task` this agent holds under `epoch` (renewed), with its job's plan
    /// and tasks; `stale_epoch` when it holds no such lease, `malformed` for a render task.
    private func heldFinalise(task: Int64, epoch: Int64, peer: Peer) async throws -> HeldFinalise {
        guard let agent = agentID(peer) else { throw ReelProtocolError(.staleEpoch, "task \(task): this connection holds no lease (send CAPS)") }
        let lease = Lease(task: task, epoch: epoch, agent: agent)
        let leaseSeconds = configuration.leaseSeconds
        let found: (Int64, JobDocuments, [TaskRecord])
        do {
            found = try await pool.run { store -> (Int64, JobDocuments, [TaskRecord]) in
                _ = try store.lifecycle.renew(lease, leaseSeconds: leaseSeconds)
                guard let job = try store.lifecycle.jobOfLease(lease) else { throw StoreError.staleEpoch(task: task, epoch: epoch) }
                guard let documents = try store.jobs.documents(job) else { throw StoreError.jobNotFound(job) }
                return (job, documents, try store.jobs.tasks(ofJob: job))
            }
        } catch StoreError.staleEpoch {
            throw ReelProtocolError(.staleEpoch, "task \(task) is no longer held under epoch \(epoch) by \(peer.name)")
        }
        guard found.2.contains(where: { $0.id == task && $0.kind == .finalise }) else {
            throw ReelProtocolError(.malformed, "task \(task) is not a finalise task")
        }
        guard let plan = try await RenderPlanDocuments.renderPlan(of: found.1, storage: storage) else {
            throw ReelProtocolError(.malformed, "job \(found.0) has no render plan")
        }
        return HeldFinalise(lease: lease, job: found.0, plan: plan, tasks: found.2)
    }
}
