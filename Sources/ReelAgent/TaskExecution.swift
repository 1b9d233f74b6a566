import Foundation
import Logging
import ReelCore
import ReelAssetCache
import ReelMedia
import ReelObjectStore
import ReelProtocol

/// Runs one claimed task to its end on one connection: decode the specification, route every
/// source through the cache (`reel-asset:<sha256>`, read through a presigned URL when the
/// coordinator stores in an object store, else fetched with `FETCH` on this connection),
/// render on a dedicated thread while heartbeating every lease/3 and reporting progress,
/// then upload the result — or abandon it (`LOST`, connection lost, shutdown grace over).
/// A rendered result is never thrown away for the coordinator's trouble: `deliver` retries it
/// (`ResultRetry`), and hands it back to the slot to re-send after reconnecting, in parts read
/// from its file (`ResultUpload`), resuming from what the coordinator already holds — or, with
/// an object store, straight to the store through a presigned PUT (`DirectUpload`).
struct TaskExecution {
    /// How a task ended, as far as the slot's loop cares.
    enum Ending {
        /// Accepted, refused as stale, failed or lost: the connection is fine, claim again.
        case finished
        /// The connection died. A rendered result not yet accepted comes back to be re-sent on
        /// the next connection; any other task in flight is abandoned.
        case connectionLost(PendingResult?)
        /// Released (or finished) because the agent is shutting down.
        case released
    }

    let configuration: AgentConfiguration
    let session: CoordinatorSession
    let cache: RangeCache
    let drain: DrainState
    /// Decoded plan documents of recent jobs, shared by the agent's slots.
    let plans: PlanDocumentMemory
    let workDirectory: URL
    let logger: Logger

    func run(_ assignment: TaskAssignment, specification bytes: [UInt8]) async -> Ending {
        var logger = logger
        logger[metadataKey: "task"] = "\(assignment.task)"
        logger[metadataKey: "epoch"] = "\(assignment.epoch)"
        logger.info("claimed", metadata: ["job": "\(assignment.job)", "kind": "\(assignment.kind.rawValue)",
                                          "frames": "\(assignment.frameStart)..<\(assignment.frameEnd)"])
        if assignment.kind == .finalise { return await runFinalise(assignment, specification: bytes, logger: logger) }
        let control = RenderControl()
        let job: RenderJob
        do {
            job = try await prepare(assignment, bytes, control: control)
        } catch {
            logger.error("cannot start the task", metadata: ["error": "\(error)"])
            return await fail(assignment, reason: "agent cannot run the task: \(error)", logger: logger)
        }
        // The rendered file stays only while a result waiting for a new connection refers to it.
        var outputHandedBack = false
        defer {
            if !outputHandedBack { unlink(job.outputPath) }
            unlink(job.posterPath)
        }

        let lease = LeaseExpiry(assignment.expiresAtMillis)
        let outcome = await renderSupervised(assignment, job: job, control: control, lease: lease, logger: logger)
        switch outcome {
        case .abandoned(.lost):
            logger.warning("lease lost; render abandoned and discarded")
            return .finished
        case .abandoned(.connectionLost):
            logger.warning("connection lost during the task; render abandoned")
            return .connectionLost(nil)
        case .abandoned(.shutdown):
            logger.notice("shutdown grace period over; releasing the task")
            return await release(assignment, logger: logger)
        case .rendered(.failure(let error)):
            if session.isClosed { return .connectionLost(nil) }
            logger.error("render failed", metadata: ["error": "\(error)"])
            return await fail(assignment, reason: "\(error)", logger: logger)
        case .rendered(.success(let artifact)):
            await sendPoster(assignment, path: job.posterPath, logger: logger)
            let pending = PendingResult(assignment: assignment, sha256: artifact.sha256, path: artifact.path,
                                        byteCount: Int64(artifact.byteCount), leaseExpiresAtMillis: lease.value)
            let ending = await deliver(pending, logger: logger)
            if case .connectionLost(.some) = ending { outputHandedBack = true }
            return ending
        }
    }

    // MARK: Preparation

    /// What the render thread needs.
    struct RenderJob: Sendable {
        var specification: TaskSpecification
        var plan: RenderPlan
        var encoderThreads: Int
        var outputPath: String
        /// The sources of the plan's `reel-asset:` URLs: this task's reads through the cache.
        var media: MediaSources
        /// Where a video chunk's poster frame (its last frame, small JPEG) is written.
        var posterPath: String { outputPath + ".poster.jpg" }
    }

