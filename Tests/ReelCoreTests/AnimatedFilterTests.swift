import Testing
@testable import ReelCore
import ReelThreadTesting

/// Filter parameters written as animations (docs/composition.md, "Filters"): the keyframe
/// object of overlay animations without `property`, evaluated for every frame.
@Suite("Animated filter parameters", .blocking)
struct AnimatedFilterTests {
    /// `layer` as track 1's filters and `picture` as the picture's, at 25 fps over 10 s of `a`.
    static func plan(layer: String, picture: String = "[]") throws -> RenderPlan {
        try Fixtures.plan(Fixtures.composition(
            assets: FilterModelTests.assetsJSON, tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}]"#,
            extra: #""videoComposition": {"frameDuration": "1/25", "filters": \#(picture), "instructions": [{"timeRange": {"start": 0, "duration": 10}, "layerInstructions": [{"track": 1, "filters": \#(layer)}]}]}"#),
            assets: FilterModelTests.assets)
    }

    /// Brightness through three keys from 1 s (−0.4 → 0.4 in the first half second of 2,
    /// then back to 0), the picture's saturation swinging 1 → 0 → 1 every 2 s for ever.
    @Test func everyFrameHasTheValueTheKeyframesGive() throws {
        let plan = try Self.plan(
            layer: #"[{"type": "brightness", "brightness": {"values": [-0.4, 0.4, 0], "keyTimes": [0, 0.25, 1], "duration": 2, "begin": 1}}]"#,
            picture: #"[{"type": "saturation", "saturation": {"from": 1, "to": 0, "duration": 1, "autoreverses": true, "repeat": true}}]"#)
        // Independent piecewise-linear references, in seconds.
        func brightness(_ t: Double) -> Double {
            switch t {
            case ..<1: return -0.4                                  // the first value holds before begin
            case ..<1.5: return -0.4 + 0.8 * (t - 1) / 0.5
            case ..<3: return 0.4 - 0.4 * (t - 1.5) / 1.5
            default: return 0                                       // where it stopped
            }
        }
        func saturation(_ t: Double) -> Double {
            let phase = t.truncatingRemainder(dividingBy: 2)
            return phase <= 1 ? 1 - phase : phase - 1
        }
        for k in 0..<100 {
            let t = Double(k) / 25
            let frame = plan.frame(k)
            guard case .brightness(let b)? = frame.layers.first?.filters.first, case .saturation(let s)? = frame.filters.first else {
                Issue.record("frame \(k): \(frame.layers.first?.filters ?? []) / \(frame.filters)"); continue
            }
            #expect(abs(b - brightness(t)) < 1e-12, "frame \(k): brightness \(b), expected \(brightness(t))")
            #expect(abs(s - saturation(t)) < 1e-12, "frame \(k): saturation \(s), expected \(saturation(t))")
        }
    }

    @Test func anEasedParameterFollowsItsTimingFunction() throws {
        let plan = try Self.plan(layer: #"[{"type": "gaussianBlur", "sigma": {"from": 0, "to": 10, "duration": 2, "timingFunction": "easeInEaseOut"}}]"#)
        // easeInEaseOut is symmetric: a quarter of the way it is below a quarter, half-way exactly half.
        let sigma = { (k: Int) -> Double in
            guard case .gaussianBlur(let s)? = plan.frame(k).layers.first?.filters.first else { return .nan }
            return s
        }
        #expect(sigma(0) == 0 && sigma(50) == 10)
        #expect(abs(sigma(25) - 5) < 1e-6)
        #expect(sigma(12) < 10 * 12 / 50 && abs(sigma(12) + sigma(38) - 10) < 1e-6)
    }

    /// A chunk's key covers the values its frames evaluate to: an animation that differs only
    /// after 5 s leaves the first chunks' keys alone.
    @Test func onlyChunksWhoseValuesChangeGetNewKeys() throws {
        func keys(_ last: String) throws -> [String?] {
            let plan = try Self.plan(layer: #"[{"type": "contrast", "contrast": {"values": [1, 1, \#(last)], "keyTimes": [0, 0.5, 1], "duration": 10}}]"#)
            return ChunkPlanner.plan(for: plan, targetChunkSeconds: Rational(2)).map {
                ContentKey.videoChunk(plan, frames: $0, encoderThreads: 4, assetContent: FilterModelTests.content)
            }
        }
        let a = try keys("2"), b = try keys("3")
        let chunks = ChunkPlanner.plan(for: try Self.plan(layer: "[]"), targetChunkSeconds: Rational(2))
        #expect(a.count == chunks.count && chunks.count > 1)
        for (i, chunk) in chunks.enumerated() {
            let late = chunk.end > 126   // holds a frame after 5 s (frame 125, at 5 s, is 1 either way)
            #expect((a[i] != b[i]) == late, "chunk \(i) (frames \(chunk.start)..<\(chunk.end))")
        }
    }
}
