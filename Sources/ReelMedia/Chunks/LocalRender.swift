import Foundation
import ReelCore
import Synchronization

/// Renders a plan on this machine the way the farm does: video chunks of whole GOPs (whole
/// segments for an HLS ladder, each chunk encoding every rendition) and one audio task
/// rendered by `workers` threads in parallel, then the finaliser joins them.
///
/// Chunk files live in a work directory beside the output (removed afterwards); the output
/// appears atomically.
public enum LocalRender {
    public struct Options: Sendable {
        /// Parallel render workers (threads), each rendering one task at a time.
        public var workers: Int = 1
        /// Target chunk length; chunks are whole GOPs near it.
        public var chunkSeconds: Rational = 10
        /// x264 threads per chunk, fixed per job (output bytes depend on it).
        public var encoderThreads: Int = 4
        /// Keep the chunk files (for inspection) instead of deleting them.
        public var keepChunks: Bool = false
        /// Asked before each task and at every frame: once it says yes, the render stops, removes
        /// its work directory (chunks kept or not), writes no output and throws `Cancelled`.
        public var isCancelled: (@Sendable () -> Bool)?
        public init(workers: Int = 1, chunkSeconds: Rational = 10, encoderThreads: Int = 4, keepChunks: Bool = false,
                    isCancelled: (@Sendable () -> Bool)? = nil) {
            self.workers = workers; self.chunkSeconds = chunkSeconds; self.encoderThreads = encoderThreads; self.keepChunks = keepChunks
            self.isCancelled = isCancelled
        }
    }

    /// The render was stopped by `Options.isCancelled`.
    public struct Cancelled: Error, CustomStringConvertible {
        public var description: String { "the render was cancelled" }
    }

    /// The tasks a plan is split into.
    public static func chunks(for plan: RenderPlan, options: Options) -> [FrameRange] {
        ChunkPlanner.plan(for: plan, targetChunkSeconds: options.chunkSeconds, minimumChunks: options.workers)
    }

    @discardableResult
    public static func render(_ plan: RenderPlan, to outputPath: String, options: Options = Options(),
                              progress: (@Sendable (RenderProgress) -> Void)? = nil) throws -> Finaliser.Report {
        let ranges = chunks(for: plan, options: options)
        let work = URL(fileURLWithPath: AtomicFile.temporaryPath(for: outputPath) + ".chunks")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let cancelled: @Sendable () -> Bool = { options.isCancelled?() ?? false }
        defer { if !options.keepChunks || cancelled() { try? FileManager.default.removeItem(at: work) } }

        var tasks: [RenderTask] = plan.audioTracks.isEmpty ? [] : [.audio]   // audio first: it is one long task
        tasks += ranges.enumerated().map { .video($0.offset, $0.element) }
        let state = SharedState(tasks: tasks, chunkCount: ranges.count, frameCount: plan.frameCount, progress: progress)

        let group = DispatchGroup()
        for _ in 0..<max(1, min(options.workers, tasks.count)) {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while let task = state.take() {
                    do {
                        if cancelled() { throw Cancelled() }
                        switch task {
                        case .audio:
                            // No per-frame hook: the audio task is checked before and after.
                            let artifact = plan.export.ladder != nil
                                ? try ChunkRenderer.renderLadderAudio(plan, to: work.appendingPathComponent("audio.mp4").path)
                                : try ChunkRenderer.renderAudio(plan, to: work.appendingPathComponent("audio.\(plan.audioTaskContainer)").path)
                            if cancelled() { throw Cancelled() }
                            state.finishedAudio(artifact)
                        case .video(let index, let range):
                            var reported = 0
                            let progress: (Int) throws -> Void = { done in
                                if cancelled() { throw Cancelled() }
                                state.addFrames(done - reported)
                                reported = done
                            }
                            if let ladder = plan.export.ladder {
                                let paths = ladder.renditions.map {
                                    work.appendingPathComponent(String(format: "chunk-%05d-", index) + "\($0.name).mp4").path
                                }
                                let artifacts = try ChunkRenderer.renderLadder(plan, frames: range, to: paths, encoderThreads: options.encoderThreads,
                                                                               progress: progress)
                                state.finishedChunk(index, artifacts)
                            } else {
                                let path = work.appendingPathComponent(String(format: "chunk-%05d.mp4", index)).path
                                let artifact = try ChunkRenderer.renderVideo(plan, frames: range, to: path, encoderThreads: options.encoderThreads,
                                                                             progress: progress)
                                state.finishedChunk(index, [artifact])
                            }
                        }
                    } catch {
                        state.fail(error)
                    }
                }
            }
        }
        group.wait()
        let (chunks, audio) = try state.results()
        if cancelled() { throw Cancelled() }
        return try Finaliser.finalise(plan, chunks: chunks, audio: audio, to: outputPath)
    }
}

private enum RenderTask: Sendable { case video(Int, FrameRange), audio }

/// The task queue and results shared by the worker threads, behind one mutex.
private final class SharedState: Sendable {
    private struct State {
        var tasks: [RenderTask]
        /// Per chunk, its result (one per rendition for an HLS ladder).
        var chunks: [[ChunkArtifact]?]
        var audio: ChunkArtifact?
        var error: Error?
        var framesDone = 0
    }

    private let state: Mutex<State>
    private let frameCount: Int
    private let progress: (@Sendable (RenderProgress) -> Void)?

    init(tasks: [RenderTask], chunkCount: Int, frameCount: Int, progress: (@Sendable (RenderProgress) -> Void)?) {
        self.state = Mutex(State(tasks: tasks.reversed(), chunks: Array(repeating: nil, count: chunkCount)))
        self.frameCount = frameCount
        self.progress = progress
    }

    func take() -> RenderTask? {
        state.withLock { $0.error == nil ? $0.tasks.popLast() : nil }
    }
    func addFrames(_ n: Int) {
        let done = state.withLock { $0.framesDone += n; return $0.framesDone }
        progress?(RenderProgress(framesDone: done, frameCount: frameCount))
    }
    func finishedChunk(_ index: Int, _ artifacts: [ChunkArtifact]) { state.withLock { $0.chunks[index] = artifacts } }
    func finishedAudio(_ artifact: ChunkArtifact) { state.withLock { $0.audio = artifact } }
    func fail(_ e: Error) { state.withLock { if $0.error == nil { $0.error = e } } }
    func results() throws -> ([ChunkArtifact], ChunkArtifact?) {
        try state.withLock { s in
            if let error = s.error { throw error }
            return (s.chunks.compactMap { $0 }.flatMap { $0 }, s.audio)
        }
    }
}