    private func prepare(_ assignment: TaskAssignment, _ bytes: [UInt8], control: RenderControl) async throws -> RenderJob {
        let specification = try JSONDecoder().decode(TaskSpecification.self, from: Data(bytes))
        guard specification.kind == assignment.kind else {
            throw AgentError.protocolViolation("TASK kind \(assignment.kind.rawValue) carries a \(specification.kind.rawValue) specification")
        }
        guard specification.task == assignment.task else {
            throw AgentError.protocolViolation("TASK \(assignment.task) carries the specification of task \(specification.task)")
        }
        let document = try await planDocument(specification.planDocument)
        if specification.kind == .videoChunk {
            let frames = specification.frames
            guard frames.start >= 0, frames.count > 0, frames.end <= document.plan.frameCount else {
                throw AgentError.protocolViolation("chunk \(frames) outside the plan's \(document.plan.frameCount) frames")
            }
        }
        // Every source is read through the cache by content, whatever URL the plan carries:
        // an agent has no shared filesystem (docs/architecture.md).
        // The sources belong to this task: two slots (or two in-process agents) reading the same
        // asset each fetch on their own live connection.
        var plan = document.plan
        var media = MediaSources()
        for (id, asset) in plan.assets {
            guard let entry = document.assets[id] else {
                throw AgentError.protocolViolation("the specification has no content hash for asset \"\(id)\"")
            }
            let url = MediaSources.url(forContentHash: entry.sha256)
            let session = self.session
            let source = try cache.source(hash: entry.sha256, size: entry.size) { hash, offset, length in
                try control.checkCancelled()
                return try ThreadBridge.blockingWait {
                    try await session.readSource(sha256: hash, offset: offset, length: length, size: entry.size)
                }
            }
            media.add(source, for: url)
            plan.assets[id] = PlannedAsset(url: url, description: asset.description)
        }
        let suffix = specification.kind == .videoChunk ? (plan.export.ladder != nil ? "tar" : "mp4") : (plan.export.ladder != nil ? "mp4" : "m4a")
        let output = workDirectory.appendingPathComponent("task-\(assignment.task)-\(assignment.epoch).\(suffix)").path
        return RenderJob(specification: specification, plan: plan, encoderThreads: document.encoderThreads, outputPath: output,
                         media: media)
    }

    /// The job's plan document: from memory when a task of the job ran here lately, else
    /// fetched whole on this connection (`FETCH`, in ranges) and checked against its hash.
    /// Async, on the task's own connection: never through the cache's blocking reads, which
    /// belong to render threads.
    func planDocument(_ reference: AssetManifestEntry) async throws -> RenderPlanDocument {
        if let known = plans.document(reference.sha256) { return known }
        guard reference.size > 0, reference.size <= 256 << 20 else {
            throw AgentError.protocolViolation("plan document size \(reference.size) is out of range")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(reference.size))
        while bytes.count < Int(reference.size) {
            let length = min(Int(reference.size) - bytes.count, RangeCache.maxFetchLength)
            bytes += try await session.readSource(sha256: reference.sha256, offset: Int64(bytes.count), length: length, size: reference.size)
        }
        guard AssetAddress.name(of: bytes) == reference.sha256 else {
            throw AgentError.protocolViolation("plan document \(reference.sha256) does not match its hash")
        }
        let document = try JSONDecoder().decode(RenderPlanDocument.self, from: Data(bytes))
        plans.remember(document, as: reference.sha256)
        return document
    }

    // MARK: Rendering under supervision

    enum AbandonReason: Equatable { case lost, connectionLost, shutdown }
    enum Outcome { case rendered(Result<ChunkArtifact, any Error>), abandoned(AbandonReason) }

