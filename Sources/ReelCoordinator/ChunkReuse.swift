import Foundation
import ReelCore
import ReelObjectStore
import ReelProtocol
import ReelStore
import ReelScheduling

/// Incremental re-rendering at planning time: every render task gets its content key
/// (`ContentKey`), and a task whose key already has a done task with a stored result — in any
/// job — is created done with that result instead of being rendered (unless the job was
/// submitted with `--no-cache`; its tasks still get keys, so later jobs can reuse them).
///
/// A result counts only while its file is in storage with its recorded size: retention may
/// have deleted it, and then the task is simply rendered. The finaliser still verifies every
/// result's SHA-256 before stitching and renders again any that went missing or bad since.
struct ChunkReuse {
    let storage: CoordinatorStorage

    /// Content keys of `chunks` (in order) and of the audio task, for `plan` whose asset ids
    /// mean the files in `manifest`. A key is nil when a source's content is unknown.
    static func keys(plan: RenderPlan, chunks: [FrameRange], encoderThreads: Int,
                     manifest: [String: AssetManifestEntry]) -> (video: [String?], audio: String?) {
        let content = manifest.mapValues(\.sha256)
        let video = ContentKey.videoChunks(plan, chunks: chunks, encoderThreads: encoderThreads, assetContent: content)
        return (video, plan.audioTracks.isEmpty ? nil : ContentKey.audio(plan, assetContent: content))
    }

    /// The stored results `found` (content key → result) whose files are still in storage
    /// intact in size. Their modification times are set to now: retention's grace for results
    /// no job needs counts from the file's time, so a result reused now stays reusable for
    /// another grace period after the job that reuses it ends.
    func present(_ found: [String: TaskResult]) async -> [String: TaskResult] {
        var present: [String: TaskResult] = [:]
        for (contentKey, result) in found where CoordinatorStorage.isValidHash(result.sha256) {
            guard await storage.problem(.result(sha256: result.sha256), size: result.size, sha256: nil) == nil else { continue }
            // The grace restarts where the store keeps modification times the coordinator can set.
            if storage.blobs is LocalBlobStore { utimes(storage.resultPath(result.sha256), nil) }
            present[contentKey] = result
        }
        return present
    }
}

extension NewTask {
    /// This task with its content key, and created done from `results[key]` when there is one.
    func keyed(_ key: String?, reusing results: [String: TaskResult]) -> NewTask {
        var task = self
        task.contentKey = key
        task.reusedResult = key.flatMap { results[$0] }
        return task
    }
}
