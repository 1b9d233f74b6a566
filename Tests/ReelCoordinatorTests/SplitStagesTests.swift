import Testing
@testable import ReelCoordinator
import ReelCore
import ReelProtocol
import ReelStore
import ReelThreadTesting

/// The stages of splitting a job that need no I/O (`SplitStages`): chunk, key and the tasks
/// persist stores, on a plan made in memory (a 60 s clip with sound, 30 fps).
@Suite(.blocking) struct SplitStagesTests {
    static func hash(_ c: Character) -> String { String(repeating: c, count: 64) }

    static func clip(sound: Bool = true) -> AssetDescription {
        AssetDescription(kind: .movie, duration: Rational(60),
                         video: VideoTrackDescription(naturalSize: PixelSize(width: 640, height: 360), preferredTransform: .identity,
                                                      frameDuration: Rational(1, 30), hasAlpha: false, codec: "h264"),
                         audio: sound ? AudioTrackDescription(sampleRate: 48000, channels: 2, codec: "aac") : nil)
    }

    static func planned(chunkSeconds: Rational? = nil, sound: Bool = true) throws -> SplitStages.Planned {
        let clip = clip(sound: sound)
        let tracks = #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}"#
            + (sound ? #", {"id": 2, "mediaType": "audio", "segments": [{"asset": "a", "at": 0}]}"# : "") + "]"
        let composition = try Composition.parse(#"{"formatVersion": 1, "assets": {"a": {"url": "a.mp4"}}, "tracks": \#(tracks)}"#)
        let plan = try CompositionValidator.validate(composition, assets: ["a": .described(url: "/media/a.mp4", clip)]).get()
        var settings = JobSettings()
        settings.chunkSeconds = chunkSeconds
        return SplitStages.Planned(plan: plan, agentPlan: plan, manifest: ["a": AssetManifestEntry(sha256: hash("a"), size: 1000)],
                                   settings: settings)
    }

    @Test func chunkFollowsTheJobsChunkLengthElseTheCoordinatorsAndNothingElse() throws {
        let byDefault = try Self.planned()
        let tens = SplitStages.chunk(byDefault.plan, settings: byDefault.settings, defaultChunkSeconds: 10)
        #expect(tens.count == 6 && tens.first == FrameRange(start: 0, end: 300) && tens.last?.end == 1800)
        let asked = try Self.planned(chunkSeconds: 20)
        #expect(SplitStages.chunk(asked.plan, settings: asked.settings, defaultChunkSeconds: 10).count == 3)
        // The same composition and settings give the same chunks, call after call: the stage
        // takes nothing of the farm (the agents online, the time) that could change them.
        #expect(SplitStages.chunk(byDefault.plan, settings: byDefault.settings, defaultChunkSeconds: 10) == tens)
    }

    /// A batch's row of 15 s: the first 3 s of the clip (the intro every row shares), then 12 s
    /// of it from `rowStart` (what differs between rows).
    static func row(from rowStart: Int, settings: JobSettings) throws -> SplitStages.Planned {
        var planned = try planned()
        let composition = try Composition.parse(#"""
            {"formatVersion": 1, "assets": {"a": {"url": "a.mp4"}}, "tracks": [{"id": 1, "mediaType": "video", "segments": [
              {"asset": "a", "sourceRange": {"start": 0, "duration": 3}, "at": 0},
              {"asset": "a", "sourceRange": {"start": \#(rowStart), "duration": 12}, "at": 3}]}]}
            """#)
        planned.plan = try CompositionValidator.validate(composition, assets: ["a": .described(url: "/media/a.mp4", clip())]).get()
        planned.agentPlan = planned.plan
        planned.settings = settings
        return planned
    }

    @Test func aBatchsRowsAreCutAtTheirEdgesSoTheSharedIntroIsOneKeyedChunk() throws {
        // A lone job: the fixed grid, the intro in a chunk with the row's own frames.
        let lone = try Self.row(from: 20, settings: JobSettings())
        #expect(SplitStages.chunk(lone.plan, settings: lone.settings, defaultChunkSeconds: 10)
                == [FrameRange(start: 0, end: 300), FrameRange(start: 300, end: 450)])
        // A batch's row (or a job asking for it): cut on the GOPs either side of the intro's end at 3 s.
        let edged = [FrameRange(start: 0, end: 60), FrameRange(start: 60, end: 120), FrameRange(start: 120, end: 300), FrameRange(start: 300, end: 450)]
        let batchSettings = JobSettings(batch: BatchMembership(id: 1, row: 1))
        let first = try Self.row(from: 20, settings: batchSettings), second = try Self.row(from: 35, settings: batchSettings)
        #expect(SplitStages.chunk(first.plan, settings: first.settings, defaultChunkSeconds: 10) == edged)
        #expect(SplitStages.chunk(lone.plan, settings: JobSettings(chunkAtEdges: true), defaultChunkSeconds: 10) == edged)
        // Two rows: the intro's chunk has one content key; every other chunk differs.
        let keys = SplitStages.key(first, chunks: edged).video, otherKeys = SplitStages.key(second, chunks: edged).video
        #expect(keys[0] != nil && keys[0] == otherKeys[0], "the shared intro's chunk")
        #expect(zip(keys, otherKeys).dropFirst().allSatisfy { $0 != $1 })
    }

    @Test func keyGivesEveryChunkAndTheAudioAKeyThatFollowsTheSource() throws {
        let planned = try Self.planned()
        let chunks = SplitStages.chunk(planned.plan, settings: planned.settings, defaultChunkSeconds: 10)
        let keys = SplitStages.key(planned, chunks: chunks)
        #expect(keys.video.count == 6 && keys.video.allSatisfy { $0?.count == 64 } && Set(keys.video).count == 6)
        #expect(keys.audio?.count == 64 && keys.renditions.allSatisfy { $0 == nil })
        var other = planned
        other.manifest["a"] = AssetManifestEntry(sha256: Self.hash("b"), size: 1000)
        let otherKeys = SplitStages.key(other, chunks: chunks)
        #expect(zip(keys.video, otherKeys.video).allSatisfy { $0 != $1 } && keys.audio != otherKeys.audio,
                "another source's content is another picture and sound")
        #expect(SplitStages.key(planned, chunks: chunks).video == keys.video)
    }

    @Test func tasksAreTheChunksInOrderThenAudioThenFinaliseAndReusedOnesAreDone() throws {
        let planned = try Self.planned()
        let chunks = SplitStages.chunk(planned.plan, settings: planned.settings, defaultChunkSeconds: 10)
        let keys = SplitStages.key(planned, chunks: chunks)
        let stored = TaskResult(sha256: Self.hash("9"), size: 42, key: "results/9")
        let reuse = SplitStages.Reuse(results: [keys.video[2]!: stored, keys.audio!: stored])
        let tasks = SplitStages.tasks(planned.plan, chunks: chunks, keys: keys, reuse: reuse, maxAttempts: 5)
        #expect(tasks.map(\.kind) == Array(repeating: .videoChunk, count: 6) + [.audio, .finalise])
        #expect(tasks.prefix(6).map(\.ordinal) == Array(0..<6) && tasks.prefix(6).map(\.frameStart) == chunks.map { Int64($0.start) })
        #expect(tasks.prefix(6).map(\.contentKey) == keys.video && tasks[6].contentKey == keys.audio && tasks[7].contentKey == nil)
        #expect(tasks.map { $0.reusedResult != nil } == [false, false, true, false, false, false, true, false])
        #expect(tasks[6].frameEnd == Int64(planned.plan.frameCount) && tasks.allSatisfy { $0.maxAttempts == 5 })

        let silent = try Self.planned(sound: false)
        let silentTasks = SplitStages.tasks(silent.plan, chunks: chunks, keys: SplitStages.key(silent, chunks: chunks),
                                            reuse: SplitStages.Reuse(), maxAttempts: 3)
        #expect(silentTasks.map(\.kind).suffix(2) == [.videoChunk, .finalise], "no sound, no audio task")
    }
}