    /// Renders on a dedicated thread while this task heartbeats and reports progress. If the
    /// supervisor decides to abandon, the render is cancelled and awaited (it stops at its next
    /// frame or fetch) so no thread keeps writing after the task is gone.
    private func renderSupervised(_ assignment: TaskAssignment, job: RenderJob, control: RenderControl,
                                  lease: LeaseExpiry, logger: Logger) async -> Outcome {
        let threadName = "reel-render-\(assignment.task)"
        return await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                .rendered(await ThreadBridge.runOnDedicatedThread(name: threadName) { try Self.render(job, control: control) })
            }
            group.addTask { await supervise(assignment, control: control, lease: lease, logger: logger) }
            let first = await group.next()!
            if case .abandoned = first { control.cancel() }
            group.cancelAll()
            // Wait for the other child: after an abandonment the render fails with `cancelled`, after
            // a finished render the supervisor stops; either way the first outcome is the one that counts.
            while await group.next() != nil {}
            return first
        }
    }

    /// The blocking render (on the dedicated thread).
    private static func render(_ job: RenderJob, control: RenderControl) throws -> ChunkArtifact {
        switch job.specification.kind {
        case .videoChunk where job.plan.export.ladder != nil:
            return try renderLadderChunk(job, control: control)
        case .videoChunk:
            return try ChunkRenderer.renderVideo(job.plan, frames: job.specification.frames, to: job.outputPath,
                                                 encoderThreads: job.encoderThreads, media: job.media, progress: { done in
                try control.report(framesDone: done)
            }, lastFrame: { frame in PosterFrame.writeBestEffort(frame, matrix: job.plan.colour.space.matrix, to: job.posterPath) })
        case .audio:
            try control.checkCancelled()
            // Audio has no per-frame hook: it stops at its next source fetch, or is discarded after.
            let artifact = job.plan.export.ladder != nil
                ? try ChunkRenderer.renderLadderAudio(job.plan, to: job.outputPath, media: job.media)
                : try ChunkRenderer.renderAudio(job.plan, to: job.outputPath, media: job.media)
            try control.checkCancelled()
            return artifact
        case .finalise:
            throw AgentError.protocolViolation("a finalise task is not rendered (runFinalise runs it)")
        }
    }

    /// A chunk of an HLS ladder: every rendition from one render of the frames
    /// (`ChunkRenderer.renderLadder`), packed in rendition order into one ladder archive, the
    /// task's one result (proto/PROTOCOL.md §4.6). The poster is the chunk's last frame at the
    /// composition's size, as for any chunk.
    /// With `renditions` in the specification only those are encoded (the others are reused
    /// from stored archives): still one decode and composite, fewer encoders, and an archive
    /// of just those members.
    private static func renderLadderChunk(_ job: RenderJob, control: RenderControl) throws -> ChunkArtifact {
        var plan = job.plan
        if let names = job.specification.renditions {
            let unknown = names.filter { name in !(plan.export.ladder?.renditions.contains { $0.name == name } ?? false) }
            guard unknown.isEmpty, !names.isEmpty else {
                throw AgentError.protocolViolation("the specification names renditions \(names), not a non-empty part of the ladder")
            }
            plan.export.ladder?.renditions.removeAll { !names.contains($0.name) }
        }
        guard let ladder = plan.export.ladder else { throw AgentError.protocolViolation("not a ladder plan") }
        let paths = ladder.renditions.map { job.outputPath + ".\($0.name).mp4" }
        defer { for path in paths { unlink(path) } }
        _ = try ChunkRenderer.renderLadder(plan, frames: job.specification.frames, to: paths, encoderThreads: job.encoderThreads,
                                           media: job.media, progress: { done in try control.report(framesDone: done) },
                                           lastFrame: { frame in PosterFrame.writeBestEffort(frame, matrix: job.plan.colour.space.matrix, to: job.posterPath) })
        try LadderArchive.write(zip(ladder.renditions, paths).map { (name: "\($0.name).mp4", path: $1) }, to: job.outputPath)
        return try ChunkArtifact.measuring(kind: .video, frames: job.specification.frames, path: job.outputPath)
    }

    /// Heartbeats every lease/3 and sends `PROGRESS` every `progressInterval` until cancelled
    /// (the render finished) or until the task must be abandoned, which it returns.
    func supervise(_ assignment: TaskAssignment, control: RenderControl, lease: LeaseExpiry, logger: Logger) async -> Outcome {
        let clock = ContinuousClock()
        var nextHeartbeat = clock.now + heartbeatInterval(expiresAtMillis: assignment.expiresAtMillis)
        var nextProgress = clock.now + configuration.progressInterval
        var reported = -1
        while true {
            do { try await Task.sleep(for: .milliseconds(100)) } catch { return .abandoned(.shutdown) }  // cancelled
            if session.isClosed { return .abandoned(.connectionLost) }
            if drain.graceExpired { return .abandoned(.shutdown) }
            // The drain began while rendering (SIGTERM, or `DRAIN` to another slot): say so once.
            await session.announceDrainIfDraining()
            do {
                if clock.now >= nextProgress {
                    nextProgress = clock.now + configuration.progressInterval
                    let frames = control.framesDone
                    if frames != reported {
                        if try await session.progress(assignment, frames: frames) == .lost { return .abandoned(.lost) }
                        reported = frames
                    }
                }
                if clock.now >= nextHeartbeat {
                    switch try await session.heartbeat(assignment) {
                    case .lost: return .abandoned(.lost)
                    case .held(let expires):
                        if let expires { lease.renewed(expires) }
                        nextHeartbeat = clock.now + heartbeatInterval(expiresAtMillis: expires ?? assignment.expiresAtMillis)
                    }
                }
            } catch {
                if session.isClosed { return .abandoned(.connectionLost) }
                if Task.isCancelled { return .abandoned(.shutdown) }
                // An ERR reply (e.g. internal) leaves the lease as it was; try again next tick.
                logger.warning("heartbeat/progress refused", metadata: ["error": "\(error)"])
            }
        }
    }

    /// A third of the time left on the lease, at least 100 ms.
    private func heartbeatInterval(expiresAtMillis: Int64) -> Duration {
        .milliseconds(max(100, (expiresAtMillis - configuration.clock.nowMillis()) / 3))
    }

    // MARK: Endings

    /// Sends the result in parts until it is accepted or can no longer count (`ResultRetry`);
    /// each attempt continues from the bytes the coordinator holds. Between attempts it
    /// heartbeats: that renews the lease and learns of its loss before more bytes are sent.
    /// Returns `.connectionLost(pending)` when a new connection is needed; on every other ending
    /// the result's file is deleted.
    func deliver(_ pending: PendingResult, logger: Logger) async -> Ending {
        var pending = pending
        var logger = logger
        logger[metadataKey: "task"] = "\(pending.assignment.task)"
        logger[metadataKey: "epoch"] = "\(pending.assignment.epoch)"
        var retry = ResultRetry(initial: configuration.reconnectInitial, maximum: configuration.reconnectMaximum)
        var attempt: ResultRetry.Attempt
        let upload = ResultUpload(session: session, partBytes: configuration.resultPartBytes)
        while true {
            do {
                if try await !DirectUpload(session: session).send(DirectBlob(result: pending)) { try await upload.send(&pending) }
                attempt = .accepted
            } catch let error as ReelProtocolError {
                attempt = session.isClosed ? .connectionLost : .refused(error)
            } catch {
                attempt = session.isClosed ? .connectionLost : .refused(ReelProtocolError(.malformed, "\(error)"))
            }
            while true {
                switch retry.decide(after: attempt, leaseExpiresAtMillis: pending.leaseExpiresAtMillis,
                                    nowMillis: configuration.clock.nowMillis()) {
                case .delivered:
                    logger.info("result accepted", metadata: ["bytes": "\(pending.byteCount)", "sha256": "\(pending.sha256)"])
                    pending.discard()
                    return drain.isDraining ? .released : .finished
                case .discard(let reason):
                    logger.warning("result discarded", metadata: ["reason": "\(reason)"])
                    pending.discard()
                    return drain.isDraining ? .released : .finished
                case .reconnect:
                    logger.warning("connection lost while delivering the result; it is kept to be sent on after reconnecting",
                                   metadata: ["have": "\(pending.have)", "bytes": "\(pending.byteCount)"])
                    return .connectionLost(pending)
                case .retry(let delay):
                    if case .refused(let error) = attempt {
                        logger.warning("result not accepted; sending it again", metadata: ["error": "\(error)", "in": "\(delay)"])
                    }
                    do { try await Task.sleep(for: delay) } catch {}
                    if drain.graceExpired || Task.isCancelled {
                        logger.error("shutdown grace period over before the coordinator accepted the result; discarded")
                        pending.discard()
                        return .released
                    }
                    do {
                        switch try await session.heartbeat(pending.assignment) {
                        case .lost:
                            attempt = .leaseLost
                            continue
                        case .held(let expires):
                            if let expires { pending.leaseExpiresAtMillis = max(pending.leaseExpiresAtMillis, expires) }
                        }
                    } catch {
                        // Still unwell (e.g. ERR internal): the RESULT itself is the next probe.
                        if session.isClosed { attempt = .connectionLost; continue }
                    }
                }
                break
            }
        }
    }

    /// Sends the chunk's poster frame, if one was made, while the lease still holds (before the
    /// result). Best effort: the console just shows an older picture if this one does not arrive.
    private func sendPoster(_ assignment: TaskAssignment, path: String, logger: Logger) async {
        guard let data = FileManager.default.contents(atPath: path), !session.isClosed else { return }
        do {
            try await session.poster(assignment, jpeg: [UInt8](data))
        } catch {
            logger.debug("poster frame not sent", metadata: ["error": "\(error)"])
        }
    }

    func fail(_ assignment: TaskAssignment, reason: String, logger: Logger) async -> Ending {
        do {
            if try await session.fail(assignment, reason: reason) == .lost { logger.warning("FAIL answered LOST") }
            return drain.isDraining ? .released : .finished
        } catch {
            logger.error("FAIL not delivered", metadata: ["error": "\(error)"])
            return session.isClosed ? .connectionLost(nil) : .finished
        }
    }

    func release(_ assignment: TaskAssignment, logger: Logger) async -> Ending {
        do {
            _ = try await session.release(assignment)
            logger.notice("task released")
            return .released
        } catch {
            logger.error("RELEASE not delivered", metadata: ["error": "\(error)"])
            return session.isClosed ? .connectionLost(nil) : .released
        }
    }
}
