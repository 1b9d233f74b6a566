import Testing
@testable import ReelCore
import ReelThreadTesting

/// Sound-only outputs — which compositions have no picture, what their plans hold,
/// and the containers and audio codecs that go with them.
@Suite(.blocking) struct AudioOnlyPlanningTests {
    private let music = #"{"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "at": 0, "sourceRange": {"start": 0, "duration": "21/4"}}]}"#
    private let clip = #"{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}"#

    private func plan(tracks: [String], _ extra: String = "") throws -> RenderPlan {
        try Fixtures.plan(Fixtures.composition(tracks: "[" + tracks.joined(separator: ", ") + "]", extra: extra), assets: Fixtures.ruleAssets)
    }

    @Test func aCompositionWithoutVideoTracksIsSoundOnlyInM4A() throws {
        let plan = try plan(tracks: [music])
        #expect(!plan.hasPicture && plan.hasSound)
        #expect(plan.export.fileType == .m4a && plan.export.audio.codec == "aac" && plan.export.audio.bitRate == 192_000)
        #expect(plan.renderSize == PixelSize(width: 0, height: 0) && plan.outputSize == plan.renderSize)
        // The frame grid stays (1/30 s when no source gives one): it measures the audio task's progress.
        #expect(plan.frameDuration == Rational(1, 30) && plan.frameCount == 158)
        #expect(ChunkPlanner.plan(for: plan, targetChunkSeconds: 2, minimumChunks: 4).isEmpty)
    }

    @Test func aGivenRenderSizeIsKeptButDrawsNothing() throws {
        let plan = try plan(tracks: [music], #""videoComposition": {"renderSize": {"width": 640, "height": 360}}"#)
        #expect(!plan.hasPicture && plan.renderSize == PixelSize(width: 640, height: 360))
        #expect(ChunkPlanner.plan(for: plan).isEmpty)
    }

    @Test func anAudioOnlyContainerDropsThePictureOfAVideoComposition() throws {
        let wav = try plan(tracks: [clip, music], #""export": {"fileType": "wav", "preset": "prores422"}"#)
        #expect(!wav.hasPicture && wav.export.fileType == .wav)
        #expect(wav.export.audio.codec == "pcm" && wav.export.audio.bitRate == 48_000 * 2 * 16)
        #expect(ChunkPlanner.plan(for: wav).isEmpty)

        let m4a = try plan(tracks: [clip, music], #""export": {"fileType": "m4a"}"#)
        #expect(!m4a.hasPicture && m4a.export.audio.codec == "aac")
        // The same composition as an MP4 has its picture and chunks.
        let mp4 = try plan(tracks: [clip, music])
        #expect(mp4.hasPicture && mp4.export.fileType == .mp4 && ChunkPlanner.plan(for: mp4).count == 1)
    }

    @Test func overlaysOrAnEmptyVideoTrackMakeAPicture() throws {
        let titled = try plan(tracks: [music], #""videoComposition": {"renderSize": {"width": 640, "height": 360}, "#
                              + #""overlays": [{"text": "Title", "frame": {"x": 0, "y": 0, "width": 300, "height": 50}}]}"#)
        #expect(titled.hasPicture && titled.export.fileType == .mp4 && !ChunkPlanner.plan(for: titled).isEmpty)
        let background = try plan(tracks: [#"{"id": 1, "mediaType": "video", "segments": []}"#, music],
                                  #""videoComposition": {"renderSize": {"width": 640, "height": 360}}"#)
        #expect(background.hasPicture)
    }

    @Test func theOutputNameChoosesTheSoundOnlyContainers() throws {
        #expect(try OutputContainer.fileType(forOutput: "/tmp/mix.m4a", written: nil).get() == .m4a)
        #expect(try OutputContainer.fileType(forOutput: "MIX.WAV", written: nil).get() == .wav)
        // Any video codec is fine: a sound-only container writes no picture.
        #expect(try OutputContainer.fileType(forOutput: "mix.m4a", export: ExportOptions(preset: .prores4444)).get() == .m4a)
        guard case .failure(let pcm) = OutputContainer.fileType(forOutput: "mix.mp4", export: ExportOptions(audio: .init(codec: "pcm"))) else {
            Issue.record("PCM was accepted in an MP4 name"); return
        }
        #expect(pcm.message == #"the output name mix.mp4 gives MP4, which cannot hold export.audio.codec "pcm" (PCM goes only in .wav): "#
                + "name the output .wav, or remove the codec to get AAC")
        guard case .failure(let unknown) = OutputContainer.fileType(forOutput: "mix.ogg", written: nil) else {
            Issue.record("an unknown extension was accepted"); return
        }
        #expect(unknown.message == "the output name mix.ogg ends in .ogg; Reel writes .mp4, .m4v, .mov, .m4a, .wav, .webm, .m3u8, .png")
    }

    @Test func theAudioKeyFollowsTheAudioCodec() throws {
        let content = ["a": String(repeating: "a", count: 64), "m": String(repeating: "b", count: 64)]
        let aac = try plan(tracks: [music])
        let pcm = try plan(tracks: [music], #""export": {"fileType": "wav"}"#)
        let mp4 = try plan(tracks: [music], #""export": {"fileType": "mp4"}"#)
        let aacKey = ContentKey.audio(aac, assetContent: content), pcmKey = ContentKey.audio(pcm, assetContent: content)
        #expect(aacKey != nil && pcmKey != nil && aacKey != pcmKey)
        // The same mix in the same codec is the same result, whatever the container.
        #expect(ContentKey.audio(mp4, assetContent: content) == aacKey)
    }
}
