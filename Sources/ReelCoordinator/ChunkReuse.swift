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
    /// For an HLS ladder also each chunk's rendition keys (`ContentKey.renditionChunks`).
    static func keys(plan: RenderPlan, chunks: [FrameRange], encoderThreads: Int,
                     manifest: [String: AssetManifestEntry]) -> (video: [String?], audio: String?, renditions: [[String]?]) {
        let content = manifest.mapValues(\.sha256)
        let video = ContentKey.videoChunks(plan, chunks: chunks, encoderThreads: encoderThreads, assetContent: content)
        let renditions = ContentKey.renditionChunks(plan, chunks: chunks, encoderThreads: encoderThreads, assetContent: content)
        return (video, plan.audioTracks.isEmpty ? nil : ContentKey.audio(plan, assetContent: content), renditions)
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

/// Incremental re-rendering per rendition of an HLS ladder (docs/incremental-rendering.md):
/// planning keys each rendition of each chunk (`ContentKey.renditionChunks`) and looks the
/// keys up in stored ladder archives (`AssetStore.archives(forRenditionKeys:)`). A chunk whose
/// every rendition is found is created done (reused); one with some found encodes only the
/// others (its TASK names them) and its result is an archive of just those; the finaliser
/// takes each rendition from the archive its row names.
enum RenditionReuse {
    /// `task` with its renditions (`names` and `keys`, the ladder's order) found in `archives`
    /// (rendition key → stored archive, checked present). A task already reused whole keeps
    /// its archive for every rendition. When some renditions are found the task's result will
    /// not hold them all, so it has no chunk content key; when all are found it is created done
    /// with the first rendition's archive, the others naming theirs.
    static func keyed(_ task: NewTask, names: [String], keys: [String], archives: [String: TaskResult]) -> NewTask {
        var task = task
        let sources = task.reusedResult != nil ? keys.map { _ in nil } : keys.map { archives[$0] }
        if sources.allSatisfy({ $0 == nil }) {
            task.renditions = zip(names, keys).map { TaskRendition(name: $0, key: $1) }
            return task
        }
        task.contentKey = nil
        let own = sources.allSatisfy { $0 != nil } ? sources[0] : nil
        task.reusedResult = own
        task.renditions = names.indices.map { i in
            TaskRendition(name: names[i], key: keys[i], source: sources[i] == own ? nil : sources[i])
        }
        return task
    }

    /// The archives a finalise joins for one done task with `result`: its own result with the
    /// renditions to take from it (nil for a task that is no ladder chunk, or was planned
    /// before rendition rows existed: its archive holds exactly the ladder's renditions), then
    /// each archive other renditions were reused from, in the ladder's order. Names are always
    /// given for a ladder chunk: an archive reused whole may hold renditions this job dropped.
    static func archives(result: TaskResult, renditions: [TaskRendition]?) -> [(result: TaskResult, renditions: [String]?)] {
        guard let renditions, !renditions.isEmpty else { return [(result, nil)] }
        var archives: [(result: TaskResult, renditions: [String]?)] = []
        let own = renditions.filter { $0.source == nil }.map(\.name)
        if !own.isEmpty { archives.append((result, own)) }
        for rendition in renditions {
            guard let source = rendition.source else { continue }
            if let i = archives.firstIndex(where: { $0.result.sha256 == source.sha256 }) {
                archives[i].renditions?.append(rendition.name)
            } else {
                archives.append((source, [rendition.name]))
            }
        }
        return archives
    }

    /// "renditions reused: 360p, 720p; rendered: 1080p" for a job's ladder chunk tasks (a
    /// rendition encoded in some chunks only says in how many), or nil when none was reused.
    static func summary(_ tasks: [NewTask], names: [String]) -> String? {
        let chunks = tasks.filter { !$0.renditions.isEmpty }
        guard !chunks.isEmpty else { return nil }
        var reused: [String] = [], rendered: [String] = []
        for (position, name) in names.enumerated() {
            let encoded = chunks.filter { $0.reusedResult == nil && $0.renditions[position].source == nil }.count
            if encoded == 0 { reused.append(name) } else {
                rendered.append(encoded == chunks.count ? name : "\(name) (\(encoded) of \(chunks.count) chunks)")
            }
        }
        guard !reused.isEmpty || rendered.contains(where: { $0.contains("(") }) else { return nil }
        return "renditions reused: \(reused.isEmpty ? "none" : reused.joined(separator: ", ")); rendered: \(rendered.isEmpty ? "none" : rendered.joined(separator: ", "))"
    }
}
