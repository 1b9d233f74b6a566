import ReelStoreTesting
import Foundation
import Testing
import ReelThreadTesting
@testable import ReelStore
import ReelScheduling

/// 64 copies of `c`: a content key or hash.
private func key(_ c: Character) -> String { String(repeating: c, count: 64) }

/// The store's side of reuse per ladder rendition (migration 10, `task_renditions`): rendition
/// keys found in the archives that hold them (a task's own result, or the archive its row says
/// a rendition came from), the renditions a chunk encodes itself, and retention keeping the
/// archives a kept job takes renditions from.
@Suite("JobStore: ladder renditions", .database, .blocking)
struct TaskRenditionStoreTests {

    /// A job of one ladder chunk with `renditions` (and the finalise).
    static func ladderJob(_ renditions: [TaskRendition]) -> NewJob {
        var chunk = NewTask(kind: .videoChunk, ordinal: 0, frameStart: 0, frameEnd: 50, spec: "")
        chunk.renditions = renditions
        return NewJob(composition: #"{"formatVersion":1}"#, tasks: [chunk, NewTask(kind: .finalise, ordinal: 0)])
    }

    /// Claims and completes the job's chunk with `result`, then its finalise. - Returns: the
    /// chunk as claimed.
    @discardableResult
    static func finish(_ store: FarmStore, agent: Int64, result: TaskResult) throws -> ClaimedTask {
        let chunk = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.videoChunk]))
        try store.lifecycle.complete(chunk.lease, result: result)
        let finalise = try #require(try store.lifecycle.claimTask(agent: agent, leaseSeconds: 30, kinds: [.finalise]))
        #expect(try store.lifecycle.complete(finalise.lease, result: TaskResult(sha256: key("f"), size: 2, key: "out")).jobDone)
        return chunk
    }

    @Test func renditionsAreFoundInTheArchivesThatHoldThemAndKeepThoseArchives() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let first = TaskResult(sha256: key("1"), size: 300, key: "results/1")
        let second = TaskResult(sha256: key("2"), size: 100, key: "results/2")

        // The first job renders all three renditions into one archive.
        let job1 = try store.jobs.create(Self.ladderJob([TaskRendition(name: "top", key: key("a")), TaskRendition(name: "mid", key: key("b")),
                                                         TaskRendition(name: "low", key: key("c"))]))
        #expect(try store.assets.archives(forRenditionKeys: [key("a")]).isEmpty, "not done yet")
        let chunk1 = try Self.finish(store, agent: agent, result: first)
        #expect(chunk1.renditionsToEncode == nil, "a chunk that encodes every rendition")
        #expect(try store.assets.archives(forRenditionKeys: [key("a"), key("c"), key("d")]) == [key("a"): first, key("c"): first])

        // The second changes "low" (key d): top and mid come from the first archive.
        let job2 = try store.jobs.create(Self.ladderJob([TaskRendition(name: "top", key: key("a"), source: first),
                                                         TaskRendition(name: "mid", key: key("b"), source: first),
                                                         TaskRendition(name: "low", key: key("d"))]))
        let chunk2 = try #require(try store.jobs.tasks(ofJob: job2).first { $0.kind == .videoChunk })
        #expect(try store.jobs.renditions(ofJob: job2)[chunk2.id]?.map(\.source) == [first, first, nil])
        // The claim says which renditions the chunk encodes itself (the TASK's renditions=).
        #expect(try Self.finish(store, agent: agent, result: second).renditionsToEncode == ["low"])
        // The newest holder of each key; a reused rendition points at the archive it came from.
        #expect(try store.assets.archives(forRenditionKeys: [key("a"), key("b"), key("c"), key("d")])
                == [key("a"): first, key("b"): first, key("c"): first, key("d"): second])

        // Retention: the first job's chunks past --keep-chunks, the second's kept: the first
        // archive stays, because the second job takes two renditions from it.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try schema.connect().query("UPDATE jobs SET finished_at = now() - interval '2 hours' WHERE id = \(job1)")
        let cutoff = now - 3_600_000
        #expect(try store.assets.neededResultHashes(endedAfter: cutoff, doneEndedAfter: cutoff) == [first.sha256, second.sha256])
        try schema.connect().query("UPDATE jobs SET finished_at = now() - interval '2 hours' WHERE id = \(job2)")
        #expect(try store.assets.neededResultHashes(endedAfter: cutoff, doneEndedAfter: cutoff) == [], "neither job is kept")
        #expect(try store.assets.neededResultHashes(endedAfter: cutoff, doneEndedAfter: nil) == [first.sha256, second.sha256])

        // `reel delete` of the first job frees nothing the second takes renditions from; then
        // deleting the second frees both archives.
        #expect(try store.jobs.delete(job1).unreferencedResults == [], "the second job takes top and mid from the first archive")
        #expect(try store.jobs.delete(job2).unreferencedResults == [first.sha256, second.sha256])
    }
}
