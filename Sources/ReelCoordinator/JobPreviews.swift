import Foundation
import ReelConsole
import ReelCore
import ReelProtocol
import ReelScheduling
import ReelStore
import Synchronization

/// Watching a render as it renders (the console's `GET /api/v1/jobs/{id}/preview.m3u8`;
/// docs/watching.md): the job's video chunks, remuxed into CMAF pieces on first request
/// (`CoordinatorStorage.previewPieces`) and listed by a `PreviewPlaylist`. While the job runs the
/// playlist lists every planned chunk, and a piece whose chunk is not rendered yet is answered
/// once it is: the request waits, reading the job again every `pollInterval` (and at once when
/// the job may have ended, `JobWatchers`), for at most `longestWait`. Once the job has ended
/// the playlist stops at the first unfinished chunk, or at the first whose init segment differs
/// from the first chunk's, since one init segment serves the whole playlist (the finaliser would
/// refuse such a chunk too; while the job runs, such a chunk's segment is refused). No frame is
/// decoded or encoded, so a job whose codec no browser decodes (ProRes, a PNG sequence:
/// `VideoCodec.playsInBrowsers`) has no preview: its routes answer 415 with a message saying
/// so, and the console shows the job's poster alone.
final class JobPreviews: Sendable {
    private let pool: StorePool
    private let storage: CoordinatorStorage
    private let watchers: JobWatchers
    /// How often a waiting request reads the job again.
    let pollInterval: Duration
    /// How long a request waits for its chunk at most before answering 503 (a player asks again
    /// or shows an error; a client that went away is not waited for much longer than that).
    let longestWait: Duration
    /// What the preview needs of each job's plan, read once (a plan never changes).
    private struct PlanFacts: Sendable {
        var frameDuration: Rational
        var codec: VideoCodec?
        var fileType: FileType
        /// For an HLS ladder, the rendition the preview plays: the smallest picture (the last
        /// of equal ones), the lightest to watch in a browser.
        var rendition: String?
    }
    private let planFacts = Mutex<[Int64: PlanFacts]>([:])

    init(pool: StorePool, storage: CoordinatorStorage, watchers: JobWatchers,
         pollInterval: Duration = .seconds(1), longestWait: Duration = .seconds(600)) {
        self.pool = pool; self.storage = storage; self.watchers = watchers
        self.pollInterval = pollInterval; self.longestWait = longestWait
    }

    /// Where a finished chunk's picture is: a stored result, and for a ladder chunk the
    /// rendition to take from it (its own archive, or the archive it reused that rendition from).
    private struct ChunkSource: Sendable {
        var sha256: String
        var rendition: String?
    }

    /// What the preview needs of a job: whether it has ended, its video chunks (with where
    /// their finished pictures are) and its frame duration.
    private struct JobVideo: Sendable {
        var state: JobState
        var ended: Bool { state.isTerminal }
        var chunks: [(chunk: PreviewChunk, source: ChunkSource?)]
        var frameDuration: Rational
    }

