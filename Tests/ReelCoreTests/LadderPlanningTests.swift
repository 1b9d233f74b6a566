import Testing
@testable import ReelCore
import ReelThreadTesting

/// HLS ladders as compositions write them and plans resolve them — the default
/// ladder, the segment grid, chunk boundaries on it, the problems validation names, and the
/// content keys that follow the renditions.
@Suite(.blocking) struct LadderPlanningTests {
    private func sizes(_ renditions: [RenditionOptions]) -> [String] {
        renditions.map { "\($0.name) \($0.renderSize.width)x\($0.renderSize.height) \($0.video.bitRate ?? 0)" }
    }

    @Test func defaultLadderFollowsTheRenderSize() {
        // Apple's table as it is, for a 1080p render.
        #expect(sizes(RenditionLadder.defaultRenditions(renderSize: PixelSize(width: 1920, height: 1080))) == [
            "1920x1080 1920x1080 6000000", "1280x720 1280x720 3000000", "960x540 960x540 2000000",
            "640x360 640x360 730000", "416x234 416x234 145000",
        ])
        // A 720p render drops the 1080p rung: no rendition is scaled up.
        #expect(sizes(RenditionLadder.defaultRenditions(renderSize: PixelSize(width: 1280, height: 720))).first == "1280x720 1280x720 3000000")
        #expect(RenditionLadder.defaultRenditions(renderSize: PixelSize(width: 1280, height: 720)).count == 4)
        // Portrait: the rung is the longest side, the other side follows the aspect ratio.
        #expect(sizes(RenditionLadder.defaultRenditions(renderSize: PixelSize(width: 1080, height: 1920))) == [
            "1080x1920 1080x1920 6000000", "720x1280 720x1280 3000000", "540x960 540x960 2000000",
            "360x640 360x640 730000", "234x416 234x416 145000",
        ])
        // 4:3 at 1440x1080: heights 960, 720, 480 and 312 (416·3/4), all even.
        #expect(sizes(RenditionLadder.defaultRenditions(renderSize: PixelSize(width: 1440, height: 1080))) == [
            "1280x960 1280x960 3000000", "960x720 960x720 2000000", "640x480 640x480 730000", "416x312 416x312 145000",
        ])
        // Smaller than every rung: one rendition at the render size, at the smallest rung's rate.
        #expect(sizes(RenditionLadder.defaultRenditions(renderSize: PixelSize(width: 320, height: 180))) == ["320x180 320x180 145000"])
    }

    @Test func defaultSegmentIsWholeGOPsNearSixSeconds() {
        #expect(RenditionLadder.segmentFrames(written: nil, frameDuration: Rational(1, 25), gopFrames: 50) == 150)
        // 29.97 fps: 6 s is 179.82 frames; three GOPs of 60 frames (6.006 s) instead.
        #expect(RenditionLadder.segmentFrames(written: nil, frameDuration: Rational(1001, 30000), gopFrames: 60) == 180)
        // A 4 s GOP: 6 s is 1.5 GOPs, rounded to 2 (8 s); a segment is never shorter than a GOP.
        #expect(RenditionLadder.segmentFrames(written: nil, frameDuration: Rational(1, 25), gopFrames: 100) == 200)
        #expect(RenditionLadder.segmentFrames(written: Rational(2), frameDuration: Rational(1, 25), gopFrames: 50) == 50)
    }

    @Test func hlsPlanResolvesTheLadder() throws {
        let json = Fixtures.composition(extra: #""export": {"preset": "low", "fileType": "hls", "segmentDuration": 4, "renditions": ["#
            + #"{"name": "hd", "renderSize": {"width": 1280, "height": 720}, "video": {"bitRate": 3000000, "maxBitRate": 4500000, "x264Preset": "fast"}},"#
            + #"{"name": "sd", "renderSize": {"width": 640, "height": 360}, "video": {"bitRate": 800000}}]}"#)
        let plan = try Fixtures.plan(json, assets: Fixtures.ruleAssets)
        let ladder = try #require(plan.export.ladder)
        #expect(plan.export.fileType == .hls && plan.export.audio.codec == "aac")
        #expect(plan.outputSize == plan.renderSize, "frames are drawn at the render size; preset low does not shrink a ladder")
        #expect(ladder.segmentFrames == 120 && ladder.segmentDuration == Rational(4))
        #expect(ladder.renditions.map(\.name) == ["hd", "sd"])
        let hd = ladder.renditions[0].video, sd = ladder.renditions[1].video
        #expect(hd.bitRate == 3_000_000 && hd.maxBitRate == 4_500_000 && hd.x264Preset == "fast" && hd.codec == "h264")
        #expect(sd.bitRate == 800_000 && sd.maxBitRate == 800_000 && sd.x264Preset == "medium", "maxBitRate defaults to bitRate")
        #expect(hd.gopFrames == plan.export.video.gopFrames && sd.profile == plan.export.video.profile, "every rendition shares the GOP")
    }

    @Test func chunkBoundariesAreWholeSegments() throws {
        let json = Fixtures.composition(extra: #""export": {"fileType": "hls", "segmentDuration": 4}"#)
        let plan = try Fixtures.plan(json, assets: Fixtures.ruleAssets)
        #expect(plan.boundaryFrames == 120)
        // A 2 s target rounds to one 4 s segment per chunk; 300 frames = 2 segments + 60 frames.
        let chunks = ChunkPlanner.plan(for: plan, targetChunkSeconds: Rational(2))
        #expect(chunks == [FrameRange(start: 0, end: 120), FrameRange(start: 120, end: 300)])
        for chunk in chunks.dropLast() { #expect(chunk.count % 120 == 0) }
        // With cuts in the timeline a boundary may move, but only to another segment boundary.
        let cut = Fixtures.composition(tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0, "sourceRange": {"start": 0, "duration": 4.5}}, {"asset": "a", "at": 4.5, "sourceRange": {"start": 0, "duration": 5.5}}]}]"#,
                                       extra: #""export": {"fileType": "hls", "segmentDuration": 2}"#)
        let cutPlan = try Fixtures.plan(cut, assets: Fixtures.ruleAssets)
        for chunk in ChunkPlanner.plan(for: cutPlan, targetChunkSeconds: Rational(4), minimumChunks: 2) { #expect(chunk.start % 60 == 0) }
    }

    @Test func outputNameChoosesHLS() throws {
        #expect(try OutputContainer.fileType(forOutput: "out/master.m3u8", export: ExportOptions()).get() == .hls)
        guard case .failure(let hevc) = OutputContainer.fileType(forOutput: "out/master.m3u8", export: ExportOptions(preset: .hevcHighest)) else {
            Issue.record("HEVC was accepted in an HLS ladder"); return
        }
        #expect(hevc.message.hasPrefix(#"the output name master.m3u8 gives HLS, but export.preset "hevcHighest" encodes HEVC"#))
        // Ladder keys without a fileType make the default container HLS.
        let implied = ExportSettings(resolving: ExportOptions(segmentDuration: Rational(4)), frameDuration: Rational(1, 25))
        #expect(implied.fileType == .hls)
    }

    @Test func ladderKeysParse() throws {
        let json = #"{"formatVersion": 1, "assets": {}, "tracks": [], "export": {"fileType": "hls", "segmentDuration": "6", "renditions": [{"name": "a", "renderSize": {"width": 2, "height": 2}, "video": {"codec": "h264", "bitRate": 1, "maxBitRate": 2}}]}}"#
        let export = try Composition.parse(Array(json.utf8)).export
        #expect(export.fileType == .hls && export.segmentDuration == Rational(6))
        #expect(export.renditions == [RenditionOptions(name: "a", renderSize: PixelSize(width: 2, height: 2),
                                                       video: RenditionVideoOptions(codec: "h264", bitRate: 1, maxBitRate: 2))])
        let missing = #"{"formatVersion": 1, "assets": {}, "tracks": [], "export": {"renditions": [{"name": "a", "renderSize": {"width": 2, "height": 2}, "video": {"crf": 3}}]}}"#
        #expect(Fixtures.problems(missing) == [
            "export.renditions[0].video.crf: unknown key; expected one of: codec, x264Preset, bitRate, maxBitRate",
            "export.renditions[0].video.bitRate: is required",
        ])
    }

    static let rendition = #"{"name": "hd", "renderSize": {"width": 1280, "height": 720}, "video": {"bitRate": 3000000}}"#

    @Test(arguments: [
        (#"{"fileType": "hls"}"#, []),
        (#"{"fileType": "hls", "segmentDuration": 6, "renditions": [\#(rendition)]}"#, []),
        (#"{"fileType": "mp4", "renditions": [\#(rendition)], "segmentDuration": 6}"#, [
            #"export.renditions: applies only to an HLS output, but export.fileType is "mp4": set "fileType": "hls" (or name the output DIR/master.m3u8), or remove renditions"#,
            #"export.segmentDuration: applies only to an HLS output, but export.fileType is "mp4": set "fileType": "hls" (or name the output DIR/master.m3u8), or remove segmentDuration"#,
        ]),
        (#"{"fileType": "hls", "segmentDuration": 3}"#, [
            "export.segmentDuration: must be a whole number of GOPs (export.video.gopDuration, 60 frames), so every segment starts with an IDR frame, but it is 90 frames: use a multiple of 2 s",
        ]),
        (#"{"fileType": "hls", "segmentDuration": 0.01}"#, [
            "export.segmentDuration: must be a whole number of frames of 0.033333 s (1/30), and 0.01 s is 0.3 frames",
        ]),
        (#"{"fileType": "hls", "segmentDuration": 0}"#, ["export.segmentDuration: must be > 0"]),
        (#"{"fileType": "hls", "renditions": []}"#, ["export.renditions: needs at least one rendition; leave renditions out for the default ladder"]),
        (#"{"fileType": "hls", "video": {"bitRate": 100000, "crf": 20}}"#, [
            "export.video.bitRate: an HLS ladder sets each rendition's bit rate in export.renditions[].video.bitRate: remove bitRate",
            "export.video.crf: an HLS ladder sets each rendition's bit rate in export.renditions[].video.bitRate: remove crf",
        ]),
        (#"{"fileType": "hls", "renditions": [\#(rendition), \#(rendition), {"name": "Big HD", "renderSize": {"width": 3840, "height": 2160}, "video": {"codec": "hevc", "x264Preset": "quick", "bitRate": 9000000, "maxBitRate": 100}}, {"name": "odd", "renderSize": {"width": 641, "height": 360}, "video": {"bitRate": 0}}]}"#, [
            #"export.renditions[1].name: "hd" is also the name of export.renditions[0]: names must be unique"#,
            #"export.renditions[2].name: must be 1…64 characters of a-z, 0-9, _ and - (it names the rendition's folder), not "Big HD""#,
            "export.renditions[2].renderSize: 3840x2160 is larger than the render size 1920x1080: a rendition is never scaled up",
            #"export.renditions[2].video.codec: must be "h264" (HLS ladders are H.264 only so far), not "hevc""#,
            #"export.renditions[2].video.x264Preset: must be one of ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo, not "quick""#,
            "export.renditions[2].video.maxBitRate: must be at least bitRate (9000000), not 100",
            "export.renditions[3].renderSize: must be even and at least 2 in both dimensions (4:2:0 video), not 641x360",
            "export.renditions[3].video.bitRate: must be > 0",
        ]),
        // Loudness applies to a ladder's audio renditions, as to an MP4's streams.
        (#"{"fileType": "hls", "audio": {"loudness": "ebuR128"}}"#, []),
        // The folders of the sound and subtitles are not rendition names; look-alikes are.
        (#"{"fileType": "hls", "renditions": [{"name": "audio", "renderSize": {"width": 640, "height": 360}, "video": {"bitRate": 500000}}, {"name": "audio-2", "renderSize": {"width": 640, "height": 360}, "video": {"bitRate": 500000}}, {"name": "subtitles-10", "renderSize": {"width": 640, "height": 360}, "video": {"bitRate": 500000}}, {"name": "audio-en", "renderSize": {"width": 640, "height": 360}, "video": {"bitRate": 500000}}, {"name": "subtitles-", "renderSize": {"width": 640, "height": 360}, "video": {"bitRate": 500000}}]}"#, [
            #"export.renditions[0].name: "audio" is the folder of the ladder's sound: choose another name"#,
            #"export.renditions[1].name: "audio-2" is the name of a folder of the ladder's audio outputs or subtitles (audio-N, subtitles-N): choose another name"#,
            #"export.renditions[2].name: "subtitles-10" is the name of a folder of the ladder's audio outputs or subtitles (audio-N, subtitles-N): choose another name"#,
        ]),
        (#"{"preset": "hevcHighest", "segmentDuration": 6}"#, [
            #"export.preset: export.preset "hevcHighest" encodes HEVC, but HLS ladders are H.264 only so far: choose codec "h264""#,
        ]),
    ])
    func validation(export: String, expected: [String]) {
        #expect(Fixtures.problems(Fixtures.composition(extra: #""export": \#(export)"#)) == expected)
    }

    @Test func soundOnlyCannotBeALadder() {
        let tracks = #"[{"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]}]"#
        #expect(Fixtures.problems(Fixtures.composition(tracks: tracks, extra: #""export": {"fileType": "hls"}"#)) == [
            #"export.fileType: an HLS ladder is a ladder of pictures, but the composition has no video track and no overlay: write a sound-only container ("m4a", "wav") instead"#,
        ])
    }

    /// Subtitle tracks are written by a ladder's finaliser, from the plan: no chunk's or audio
    /// task's key covers them, so editing them renders nothing again.
    @Test func subtitlesAreInNoTaskKey() throws {
        var plan = try Fixtures.plan(Fixtures.composition(extra: #""export": {"fileType": "hls", "renditions": [\#(Self.rendition)]}"#),
                                     assets: Fixtures.ruleAssets)
        let content = Dictionary(uniqueKeysWithValues: plan.assets.keys.map { ($0, "sha-\($0)") })
        func keys() -> [String?] {
            [ContentKey.videoChunk(plan, frames: FrameRange(start: 0, end: 60), encoderThreads: 2, assetContent: content),
             ContentKey.audio(plan, assetContent: content)]
        }
        let without = keys()
        let english = try #require(try LanguageTag.parse("en").get())
        plan.subtitleTracks = [PlannedSubtitleTrack(id: 3, language: english, title: "English", isDefault: true,
                                                    cues: [SubtitleCue(start: Rational(1), end: Rational(2), text: "Hello")])]
        let with = keys()
        plan.subtitleTracks![0].cues[0].text = "Hello again"
        #expect(without.allSatisfy { $0 != nil } && with == without && keys() == without)
    }

    @Test func contentKeysFollowEveryRendition() throws {
        func key(_ export: String) throws -> (video: String?, audio: String?) {
            let plan = try Fixtures.plan(Fixtures.composition(extra: #""export": \#(export)"#), assets: Fixtures.ruleAssets)
            let content = Dictionary(uniqueKeysWithValues: plan.assets.keys.map { ($0, "sha-\($0)") })
            return (ContentKey.videoChunk(plan, frames: FrameRange(start: 0, end: 60), encoderThreads: 2, assetContent: content),
                    ContentKey.audio(plan, assetContent: content))
        }
        let base = try key(#"{"fileType": "hls", "renditions": [\#(Self.rendition)]}"#)
        let faster = try key(#"{"fileType": "hls", "renditions": [{"name": "hd", "renderSize": {"width": 1280, "height": 720}, "video": {"bitRate": 3000000, "maxBitRate": 4000000}}]}"#)
        let renamed = try key(#"{"fileType": "hls", "renditions": [{"name": "top", "renderSize": {"width": 1280, "height": 720}, "video": {"bitRate": 3000000}}]}"#)
        let smaller = try key(#"{"fileType": "hls", "renditions": [{"name": "hd", "renderSize": {"width": 960, "height": 540}, "video": {"bitRate": 3000000}}]}"#)
        let longerSegments = try key(#"{"fileType": "hls", "segmentDuration": 4, "renditions": [\#(Self.rendition)]}"#)
        let mp4 = try key(#"{"fileType": "mp4"}"#)
        let videoKeys = [base.video, faster.video, renamed.video, smaller.video, longerSegments.video, mp4.video]
        #expect(videoKeys.allSatisfy { $0 != nil } && Set(videoKeys).count == videoKeys.count, "each rendition setting changes the chunk's key")
        #expect(base.audio == faster.audio, "the audio does not depend on the video renditions")
        #expect(base.audio != longerSegments.audio && base.audio != mp4.audio, "HLS audio is cut on the segment grid")
    }

    /// Per-rendition keys (incremental re-rendering per rendition): a change to one rendition
    /// changes only its key, a new rendition adds one and leaves the others', and the segment
    /// grid or the frames change every rendition's key.
    @Test func renditionKeysFollowOnlyTheirRendition() throws {
        let a = #"{"name": "a", "renderSize": {"width": 1280, "height": 720}, "video": {"bitRate": 3000000}}"#
        let b = #"{"name": "b", "renderSize": {"width": 960, "height": 540}, "video": {"bitRate": 2000000}}"#
        let b2 = #"{"name": "b", "renderSize": {"width": 960, "height": 540}, "video": {"bitRate": 1500000}}"#
        let c = #"{"name": "c", "renderSize": {"width": 640, "height": 360}, "video": {"bitRate": 730000}}"#
        func keys(_ export: String) throws -> [[String]?] {
            let tracks = #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}]"#
            let plan = try Fixtures.plan(Fixtures.composition(tracks: tracks, extra: #""export": \#(export)"#), assets: Fixtures.ruleAssets)
            let content = Dictionary(uniqueKeysWithValues: plan.assets.keys.map { ($0, "sha-\($0)") })
            return ContentKey.renditionChunks(plan, chunks: [FrameRange(start: 0, end: 60), FrameRange(start: 60, end: 120)],
                                              encoderThreads: 2, assetContent: content)
        }
        let base = try keys(#"{"fileType": "hls", "segmentDuration": 2, "renditions": [\#(a), \#(b), \#(c)]}"#)
        let changedB = try keys(#"{"fileType": "hls", "segmentDuration": 2, "renditions": [\#(a), \#(b2), \#(c)]}"#)
        let added = try keys(#"{"fileType": "hls", "segmentDuration": 2, "renditions": [\#(a), \#(b), \#(c), {"name": "d", "renderSize": {"width": 416, "height": 234}, "video": {"bitRate": 145000}}]}"#)
        let reordered = try keys(#"{"fileType": "hls", "segmentDuration": 2, "renditions": [\#(c), \#(a), \#(b)]}"#)
        let grid = try keys(#"{"fileType": "hls", "segmentDuration": 4, "renditions": [\#(a), \#(b), \#(c)]}"#)
        let first = try #require(base[0]), second = try #require(base[1])
        #expect(first.count == 3 && Set(first + second).count == 6, "every rendition of every chunk has its own key")
        for (chunk, keys) in changedB.enumerated() {
            let before = try #require(base[chunk]), after = try #require(keys)
            #expect(after[0] == before[0] && after[2] == before[2] && after[1] != before[1], "only b's key changes")
        }
        #expect(added.map { $0.map { Array($0.prefix(3)) } } == base && Set(added.compactMap { $0?[3] }).isDisjoint(with: first + second))
        #expect(reordered[0] == [first[2], first[0], first[1]], "a rendition's key does not depend on its place in the ladder")
        for (chunk, keys) in grid.enumerated() {
            #expect(Set(try #require(keys)).isDisjoint(with: try #require(base[chunk])), "the segment grid changes every key")
        }
        #expect(try keys(#"{"fileType": "mp4"}"#).allSatisfy { $0 == nil }, "no ladder, no rendition keys")
    }
}
