import Testing
@testable import ReelCore
import ReelThreadTesting

@Suite("Defaults without a video composition, and of the export presets", .blocking)
struct DefaultsTests {
    private static func twoClips(_ first: AssetDescription, _ second: AssetDescription, extra: String = "") throws -> RenderPlan {
        let json = #"""
        {"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}, "q": {"url": "q.mp4"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "p", "at": 0}, {"asset": "q", "at": 2}]}]\#(extra)}
        """#
        return try Fixtures.plan(json, assets: Fixtures.described(["p": first, "q": second]))
    }

    @Test func renderSizeIsLargestDisplaySizeAfterRotation() throws {
        // 1280x720 landscape + 1920x1080 phone clip shown upright as 1080x1920.
        let plan = try Self.twoClips(Fixtures.movie(1280, 720, duration: Rational(2)),
                                     Fixtures.movie(1920, 1080, duration: Rational(2), transform: Fixtures.portraitTransform(encodedHeight: 1080)))
        #expect(plan.renderSize == PixelSize(width: 1280, height: 1920))
        #expect(plan.outputSize == plan.renderSize)
    }

    @Test func oddSourceSizesRoundUpToEven() throws {
        let plan = try Self.twoClips(Fixtures.movie(161, 121, duration: Rational(2)), Fixtures.movie(100, 50, duration: Rational(2)))
        #expect(plan.renderSize == PixelSize(width: 162, height: 122))
    }

    @Test(arguments: [
        (Rational(1001, 30000), Rational(1001, 30000), Rational(1001, 30000)),
        (Rational(1, 25), Rational(1, 30), Rational(1, 30)),
        (Rational(1, 25), Rational(1, 25), Rational(1, 25)),
        (Rational(1, 50), Rational(1, 25), Rational(1, 30)),
    ])
    func frameDurationIsCommonRateElseThirtieth(_ p: Rational, _ q: Rational, _ expected: Rational) throws {
        let plan = try Self.twoClips(Fixtures.movie(320, 240, duration: Rational(2), frameDuration: p),
                                     Fixtures.movie(320, 240, duration: Rational(2), frameDuration: q))
        #expect(plan.frameDuration == expected)
    }

    @Test func unknownSourceRateFallsBack() throws {
        let plan = try Self.twoClips(Fixtures.movie(320, 240, duration: Rational(2), frameDuration: Rational(1, 25)),
                                     Fixtures.movie(320, 240, duration: Rational(2), frameDuration: nil))
        #expect(plan.frameDuration == Rational(1, 30))
    }

    @Test func stillsDoNotVoteOnFrameRate() throws {
        let json = #"""
        {"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}, "s": {"url": "s.png"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "p", "at": 0}, {"asset": "s", "at": 2, "duration": 1}]}]}
        """#
        let plan = try Fixtures.plan(json, assets: Fixtures.described(["p": Fixtures.movie(320, 240, duration: Rational(2), frameDuration: Rational(1, 25)),
                                                                       "s": Fixtures.still(640, 100)]))
        #expect(plan.frameDuration == Rational(1, 25))
        #expect(plan.renderSize == PixelSize(width: 640, height: 240))
        #expect(plan.duration == Rational(3))
    }

    @Test func fitOfRotatedClipIntoPortraitRenderIsItsPreferredTransform() {
        let video = Fixtures.movie(1920, 1080, duration: Rational(1), transform: Fixtures.portraitTransform(encodedHeight: 1080)).video!
        let fit = RenderDefaults.fitTransform(video, into: PixelSize(width: 1080, height: 1920))
        #expect(approximatelyEqual(fit, AffineTransform(a: 0, b: 1, c: -1, d: 0, tx: 1080, ty: 0)))
        // Encoded top-left lands top-right, encoded bottom-left at the origin: upright.
        #expect(approximatelyEqual(fit.apply(Point(x: 0, y: 0)), Point(x: 1080, y: 0)))
        #expect(approximatelyEqual(fit.apply(Point(x: 0, y: 1080)), Point(x: 0, y: 0)))
    }

    @Test func fitOfLandscapeIntoPortraitLetterboxes() {
        // 1920x1080 into 1280x1920: scale 2/3 → 1280x720, centred: (1920 − 720) / 2 = 600.
        let video = Fixtures.movie(1920, 1080, duration: Rational(1)).video!
        let fit = RenderDefaults.fitTransform(video, into: PixelSize(width: 1280, height: 1920))
        #expect(approximatelyEqual(fit, AffineTransform(a: 2.0 / 3, b: 0, c: 0, d: 2.0 / 3, tx: 0, ty: 600)))
    }

    @Test func fitOfRotatedClipIntoWiderRenderPillarboxes() {
        // Upright 1080x1920 into 1280x1920: scale 1, centred horizontally: (1280 − 1080) / 2 = 100.
        let video = Fixtures.movie(1920, 1080, duration: Rational(1), transform: Fixtures.portraitTransform(encodedHeight: 1080)).video!
        let fit = RenderDefaults.fitTransform(video, into: PixelSize(width: 1280, height: 1920))
        #expect(approximatelyEqual(fit, AffineTransform(a: 0, b: 1, c: -1, d: 0, tx: 1180, ty: 0)))
    }

    @Test func fitOfSmallClipScalesUp() {
        // 640x480 into 1920x1080: scale 1080/480 = 2.25 → 1440x1080, x offset (1920 − 1440) / 2 = 240.
        let video = Fixtures.movie(640, 480, duration: Rational(1)).video!
        let fit = RenderDefaults.fitTransform(video, into: PixelSize(width: 1920, height: 1080))
        #expect(approximatelyEqual(fit, AffineTransform(a: 2.25, b: 0, c: 0, d: 2.25, tx: 240, ty: 0)))
    }

    @Test(arguments: [
        (PixelSize(width: 1920, height: 1080), ExportPreset.low, PixelSize(width: 640, height: 360)),
        (PixelSize(width: 1080, height: 1920), ExportPreset.low, PixelSize(width: 360, height: 640)),
        (PixelSize(width: 1366, height: 768), ExportPreset.low, PixelSize(width: 640, height: 360)),   // 359.8 → 360
        (PixelSize(width: 1000, height: 750), ExportPreset.low, PixelSize(width: 640, height: 480)),
        (PixelSize(width: 2000, height: 2), ExportPreset.low, PixelSize(width: 640, height: 2)),       // never below 2
        (PixelSize(width: 640, height: 480), ExportPreset.low, PixelSize(width: 640, height: 480)),
        (PixelSize(width: 1920, height: 1080), ExportPreset.medium, PixelSize(width: 1920, height: 1080)),
    ])
    func outputSize(_ render: PixelSize, _ preset: ExportPreset, _ expected: PixelSize) {
        #expect(RenderDefaults.outputSize(renderSize: render, preset: preset) == expected)
    }

    @Test(arguments: [
        (ExportPreset.highest, "high", 18, 192_000),
        (ExportPreset.medium, "main", 23, 128_000),
        (ExportPreset.low, "main", 28, 96_000),
    ])
    func presets(_ preset: ExportPreset, _ profile: String, _ crf: Int, _ audioRate: Int) {
        let s = ExportSettings(resolving: ExportOptions(preset: preset), frameDuration: Rational(1001, 30000))
        #expect(s.video == VideoExportSettings(codec: "h264", profile: profile, crf: crf, x264Preset: "medium",
                                               gopDuration: Rational(2), gopFrames: 60, bitRate: nil))
        #expect(s.audio == AudioExportSettings(codec: "aac", bitRate: audioRate, sampleRate: 48000, channels: 2))
        #expect(s.fileType == .mp4 && !s.optimizeForNetworkUse)
    }

    @Test func overridesReplaceSingleSettings() throws {
        let plan = try Self.twoClips(Fixtures.movie(320, 240, duration: Rational(2), frameDuration: Rational(1, 25)),
                                     Fixtures.movie(320, 240, duration: Rational(2), frameDuration: Rational(1, 25)),
                                     extra: #", "export": {"preset": "low", "fileType": "mov", "video": {"crf": 30, "x264Preset": "veryfast", "gopDuration": 0.5, "bitRate": 900000}, "audio": {"sampleRate": 44100, "channels": 1, "bitRate": 64000}}"#)
        #expect(plan.export == ExportSettings(
            preset: .low, fileType: .mov, optimizeForNetworkUse: false,
            video: VideoExportSettings(codec: "h264", profile: "main", crf: 30, x264Preset: "veryfast", gopDuration: Rational(1, 2), gopFrames: 13, bitRate: 900_000),
            audio: AudioExportSettings(codec: "aac", bitRate: 64000, sampleRate: 44100, channels: 1)))
    }

    @Test(arguments: [
        (Rational(2), Rational(1, 30), 60),
        (Rational(1, 100), Rational(1, 30), 1),     // never below one frame
        (Rational(1, 2), Rational(1, 25), 13),      // 12.5 rounds half away from zero
        (Rational(2), Rational(1001, 30000), 60),   // 59.94 → 60
    ])
    func gopFrames(_ gop: Rational, _ frameDuration: Rational, _ expected: Int) {
        let s = ExportSettings(resolving: ExportOptions(video: VideoExportOverrides(gopDuration: gop)), frameDuration: frameDuration)
        #expect(s.video.gopFrames == expected)
    }

    @Test func defaultInstructionStacksVideoTracksTopFirstWithFit() throws {
        let json = #"""
        {"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}},
         "tracks": [{"id": 5, "mediaType": "video", "segments": [{"asset": "p", "at": 0}]},
                    {"id": 3, "mediaType": "video", "segments": [{"asset": "p", "at": 1}]},
                    {"id": 4, "mediaType": "audio", "segments": [{"asset": "p", "at": 0}]}]}
        """#
        let plan = try Fixtures.plan(json, assets: Fixtures.described(["p": Fixtures.movie(320, 240, duration: Rational(2))]))
        #expect(plan.duration == Rational(3))
        #expect(plan.instructions == [PlannedInstruction(timeRange: TimeRange(start: .zero, duration: Rational(3)), backgroundColor: .black,
                                                         layers: [PlannedLayer(trackID: 5, transform: .fit), PlannedLayer(trackID: 3, transform: .fit)])])
        #expect(plan.audioTracks == [PlannedAudioTrack(id: 4, segments: [PlannedSegment(asset: "p", sourceStart: .zero, at: .zero, duration: Rational(2))], volume: 1)])
    }

    @Test func planKeepsOnlyUsedAssetsWithResolvedURLs() throws {
        let json = #"{"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}, "unused": {"url": "u.mp4"}}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "p", "at": 0}]}]}"#
        let plan = try Fixtures.plan(json, assets: [
            "p": .described(url: "/abs/p.mp4", Fixtures.movie(320, 240, duration: Rational(2))),
            "unused": .described(url: "/abs/u.mp4", Fixtures.movie(320, 240, duration: Rational(2))),
        ])
        #expect(Array(plan.assets.keys) == ["p"])
        #expect(plan.assets["p"]?.url == "/abs/p.mp4")
    }
}