    private func video(of job: Int64) async throws -> JobVideo {
        let known = planFacts.withLock { $0[job] }
        let (state, tasks, renditions, documents) = try await pool.run { store -> (JobState, [TaskRecord], [Int64: [TaskRendition]], JobDocuments?) in
            guard let summary = try store.jobs.summary(job) else { throw ConsoleBackendError(.notFound, "no job \(job)") }
            let tasks = try store.jobs.tasks(ofJob: job)
            // Only a ladder's chunks have rendition rows; none for any other job.
            let renditions = known?.rendition == nil && known != nil ? [:] : try store.jobs.renditions(ofJob: job)
            guard known == nil else { return (summary.state, tasks, renditions, nil) }
            return (summary.state, tasks, renditions, try store.jobs.documents(job))
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
            guard let documents, let plan = try await RenderPlanDocuments.renderPlan(of: documents, storage: storage) else {
                throw ConsoleBackendError(.notFound, "job \(job) is not planned yet: nothing to preview")
            }
            let smallest = plan.export.ladder?.renditions.enumerated()
                .min { ($0.element.size.width * $0.element.size.height, -$0.offset) < ($1.element.size.width * $1.element.size.height, -$1.offset) }
            facts = PlanFacts(frameDuration: plan.frameDuration, codec: plan.export.video.videoCodec, fileType: plan.export.fileType,
                              rendition: smallest?.element.name)
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
        return JobVideo(state: state, chunks: video.map { task in
            let chunk = PreviewChunk(ordinal: task.ordinal, frames: FrameRange(start: Int(task.frameStart), end: Int(task.frameEnd)),
                                     finished: task.state == .done && task.result != nil)
            guard chunk.finished, let result = task.result else { return (chunk, nil) }
            // A ladder chunk may have taken the preview's rendition from an earlier job's archive.
            let reused = facts.rendition.flatMap { name in renditions[task.id]?.first { $0.name == name }?.source }
            return (chunk, ChunkSource(sha256: (reused ?? result).sha256, rendition: facts.rendition))
        }, frameDuration: frameDuration)
    }

    func playlist(job: Int64) async throws -> PreviewPlaylist {
        let video = try await video(of: job)
        let chunks = video.chunks.map(\.chunk)
        // While the job runs every planned chunk is listed; its pieces are made when asked for.
        guard video.ended else { return PreviewPlaylist(chunks: chunks, frameDuration: video.frameDuration, ended: false) }
        let candidate = PreviewPlaylist(chunks: chunks, frameDuration: video.frameDuration, ended: true)
        let listed = candidate.segments.compactMap { segment in video.chunks.first { $0.chunk == segment }.flatMap { entry in entry.source.map { (segment, $0) } } }
        let storage = storage, fd = video.frameDuration
        for (segment, source) in listed {
            try? await storage.fetchResultForPreview(source.sha256, rendition: source.rendition, firstFrame: segment.frames.start)
        }
        // Every listed chunk is remuxed now (once: cached), so its segment is ready when the
        // player asks, and its init segment can be held against the first chunk's.
        let playable = try await offload { () -> Int in
            var reference: [UInt8]?
            for (index, (segment, source)) in listed.enumerated() {
                guard let pieces = try? storage.previewPieces(sha256: source.sha256, rendition: source.rendition, frames: segment.frames,
                                                              frameDuration: fd) else { return index }
                if reference == nil { reference = pieces.initSegment }
                guard pieces.initSegment == reference else { return index }
            }
            return listed.count
        }
        return PreviewPlaylist(chunks: chunks, frameDuration: video.frameDuration, ended: true, playableCount: playable)
    }

    /// The init segment, from the job's first chunk (waited for while it renders).
    func initSegment(job: Int64) async throws -> [UInt8] {
        let (video, first) = try await waitForChunk(job: job, missing: "job \(job) has no video chunk") { chunks in
            chunks.min { $0.chunk.frames.start < $1.chunk.frames.start }
        }
        return try await pieces(first.source, frames: first.chunk.frames, frameDuration: video.frameDuration).initSegment
    }

    /// Chunk `ordinal`'s media segment (waited for while it renders). While the job runs the
    /// first chunk is waited for too, and a chunk whose init segment differs from the first's
    /// is refused: it cannot follow it in one stream.
    func segment(job: Int64, chunk ordinal: Int) async throws -> [UInt8] {
        let (video, entry) = try await waitForChunk(job: job, missing: "job \(job) has no chunk \(ordinal)") { chunks in
            chunks.first { $0.chunk.ordinal == ordinal }
        }
        let media = try await pieces(entry.source, frames: entry.chunk.frames, frameDuration: video.frameDuration)
        if let first = video.chunks.min(by: { $0.chunk.frames.start < $1.chunk.frames.start }), first.chunk != entry.chunk {
            let (_, firstSource) = try await waitForChunk(job: job, missing: "job \(job) has no first chunk") { chunks in
                chunks.first { $0.chunk == first.chunk }
            }
            guard try await pieces(firstSource.source, frames: first.chunk.frames, frameDuration: video.frameDuration).initSegment == media.initSegment else {
                throw ConsoleBackendError(.conflict, "chunk \(ordinal) of job \(job) was encoded with other codec parameters than its first chunk: "
                                          + "it cannot be played after it (the finaliser refuses it too)")
            }
        }
        return media.media
    }

    /// The job's video and the chunk `pick` chooses, once that chunk is finished: at once if it
    /// is, otherwise polling while the job runs.
    /// - Throws: `.notFound` (saying `missing`) when there is no such chunk, or when the job ended
    ///   without it; `.unavailable` when it is still not rendered after `longestWait`, or the
    ///   coordinator drains.
    private func waitForChunk(job: Int64, missing: String, _ pick: @escaping @Sendable ([(chunk: PreviewChunk, source: ChunkSource?)]) -> (chunk: PreviewChunk, source: ChunkSource?)?)
        async throws -> (video: JobVideo, entry: (chunk: PreviewChunk, source: ChunkSource)) {
        let deadline = ContinuousClock.now + longestWait
        return try await watchers.follow(job) { bell in
            while true {
                let video = try await video(of: job)
                guard let entry = pick(video.chunks) else { throw ConsoleBackendError(.notFound, missing) }
                if let source = entry.source { return (video, (entry.chunk, source)) }
                if video.ended {
                    throw ConsoleBackendError(.notFound, "chunk \(entry.chunk.ordinal) of job \(job) was not rendered: the job is \(video.state.rawValue)")
                }
                let now = ContinuousClock.now
                guard now < deadline, !watchers.isDraining else {
                    throw ConsoleBackendError(.unavailable, "chunk \(entry.chunk.ordinal) of job \(job) is not rendered yet: ask again later")
                }
                await bell.wait(upTo: min(pollInterval, deadline - now))
                try Task.checkCancellation()
            }
        }
    }

    private func pieces(_ source: ChunkSource, frames: FrameRange, frameDuration: Rational) async throws -> (initSegment: [UInt8], media: [UInt8]) {
        let storage = storage
        do {
            try? await storage.fetchResultForPreview(source.sha256, rendition: source.rendition, firstFrame: frames.start)
            return try await offload {
                try storage.previewPieces(sha256: source.sha256, rendition: source.rendition, frames: frames, frameDuration: frameDuration)
            }
        } catch let error as ReelProtocolError where error.code == .notFound {
            throw ConsoleBackendError(.notFound, error.message)
        }
    }
}
