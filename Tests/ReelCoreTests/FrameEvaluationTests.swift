import struct Foundation.Data
import class Foundation.JSONDecoder
import Testing
@testable import ReelCore
import ReelThreadTesting

@Suite("Frame evaluation", .blocking)
struct FrameEvaluationTests {
    private static let clipAssets = Fixtures.described([
        "p": Fixtures.movie(320, 240, duration: Rational(100)),
        "logo": Fixtures.still(260, 260),
    ])

    private static func single(_ segment: String, extra: String = "") throws -> RenderPlan {
        try Fixtures.plan(#"""
        {"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}, "logo": {"url": "logo.png"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [\#(segment)]}]\#(extra)}
        """#, assets: clipAssets)
    }

    @Test(arguments: [
        ("10", "1001/30000", 300),            // 299.7
        ("10", "1/25", 250),
        ("10.02", "1/25", 251),               // 250.5
        (#""1001/30000""#, "1001/30000", 1),
        (#""2002/30000""#, "1001/30000", 2),  // exactly two frames, no extra
        ("0.000001", "1/25", 1),
    ])
    func frameCountIsCeilOfDurationOverFrameDuration(_ duration: String, _ frameDuration: String, _ expected: Int) throws {
        let plan = try Self.single(#"{"asset": "p", "at": 0, "sourceRange": {"start": 0, "duration": \#(duration)}}"#,
                                   extra: #", "videoComposition": {"frameDuration": "\#(frameDuration)"}"#)
        #expect(plan.frameCount == expected)
        #expect(plan.frame(expected - 1).time < plan.duration)
        #expect(plan.time(ofFrame: expected) >= plan.duration)
    }

    @Test func frameTimeIsExactMultiple() throws {
        let plan = try Self.single(#"{"asset": "p", "at": 0}"#, extra: #", "videoComposition": {"frameDuration": "1001/30000"}"#)
        #expect(plan.frame(2997).time == Rational(2997 * 1001, 30000))
        #expect(plan.frame(2997).index == 2997)
    }

    @Test(arguments: [
        (50, Rational(3)),         // t = 2 → 2 + (2 − 1)
        (37, Rational(62, 25)),    // t = 37/25 → 2 + 37/25 − 1
        (99, Rational(124, 25)),   // last frame, t = 99/25
        (25, Rational(2)),         // t = 1, the segment's first frame
    ])
    func sourceTimeOfFrame(_ k: Int, _ expected: Rational) throws {
        let plan = try Self.single(#"{"asset": "p", "at": 1, "sourceRange": {"start": 2, "duration": 3}}"#,
                                   extra: #", "videoComposition": {"frameDuration": "1/25"}"#)
        #expect(plan.frameCount == 100)
        let layers = plan.frame(k).layers
        #expect(layers.map(\.sourceTime) == [expected])
        #expect(layers.first?.asset == "p")
    }

    @Test func gapShowsNoLayer() throws {
        let plan = try Self.single(#"{"asset": "p", "at": 1, "sourceRange": {"start": 2, "duration": 3}}"#,
                                   extra: #", "videoComposition": {"frameDuration": "1/25"}"#)
        #expect(plan.frame(24).layers.isEmpty)
        #expect(plan.frame(24).background == .black)
    }

    @Test func stillShowsSourceTimeZero() throws {
        let plan = try Self.single(#"{"asset": "p", "at": 0, "sourceRange": {"start": 0, "duration": 2}}, {"asset": "logo", "at": 2, "duration": 1}"#,
                                   extra: #", "videoComposition": {"frameDuration": "1/10"}"#)
        #expect(plan.frame(25).layers.map(\.asset) == ["logo"])
        #expect(plan.frame(25).layers.map(\.sourceTime) == [.zero])
        // Default render size = largest display size (320x260), fit: 260x260 → scale 1, centred x (320 − 260) / 2 = 30.
        #expect(plan.renderSize == PixelSize(width: 320, height: 260))
        #expect(approximatelyEqual(plan.frame(25).layers[0].transform, .translation(30, 0)))
    }

    /// Explicit instruction: transform [1 0 0 1 10 20] ramping to [2 0 0 2 100 0] over 4…8 s;
    /// opacity 0.8, ramping 1 → 0 over 2…4 s; background red.
    private static func rampPlan() throws -> RenderPlan {
        try single(#"{"asset": "p", "at": 0, "sourceRange": {"start": 0, "duration": 10}}"#, extra: #"""
        , "videoComposition": {"renderSize": {"width": 320, "height": 240}, "frameDuration": "1/10",
          "instructions": [{"timeRange": {"start": 0, "duration": 10}, "backgroundColor": "#FF000080",
            "layerInstructions": [{"track": 1, "transform": {"a": 1, "b": 0, "c": 0, "d": 1, "tx": 10, "ty": 20},
              "transformRamps": [{"from": {"a": 1, "b": 0, "c": 0, "d": 1, "tx": 0, "ty": 0}, "to": {"a": 2, "b": 0, "c": 0, "d": 2, "tx": 100, "ty": 0},
                                  "timeRange": {"start": 4, "duration": 4}}],
              "opacity": 0.8, "opacityRamps": [{"from": 1, "to": 0, "timeRange": {"start": 2, "duration": 2}}],
              "cropRectangle": {"x": 10, "y": 10, "width": 100, "height": 100}}]}]}
        """#)
    }

    @Test(arguments: [
        (10, 0.8),   // before the ramp: base
        (20, 1.0),   // ramp start: from
        (30, 0.5),   // midpoint
        (45, 0.0),   // after: `to` holds
    ])
    func opacityRamp(_ k: Int, _ expected: Double) throws {
        let layer = try #require(try Self.rampPlan().frame(k).layers.first)
        #expect(abs(layer.opacity - expected) < 1e-12)
        #expect(layer.crop == Rect(x: 10, y: 10, width: 100, height: 100))
    }

    @Test(arguments: [
        (10, AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: 10, ty: 20)),      // before: the explicit transform
        (45, AffineTransform(a: 1.125, b: 0, c: 0, d: 1.125, tx: 12.5, ty: 0)), // 1/8 of the way
        (60, AffineTransform(a: 1.5, b: 0, c: 0, d: 1.5, tx: 50, ty: 0)),     // midpoint
        (90, AffineTransform(a: 2, b: 0, c: 0, d: 2, tx: 100, ty: 0)),        // after: `to`
    ])
    func transformRamp(_ k: Int, _ expected: AffineTransform) throws {
        let frame = try Self.rampPlan().frame(k)
        #expect(frame.background == RGBAColor(r: 255, g: 0, b: 0, a: 128))
        #expect(approximatelyEqual(try #require(frame.layers.first).transform, expected))
    }

    @Test func layersDrawBottomFirstAndOnlyWhereTheirTrackHasASegment() throws {
        let json = #"""
        {"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}},
         "tracks": [{"id": 5, "mediaType": "video", "segments": [{"asset": "p", "at": 0, "sourceRange": {"start": 0, "duration": 2}}]},
                    {"id": 3, "mediaType": "video", "segments": [{"asset": "p", "at": 1, "sourceRange": {"start": 0, "duration": 2}}]}],
         "videoComposition": {"frameDuration": "1/2"}}
        """#
        let plan = try Fixtures.plan(json, assets: Self.clipAssets)
        #expect(plan.frame(1).layers.map(\.trackID) == [5])       // t = 1/2: track 3 not started
        #expect(plan.frame(2).layers.map(\.trackID) == [3, 5])    // both: bottom (track 3) first
        #expect(plan.frame(4).layers.map(\.trackID) == [3])       // t = 2: track 5 ended
    }

    @Test func lowPresetFoldsOutputScaleIntoEveryTransform() throws {
        let json = #"""
        {"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "p", "at": 0}]}],
         "videoComposition": {"overlays": [{"text": "hi", "fontSize": 40, "frame": {"x": 100, "y": 50, "width": 601, "height": 41}}]},
         "export": {"preset": "low"}}
        """#
        let plan = try Fixtures.plan(json, assets: Fixtures.described(["p": Fixtures.movie(1280, 720, duration: Rational(1))]))
        #expect(plan.renderSize == PixelSize(width: 1280, height: 720))
        #expect(plan.outputSize == PixelSize(width: 640, height: 360))
        #expect(plan.textRasterScale == 0.5)
        #expect(approximatelyEqual(plan.frame(0).layers[0].transform, .scale(0.5, 0.5)))
        #expect(plan.overlayBitmapSize(0) == PixelSize(width: 301, height: 21))   // ceil(300.5), ceil(20.5)
        // A text bitmap pixel is one output pixel: frame origin (100, 50) → (50, 25).
        let draw = try #require(plan.frame(0).overlays.first)
        #expect(approximatelyEqual(draw.transform, .translation(50, 25)))
    }

    // MARK: - Overlays

    private static func overlayPlan(_ overlays: String) throws -> RenderPlan {
        try single(#"{"asset": "p", "at": 0, "sourceRange": {"start": 0, "duration": 4}}"#,
                   extra: #", "videoComposition": {"renderSize": {"width": 320, "height": 240}, "frameDuration": "1/4", "overlays": [\#(overlays)]}"#)
    }

    @Test(arguments: [
        // frame k (t = k/4) → where the bitmap's top-left corner lands
        (0, Point(x: 100, y: 40)),     // rotation 0
        (2, Point(x: 100, y: 170)),    // t = 0.5: −π/2 (counter-clockwise on screen)
        (4, Point(x: 230, y: 170)),    // t = 1: −π
        (8, Point(x: 100, y: 40)),     // t = 2: the period restarts at `from`
        (10, Point(x: 100, y: 170)),   // t = 2.5: same as 0.5
    ])
    func repeatingRotationAboutFrameCentre(_ k: Int, _ corner: Point) throws {
        let plan = try Self.overlayPlan(#"""
        {"image": "logo", "frame": {"x": 100, "y": 40, "width": 130, "height": 130}, "opacity": 0.9,
         "animations": [{"property": "rotation", "from": 0, "to": -6.283185307179586, "duration": 2, "repeat": true}]}
        """#)
        let draw = try #require(plan.frame(k).overlays.first)
        #expect(draw.index == 0 && draw.opacity == 0.9)
        #expect(approximatelyEqual(draw.transform.apply(Point(x: 0, y: 0)), corner, tolerance: 1e-6))
        // The centre of the 260x260 bitmap stays at the frame centre.
        #expect(approximatelyEqual(draw.transform.apply(Point(x: 130, y: 130)), Point(x: 165, y: 105), tolerance: 1e-6))
    }

    @Test(arguments: [
        (2, Point(x: 0, y: 0)),        // t = 0.5: before begin, scale 1
        (6, Point(x: -25, y: -25)),    // t = 1.5: scale 1.5 about the centre (50, 50)
        (12, Point(x: -50, y: -50)),   // t = 3: ended, `to` (2) holds
    ])
    func nonRepeatingScaleWithBegin(_ k: Int, _ corner: Point) throws {
        let plan = try Self.overlayPlan(#"""
        {"image": "logo", "frame": {"x": 0, "y": 0, "width": 100, "height": 100},
         "animations": [{"property": "scale", "from": 1, "to": 2, "duration": 1, "begin": 1}]}
        """#)
        let draw = try #require(plan.frame(k).overlays.first)
        #expect(approximatelyEqual(draw.transform.apply(Point(x: 0, y: 0)), corner, tolerance: 1e-9))
    }

    @Test func positionOpacityAndVisibility() throws {
        let plan = try Self.overlayPlan(#"""
        {"text": "a", "frame": {"x": 0, "y": 0, "width": 10, "height": 10},
         "animations": [{"property": "position", "from": {"x": 0, "y": 0}, "to": {"x": 100, "y": 50}, "duration": 2},
                        {"property": "opacity", "from": 0, "to": 1, "duration": 1}]},
        {"text": "b", "frame": {"x": 5, "y": 5, "width": 10, "height": 10}, "timeRange": {"start": 1, "duration": 1}}
        """#)
        #expect(plan.frame(0).overlays.isEmpty)                  // overlay 0 at opacity 0, overlay 1 not yet
        let f2 = plan.frame(2)                                   // t = 0.5
        #expect(f2.overlays.map(\.index) == [0])
        #expect(f2.overlays[0].opacity == 0.5)
        #expect(approximatelyEqual(f2.overlays[0].transform, .translation(25, 12.5)))
        let f4 = plan.frame(4)                                   // t = 1
        #expect(f4.overlays.map(\.index) == [0, 1])
        #expect(approximatelyEqual(f4.overlays[0].transform, .translation(50, 25)))
        #expect(approximatelyEqual(f4.overlays[1].transform, .translation(5, 5)))
        #expect(plan.frame(8).overlays.map(\.index) == [0])      // t = 2: overlay 1's range ended
        #expect(approximatelyEqual(plan.frame(8).overlays[0].transform, .translation(100, 50)))
    }

    // MARK: - Audio

    @Test(arguments: [
        (Int64(0), Float(0.8)),                 // base volume before the ramp
        (Int64(11 * 48000 + 24000), Float(0.4)),// 11.5 s: midpoint = average of 0.8 and 0
        (Int64(13 * 48000), Float(0)),          // end: `to` holds
        (Int64(16 * 48000), Float(0)),          // between ramps: the last `to` holds
        (Int64(21 * 48000), Float(0.5)),        // second ramp midpoint
        (Int64(30 * 48000), Float(1)),
    ])
    func gain(_ sample: Int64, _ expected: Float) {
        let track = PlannedAudioTrack(id: 2, segments: [], volume: 0.8, volumeRamps: [
            Ramp(from: 0.8, to: 0, start: Rational(10), duration: Rational(3)),
            Ramp(from: 0, to: 1, start: Rational(20), duration: Rational(2)),
        ])
        #expect(abs(track.gain(atSample: sample, sampleRate: 48000) - expected) < 1e-6)
    }

    @Test func gainAt44100IsExactAtRampBoundary() {
        let track = PlannedAudioTrack(id: 1, segments: [], volume: 1, volumeRamps: [Ramp(from: 1, to: 0, start: Rational(1, 3), duration: Rational(1))])
        // 1/3 s is not a whole sample at 44.1 kHz: sample 14700 is exactly 1/3 s, sample 14699 just before.
        #expect(track.gain(atSample: 14699, sampleRate: 44100) == 1)
        #expect(track.gain(atSample: 14700, sampleRate: 44100) == 1)
        #expect(track.gain(atSample: 14700 + 22050, sampleRate: 44100) == 0.5)
    }

    // MARK: - The reference example, corrected

    /// The reference example (`Fixtures.designExample`) with its two rule breaks fixed: intro's audio starts at 13 s
    /// (after the music), and a second instruction covers 4…17 s.
    static func correctedDesignExample() throws -> RenderPlan {
        let json = Fixtures.designExample
            .replacing(#"{"asset": "intro", "at": 0}"#, with: #"{"asset": "intro", "at": 13}"#)
            .replacing(#""instructions": ["#, with: #""instructions": [{"timeRange": {"start": 4, "duration": 13}},"#)
        return try Fixtures.plan(json, assets: Fixtures.designExampleAssets)
    }

    @Test func correctedDesignExamplePlans() throws {
        let plan = try Self.correctedDesignExample()
        #expect(plan.duration == Rational(17))
        #expect(plan.frameCount == 510)
        #expect(plan.renderSize == PixelSize(width: 1280, height: 720))
        #expect(plan.instructions.map(\.timeRange.start) == [.zero, Rational(4)])
        #expect(plan.videoTracks.first?.segments == [
            PlannedSegment(asset: "intro", sourceStart: .zero, at: .zero, duration: Rational(4)),
            PlannedSegment(asset: "main", sourceStart: .zero, at: Rational(4), duration: Rational(5)),
            PlannedSegment(asset: "logo", sourceStart: .zero, at: Rational(9), duration: Rational(3)),
        ])
        #expect(plan.audioTracks.first?.gain(atSample: 552_000, sampleRate: 48000) == 0.4)
        #expect(plan.export.optimizeForNetworkUse && plan.export.video.gopFrames == 60)
        #expect(abs(try #require(plan.frame(105).layers.first).opacity - 0.5) < 1e-12)   // t = 3.5
        #expect(approximatelyEqual(try #require(plan.frame(30).layers.first).transform,   // t = 1: half-way ramp
                                   AffineTransform(a: 0.75, b: 0, c: 0, d: 0.75, tx: 160, ty: 90)))
        #expect(plan.frame(150).layers.isEmpty)                    // the second instruction has no layers
        #expect(plan.frame(150).overlays.map(\.index) == [0, 1])
        #expect(plan.frame(420).overlays.map(\.index) == [1])      // t = 14: the logo's range ended
        #expect(plan.cutFrames == [120, 270, 360])
        #expect(Set(plan.assets.keys) == ["intro", "main", "music", "logo"])
    }
}

@Suite("Speed changes", .blocking)
struct SpeedChangeTests {
    static let assets = Fixtures.described(["p": Fixtures.movie(320, 240, duration: Rational(100), frameDuration: Rational(1, 25))])

    /// 2× from 3 s (4 s of source in 2 s at 1 s), then 1/3× (1 s of source in 3 s at 3 s).
    static func plan() throws -> RenderPlan {
        try Fixtures.plan(#"""
        {"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [
            {"asset": "p", "at": 1, "sourceRange": {"start": 3, "duration": 4}, "duration": 2},
            {"asset": "p", "at": 3, "sourceRange": {"start": 10, "duration": 1}, "duration": 3}]}],
         "videoComposition": {"frameDuration": "1/25"}}
        """#, assets: assets)
    }

    @Test func compositionTimeMapsToScaledSourceTimeExactly() throws {
        let plan = try Self.plan()
        #expect(plan.duration == Rational(6) && plan.frameCount == 150)
        let segments = plan.videoTracks[0].segments
        #expect(segments.map(\.speed) == [Rational(2), Rational(1, 3)])
        #expect(segments.map(\.end) == [Rational(3), Rational(6)])
        for k in 25..<75 {   // 2×: source 3 + 2·(t − 1)
            #expect(plan.frame(k).layers.map(\.sourceTime) == [Rational(3) + Rational(Int64(2 * (k - 25)), 25)])
        }
        for k in 75..<150 {  // 1/3×: source 10 + (t − 3)/3
            #expect(plan.frame(k).layers.map(\.sourceTime) == [Rational(10) + Rational(Int64(k - 75), 75)])
        }
        #expect(plan.frame(24).layers.isEmpty)
    }

    @Test func storedPlansWithoutSourceDurationPlayAtNormalSpeed() throws {
        let old = #"{"asset": "p", "sourceStart": "2", "at": "1", "duration": "3"}"#
        let segment = try JSONDecoder().decode(PlannedSegment.self, from: Data(old.utf8))
        #expect(segment.sourceDuration == Rational(3) && !segment.isTimeScaled)
        #expect(segment.sourceTime(at: Rational(2)) == Rational(3))
    }
}
