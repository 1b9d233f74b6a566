import Testing
@testable import ReelCoordinator
import ReelStore
import ReelScheduling
import ReelThreadTesting

/// Planning's and the finaliser's decisions for reuse per ladder rendition (pure): which
/// renditions a chunk encodes, what it is created with, which archives its finalise joins, and
/// the event that says so.
@Suite(.blocking) struct RenditionReuseTests {
    static func hash(_ c: Character) -> String { String(repeating: c, count: 64) }
    static let names = ["top", "mid", "low"], keys = [hash("a"), hash("b"), hash("c")]
    static let first = TaskResult(sha256: hash("1"), size: 300, key: "r/1"), second = TaskResult(sha256: hash("2"), size: 100, key: "r/2")
    static func chunk() -> NewTask { NewTask(kind: .videoChunk, ordinal: 0, frameStart: 0, frameEnd: 50, contentKey: hash("k")) }

    @Test func nothingFoundEncodesEveryRenditionUnderTheChunkKey() {
        let task = RenditionReuse.keyed(Self.chunk(), names: Self.names, keys: Self.keys, archives: [:])
        #expect(task.contentKey == Self.hash("k") && task.reusedResult == nil)
        #expect(task.renditions.map(\.name) == Self.names && task.renditions.allSatisfy { $0.source == nil })
        #expect(RenditionReuse.archives(result: Self.second, renditions: task.renditions).map(\.renditions) == [Self.names])
    }

    @Test func someFoundEncodesOnlyTheOthersAndDropsTheChunkKey() {
        let task = RenditionReuse.keyed(Self.chunk(), names: Self.names, keys: Self.keys,
                                        archives: [Self.hash("a"): Self.first, Self.hash("b"): Self.first])
        #expect(task.contentKey == nil, "its result will hold only low: no other job may take it for the whole chunk")
        #expect(task.reusedResult == nil && task.renditions.map(\.source) == [Self.first, Self.first, nil])
        let joined = RenditionReuse.archives(result: Self.second, renditions: task.renditions)
        #expect(joined.map(\.result) == [Self.second, Self.first] && joined.map(\.renditions) == [["low"], ["top", "mid"]])
        #expect(RenditionReuse.summary([task], names: Self.names) == "renditions reused: top, mid; rendered: low")
    }

    @Test func allFoundIsCreatedDoneFromTheirArchives() {
        let task = RenditionReuse.keyed(Self.chunk(), names: Self.names, keys: Self.keys,
                                        archives: [Self.hash("a"): Self.first, Self.hash("b"): Self.second, Self.hash("c"): Self.first])
        #expect(task.reusedResult == Self.first && task.contentKey == nil)
        #expect(task.renditions.map(\.source) == [nil, Self.second, nil], "the first rendition's archive is the task's result")
        let joined = RenditionReuse.archives(result: Self.first, renditions: task.renditions)
        #expect(joined.map(\.result) == [Self.first, Self.second] && joined.map(\.renditions) == [["top", "low"], ["mid"]])
        let rendered = RenditionReuse.keyed(Self.chunk(), names: Self.names, keys: Self.keys, archives: [Self.hash("c"): Self.first])
        #expect(RenditionReuse.summary([task, rendered], names: Self.names) == "renditions reused: low; rendered: top (1 of 2 chunks), mid (1 of 2 chunks)")
    }

    @Test func aChunkReusedWholeKeepsItsArchiveForEveryRendition() {
        var whole = Self.chunk()
        whole.reusedResult = Self.second
        let task = RenditionReuse.keyed(whole, names: Self.names, keys: Self.keys, archives: [Self.hash("a"): Self.first])
        #expect(task.reusedResult == Self.second && task.contentKey == Self.hash("k") && task.renditions.allSatisfy { $0.source == nil })
        #expect(RenditionReuse.summary([task], names: Self.names) == "renditions reused: top, mid, low; rendered: none")
        // A task without rendition rows (no ladder, or planned before them): one input, all of it.
        #expect(RenditionReuse.archives(result: Self.first, renditions: nil).map(\.renditions) == [nil])
        #expect(RenditionReuse.summary([NewTask(kind: .videoChunk, ordinal: 0)], names: []) == nil)
    }
}
