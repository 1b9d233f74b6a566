import Foundation
import ReelConsole
import ReelCore
import ReelMedia
import ReelProtocol
import ReelScheduling
import ReelStore
import Synchronization

/// Watching a render as it renders (the console's `GET /api/v1/jobs/{id}/preview.m3u8`;
/// docs/delivery.md): the job's finished video chunks, remuxed into CMAF pieces on first
/// request (`CoordinatorStorage.previewPieces`), listed by a `PreviewPlaylist` in frame order
/// up to the first unfinished chunk — or the first whose init segment differs from the first
/// chunk's, since one init segment serves the whole playlist (the finaliser would refuse such a
/// chunk too). No frame is decoded or encoded, so a job whose codec no browser decodes
/// (ProRes, a PNG sequence: `VideoCodec.playsInBrowsers`) has no preview: its routes answer 415
/// with a message saying so, and the console shows the job's poster alone.
final class JobPreviews: Sendable {
    private let pool: StorePool
    private let storage: CoordinatorStorage
    /// What the preview needs of each job's plan, read once (a plan never changes).
    private struct PlanFacts: Sendable {
        var frameDuration: Rational
        var codec: VideoCodec?
        var fileType: FileType
    }
    private let planFacts = Mutex<[Int64: PlanFacts]>([:])

    init(pool: StorePool, storage: CoordinatorStorage) {
        self.pool = pool; self.storage = storage
    }

    /// What the preview needs of a job: whether it has ended, its video chunks (with their
    /// stored results) and its frame duration.
    private struct JobVideo: Sendable {
        var ended: Bool
        var chunks: [(chunk: PreviewChunk, sha256: String?)]
        var frameDuration: Rational
    }

    private func video(of job: Int64) async throws -> JobVideo {
        let known = planFacts.withLock { $0[job] }
        let (state, tasks, planJSON) = try await pool.run { store -> (JobState, [TaskRecord], String?) in
            guard let summary = try store.jobs.summary(job) else { throw ConsoleBackendError(.notFound, "no job \(job)") }
            let tasks = try store.jobs.tasks(ofJob: job)
            guard known == nil else { return (summary.state, tasks, nil) }
            return (summary.state, tasks, try store.jobs.documents(job)?.renderPlan)
        }
        let video = tasks.filter { $0.kind == .videoChunk }
        guard !video.isEmpty else {
            throw ConsoleBackendError(.notFound, tasks.isEmpty ? "job \(job) is not planned yet: nothing to preview"
                                                               : "job \(job) has no picture (sound only): nothing to preview")
        }
        let facts: PlanFacts
        if let known {
            facts = known
        } else {
            guard let planJSON, !planJSON.isEmpty else { throw ConsoleBackendError(.notFound, "job \(job) is not planned yet: nothing to preview") }
            let plan = try CoordinatorJSON.decode(RenderPlan.self, from: planJSON)
            facts = PlanFacts(frameDuration: plan.frameDuration, codec: plan.export.video.videoCodec, fileType: plan.export.fileType)
            planFacts.withLock { known in
                if known.count > 1000 { known.removeAll() }
                known[job] = facts
            }
        }
        if let codec = facts.codec, !codec.playsInBrowsers {
            let what = facts.fileType == .png ? "a PNG sequence" : "\(codec.displayName) (\(facts.fileType.rawValue))"
            throw ConsoleBackendError(.unplayable, "job \(job) renders \(what), which browsers cannot play, so it has no preview: "
                                      + "its poster shows the latest finished frame, and `reel fetch \(job)` gives the output")
        }
        let frameDuration = facts.frameDuration
        return JobVideo(ended: state.isTerminal, chunks: video.map { task in
            let done = task.state == .done && task.result != nil
            return (PreviewChunk(ordinal: task.ordinal, frames: FrameRange(start: Int(task.frameStart), end: Int(task.frameEnd)), finished: done),
                    done ? task.result?.sha256 : nil)
        }, frameDuration: frameDuration)
    }

    func playlist(job: Int64) async throws -> PreviewPlaylist {
        let video = try await video(of: job)
        let candidate = PreviewPlaylist(chunks: video.chunks.map(\.chunk), frameDuration: video.frameDuration, ended: video.ended)
        let listed = candidate.segments.compactMap { segment in video.chunks.first { $0.chunk == segment }.flatMap { entry in entry.sha256.map { (segment, $0) } } }
        let storage = storage, fd = video.frameDuration
        for (segment, sha256) in listed { try? await storage.fetchResultForPreview(sha256, firstFrame: segment.frames.start) }
        // Every listed chunk is remuxed now (once: cached), so its segment is ready when the
        // player asks, and its init segment can be held against the first chunk's.
        let playable = try await offload { () -> Int in
            var reference: [UInt8]?
            for (index, (segment, sha256)) in listed.enumerated() {
                guard let pieces = try? storage.previewPieces(sha256: sha256, frames: segment.frames, frameDuration: fd) else { return index }
                if reference == nil { reference = pieces.initSegment }
                guard pieces.initSegment == reference else { return index }
            }
            return listed.count
        }
        return PreviewPlaylist(chunks: video.chunks.map(\.chunk), frameDuration: video.frameDuration, ended: video.ended, playableCount: playable)
    }

    func initSegment(job: Int64) async throws -> [UInt8] {
        let video = try await video(of: job)
        guard let first = video.chunks.min(by: { $0.chunk.frames.start < $1.chunk.frames.start }), let sha256 = first.sha256 else {
            throw ConsoleBackendError(.notFound, "the first chunk of job \(job) is not finished yet: no preview yet")
        }
        return try await pieces(sha256: sha256, frames: first.chunk.frames, frameDuration: video.frameDuration).initSegment
    }

    func segment(job: Int64, chunk ordinal: Int) async throws -> [UInt8] {
        let video = try await video(of: job)
        guard let entry = video.chunks.first(where: { $0.chunk.ordinal == ordinal }) else {
            throw ConsoleBackendError(.notFound, "job \(job) has no chunk \(ordinal)")
        }
        guard let sha256 = entry.sha256 else { throw ConsoleBackendError(.notFound, "chunk \(ordinal) of job \(job) is not finished yet") }
        return try await pieces(sha256: sha256, frames: entry.chunk.frames, frameDuration: video.frameDuration).media
    }

    private func pieces(sha256: String, frames: FrameRange, frameDuration: Rational) async throws -> (initSegment: [UInt8], media: [UInt8]) {
        let storage = storage
        do {
            try? await storage.fetchResultForPreview(sha256, firstFrame: frames.start)
            return try await offload { try storage.previewPieces(sha256: sha256, frames: frames, frameDuration: frameDuration) }
        } catch let error as ReelProtocolError where error.code == .notFound {
            throw ConsoleBackendError(.notFound, error.message)
        }
    }
}
