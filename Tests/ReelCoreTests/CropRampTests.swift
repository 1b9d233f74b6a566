import Testing
@testable import ReelCore
import ReelThreadTesting

/// `cropRectangleRamps` (AVFoundation's `setCropRectangleRamp`): the same before/inside/after
/// rules as the other ramps, each of x, y, width and height interpolated on its own.
@Suite("Crop rectangle ramps", .blocking)
struct CropRampTests {
    static let assets = Fixtures.described(["p": Fixtures.movie(320, 240, duration: Rational(10))])

    static func plan(_ layer: String) throws -> RenderPlan {
        try Fixtures.plan(#"""
        {"formatVersion": 1, "assets": {"p": {"url": "p.mp4"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "p", "at": 0}]}],
         "videoComposition": {"renderSize": {"width": 320, "height": 240}, "frameDuration": "1/10",
           "instructions": [{"timeRange": {"start": 0, "duration": 10}, "layerInstructions": [\#(layer)]}]}}
        """#, assets: assets)
    }

    @Test(arguments: [
        (5, Rect(x: 10, y: 10, width: 100, height: 100)),   // before: the base rectangle
        (10, Rect(x: 0, y: 0, width: 320, height: 240)),    // ramp start: from
        (15, Rect(x: 80, y: 0, width: 240, height: 240)),   // half-way: the left edge has moved 80 px
        (20, Rect(x: 160, y: 0, width: 160, height: 240)),  // after: `to` holds until the next ramp
        (35, Rect(x: 240, y: 0, width: 80, height: 120)),   // half-way through the second ramp
        (60, Rect(x: 320, y: 0, width: 0, height: 0)),      // after the last: its empty `to`
    ])
    func cropFollowsItsRamps(_ k: Int, _ expected: Rect) throws {
        let plan = try Self.plan(#"""
        {"track": 1, "cropRectangle": {"x": 10, "y": 10, "width": 100, "height": 100},
         "cropRectangleRamps": [
           {"from": {"x": 160, "y": 0, "width": 160, "height": 240}, "to": {"x": 320, "y": 0, "width": 0, "height": 0},
            "timeRange": {"start": 3, "duration": 1}},
           {"from": {"x": 0, "y": 0, "width": 320, "height": 240}, "to": {"x": 160, "y": 0, "width": 160, "height": 240},
            "timeRange": {"start": 1, "duration": 1}}]}
        """#)
        #expect(plan.frame(k).layers.first?.crop == expected)
    }

    @Test func withoutABaseRectangleTheWholePictureShowsBeforeTheFirstRamp() throws {
        let plan = try Self.plan(#"{"track": 1, "cropRectangleRamps": [{"from": {"x": 0, "y": 0, "width": 320, "height": 240}, "to": {"x": 0, "y": 0, "width": 0, "height": 240}, "timeRange": {"start": 5, "duration": 5}}]}"#)
        #expect(plan.frame(10).layers.first?.crop == nil)
        #expect(plan.frame(75).layers.first?.crop == Rect(x: 0, y: 0, width: 160, height: 240))
    }

    @Test func badRampsNameTheirPath() {
        let layer = #"""
        {"track": 1, "cropRectangleRamps": [
           {"from": {"x": 0, "y": 0, "width": -1, "height": 240}, "to": {"x": 0, "y": 0, "width": 10, "height": 10}, "timeRange": {"start": 1, "duration": 2}},
           {"from": {"x": 0, "y": 0, "width": 1, "height": 1}, "to": {"x": 0, "y": 0, "width": 0, "height": -0.5}, "timeRange": {"start": 2, "duration": 1}},
           {"from": {"x": 0, "y": 0, "width": 1}, "to": {"x": 0, "y": 0, "width": 0, "height": 0}, "timeRange": {"start": 5, "duration": 1}}]}
        """#
        let json = Fixtures.composition(extra: #""videoComposition": {"instructions": [{"timeRange": {"start": 0, "duration": 10}, "layerInstructions": [\#(layer)]}]}"#)
        let path = "videoComposition.instructions[0].layerInstructions[0].cropRectangleRamps"
        #expect(Fixtures.problems(json) == ["\(path)[2].from.height: is required"])
        let parsable = json.replacingOccurrences(of: #"{"x": 0, "y": 0, "width": 1}"#, with: #"{"x": 0, "y": 0, "width": 1, "height": 1}"#)
        #expect(Fixtures.problems(parsable) == [
            "\(path)[0].from.width: must be ≥ 0",
            "\(path)[1].to.height: must be ≥ 0",
            "\(path)[1].timeRange: overlaps cropRectangleRamps[0] from 2 s to 3 s; ramps of one property must not overlap",
        ])
    }
}
