import Foundation
import ServiceLifecycle
import Logging
import ReelCore
import ReelObjectStore
import ReelMedia
import ReelProtocol
import ReelStore
import ReelScheduling

/// Why a job's results cannot be finalised (besides `Finaliser`'s own failures).
struct FinaliseError: Error, CustomStringConvertible {
    var description: String
}

/// The coordinator runs finalise tasks itself (agents never get them): claim one under the
/// coordinator's own agent row, gather the job's verified chunk and audio results from
/// storage, `Finaliser.finalise` into `outputs/<job>.<fileType>` (atomic), and complete the task,
/// which completes the job. A failed finalise fails the task with the message (attempt limits
/// apply). The lease is renewed while finalising, so a slow finalise never loses it; after a
/// crash the lease simply expires and the next coordinator finalises again.
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
    func requeueDamagedResults(_ tasks: [TaskRecord], job: Int64, lease: Lease) async throws -> Bool {
        var damaged: [(TaskRecord, String)] = []
        for task in tasks {
            guard task.kind != .finalise, task.state == .done, let result = task.result else { continue }
            guard CoordinatorStorage.isValidHash(result.sha256) else { damaged.append((task, "not a content hash")); continue }
            if let problem = await storage.problem(.result(sha256: result.sha256), size: result.size, sha256: result.sha256) {
                damaged.append((task, problem))
            }
        }
        guard !damaged.isEmpty else { return false }
        for (task, problem) in damaged {
            logger.warning("stored result is missing or damaged; rendering the task again",
                           metadata: ["job": "\(job)", "task": "\(task.id)", "problem": "\(problem)"])
            if let hash = task.result?.sha256, CoordinatorStorage.isValidHash(hash) { await storage.delete([.result(sha256: hash)]) }
        }
        let ids = damaged.map { $0.0.id }
        let reason = "stored result " + damaged.map { "of task \($0.0.id): \($0.1)" }.joined(separator: "; ") + "; rendering again"
        try await worker.run { try $0.lifecycle.requeueDamagedResults(finalise: lease, tasks: ids, reason: reason) }
        return true
    }

    /// A job done without a poster (every chunk reused from earlier jobs, so no agent rendered
    /// one, or none arrived) gets one made from its output's last frame, so the console shows
    /// what it made. Best effort: a job never fails for its poster.
    private func posterFromOutputIfNone(job: Int64, output: String, plan: RenderPlan) async {
        let storage = storage
        do {
            guard plan.hasPicture, plan.export.ladder == nil, plan.export.fileType != .png, plan.frameCount > 0, try await storage.blobs.info(.poster(job: job)) == nil else { return }
            let jpeg = try await offload {
                try PosterFrame.jpeg(try VideoFrameSource(path: output).frame(at: plan.frameDuration * (plan.frameCount - 1)))
            }
            try await storage.storePoster(job: job, jpeg: jpeg)
        } catch {
            logger.debug("no poster made from the output", metadata: ["job": "\(job)", "error": "\(error)"])
        }
    }

    /// An HLS ladder's finalise (proto/PROTOCOL.md §4.6): each video result is a ladder
    /// archive holding every rendition of its chunk; they are unpacked into a work folder beside
    /// the output, `Finaliser.finaliseLadder` writes the output folder there, and that folder is
    /// packed into one ladder archive at `output` (atomically), which `OUTPUT` serves.
    static func finaliseLadder(_ plan: RenderPlan, chunks: [ChunkArtifact], audio: ChunkArtifact?, to output: String) throws -> Finaliser.Report {
        guard let ladder = plan.export.ladder else { throw FinaliseError(description: "not an HLS ladder") }
        let work = URL(fileURLWithPath: output + ".work")
        try? FileManager.default.removeItem(at: work)
        defer { try? FileManager.default.removeItem(at: work) }
        let results = work.appendingPathComponent("results"), folder = work.appendingPathComponent("output")
        try FileManager.default.createDirectory(at: results, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let expected = ladder.renditions.map { "\($0.name).mp4" }
        var renditions: [ChunkArtifact] = []
        for chunk in chunks {
            let members = try LadderArchive.members(of: chunk.path)
            guard members.map(\.name) == expected else {
                throw FinaliseError(description: "the result of chunk \(chunk.frames) holds \(members.map(\.name)), "
                                    + "not the ladder's renditions \(expected); render it again")
            }
            for (rendition, member) in zip(ladder.renditions, members) {
                let path = results.appendingPathComponent(String(format: "%08d-", chunk.frames.start) + member.name).path
                try LadderArchive.extract(member, from: chunk.path, to: path)
                renditions.append(try ChunkArtifact.measuring(kind: .video, frames: chunk.frames, path: path, rendition: rendition.name))
            }
        }
        let report = try Finaliser.finaliseLadder(plan, chunks: renditions, audio: audio,
                                                  to: folder.appendingPathComponent(LadderArchive.masterPlaylistName).path)
        let partial = output + ".partial"
        defer { unlink(partial) }
        try LadderArchive.write(try LadderArchive.files(under: folder.path), to: partial)
        guard rename(partial, output) == 0 else { throw FinaliseError(description: "cannot move \(partial) to \(output): \(String(cString: strerror(errno)))") }
        return report
    }

    /// A PNG sequence's finalise (proto/PROTOCOL.md §4.7): the finaliser writes the frames into a
    /// work folder beside the output, named `FrameSequenceName.archive`, and they are packed in
    /// frame order into one archive at `output` (atomically), which `OUTPUT` serves.
    static func finaliseFrameSequence(_ plan: RenderPlan, chunks: [ChunkArtifact], to output: String) throws -> Finaliser.Report {
        let folder = URL(fileURLWithPath: output + ".work")
        try? FileManager.default.removeItem(at: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = FrameSequenceName.archive
        let report = try Finaliser.finalise(plan, chunks: chunks, audio: nil, to: folder.appendingPathComponent("\(name.prefix)%0\(name.digits)d\(name.suffix)").path)
        let partial = output + ".partial"
        defer { unlink(partial) }
        try LadderArchive.write((1...max(1, report.frames)).map { (name: name.fileName(number: $0), path: folder.appendingPathComponent(name.fileName(number: $0)).path) },
                                to: partial)
        guard rename(partial, output) == 0 else { throw FinaliseError(description: "cannot move \(partial) to \(output): \(String(cString: strerror(errno)))") }
        return report
    }

    /// Finalises one claimable job; `false` when there was none.
    func finaliseNext() async throws -> Bool {
        let agent = agent, leaseSeconds = configuration.leaseSeconds
        guard let claimed = try await worker.run({ try $0.lifecycle.claimTask(agent: agent, leaseSeconds: leaseSeconds, kinds: [.finalise]) }) else {
            return false
        }
        let job = claimed.jobID
        let lease = claimed.lease
        logger.info("finalising job", metadata: ["job": "\(job)", "task": "\(claimed.id)", "epoch": "\(claimed.epoch)"])
        let renewal = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(max(0.2, leaseSeconds / 3)))
                if Task.isCancelled { break }
                _ = try? await worker.run { try $0.lifecycle.renew(lease, leaseSeconds: leaseSeconds) }
            }
        }
        defer { renewal.cancel() }
        do {
            let (planJSON, tasks) = try await worker.run { store -> (String, [TaskRecord]) in
                guard let documents = try store.jobs.documents(job) else { throw StoreError.jobNotFound(job) }
                return (documents.renderPlan, try store.jobs.tasks(ofJob: job))
            }
            if try await requeueDamagedResults(tasks, job: job, lease: lease) { return true }
            let plan = try CoordinatorJSON.decode(RenderPlan.self, from: planJSON)
            var chunks: [ChunkArtifact] = []
            var audio: ChunkArtifact?
            for task in tasks where task.kind != .finalise {
                guard task.state == .done, let result = task.result else {
                    throw FinaliseError(description: "task \(task.id) is \(task.state.rawValue), not done")
                }
                let artifact = ChunkArtifact(kind: task.kind == .audio ? .audio : .video,
                                             frames: task.kind == .audio ? FrameRange(start: 0, end: plan.frameCount)
                                                                         : FrameRange(start: Int(task.frameStart), end: Int(task.frameEnd)),
                                             path: storage.resultPath(result.sha256), byteCount: Int(result.size), sha256: result.sha256)
                if task.kind == .audio { audio = artifact } else { chunks.append(artifact) }
            }
            let output = storage.outputPath(job: job, fileType: plan.export.fileType.rawValue)
            let (report, digest) = try await offload { [chunks, audio] in
                let report = plan.export.ladder != nil
                    ? try Self.finaliseLadder(plan, chunks: chunks, audio: audio, to: output)
                    : plan.export.fileType == .png ? try Self.finaliseFrameSequence(plan, chunks: chunks, to: output)
                    : try Finaliser.finalise(plan, chunks: chunks, audio: audio, to: output)
                return (report, try FileDigest.sha256(path: output))
            }
            let outputKey = BlobKey.output(job: job, fileType: plan.export.fileType.rawValue)
            try await storage.publish(outputKey, sha256: digest.hex)
            // Before completing: a job seen done has its poster, and its loudness figures.
            await posterFromOutputIfNone(job: job, output: output, plan: plan)
            if let loudness = report.loudness {
                try await worker.run { try $0.events.append(job: job, kind: Self.loudnessEvent, message: loudness.summary) }
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
